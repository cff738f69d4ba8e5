"""The array core of the evaluation: judged rankings grouped by (keys, run, topic), put in
trec_eval order and scored by the kernels — on integer codes and numpy arrays alone (no pandas
call).

:func:`pbtools.measures.compute` is a pandas adapter of :class:`Grouping`: it reads a frame's
columns as codes (ids over their sorted dictionaries), hands them to it, and builds the frame
returned. There is one grouping, one trec order and one set of kernel inputs in pbtools: these.

The averages are :mod:`~.averages` (pandas' grouped mean, its two summations, on arrays); the
command line's ``evaluate`` runs judge, grouping, scores and averages on codes without pandas
(:mod:`~.encoded`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pbtools.joins import composite_key
from pbtools.measures import kernels as K
from pbtools.measures.names import Measure
from pbtools.measures.stages import stage
from pbtools.order import (  # BLOCK_ROWS: the one block size of row-wise passes
    BLOCK_ROWS,
    group_starts,
    ranks_from_starts,
    trec_sort_order,
)

__all__ = ["Grouping", "kernel_labels"]


def kernel_labels(label: np.ndarray, judged: np.ndarray) -> np.ndarray:
    """The kernels' labels of judged rows: the qrels label, :data:`~.kernels.UNJUDGED` where the
    qrels lack the document (``judged`` False), :data:`~.kernels.POOLED` for a negative qrels
    label ("pooled but unjudged").

    Examples
    --------
    >>> kernel_labels(np.array([2, 0, -1]), np.array([True, False, True])).tolist() == [
    ...     2, K.UNJUDGED, K.POOLED]
    True
    """
    out = np.asarray(label).astype(np.int32)
    out[~judged] = K.UNJUDGED
    out[judged & (out < 0)] = K.POOLED
    return out


class Grouping:
    """Judged rankings grouped by (keys, run, topic), in trec order, with their relevance sets.

    Parameters
    ----------
    run_keys, qrels_keys : list of ndarray
        Codes of the experiment key columns of the judged rows and of the qrels rows, over one
        dictionary per key (``sizes``: the dictionaries' sizes).
    name, qid, doc : ndarray
        Codes of the judged rows' run, topic (over the dictionary shared with ``qrels_qid``,
        ``nq`` ids) and document (any order-preserving codes: ties break on them, descending).
    score : ndarray of float64
    label : ndarray of int16 or int32
        The judged rows' labels: :data:`~.kernels.UNJUDGED` for a document the qrels lack,
        :data:`~.kernels.POOLED` for a negative qrels label.
    qrels_qid, qrels_label : ndarray
        The qrels rows' topic codes and labels (:data:`~.kernels.UNJUDGED` for a missing one).
    n_names : int
        Size of the run dictionary.
    topics : {"judged", "all", "answered"}
        Which (run, topic) are evaluated (:mod:`pbtools.measures.topics`); ``"all"`` needs
        :meth:`add_missing_topics` after construction.
    rank : ndarray, optional
        The rows' 1-based places in their groups when the caller has them (the reader's runs,
        in trec order): used, once checked, when the rows need no sort (no row-sized array
        made for them); else computed.

    Attributes
    ----------
    groups : dict
        ``keys`` (list of code arrays), ``name``, ``qid`` and ``topic`` (row of the relevance
        set) of every group evaluated.
    rows : tuple of ndarray
        ``(group, rank, label)`` of every row of an evaluated group, by group, in trec order.

    Examples
    --------
    Run 0 ranks documents 1 (relevant) and 0 on topic 0, which the qrels judge; topic 1 is not
    judged, so only one group is evaluated:

    >>> import numpy as np
    >>> from pbtools.measures.names import parse_all
    >>> g = Grouping([], np.array([0, 0, 0]), np.array([0, 0, 1]), np.array([2.0, 1.0, 1.0]),
    ...              np.array([1, 0, 0]), np.array([1, -1, -1], np.int32), [],
    ...              np.array([0]), np.array([1]), [], 1, 2)
    >>> values, _ = g.scores(parse_all(["P@1", "AP"]))
    >>> values.tolist(), g.groups["qid"].tolist()
    ([[1.0, 1.0]], [0])
    """

    def __init__(
        self,
        run_keys: Sequence[np.ndarray],
        name: np.ndarray,
        qid: np.ndarray,
        score: np.ndarray,
        doc: np.ndarray,
        label: np.ndarray,
        qrels_keys: Sequence[np.ndarray],
        qrels_qid: np.ndarray,
        qrels_label: np.ndarray,
        sizes: Sequence[int],
        n_names: int,
        nq: int,
        topics: str = "judged",
        rank: np.ndarray | None = None,
    ):
        kj, kq, sizes = list(run_keys), list(qrels_keys), [max(int(s), 1) for s in sizes]
        nq = max(int(nq), 1)
        nc, jqc = name, qid
        # qrels topics (keys..., qid)
        qtid = composite_key([*kq, qrels_qid], [*sizes, nq])
        qorder = np.argsort(qtid, kind="stable")
        qsorted = qtid[qorder]
        tstart = group_starts(qsorted)
        self.tids = qsorted[tstart]
        t_of_row = np.cumsum(tstart) - 1
        qlab = np.asarray(qrels_label, dtype=np.int64)[qorder]
        self.topics = K.Topics(t_of_row, qlab, len(self.tids))
        self.sizes, self.nq = sizes, nq
        # judged rows: order by group, trec order inside
        n_names = max(int(n_names), 1)
        start = group_starts(*kj, nc, jqc)  # (no row-sized key of the groups)
        if not _ordered(start, [*kj, nc, jqc], [*sizes, n_names, nq], score, doc):
            perm = trec_sort_order([*kj, nc, jqc], score, doc)
            kj, nc, jqc = [k[perm] for k in kj], nc[perm], jqc[perm]
            label = label[perm]
            start = group_starts(*kj, nc, jqc)
            rank = None
        if rank is None or not _places(start, rank):
            rank = ranks_from_starts(start)
        g = _group_ids(start)
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
        # the runs (keys…, name) present, each once: every group's, evaluated or not
        self.n_names = n_names
        self._runs = np.unique(composite_key([*gkeys, gname], [*sizes, n_names]))
        self.groups = dict(keys=[k[ok] for k in gkeys], name=gname[ok], qid=gqid[ok], topic=pos[ok])
        if ok.all():  # every row when every group has its qrels topic: no copies
            self.rows = (g, rank, label)
        else:
            keep, new_index = ok[g], (np.cumsum(ok) - 1).astype(g.dtype)
            self.rows = (new_index[g[keep]], rank[keep], label[keep])

    def add_missing_topics(self) -> None:
        """trec_eval ``-c``: add every qrels topic a (keys, run) lacks, as an empty ranking."""
        grp, sizes, nt = self.groups, self.sizes, len(self.tids)
        runs = self._runs  # composite (keys…, name), sorted
        run_key, run_name = runs // self.n_names, runs % self.n_names
        topic_key, topic_qid = self.tids // self.nq, self.tids % self.nq  # tids: by key, sorted
        lo = np.searchsorted(topic_key, run_key, side="left")
        hi = np.searchsorted(topic_key, run_key, side="right")
        n = hi - lo
        run_of = np.repeat(np.arange(len(runs)), n)
        topic = np.repeat(lo - np.cumsum(n) + n, n) + np.arange(int(n.sum()))
        have_run = np.searchsorted(
            runs, composite_key([*grp["keys"], grp["name"]], [*sizes, self.n_names])
        )
        have = np.unique(have_run.astype(np.int64) * max(nt, 1) + grp["topic"])
        miss = ~np.isin(run_of.astype(np.int64) * max(nt, 1) + topic, have)
        if not miss.any():
            return
        run_of, topic = run_of[miss], topic[miss]
        rest = run_key[run_of]
        keys = []
        for size in reversed(sizes):
            keys.append(rest % size)
            rest = rest // size
        keys.reverse()
        grp["keys"] = [
            np.concatenate([k, a.astype(k.dtype, copy=False)])
            for k, a in zip(grp["keys"], keys, strict=True)
        ]
        grp["name"] = np.concatenate([grp["name"], run_name[run_of].astype(grp["name"].dtype)])
        grp["qid"] = np.concatenate([grp["qid"], topic_qid[topic].astype(grp["qid"].dtype)])
        grp["topic"] = np.concatenate([grp["topic"], topic.astype(grp["topic"].dtype)])

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
        stage("view")
        return K.score(view, self.topics, self.groups["topic"], measures, texts=texts)

    def order(self) -> np.ndarray:
        """The groups by keys, run, then topic (the rows of the per-topic results)."""
        grp = self.groups
        return np.lexsort([grp["qid"], grp["name"], *reversed(grp["keys"])])


def _group_ids(start: np.ndarray) -> np.ndarray:
    """Each row's group, 0-based (``start``: the groups' first rows), int32 where the rows fit:
    ``cumsum(start) - 1``, a block of rows at a time (``np.cumsum`` of a boolean into int32
    first copies the whole mask to int32: 40 MB of fresh pages per 10 M rows).

    Examples
    --------
    >>> _group_ids(np.array([True, False, True, True])).tolist()
    [0, 0, 1, 2]
    """
    n = len(start)
    g = np.empty(n, dtype=np.int32 if n < 2**31 else np.int64)
    carry = -1
    for a in range(0, n, BLOCK_ROWS):
        b = min(a + BLOCK_ROWS, n)
        np.cumsum(start[a:b], dtype=g.dtype, out=g[a:b])
        g[a:b] += carry
        carry = int(g[b - 1])
    return g


def _places(start: np.ndarray, rank: np.ndarray) -> bool:
    """Whether ``rank`` holds each row's 1-based place in its group (``start``: the groups'
    first rows), checked a block of rows at a time.

    Examples
    --------
    >>> start = np.array([True, False, True])
    >>> _places(start, np.array([1, 2, 1])), _places(start, np.array([1, 2, 2]))
    (True, False)
    """
    n = len(start)
    if len(rank) != n or (n and rank[0] != 1):
        return False
    m = min(n, BLOCK_ROWS)
    one, step, nxt = np.empty(m, bool), np.empty(m, bool), np.empty(m, rank.dtype)
    for a in range(1, n, BLOCK_ROWS):  # (the blocks' temporaries reused: no fresh pages)
        b = min(a + BLOCK_ROWS, n)
        r, o, s, x = rank[a:b], one[: b - a], step[: b - a], nxt[: b - a]
        np.add(rank[a - 1 : b - 1], 1, out=x)
        np.equal(r, x, out=s)  # one more than the row before, or 1 at a group's start
        np.equal(r, 1, out=o)
        np.copyto(s, o, where=start[a:b])
        if not s.all():
            return False
    return True


def _ordered(start: np.ndarray, keys, sizes, score: np.ndarray, doc: np.ndarray) -> bool:
    """Groups contiguous (``start``: the first rows of the runs of equal ``keys``, code
    arrays over ``sizes`` values, each once) and trec-ordered inside (then no sort is needed),
    checked a block of rows at a time: no row-sized temporary.

    Examples
    --------
    >>> gid, score = np.array([0, 0, 1]), np.array([2.0, 2.0, 1.0])
    >>> _ordered(group_starts(gid), [gid], [2], score, np.array([5, 4, 9]))
    True
    >>> _ordered(group_starts(gid), [gid], [2], score, np.array([4, 5, 9]))  # docno descending
    False
    >>> gid = np.array([0, 1, 0])  # group 0 twice
    >>> _ordered(group_starts(gid), [gid], [2], np.ones(3), np.zeros(3))
    False
    """
    n = len(start)
    if n < 2:
        return True
    heads = composite_key([k[start] for k in keys], sizes)
    if len(np.unique(heads)) != len(heads):
        return False
    m = min(n, BLOCK_ROWS)
    ok, tie, lower = np.empty(m, bool), np.empty(m, bool), np.empty(m, bool)
    for a in range(1, n, BLOCK_ROWS):  # (the blocks' temporaries reused: no fresh pages)
        b = min(a + BLOCK_ROWS, n)
        s0, s1 = score[a - 1 : b - 1], score[a:b]
        o, t, lo = ok[: b - a], tie[: b - a], lower[: b - a]
        np.less(s1, s0, out=o)  # (s1 < s0) | ((s1 == s0) & (doc < doc before)) | start
        np.equal(s1, s0, out=t)
        np.less(doc[a:b], doc[a - 1 : b - 1], out=lo)
        t &= lo
        o |= t
        o |= start[a:b]
        if not o.all():
            return False
    return True
