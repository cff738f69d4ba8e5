"""The per-topic engine of :mod:`pbtools.measures`: a judged frame grouped by (keys, run, topic),
put in trec_eval order and scored by the kernels (:mod:`~.kernels`) in one vectorised pass.

:func:`compute` is what every score of pbtools goes through (evaluation, truth, reduced pools,
merged runs); :mod:`~.evaluate` judges runs and averages the values it returns. The grouping
(:class:`~.arrays.Grouping`, the array core) works on integer codes and numpy arrays; pandas
enters only at the edges, to read the frame's columns and to build the frame returned.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.frames import ID_COLUMNS, codes, encode, require_columns, unify
from pbtools.io.memory import release_memory
from pbtools.measures import kernels as K
from pbtools.measures.arrays import Grouping, kernel_labels
from pbtools.measures.names import Measure, parse_all
from pbtools.measures.topics import topics_mode

__all__ = ["compute"]


# --------------------------------------------------------------------------------------------
# grouping helpers
# --------------------------------------------------------------------------------------------


def _joint_codes(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """Integer codes of two key columns over one sorted dictionary, and that dictionary."""
    if a.name in ID_COLUMNS or isinstance(a.dtype, pd.CategoricalDtype) or a.dtype == "str":
        x, y = unify(a, b)
        return x.cat.codes.to_numpy(), y.cat.codes.to_numpy(), x.cat.categories
    ca, uniq = pd.factorize(pd.concat([a, b], ignore_index=True), sort=True)
    return ca[: len(a)], ca[len(a) :], pd.Index(uniq)


def _decode(cats: pd.Index, c: np.ndarray, col: str) -> pd.Series:
    if isinstance(cats.dtype, pd.StringDtype) or cats.dtype == "str" or col in ID_COLUMNS:
        return pd.Series(pd.Categorical.from_codes(c, dtype=pd.CategoricalDtype(cats)))
    return pd.Series(cats.take(c)).reset_index(drop=True)


def _setup(judged: pd.DataFrame, qrels: pd.DataFrame, keys: Sequence[str], topics: str):
    """The :class:`~.arrays.Grouping` of a judged frame and its qrels (their columns as codes
    over shared dictionaries) and those dictionaries: ``(grouping, (key_cats, name_cats,
    qid_cats))``."""
    require_columns(judged, ("name", "qid", "docno", "score", "label", *keys), "judged run")
    require_columns(qrels, ("qid", "docno", "label", *keys), "qrels")
    kj, kq, key_cats, sizes = [], [], [], []
    for k in keys:
        a, b, cats = _joint_codes(judged[k], qrels[k])
        kj.append(a)
        kq.append(b)
        key_cats.append(cats)
        sizes.append(max(len(cats), 1))
    jq, qq = unify(judged["qid"], qrels["qid"])
    name = encode(judged["name"])
    label = kernel_labels(
        judged["label"].to_numpy(dtype=np.int32, na_value=0), judged["label"].notna().to_numpy()
    )
    grouping = Grouping(
        kj,
        name.cat.codes.to_numpy(),
        jq.cat.codes.to_numpy(),
        judged["score"].to_numpy(dtype=np.float64),
        codes(judged["docno"]),  # narrow codes: every array here is one per row
        label,
        kq,
        qq.cat.codes.to_numpy(),
        qrels["label"].to_numpy(dtype=np.int64, na_value=K.UNJUDGED),
        sizes,
        len(name.cat.categories),
        len(jq.cat.categories),
        topics,
    )
    return grouping, (key_cats, name.cat.categories, jq.cat.categories)


def _frame(
    setup: Grouping, cats, keys: Sequence[str], measures: list[Measure], values, resid, texts=None
):
    grp = setup.groups
    key_cats, name_cats, qid_cats = cats
    order = setup.order()
    G, M = len(order), len(measures)
    rep = np.repeat(order, M)
    out = {}
    for k, kc, c in zip(keys, key_cats, grp["keys"], strict=True):
        out[k] = _decode(kc, c[rep], k)
    out["name"] = _decode(name_cats, grp["name"][rep], "name")
    out["qid"] = _decode(qid_cats, grp["qid"][rep], "qid")
    names = [str(m) for m in measures]
    out["measure"] = encode(pd.Series(np.tile(np.array(names, dtype=object), G), dtype="str"))
    out["value"] = values[order].ravel()
    df = pd.DataFrame(
        {c: s.reset_index(drop=True) if isinstance(s, pd.Series) else s for c, s in out.items()}
    )
    if any(m.base == "RBP" for m in measures):
        df["residual"] = resid[order].ravel()
    if texts:  # string measures (Relstring): their strings, NA for the other measures
        text = np.full((G, M), None, dtype=object)
        for j, t in texts.items():
            text[:, j] = t[order]
        df["text"] = pd.array(text.ravel(), dtype="string")
    return df


def compute(
    judged: pd.DataFrame,
    qrels: pd.DataFrame,
    measures,
    keys: Sequence[str] = (),
    *,
    topics: str | None = None,
    all_topics: bool = False,
) -> pd.DataFrame:
    """Per-topic values of ``measures`` for an already judged frame (:func:`frames.judge`).

    ``judged`` needs ``name``, ``qid``, ``docno``, ``score``, ``label`` (NA = unjudged) and the
    ``keys`` columns; ``qrels`` needs ``qid``, ``docno``, ``label`` and the ``keys`` columns
    (one relevance set per key value, e.g. ``left_out``). Rows are grouped by (keys, name, qid)
    and ranked in trec_eval order (score desc, docno desc; sorted here unless already so).

    ``topics`` decides which (run, topic) are evaluated (:mod:`pbtools.measures.topics`):
    ``"judged"`` (default, trec_eval) the topics in both the ranking and the qrels (of the same
    key values); ``"all"`` (trec_eval ``-c``; ``all_topics=True``: deprecated) adds every qrels
    topic a run lacks as an empty ranking; ``"answered"`` evaluates every topic the run answers,
    one the qrels lack against an empty relevance set. A qrels topic with no relevant document
    is evaluated (AP, nDCG, … are 0).

    Parameters
    ----------
    judged, qrels, measures, keys, topics, all_topics
        As above (``measures``: names or :class:`Measure`; ``all_topics=True``: ``"all"``).

    Returns
    -------
    DataFrame
        ``keys…``, ``name``, ``qid``, ``measure`` (canonical), ``value``, ``residual``
        (RBP only; NaN for others); ids encoded; rows by keys, name, qid, measures as asked.

    Examples
    --------
    RBP = (1 − p) Σ_{r≤n} rel_r p^{r−1} = 0.5; the unjudged rank 2 leaves (1 − p)·p = 0.25.

    >>> import pandas as pd
    >>> from pbtools.frames import judge
    >>> run = pd.DataFrame({"name": "a", "qid": "1", "docno": ["d1", "d2"], "score": [2.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["d1", "d3"], "label": [1, 0]})
    >>> compute(judge(run, qrels), qrels, ["P@2", "RBP(p=0.5)@2"])
      name qid       measure  value  residual
    0    a   1           P@2    0.5       NaN
    1    a   1  RBP(p=0.5)@2    0.5      0.25
    """
    ms = parse_all(measures)
    keys = list(keys)
    mode = topics_mode(topics, all_topics)
    setup, cats = _setup(judged, qrels, keys, mode)
    if mode == "all":
        setup.add_missing_topics()
    release_memory()  # the sort and grouping temporaries, before scoring
    texts: dict = {}
    values, resid = setup.scores(ms, texts)
    return _frame(setup, cats, keys, ms, values, resid, texts)
