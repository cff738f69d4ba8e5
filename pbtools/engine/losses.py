"""Webber & Park Algorithm 1, the per-topic losses: what each pooled run p loses on each topic
when it is withdrawn from R_p (:class:`pbtools.corrections.webber.WebberOnRuns`).

For a run to score u and p ∈ R_p(u), Q_u,p = Q_u ∩ pool_d(R_p \\ {p} [∪ {r_u}]) and the loss on
topic t is score(p, Q_u) − score(p, Q_u,p). The work is sparse at every step:

* only the documents of p's top ``width`` (the measures' deepest cut-off) that few runs pooled
  can be lost (*candidates*, per (p, topic));
* the documents lost before r_u's rescue depend on the pair only through (R_p, Q_u's variant,
  p, topic): they are found once per such *base* row for all the runs sharing it, then r_u's top
  d is taken out per pair (:func:`lost_entries`);
* only the (pair, topic) rows that lose a judged document are re-scored, and each distinct
  re-scored ranking — the same run, topic, labels, lost ranks and relevance set — once
  (:func:`distinct_rows`); the scores come from the one
  engine (:meth:`Problem.score_cells`).
"""

from __future__ import annotations

import numpy as np

from pbtools.engine.dense import CHUNK, expand_ranges, row_chunks
from pbtools.engine.problem import Problem
from pbtools.engine.rowgroups import dense_unique, same_rankings
from pbtools.measures import kernels as K

__all__ = [
    "loss_rows",
    "lost_entries",
    "distinct_rows",
]


def loss_rows(problem: Problem, ms, replace: bool, before=None):
    """Per (R_p pair, topic) row where p's withdrawal changes Q_u, the loss on that topic.

    Parameters
    ----------
    problem : Problem
        The estimation problem.
    ms : list of Measure
        The measures (parsed).
    replace : bool
        r_u takes p's place in the inner pool.
    before : tuple, optional
        ``(inv, item, t, values)``: the per-topic scores score(p, Q_u) of the (variant, pooled
        run) combinations (:meth:`Problem.per_topic`: ``item``, ``t``, ``values``) and each
        pair's combination ``inv``; by default the problem's own
        (:meth:`Problem.pooled_variant_scores`, scored once for every estimator).

    Returns
    -------
    pair, t : ndarray
        The rows that lose something: R_p pair index and topic, in (pair, topic) order.
    loss : ndarray
        rows × measures: score(p, Q_u) − score(p, Q_u,p) on that topic.

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools.engine.build import from_frames
    >>> from pbtools.measures.names import parse_all
    >>> def run(name, docs):
    ...     return pd.DataFrame({"name": name, "qid": "1", "docno": list(docs),
    ...                          "score": range(len(docs), 0, -1)})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("abcd"), "label": [1, 1, 1, 0]})
    >>> pb = from_frames(pd.concat([run("p1", "abz"), run("p2", "cdw")]), run("u", "cqr"),
    ...                  qrels, depth=2)
    >>> ms = parse_all(["P@2"])
    >>> pair, t, loss = loss_rows(pb, ms, True)
    >>> pair.tolist(), loss.ravel().tolist()  # p1 loses a and b; p2 loses d (u rescues c)
    ([0, 1], [1.0, 0.0])
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
    inner_hist = hist[var, tt] - gone_hist
    if removed.any():  # never in a leave-out experiment
        inner_hist -= removed[u, tt]
    key_hist = inner_hist if K.reads_relevance_set(ms) else None  # P@n: any Q_u,p alike
    rep, grp = distinct_rows(problem, pp, tt, var, key_hist, lost_at, lost_j, width)
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
    inv, b_item, b_t, b_vals = problem.pooled_variant_scores(ms) if before is None else before
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
        every inner pool (:func:`_unpooled_judged`): new × T × labels.
    lost_r, lost_j, lost_cell : ndarray
        The lost documents of p's top ``width``: row, rank − 1, and cell ``t · U + x``
        (x the local document); sorted by row, then rank.

    Examples
    --------
    >>> from pbtools.engine.build import from_frames
    >>> import pandas as pd
    >>> pooled = pd.DataFrame({"name": ["p1"] * 3 + ["p2"] * 3, "qid": "1",
    ...                        "docno": list("abzcdw"), "score": [3, 2, 1] * 2})
    >>> u = pd.DataFrame({"name": "u", "qid": "1", "docno": list("cqr"), "score": [3, 2, 1]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("abcd"), "label": [1, 1, 1, 0]})
    >>> pb = from_frames(pooled, u, qrels, depth=2)
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
    removed = _unpooled_judged(problem, C, CX.reshape(len(gX), enc.T, enc.U), ginv, replace)
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
        eb, ix = expand_ranges(b_c[lo:hi], b_n[lo:hi])
        eb += lo
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
            er, e = expand_ranges(r_s[lo:hi], r_n[lo:hi])
            er += lo
            parts.append((er, l0_ix[e], l0_cell[e]))
    u_pooled = np.isin(new, S)  # runs to score whose top d C counts
    lost_r, lost_j, lost_cell = [], [], []
    for er, ix, cell in parts:
        if replace:  # and not in r_u's top d: looked up only where r_u could have it there
            # (a pooled r_u with x in its top d is one of x's poolers besides p: count > 0)
            q = np.flatnonzero((cand_c[ix] > 0) | ~u_pooled[row_u[er]])
            tt = t[er[q]]
            ur = enc.rank(new[row_u[er[q]]], tt, cell[q] - tt * enc.U)
            keep = np.ones(len(er), dtype=bool)
            keep[q[(ur >= 1) & (ur <= d)]] = False
            k = np.flatnonzero(keep)
            er, ix, cell = er[k], ix[k], cell[k]
        lost_r.append(er)
        lost_j.append(cand_j[ix])
        lost_cell.append(cell)
        lossy[er] = True
    if len(lost_r) == 1:
        lost_r, lost_j, lost_cell = lost_r[0], lost_j[0], lost_cell[0]
    elif lost_r:
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


def distinct_rows(problem: Problem, p, t, var, hist, lost_at, lost_j, width: int):
    """The distinct re-scored rankings among rows.

    Two rows are the same ranking when they rank the same run on the same topic, their labels
    of its top ``width`` agree (the same variant, or both agree with the reference variant
    there), they lose the same ranks and their relevance sets have the same histogram (when
    ``hist`` is given). Exact:
    the rows are compared on those keys (:func:`~pbtools.engine.rowgroups.same_rankings`).

    Parameters
    ----------
    problem : Problem
        The estimation problem.
    p, t, var : ndarray
        Per row: the pooled run (slot) re-scored, the topic and the variant of its labels.
    hist : ndarray or None
        rows × labels: each row's inner relevance set Q_u,p; None when the measures do not read
        it (:func:`~pbtools.measures.kernels.reads_relevance_set`).
    lost_at, lost_j : ndarray
        The lost documents: row and rank − 1.
    width : int
        How much of each ranking is scored.

    Returns
    -------
    rep, grp : ndarray
        One representative row per distinct ranking (its first row), and each row's index
        into ``rep``.

    Examples
    --------
    >>> from pbtools.engine.build import from_frames
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
    n = len(p)
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
    ref = 0 if problem.truth_var is None else int(problem.truth_var)
    extra = [*words.reshape(n, n_words).view(np.int64).T]
    if hist is not None:
        extra += [*np.asarray(hist, np.int64).T]
    return same_rankings(problem.enc.D, problem.lab, ref, p, var, t, width, extra)


def _unpooled_judged(problem: Problem, C, CX, ginv, replace: bool) -> np.ndarray:
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
