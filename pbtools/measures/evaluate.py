"""Evaluation measures, parsed from names, computed per topic in one vectorised pass.

Names follow ir_measures' grammar ``BASE(param=value, ...)@cutoff``; trec_eval names are
accepted on input (:func:`parse`). The grammar lives in :mod:`~.names` (:class:`Measure`,
:func:`parse`, :data:`MEASURES`, :func:`measure_names`, in the package). Per-topic values match
trec_eval 9/10 (``m_*.c`` in usnistgov/trec_eval) to the last bit where trec_eval has the measure.

Relevance: a label ``>= rel`` is relevant (default 1), ``0 <= label < rel`` judged non-relevant,
a missing or negative label unjudged; ``(rel=2)`` is trec_eval ``-l2`` for the binary measures.
Gains (nDCG, Q) are the relevant labels: ``nDCG(rel=r)`` gives labels below r gain 0 in the run
and the ideal. trec_eval's ndcg ignores ``-l``, so its ``-l2`` ndcg is pbtools' ``nDCG`` (topic
301 of ``qrels.rel_level``: 0.1396; ``nDCG(rel=2)`` 0.0288; ``tests/measures/test_ndcg_rel.py``).
What each measure computes, with its trec_eval source file, and trec_eval's command line in
``pbtools evaluate``: ``docs/measures.md``. String measures (``Relstring``) fill a ``text``
column and have no average; ``GMAP``/``GMBpref`` average by trec_eval's geometric mean.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.frames import (
    ID_COLUMNS,
    codes,
    composite_key,
    encode,
    group_starts,
    judge,
    ranks_from_starts,
    require_columns,
    trec_sort_order,
    unify,
)
from pbtools.io.files import release_memory
from pbtools.measures import kernels as K
from pbtools.measures.names import MIN_GEO_MEAN, Measure, parse, parse_all
from pbtools.measures.topics import CoverageWarning, topic_coverage, topics_mode, warn_coverage
from pbtools.validation import validates

__all__ = [
    "compute",
    "evaluate",
    "aggregate",
    "CoverageWarning",
    "topic_coverage",
    "warn_coverage",
]


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


class _Setup:
    """Everything computed once per (judged, qrels): groups, topics, the sorted rows."""

    def __init__(
        self, judged: pd.DataFrame, qrels: pd.DataFrame, keys: Sequence[str], topics: str = "judged"
    ):
        require_columns(judged, ("name", "qid", "docno", "score", "label", *keys), "judged run")
        require_columns(qrels, ("qid", "docno", "label", *keys), "qrels")
        kj, kq, self.key_cats, sizes = [], [], [], []
        for k in keys:
            a, b, cats = _joint_codes(judged[k], qrels[k])
            kj.append(a)
            kq.append(b)
            self.key_cats.append(cats)
            sizes.append(max(len(cats), 1))
        jq, qq = unify(judged["qid"], qrels["qid"])
        self.qid_cats = jq.cat.categories
        nq = max(len(self.qid_cats), 1)
        name = encode(judged["name"])
        self.name_cats = name.cat.categories
        nc = name.cat.codes.to_numpy()
        jqc = jq.cat.codes.to_numpy()
        # qrels topics (keys..., qid)
        qtid = composite_key([*kq, qq.cat.codes.to_numpy()], [*sizes, nq])
        qorder = np.argsort(qtid, kind="stable")
        qsorted = qtid[qorder]
        tstart = group_starts(qsorted)
        self.tids = qsorted[tstart]
        t_of_row = np.cumsum(tstart) - 1
        qlab = qrels["label"].to_numpy(dtype=np.int64, na_value=K.UNJUDGED)[qorder]
        self.topics = K.Topics(t_of_row, qlab, len(self.tids))
        self.sizes, self.nq = sizes, nq
        # judged rows: order by group, trec order inside
        score = judged["score"].to_numpy(dtype=np.float64)
        doc = codes(judged["docno"])  # narrow codes: every array here is one per row
        gid = composite_key([*kj, nc, jqc], [*sizes, max(len(self.name_cats), 1), nq])
        perm = (
            None if self._ordered(gid, score, doc) else trec_sort_order([*kj, nc, jqc], score, doc)
        )
        if perm is not None:
            gid, kj, nc, jqc = gid[perm], [k[perm] for k in kj], nc[perm], jqc[perm]
        label = judged["label"].to_numpy(dtype=np.int32, na_value=K.UNJUDGED)
        neg = label < 0  # not in the qrels (NA): UNJUDGED; a negative qrels label: POOLED
        if neg.any():
            label[neg] = np.where(judged["label"].isna().to_numpy()[neg], K.UNJUDGED, K.POOLED)
        if perm is not None:
            label = label[perm]
        start = group_starts(gid)
        rank = ranks_from_starts(start)
        g = np.cumsum(start, dtype=np.int32 if len(start) < 2**31 else np.int64) - 1
        # group table and its qrels topic; groups without qrels topic are not evaluated
        first = np.flatnonzero(start)
        gkeys = [k[first] for k in kj]
        gname, gqid = nc[first], jqc[first]
        gtid = composite_key([*gkeys, gqid], [*sizes, nq]) if len(first) else np.zeros(0, np.int64)
        pos = np.searchsorted(self.tids, gtid)
        ok = (
            (pos < len(self.tids)) & (self.tids[np.minimum(pos, len(self.tids) - 1)] == gtid)
            if len(self.tids)
            else np.zeros(len(gtid), bool)
        )
        if topics == "answered" and not ok.all():  # topics the qrels lack: empty relevance sets
            extra, inv = np.unique(gtid[~ok], return_inverse=True)
            pos = pos.copy()
            pos[~ok] = len(self.tids) + inv.ravel()
            hist = self.topics.hist
            self.topics = K.Topics.from_hist(
                np.vstack([hist, np.zeros((len(extra), hist.shape[1]), hist.dtype)])
            )
            ok = np.ones_like(ok)
        self.run_table = pd.DataFrame(
            {**{f"k{i}": k for i, k in enumerate(gkeys)}, "name": gname}
        ).drop_duplicates()
        self.groups = dict(keys=[k[ok] for k in gkeys], name=gname[ok], qid=gqid[ok], topic=pos[ok])
        keep, new_index = ok[g], (np.cumsum(ok) - 1).astype(g.dtype)  # (no row when no group)
        kept = (g, rank, label) if ok.all() else (new_index[g[keep]], rank[keep], label[keep])
        self.rows = kept  # every row when every group has its qrels topic: no copies

    @staticmethod
    def _ordered(gid: np.ndarray, score: np.ndarray, doc: np.ndarray) -> bool:
        """Groups contiguous and trec-ordered inside (then no sort is needed)."""
        if len(gid) < 2:
            return True
        start = group_starts(gid)
        heads = gid[start]
        if len(np.unique(heads)) != len(heads):
            return False
        same = ~start[1:]
        ok = (score[1:] < score[:-1]) | ((score[1:] == score[:-1]) & (doc[1:] < doc[:-1]))
        return bool(np.all(ok[same]))

    def add_missing_topics(self) -> None:
        """trec_eval ``-c``: add every qrels topic a (keys, run) lacks, as an empty ranking."""
        grp = self.groups
        have = pd.DataFrame(
            {
                **{f"k{i}": k for i, k in enumerate(grp["keys"])},
                "name": grp["name"],
                "topic": grp["topic"],
            }
        )
        runs = self.run_table
        tid = self.tids
        qc = tid % self.nq
        rest = tid // self.nq
        kcols = {}
        for i, size in reversed(list(enumerate(self.sizes))):
            kcols[f"k{i}"] = rest % size
            rest = rest // size
        topics = pd.DataFrame({**kcols, "qid": qc, "topic": np.arange(len(tid))})
        on = [f"k{i}" for i in range(len(self.sizes))]
        full = runs.merge(topics, on=on) if on else runs.merge(topics, how="cross")
        full = full.merge(have, on=[*on, "name", "topic"], how="left", indicator=True)
        miss = full[full["_merge"] == "left_only"]
        if len(miss):
            grp["keys"] = [
                np.concatenate([k, miss[c].to_numpy()])
                for k, c in zip(grp["keys"], on, strict=True)
            ]
            grp["name"] = np.concatenate([grp["name"], miss["name"].to_numpy()])
            grp["qid"] = np.concatenate([grp["qid"], miss["qid"].to_numpy()])
            grp["topic"] = np.concatenate([grp["topic"], miss["topic"].to_numpy()])

    def scores(self, measures: list[Measure], texts: dict | None = None):
        """Value (and residual) matrix, one row per group, one column per measure (the strings
        of string measures into ``texts``). The rankings are cut to the ranks the measures'
        families declare they read (:func:`~pbtools.measures.kernels.depth_needed`), as the
        estimators cut them: one depth, from the declaration, in both."""
        g, rank, label = self.rows
        depth = K.depth_needed(measures)
        if depth is not None and len(rank) and rank.max() > depth:
            keep = rank <= depth
            g, rank, label = g[keep], rank[keep], label[keep]
        view = K.View(g, rank, label, len(self.groups["name"]))
        return K.score(view, self.topics, self.groups["topic"], measures, texts=texts)


def _frame(setup: _Setup, keys: Sequence[str], measures: list[Measure], values, resid, texts=None):
    grp = setup.groups
    order = np.lexsort([grp["qid"], grp["name"], *reversed(grp["keys"])])
    G, M = len(order), len(measures)
    rep = np.repeat(order, M)
    out = {}
    for k, cats, c in zip(keys, setup.key_cats, grp["keys"], strict=True):
        out[k] = _decode(cats, c[rep], k)
    out["name"] = _decode(setup.name_cats, grp["name"][rep], "name")
    out["qid"] = _decode(setup.qid_cats, grp["qid"][rep], "qid")
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
    setup = _Setup(judged, qrels, keys, mode)
    if mode == "all":
        setup.add_missing_topics()
    release_memory()  # the sort and grouping temporaries, before scoring
    texts: dict = {}
    values, resid = setup.scores(ms, texts)
    return _frame(setup, keys, ms, values, resid, texts)


#: scorers of qrels that carry more than labels, by the column that marks them: a sampled pool's
#: ``stratum`` (:mod:`pbtools.measures.sampled` installs its scorer here, as the kernels are
#: installed in :data:`~.kernels.KERNELS`); :func:`evaluate` hands such qrels to it
QRELS_SCORERS: dict = {}


@validates(keys="keys", runs="run", qrels="qrels")
def evaluate(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    measures,
    *,
    keys: Sequence[str] = (),
    per_topic: bool = False,
    topics: str | None = None,
    all_topics: bool = False,
    warn: bool = True,
    lenient: bool = False,
) -> pd.DataFrame:
    """Judge ``runs`` with ``qrels`` (:func:`frames.judge`) and :func:`compute` ``measures``.

    Returns the per-topic frame when ``per_topic``, else the :func:`aggregate` averages.
    ``topics`` (:mod:`pbtools.measures.topics`): ``"judged"`` (default, trec_eval), ``"all"``
    (trec_eval ``-c``, deprecated spelling ``all_topics=True``: qrels topics missing from a run
    score as an empty ranking, 0 for every measure but NumRel, Unjudged (1) and the RBP residual) or
    ``"answered"`` (every topic the run answers; one the qrels lack scores 0). Unless
    ``warn=False``, a :class:`CoverageWarning` names runs that lack judged topics or answer
    unjudged ones (:func:`topic_coverage`), so no topic leaves an average silently. Qrels with
    a ``stratum`` column are a sampled pool's: scored by its estimators (``xinfAP``, ``infAP``,
    ``statAP``, …: :mod:`pbtools.measures.sampled`), plain measures refused.

    Parameters
    ----------
    runs, qrels : DataFrame
        ``name`` (optional), ``qid``, ``docno``, ``score``; ``qid``, ``docno``, ``label``
        (other arguments: as in :func:`compute`), checked by :mod:`pbtools.validation`
        (``lenient=True``: repeated rows dropped with a warning instead of refused).

    Returns
    -------
    DataFrame
        ``keys…``, ``name``, ``measure``, ``value`` (and ``qid`` when ``per_topic``).

    Examples
    --------
    ``a`` ranks docs 1 (label 1), 2 (unjudged), 3 (0); R = 2 (1, 4): AP = P@1 / R = 0.5, nDCG@3
    = 1 ÷ (2 + 1/log2 3) = 0.380. ``b`` finds doc 1 at rank 3: AP = (1/3) / 2.

    >>> import pandas as pd
    >>> runs = pd.DataFrame({"name": list("aaabbb"), "qid": "1", "docno": list("123321"),
    ...                      "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("134"), "label": [1, 0, 2]})
    >>> evaluate(runs, qrels, ["AP", "nDCG@3"]).round(4)
      name measure   value
    0    a      AP  0.5000
    1    a  nDCG@3  0.3801
    2    b      AP  0.1667
    3    b  nDCG@3  0.1900
    """
    keys = list(keys)
    mode = topics_mode(topics, all_topics)
    ms = parse_all(measures)  # unknown measures fail before any work
    for column, scorer in QRELS_SCORERS.items():  # a sampled pool's qrels: its estimators
        if column in qrels.columns:
            return scorer(runs, qrels, ms, keys=keys, per_topic=per_topic, topics=mode)
    if "name" not in runs.columns:  # a PyTerrier result frame: one run
        runs = runs.assign(name="run")
    if warn and not keys:
        warn_coverage(runs, qrels, topics=mode)
    judged = judge(runs, qrels, keys=keys)
    release_memory()  # judging's temporaries (a few row-sized arrays), before scoring
    pt = compute(judged, qrels, ms, keys, topics=mode)
    return pt if per_topic else aggregate(pt)


def aggregate(
    per_topic: pd.DataFrame, *, qrels: pd.DataFrame | None = None, topics=None, all_topics=False
) -> pd.DataFrame:
    """trec_eval's ``all`` line: the mean over the topics evaluated (``meas_avg.c``).

    ``NumRet``, ``NumRel`` and ``NumRelRet`` (any parameters) are summed, as trec_eval does.
    With ``topics="all"`` (``all_topics=True``: deprecated) and ``qrels`` (trec_eval ``-c``) every
    qrels topic of the key values counts: topics missing from ``per_topic`` score empty rankings.

    Parameters
    ----------
    per_topic : DataFrame
        The :func:`compute` frame (extra columns but ``qid``/``value``/``residual``: keys).

    Returns
    -------
    DataFrame
        ``keys…``, ``name``, ``measure``, ``value`` (+ ``residual`` if present).

    Examples
    --------
    >>> import pandas as pd
    >>> pt = pd.DataFrame({"name": "a", "qid": list("1212"), "value": [0.5, 0.0, 3.0, 2.0],
    ...                    "measure": ["P@2", "P@2", "NumRet", "NumRet"]})
    >>> aggregate(pt).to_numpy().tolist()  # P@2 averaged, NumRet summed
    [['a', 'P@2', 0.25], ['a', 'NumRet', 5.0]]
    """
    require_columns(per_topic, ("name", "qid", "measure", "value"), "per-topic results")
    keys = [c for c in per_topic.columns if c not in _NOT_KEYS]
    pt = per_topic
    kinds = {m: parse(m) for m in pd.unique(pt["measure"].astype(str))}
    if any(k.text for k in kinds.values()):  # string measures have no average (trec_eval)
        pt = pt[~pt["measure"].astype(str).map({m: k.text for m, k in kinds.items()})]
    pt = pt.drop(columns=["text"], errors="ignore")
    if topics_mode(topics, all_topics) == "all":
        if qrels is None:
            raise ValueError('aggregate(topics="all") needs the qrels')
        pt = _fill_missing(pt, qrels, keys)
    geo = pt["measure"].astype(str).map({m: k.geometric for m, k in kinds.items()})
    if geo.any():  # trec_eval's geometric mean: exp(mean(log(max(v, MIN_GEO_MEAN))))
        pt = pt.assign(value=pt["value"].where(~geo, np.log(pt["value"].clip(lower=MIN_GEO_MEAN))))
    by = [*keys, "name", "measure"]
    cols = ["value"] + (["residual"] if "residual" in pt.columns else [])
    grouped = pt.groupby(by, observed=True, sort=False)[cols]
    mean, total = grouped.mean(), grouped.sum()
    meas = mean.index.get_level_values("measure").astype(str)
    summed = meas.map({m: k.summed for m, k in kinds.items()}).to_numpy(dtype=bool)
    out = mean.copy()
    out.loc[summed, "value"] = total.loc[summed, "value"]
    geometric = meas.map({m: k.geometric for m, k in kinds.items()}).to_numpy(dtype=bool)
    out.loc[geometric, "value"] = np.exp(mean.loc[geometric, "value"])
    out = out.reset_index()
    for c in ("name", "measure", *[k for k in keys if k in ID_COLUMNS]):
        out[c] = encode(out[c].astype(str))
    return out[[*by, *cols]]


_NOT_KEYS = ("name", "qid", "measure", "value", "residual", "text")


def _fill_missing(per_topic: pd.DataFrame, qrels: pd.DataFrame, keys: list[str]):
    measures = list(dict.fromkeys(per_topic["measure"].astype(str)))
    runs = per_topic[[*keys, "name"]].drop_duplicates()
    fake = runs.reset_index(drop=True).assign(qid="", docno="", score=0.0)
    fake["label"] = pd.array([pd.NA] * len(fake), dtype="Int16")
    setup = _Setup(fake, qrels, keys)
    setup.add_missing_topics()
    values, resid = setup.scores([parse(m) for m in measures])
    empty = _frame(setup, keys, [parse(m) for m in measures], values, resid)
    have = per_topic[[*keys, "name", "qid"]].drop_duplicates().astype(str)
    ek = empty[[*keys, "name", "qid"]].astype(str)
    merged = ek.merge(have.assign(_have=True), how="left", on=[*keys, "name", "qid"])
    add = empty[merged["_have"].isna().to_numpy()]
    add = add.assign(measure=add["measure"].astype(str).map({str(parse(m)): m for m in measures}))
    cols = list(per_topic.columns)
    both = pd.concat(
        [
            per_topic.astype({c: str for c in ("name", "qid", "measure")}),
            add[cols].astype({c: str for c in ("name", "qid", "measure")}),
        ],
        ignore_index=True,
    )
    return both
