"""The per-topic engine of :mod:`pbtools.measures`: a judged frame grouped by (keys, run, topic),
put in trec_eval order and scored by the kernels (:mod:`~.kernels`) in one vectorised pass.

:func:`compute` is what every score of pbtools goes through (evaluation, truth, reduced pools,
merged runs); :mod:`~.evaluate` judges runs and averages the values it returns. The grouping
(``_Setup``) works on integer codes and numpy arrays; pandas enters only at the edges, to read
the frame's columns and to build the frame returned.
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
    ranks_from_starts,
    require_columns,
    trec_sort_order,
    unify,
)
from pbtools.io.files import release_memory
from pbtools.measures import kernels as K
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
