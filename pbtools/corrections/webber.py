"""Webber & Park 2009 (SIGIR), Algorithm 1: score adjustment inferred from the pooled systems.

For an unpooled run r_u scored on qrels Q built by the pooled runs R_p, every p ∈ R_p is
withdrawn in turn: its documents that no other run of R_p placed in its top d become unjudged,

    Q_p = Q ∩ pool_d(R_p \\ {p} [∪ {r_u}]),

and the loss score(p, Q) − score(p, Q_p) is what a run like p loses by not being pooled. The
adjustment is its mean a = mean_{p ∈ R_p} [score(p, Q) − score(p, Q_p)] and the estimate
score(r_u, Q) + a. With ``replace=True`` (their refinement, the default) r_u takes p's place in
the inner pool; ``replace=False`` is the reading of Lipani et al. 2015 (PROTOCOL-lipani2015
item 13, with ``rp="run"`` and rounding).

The adjustment is defined for any measure, and pbtools computes it for every measure it has (P@n,
R@n, AP, nDCG, nDCG@n, RBP, Bpref, RR, …): Q_p is a relevance set in its own right — its labels
are Q's with the withdrawn documents unjudged, and its label histogram (R, the ideal ranking) is
Q's minus theirs — and the scores come from the one scoring engine.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.corrections.base import Estimator
from pbtools.corrections.problem import Problem
from pbtools.measures import kernels as K
from pbtools.measures.names import parse_all
from pbtools.pooling.dense import CHUNK, row_chunks

__all__ = ["WebberOnRuns"]


class WebberOnRuns(Estimator):
    """Webber & Park 2009 Algorithm 1 (inference from pooled systems), every measure.

    Parameters
    ----------
    replace : bool, optional
        The new run replaces the withdrawn pooled run in the inner pool (their refinement;
        default ``True``).
    measures, protocol, depth
        As :class:`~pbtools.corrections.base.Estimator`.
    rp : {"org", "run"}, optional
        R_p without r_u's unit, or without r_u only (PROTOCOL item 12).
    decimals : int, optional
        Half-up rounding of every run-level score before it is combined (PROTOCOL item 10).
    topics : {"judged", "all", "answered"}, optional
        Topic averaging (:mod:`pbtools.measures.topics`).

    Examples
    --------
    >>> import pandas as pd
    >>> def run(name, docs):
    ...     return pd.DataFrame({"name": name, "qid": "1", "docno": list(docs),
    ...                          "score": range(len(docs), 0, -1)})
    >>> pooled = pd.concat([run("p1", "abzz"), run("p2", "cdww")])
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("abcd"), "label": [1, 1, 1, 0]})
    >>> est = WebberOnRuns(measures=["P@2", "AP"], depth=2).fit(pooled, qrels)
    >>> est.score(run("u", "cqrs"))[["measure", "value", "adjustment"]].round(4).to_numpy().tolist()
    [['P@2', 1.0, 0.5], ['AP', 0.6667, 0.3333]]
    """

    name = "webber"
    choice_names = ("decimals", "topics", "replace", "rp")

    def __init__(
        self,
        replace: bool | None = None,
        measures=("P@10",),
        rp: str | None = None,
        decimals: int | None = None,
        topics: str | None = None,
        protocol: str | None = None,
        depth: int | None = None,
    ):
        super().__init__(measures, decimals, topics, protocol, depth)
        self.replace, self.rp = replace, rp

    def estimate(self, problem: Problem, measures) -> pd.DataFrame:
        """Algorithm 1 for every run of the problem and every measure at once."""
        ms = parse_all(measures)
        own = problem.own(ms)
        n_new, M = len(problem.new), len(ms)
        if len(problem.pair_u) == 0:
            return problem.frame(
                own, ms, self.name, adjustment=np.zeros_like(own), n_pooled=np.zeros_like(own)
            )
        replace = bool(self.choices()["replace"])
        full, inner, pu = _losses(problem, ms, replace)
        term = problem.rounded(full) - problem.rounded(inner)  # pairs × measures
        ok = np.isfinite(term).all(axis=1)
        adj = Problem.means(pu[ok], term[ok], n_new)
        n_pooled = np.bincount(pu[ok], minlength=n_new).astype(np.float64)
        adj = np.where(np.isfinite(adj), adj, 0.0)
        return problem.frame(
            own + adj, ms, self.name, adjustment=adj, n_pooled=np.repeat(n_pooled, M)
        )


def _losses(problem: Problem, ms, replace: bool):
    """score(p, Q_u) and score(p, Q_u,p) run means for every R_p pair (pairs × measures).

    score(p, Q_u,p) = score(p, Q_u) − the mean loss over p's topics: the per-topic losses
    (:func:`_loss_rows`) do not depend on the topic weights of a bootstrap replicate, so they
    are computed once (:meth:`Problem.memo`) and only re-averaged.
    """
    enc, pair_u, pair_p, var_u = problem.enc, problem.pair_u, problem.pair_p, problem.new_var
    # score(p, Q_u): every pooled run once per variant it is compared under (its own topics)
    combo = var_u[pair_u] * enc.R + pair_p
    uc, inv = np.unique(combo, return_inverse=True)
    inv = inv.ravel()
    item, t, vals = problem.per_topic(uc % enc.R, uc // enc.R, ms)
    full = problem.topic_means(item, t, vals, len(uc))[inv]
    n_topics = problem.topic_counts(item, t, len(uc))[inv]
    before = (inv, item, t, vals)
    rr, tt, diff = problem.memo(
        ("webber_loss", tuple(ms), replace), lambda: _loss_rows(problem, ms, replace, before)
    )
    w = None if problem.weights is None else problem.weights[tt]
    loss = np.zeros((len(pair_u), len(ms)))
    for j in range(len(ms)):  # a handful of measures
        v = diff[:, j] if w is None else diff[:, j] * w
        loss[:, j] = np.bincount(rr, weights=v, minlength=len(loss))
    with np.errstate(invalid="ignore", divide="ignore"):
        inner = full - loss / n_topics[:, None]
    return full, inner, pair_u


def _loss_rows(problem: Problem, ms, replace: bool, before):
    """Per (R_p pair, topic) row where p's withdrawal changes Q_u: ``(pair, t, loss)`` with
    loss = score(p, Q_u) − score(p, Q_u,p) on that topic (rows × measures).

    ``before``: ``(inv, item, t, values)`` — the per-topic scores score(p, Q_u) of the
    (variant, pooled run) combinations (:meth:`Problem.per_topic`) and each pair's combination.
    Only documents that can be lost are examined: a document of p's top ``width`` whose count
    over the pooled runs minus p's own vote exceeds the most runs any R_p excludes survives
    every inner pool, so the work is over those *candidates*, not pairs × topics × width
    (:func:`lost_entries`). Only the rows that lose something are re-scored, and each distinct
    re-scored ranking once (:func:`distinct_rows`): many pairs (u, p) withdraw the same
    documents from p's ranking and leave the same relevance set.
    """
    enc = problem.enc
    pair_u, pair_p, var_u = problem.pair_u, problem.pair_p, problem.new_var
    width = K.depth_needed(ms)
    width = enc.L if width is None else max(1, min(width, enc.L))
    pr, t, lossy, removed, lost_r, lost_j, lost_cell = lost_entries(problem, width, replace)
    sel = np.flatnonzero(lossy)  # the rows that lose something, in row order
    if not len(sel):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, len(ms)))
    at = np.full(len(pr), -1, dtype=np.int64)
    at[sel] = np.arange(len(sel))
    lost_at = at[lost_r]  # lost entries by re-scored row (non-decreasing)
    rows, tt = pr[sel], t[sel]
    u = pair_u[rows]
    var, pp = var_u[u], pair_p[rows]
    TU = enc.T * enc.U
    # Q_u,p's label histogram: Q_u's minus the judged documents outside every inner pool
    # (``removed``) minus the lost documents of p's top d (those below d are in ``removed``)
    hist = problem.hist
    width_l = hist.shape[2]
    top = lost_j < problem.depth
    gone_lab = problem.lab.reshape(-1)[var[lost_at[top]] * TU + lost_cell[top]].astype(np.int64)
    gone_hist = np.bincount(
        lost_at[top] * width_l + gone_lab, minlength=len(sel) * width_l
    ).reshape(len(sel), width_l)
    inner_hist = hist[var, tt] - removed[u, tt] - gone_hist
    rep, grp = distinct_rows(problem, pp, tt, var, inner_hist, lost_at, lost_j, width)
    # each distinct ranking scored once: p's top ``width`` under Q_u with its lost documents
    # unjudged, against Q_u,p's histogram
    after = np.zeros((len(rep), len(ms)))
    slot = np.full(len(sel), -1, dtype=np.int64)
    slot[rep] = np.arange(len(rep))
    lost_slot = slot[lost_at]
    keep = lost_slot >= 0
    ls, lj = lost_slot[keep], lost_j[keep]  # non-decreasing in ls
    for sl in row_chunks(len(rep), width):
        r = rep[sl]
        labels = problem.cell_labels(enc.D[pp[r], tt[r], :width], var[r], tt[r])
        a, b = np.searchsorted(ls, [sl.start, sl.stop])
        labels[ls[a:b] - sl.start, lj[a:b]] = K.UNJUDGED
        after[sl] = problem.score_cells(labels, inner_hist[r], ms)
    inv, b_item, b_t, b_vals = before
    b_pos = np.full(int(inv.max()) * enc.T + enc.T if len(inv) else 0, -1, dtype=np.int64)
    b_pos[b_item * enc.T + b_t] = np.arange(len(b_item))
    out_d = b_vals[b_pos[inv[rows] * enc.T + tt]] - after[grp]
    return rows, tt, out_d


def lost_entries(problem: Problem, width: int, replace: bool):
    """The documents each (R_p pair, topic) row loses when p is withdrawn from R_p.

    Parameters
    ----------
    problem : Problem
        The estimation problem.
    width : int
        How much of p's ranking is examined (the measures' deepest cut-off).
    replace : bool
        r_u takes p's place in the inner pool: r_u's top d is never lost.

    Returns
    -------
    pr, t : ndarray
        The rows: R_p pair index and topic of every topic p is averaged over.
    lossy : ndarray
        Per row, whether Q_u,p differs from Q_u on that topic.
    removed : ndarray
        Per run to score and topic, the label histogram of Q_u's judged documents outside
        every inner pool (:func:`unpooled_judged`): new × T × labels.
    lost_r, lost_j, lost_cell : ndarray
        The lost documents of p's top ``width``: row, rank − 1, and cell ``t · U + x``
        (x the local document); sorted by row, then rank.

    Examples
    --------
    >>> from pbtools.corrections.problem import from_frames
    >>> import pandas as pd
    >>> def run(name, docs):
    ...     return pd.DataFrame({"name": name, "qid": "1", "docno": list(docs),
    ...                          "score": range(len(docs), 0, -1)})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("abcd"), "label": [1, 1, 1, 0]})
    >>> pb = from_frames(pd.concat([run("p1", "abz"), run("p2", "cdw")]), run("u", "cqr"),
    ...                  qrels, depth=2)
    >>> pr, t, lossy, removed, lost_r, lost_j, _ = lost_entries(pb, 2, replace=True)
    >>> pr.tolist(), lossy.tolist(), lost_r.tolist(), lost_j.tolist()
    ([0, 1], [True, True], [0, 0, 1], [0, 1, 1])
    """
    enc, d = problem.enc, problem.depth
    S, new, pair_u, pair_p = problem.pooled, problem.new, problem.pair_u, problem.pair_p
    var_u = problem.new_var
    TU = enc.T * enc.U
    # who pooled what: C counts every pooled run, CX[g] the pooled runs outside R_p(u) of group g
    C = enc.top_counts(S, d)  # narrow counts (uint8 below 255 runs): gathered values widened
    in_rp = np.zeros((len(new), enc.R), dtype=bool)
    in_rp[pair_u, pair_p] = True
    gX, ginv = np.unique(~in_rp[:, S], axis=0, return_inverse=True)
    ginv = ginv.ravel()
    gi, si = np.nonzero(gX)
    CX = enc.top_counts(S[si], d, groups=gi, n_groups=len(gX)).reshape(-1)
    removed = unpooled_judged(problem, C, CX.reshape(len(gX), enc.T, enc.U), ginv, replace)
    touched = removed.any(axis=2)  # (run, topic) whose inner pools all lose judged documents
    rows = problem.topic_rows(pair_p, var_u[pair_u])
    pr, t = np.nonzero(rows)
    n_out = int(np.bincount(gi, minlength=len(gX)).max()) if len(gi) else 0
    # candidates per (p, topic): documents whose count without p's own vote is at most n_out
    keys, kinv = dense_unique(pair_p[pr] * enc.T + t, enc.R * enc.T)
    own = (np.arange(width) < d).astype(np.int32)[None, :]
    cand_k, cand_j, cand_cell, cand_c = [], [], [], []
    for sl in row_chunks(len(keys), width):
        kp, kt = keys[sl] // enc.T, keys[sl] % enc.T
        x = enc.D[kp, kt, :width]
        cell = kt[:, None] * enc.U + np.maximum(x, 0)
        cnt = np.take(C.reshape(-1), cell).astype(np.int32) - own
        ci, cj = np.nonzero((x >= 0) & (cnt <= n_out))
        cand_k.append(ci + sl.start)
        cand_j.append(cj)
        cand_cell.append(cell[ci, cj])
        cand_c.append(cnt[ci, cj])
    cand_k, cand_j = np.concatenate(cand_k), np.concatenate(cand_j)
    cand_cell, cand_c = np.concatenate(cand_cell), np.concatenate(cand_c)
    n_cand = np.bincount(cand_k, minlength=len(keys))
    c_start = np.cumsum(n_cand) - n_cand
    row_u = pair_u[pr]
    lossy = touched[row_u, t]
    lab = problem.lab.reshape(-1)
    # the documents lost before r_u's rescue depend on the row through (R_p group, variant,
    # p, topic) only: each such *base* row is examined once for all the runs that share it
    gv, gvi = np.unique(ginv * len(problem.lab) + var_u, return_inverse=True)
    shared = len(gv) < len(new)
    base = np.arange(len(pr))
    if shared:  # any row of a base stands for it
        s_pos = np.zeros(enc.R, dtype=np.int64)
        s_pos[S] = np.arange(len(S))
        bkey = (gvi.ravel()[row_u] * len(S) + s_pos[pair_p[pr]]) * enc.T + t
        ub, binv = dense_unique(bkey, len(gv) * len(S) * enc.T)
        base = np.empty(len(ub), dtype=np.int64)
        base[binv] = np.arange(len(pr))
    b_g = ginv[row_u[base]] * TU  # the base's count table of the runs outside R_p(u)
    b_v = var_u[row_u[base]] * TU  # its relevance set
    b_n = n_cand[kinv[base]]
    b_c = c_start[kinv[base]]
    l0 = []
    for lo, hi in _chunks(b_n):
        eb, ix = _expand(b_c, b_n, lo, hi)
        cell = cand_cell[ix]
        # lost: no other run of R_p pooled it and judged (each test only on the entries that
        # passed the previous one)
        k = np.flatnonzero(cand_c[ix] <= CX[np.repeat(b_g[lo:hi], b_n[lo:hi]) + cell])
        eb, ix, cell = eb[k], ix[k], cell[k]
        k = np.flatnonzero(lab[b_v[eb] + cell] >= 0)
        l0.append((eb[k], ix[k], cell[k]))
    parts = l0
    if shared:  # the base's entries repeated for each of its rows
        l0_b, l0_ix, l0_cell = (np.concatenate(c) for c in zip(*l0, strict=True))
        m = np.bincount(l0_b, minlength=len(ub))
        r_n, r_s = m[binv], (np.cumsum(m) - m)[binv]
        parts = []
        for lo, hi in _chunks(r_n):
            er, e = _expand(r_s, r_n, lo, hi)
            parts.append((er, l0_ix[e], l0_cell[e]))
    lost_r, lost_j, lost_cell = [], [], []
    for er, ix, cell in parts:
        if replace:  # and not in r_u's top d
            tt = t[er]
            ur = enc.rank(new[row_u[er]], tt, cell - tt * enc.U)
            k = np.flatnonzero((ur < 1) | (ur > d))
            er, ix, cell = er[k], ix[k], cell[k]
        lost_r.append(er)
        lost_j.append(cand_j[ix])
        lost_cell.append(cell)
        lossy[er] = True
    if lost_r:
        lost_r, lost_j = np.concatenate(lost_r), np.concatenate(lost_j)
        lost_cell = np.concatenate(lost_cell)
    else:
        lost_r = lost_j = lost_cell = np.zeros(0, np.int64)
    return pr, t, lossy, removed, lost_r, lost_j, lost_cell


def _chunks(n: np.ndarray):
    """``(lo, hi)`` slices of rows whose ``n`` entries sum to at most :data:`CHUNK` (or one
    row)."""
    ends = np.cumsum(n)
    lo = 0
    while lo < len(n):
        hi = max(lo + 1, int(np.searchsorted(ends, ends[lo] - n[lo] + CHUNK, "right")))
        yield lo, hi
        lo = hi


def _expand(start: np.ndarray, n: np.ndarray, lo: int, hi: int):
    """Rows ``lo:hi`` each repeated ``n`` times, with the positions ``start …
    start + n − 1`` of its entries: ``(row, position)``."""
    n = n[lo:hi]
    first = np.cumsum(n) - n
    row = np.repeat(np.arange(lo, hi), n)
    return row, np.arange(len(row)) + np.repeat(start[lo:hi] - first, n)


def distinct_rows(problem: Problem, p, t, var, hist, lost_at, lost_j, width: int):
    """The distinct re-scored rankings among rows (pooled run ``p``, topic ``t``, variant
    ``var``, inner histogram ``hist``, lost ranks ``lost_j`` of row ``lost_at``).

    Two rows are the same ranking when they rank the same run on the same topic, their labels
    of its top ``width`` agree (the same variant, or both agree with the reference variant
    there), they lose the same ranks and their relevance sets have the same histogram. Exact:
    the rows are compared on those keys, not hashed.

    Returns
    -------
    rep, grp : ndarray
        One representative row per distinct ranking (its first row), and each row's index
        into ``rep``.

    Examples
    --------
    >>> from pbtools.corrections.problem import from_frames
    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("ab"), "label": [1, 0]})
    >>> p1 = pd.DataFrame({"name": "p1", "qid": "1", "docno": list("ab"), "score": [2, 1]})
    >>> pb = from_frames(p1, p1.assign(name="u"), qrels, depth=2)
    >>> p, t, var = np.array([0, 0, 0]), np.array([0, 0, 0]), np.array([0, 0, 0])
    >>> hist = np.array([[1, 1], [1, 1], [1, 0]])
    >>> rep, grp = distinct_rows(pb, p, t, var, hist, np.array([0, 1, 2]), np.array([1, 1, 0]), 2)
    >>> rep.tolist(), grp.tolist()
    ([0, 2], [0, 0, 1])
    """
    enc = problem.enc
    n = len(p)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # the labels of p's top ``width`` under ``var``: the reference variant's where they agree
    trip = (var.astype(np.int64) * enc.R + p) * enc.T + t
    ut, tinv = dense_unique(trip, len(problem.lab) * enc.R * enc.T)
    labkey = np.where(_same_labels(problem, ut, width)[tinv], -1, var.astype(np.int64))
    # the lost ranks as a bitset (distinct bits: their sum is their union)
    n_words = (width + 63) // 64
    words = np.zeros(n * n_words, dtype=np.uint64)
    if len(lost_at):
        f = lost_at * n_words + lost_j // 64
        bit = np.left_shift(np.uint64(1), (lost_j % 64).astype(np.uint64))
        order = np.argsort(f, kind="stable")
        f, bit = f[order], bit[order]
        head = np.flatnonzero(np.r_[True, f[1:] != f[:-1]])
        words[f[head]] = np.add.reduceat(bit, head)
    cols = [
        (p.astype(np.int64) * enc.T + t) * (len(problem.lab) + 1) + labkey + 1,
        *words.reshape(n, n_words).view(np.int64).T,
        *np.asarray(hist, dtype=np.int64).T,
    ]
    return group_rows(cols)


def group_rows(cols) -> tuple[np.ndarray, np.ndarray]:
    """Rows with equal values in every column of ``cols`` (int64 arrays of one length).

    Returns ``(rep, grp)``: the first row of each group, in row order, and each row's group
    (an index into ``rep``). The rows are grouped by a 64-bit mix of their columns and the
    groups then checked column by column against their first row; should two different rows
    ever share a mix, the rows are sorted on the columns themselves instead: exact either way.

    Examples
    --------
    >>> rep, grp = group_rows([np.array([3, 1, 3, 1]), np.array([0, 5, 0, 6])])
    >>> rep.tolist(), grp.tolist()
    ([0, 1, 3], [0, 1, 0, 2])
    """
    n = len(cols[0])
    h = np.zeros(n, dtype=np.uint64)
    for c in cols:
        h = (h ^ c.view(np.uint64)) * np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(29)
    order = np.argsort(h)
    hs = h[order]
    head = np.flatnonzero(np.r_[True, hs[1:] != hs[:-1]])
    first = np.minimum.reduceat(order, head)  # each group's first row
    inv = np.empty(n, dtype=np.int64)
    inv[order] = np.repeat(np.arange(len(head)), np.diff(np.r_[head, n]))
    if not all((c == c[first][inv]).all() for c in cols):  # a collision of the mix
        order = np.lexsort(cols[::-1])
        head = np.r_[True, np.any([c[order][1:] != c[order][:-1] for c in cols], axis=0)]
        inv = np.empty(n, dtype=np.int64)
        inv[order] = np.cumsum(head) - 1
        first = order[head]
    o = np.argsort(first, kind="stable")  # groups numbered in the order of their first row
    rank = np.empty(len(first), dtype=np.int64)
    rank[o] = np.arange(len(first))
    return first[o], rank[inv]


def dense_unique(key: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for non-negative keys below ``size``: a table
    of ``size`` flags instead of a sort when that is not much larger than ``key``.

    Examples
    --------
    >>> u, inv = dense_unique(np.array([5, 2, 5, 7]), 8)
    >>> u.tolist(), inv.tolist()
    ([2, 5, 7], [1, 0, 1, 2])
    """
    if size > 8 * len(key) + (1 << 16):
        u, inv = np.unique(key, return_inverse=True)
        return u, inv.ravel()
    seen = np.zeros(size, dtype=bool)
    seen[key] = True
    u = np.flatnonzero(seen)
    pos = np.cumsum(seen) - 1
    return u, pos[key]


def _same_labels(problem: Problem, trips: np.ndarray, width: int) -> np.ndarray:
    """Per (variant, pooled run p, topic) key of ``trips`` (sorted, unique): whether the
    labels of p's top ``width`` under the variant are those of the reference variant (the
    truth, or variant 0). Sparse: only the cells where a variant's labels differ from the
    reference are looked up among the pooled runs' top ``width``."""
    enc = problem.enc
    V, T, U, RT = len(problem.lab), enc.T, enc.U, enc.R * enc.T
    ref = 0 if problem.truth_var is None else int(problem.truth_var)
    same = np.ones(len(trips), dtype=bool)
    # the top ``width`` documents of every (p, t) of the keys, by cell t · U + x
    pt, _ = dense_unique(trips % RT, RT)
    docs = enc.D[pt // T, pt % T, :width]
    i, j = np.nonzero(docs >= 0)
    ecell = (pt[i] % T) * U + docs[i, j]
    ept = pt[i]
    cells, cinv = dense_unique(ecell, T * U)
    lab = problem.lab.reshape(V, T * U)
    changed = np.zeros(len(cells), dtype=bool)  # the cells some variant labels otherwise
    for sl in row_chunks(len(cells), V):
        changed[sl] = (lab[:, cells[sl]] != lab[ref, cells[sl]][None, :]).any(axis=0)
    e = np.flatnonzero(changed[cinv])  # the entries on those cells
    for sl in row_chunks(len(e), V):
        c = cells[cinv[e[sl]]]
        vv, ei = np.nonzero(lab[:, c] != lab[ref, c][None, :])
        key = vv * RT + ept[e[sl][ei]]
        pos = np.minimum(np.searchsorted(trips, key), len(trips) - 1)
        same[pos[trips[pos] == key]] = False
    return same


def unpooled_judged(problem: Problem, C, CX, ginv, replace: bool) -> np.ndarray:
    """Per run to score and topic: the label histogram of Q_u's judged documents that no run of
    R_p(u) placed in its top d (and, with ``replace``, nor r_u): they are outside every inner
    pool, for every p. Empty in a leave-out experiment, where Q_u is the pool of R_p(u).

    ``C``: T × U counts of the pooled runs' top d; ``CX``: groups × T × U counts of the pooled
    runs outside each group's R_p; ``ginv``: each run's group. Returns new × T × labels.
    """
    enc, d = problem.enc, problem.depth
    width_l = problem.hist.shape[2]
    out = np.zeros((len(problem.new), enc.T, width_l), dtype=np.int64)
    gv = ginv.astype(np.int64) * len(problem.lab) + problem.new_var
    for c in np.unique(gv):  # one pass per distinct (R_p, variant): a handful of configurations
        g, v = divmod(int(c), len(problem.lab))
        lab = problem.lab[v]
        base = (lab >= 0) & (C == CX[g])  # judged, and every pooler of x is outside R_p
        if not base.any():
            continue
        for u in np.flatnonzero(gv == c):  # runs sharing both: vectorised over topics/docs
            lost = base.copy()
            if replace:
                item, t, docs = enc.run_rows(problem.new[u : u + 1], None, d)
                i, j = np.nonzero(docs >= 0)
                lost[t[i], docs[i, j]] = False
            ti, _x = np.nonzero(lost)
            out[u] = np.bincount(
                ti * width_l + lab[lost].astype(np.int64), minlength=enc.T * width_l
            ).reshape(enc.T, width_l)
    return out
