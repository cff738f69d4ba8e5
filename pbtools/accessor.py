"""The ``.pb`` pandas accessor, for method chaining in notebooks.

>>> import pandas as pd
>>> import pbtools  # registers ``DataFrame.pb``
>>> runs = pd.DataFrame({"name": "bm25", "qid": ["1", "1", "2"], "docno": ["a", "b", "c"],
...                      "score": [2.0, 1.0, 3.0]})
>>> qrels = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "x", "c"], "label": [1, 1, 0]})
>>> runs.pb.judge(qrels).pb.measure(["P@1", "AP"])      # averages per run
   name measure  value
0  bm25     P@1   0.50
1  bm25      AP   0.25
>>> runs.pb.judge(qrels).pb.measure("P@1", per_topic=True)["value"].tolist()
[1.0, 0.0]
>>> runs.pb.evaluate(qrels, ["nDCG@10"])["value"].round(4).tolist()   # judge + measure
[0.3066]
>>> runs.pb.trec_order().pb.top(1)["docno"].tolist()               # the top 1 of every ranking
['a', 'c']

Every method checks the frames it is given (:mod:`pbtools.validation`: required columns, ids as
strings, integer labels, no repeated rows; ``judge`` and ``evaluate`` take ``lenient=True`` to
drop repeated rows with a warning instead). ``judge`` remembers the qrels it used (in
``df.attrs["pbtools_qrels"]``, an
:class:`~pbtools.io.repairframe.AttrsFrame`: shared, never copied, and stored by
:func:`pbtools.io.write_parquet`, so a judged frame read back from Parquet still measures), so
``measure`` needs no second argument; pass ``qrels=`` to override. Every method returns a new
DataFrame in the schemas of :mod:`pbtools.frames`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from pbtools import frames
from pbtools.io.repairframe import AttrsFrame
from pbtools.validation import check_frame, validates

_QRELS_KEY = "pbtools_qrels"


@pd.api.extensions.register_dataframe_accessor("pb")
class PbAccessor:
    """``DataFrame.pb``: pbtools operations on run, qrels and result frames."""

    def __init__(self, df: pd.DataFrame):
        self._df = df

    # ---------------------------------------------------------------- runs
    @validates(self="run")
    def trec_order(self) -> pd.DataFrame:
        """The runs in trec_eval order with ranks 1..n (:func:`pbtools.frames.trec_order`)."""
        return frames.trec_order(frames.as_run(self._df, order=False))

    @validates(self="run")
    def top(self, n: int) -> pd.DataFrame:
        """The first ``n`` documents of every (name, qid) ranking, in trec_eval order."""
        df = frames.ranked(self._df)
        return df[df["rank"] <= n].reset_index(drop=True)

    @validates(self="run", keys="keys")
    def judge(
        self, qrels: pd.DataFrame, keys: Sequence[str] | None = None, *, lenient: bool = False
    ) -> pd.DataFrame:
        """Attach ``label`` from ``qrels`` (:func:`pbtools.frames.judge`); remembers the qrels.

        ``qrels`` may use ir_measures' names (``query_id``, ``doc_id``, ``relevance``)."""
        runs = frames.ranked(self._df)
        names = {"query_id": "qid", "doc_id": "docno", "relevance": "label"}
        qrels = qrels.rename(columns={k: v for k, v in names.items() if v not in qrels.columns})
        extra = [c for c in qrels.columns if c not in frames.QRELS_COLUMNS]
        qrels = check_frame(qrels, "qrels", keys=extra if keys is None else keys, lenient=lenient)
        qrels = frames.as_qrels(qrels)
        out = frames.judge(runs, qrels, keys=keys)
        out.attrs[_QRELS_KEY] = AttrsFrame(qrels)
        return out

    @validates(self="judged", qrels="qrels", keys="keys")
    def measure(
        self,
        measures: str | Sequence[str],
        qrels: pd.DataFrame | None = None,
        *,
        per_topic: bool = False,
        topics: str | None = None,
        all_topics: bool = False,
    ) -> pd.DataFrame:
        """Measures of a judged frame: averages (``name``, ``measure``, ``value``) or per topic.

        ``qrels`` defaults to the ones :meth:`judge` used; ``topics="all"`` averages over every
        qrels topic (trec_eval ``-c``; ``all_topics=True`` is its deprecated spelling). See
        :func:`pbtools.measures.compute`.
        """
        from pbtools import measures as m

        if qrels is None:
            qrels = self._df.attrs.get(_QRELS_KEY)
            if not isinstance(qrels, pd.DataFrame):
                raise ValueError(
                    "measure() needs qrels: call .pb.judge(qrels) first, or pass qrels="
                )
        if "label" not in self._df.columns:
            raise ValueError("measure() needs a judged frame (a 'label' column): call .pb.judge")
        names = [measures] if isinstance(measures, str) else list(measures)
        keys = [c for c in qrels.columns if c not in frames.QRELS_COLUMNS]
        per = m.compute(self._df, qrels, names, keys=keys)
        if per_topic:
            return per
        return m.aggregate(per, qrels=qrels, topics=topics, all_topics=all_topics)

    @validates(self="run")
    def evaluate(
        self,
        qrels: pd.DataFrame,
        measures: str | Sequence[str],
        *,
        per_topic: bool = False,
        topics: str | None = None,
        all_topics: bool = False,
        lenient: bool = False,
    ) -> pd.DataFrame:
        """``judge(qrels)`` then ``measure(measures)`` in one call."""
        judged = self.judge(qrels, lenient=lenient)
        return judged.pb.measure(
            measures, per_topic=per_topic, topics=topics, all_topics=all_topics
        )

    # ------------------------------------------------------------- results
    def wide(self) -> pd.DataFrame:
        """Results in PyTerrier's wide layout: one row per run (and qid), one column per measure."""
        df = self._df
        frames.require_columns(df, ("name", "measure", "value"), "results")
        index = [c for c in df.columns if c not in ("measure", "value", "residual")]
        out = df.pivot_table(
            index=index, columns="measure", values="value", observed=True, sort=False
        )
        out.columns.name = None
        return out.reset_index()

    def to_parquet(self, path, metadata: dict | None = None) -> None:
        """Write the frame with :func:`pbtools.io.write_parquet` (exact round trip)."""
        from pbtools import io

        io.write_parquet(self._df, path, metadata=metadata)
