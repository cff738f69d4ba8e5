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
    every inner pool, so the work is over those *candidates*, not pairs × topics × width.
    """
    enc, d = problem.enc, problem.depth
    S, new, pair_u, pair_p = problem.pooled, problem.new, problem.pair_u, problem.pair_p
    # who pooled what: C counts every pooled run, CX[g] the pooled runs outside R_p(u) of group g
    C = enc.top_counts(S, d)  # narrow counts (uint8 below 255 runs): gathered values widened
    in_rp = np.zeros((len(new), enc.R), dtype=bool)
    in_rp[pair_u, pair_p] = True
    gX, ginv = np.unique(~in_rp[:, S], axis=0, return_inverse=True)
    ginv = ginv.ravel()
    gi, si = np.nonzero(gX)
    CX = enc.top_counts(S[si], d, groups=gi, n_groups=len(gX))
    var_u = problem.new_var
    removed = _unpooled_judged(problem, C, CX, ginv, replace)  # new × T × labels
    touched = removed.any(axis=2)  # (run, topic) whose inner pools all lose judged documents
    rows = problem.topic_rows(pair_p, var_u[pair_u])
    pr, t = np.nonzero(rows)
    width = K.depth_needed(ms)
    width = enc.L if width is None else max(1, min(width, enc.L))
    n_out = int(np.bincount(gi, minlength=len(gX)).max()) if len(gi) else 0
    # candidates per (p, topic): documents whose count without p is at most n_out
    key = pair_p[pr] * enc.T + t
    keys, kinv = np.unique(key, return_inverse=True)
    kinv = kinv.ravel()
    cand_k, cand_j = [], []
    for sl in row_chunks(len(keys), width):
        kp, kt = keys[sl] // enc.T, keys[sl] % enc.T
        x = enc.D[kp, kt, :width]
        cnt = np.take(C.reshape(-1), kt[:, None] * enc.U + np.maximum(x, 0)).astype(np.int32)
        ci, cj = np.nonzero((x >= 0) & (cnt - (np.arange(width) < d)[None, :] <= n_out))
        cand_k.append(ci + sl.start)
        cand_j.append(cj)
    cand_k, cand_j = np.concatenate(cand_k), np.concatenate(cand_j)
    n_cand = np.bincount(cand_k, minlength=len(keys))
    c_start = np.cumsum(n_cand) - n_cand
    per_row = n_cand[kinv]
    lossy = touched[pair_u[pr], t]
    lost_r, lost_j = [], []
    ends = np.cumsum(per_row)
    lo = 0
    while lo < len(pr):  # chunks of rows with at most CHUNK candidate entries
        hi = max(lo + 1, int(np.searchsorted(ends, ends[lo] - per_row[lo] + CHUNK, "right")))
        rr = np.arange(lo, hi)
        n = per_row[rr]
        er = np.repeat(rr, n)
        off = np.arange(len(er)) - np.repeat(np.cumsum(n) - n, n)
        ej = cand_j[np.repeat(c_start[kinv[rr]], n) + off]
        tt = t[er]
        u = pair_u[pr[er]]
        x = enc.D[pair_p[pr[er]], tt, ej]
        cell = tt * enc.U + x
        count = C.reshape(-1)[cell].astype(np.int32) - CX.reshape(-1)[
            ginv[u] * (enc.T * enc.U) + cell
        ].astype(np.int32)
        # lost: no other run of R_p pooled it, judged, and (``replace``) not in r_u's top d;
        # each test only on the entries that passed the previous one
        k = np.flatnonzero(count - (ej < d) <= 0)
        k = k[problem.lab.reshape(-1)[var_u[u[k]] * (enc.T * enc.U) + cell[k]] >= 0]
        if replace:
            ur = enc.rank(new[u[k]], tt[k], x[k])
            k = k[(ur < 1) | (ur > d)]
        gone = k
        lost_r.append(er[gone])
        lost_j.append(ej[gone])
        lossy[er[gone]] = True
        lo = hi
    lost_r = np.concatenate(lost_r) if lost_r else np.zeros(0, np.int64)
    lost_j = np.concatenate(lost_j) if lost_j else np.zeros(0, np.int64)
    sel = np.flatnonzero(lossy)  # the rows that lose something, in row order
    if not len(sel):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, len(ms)))
    at = np.full(len(pr), -1, dtype=np.int64)
    at[sel] = np.arange(len(sel))
    inv, b_item, b_t, b_vals = before
    b_pos = np.full(int(inv.max()) * enc.T + enc.T if len(inv) else 0, -1, dtype=np.int64)
    b_pos[b_item * enc.T + b_t] = np.arange(len(b_item))
    hist = problem.hist
    lost_at = at[lost_r]  # lost entries in row order
    out_d = np.zeros((len(sel), len(ms)))
    for sl in row_chunks(len(sel), width):
        rows_s = sel[sl]
        rr, tt = pr[rows_s], t[rows_s]
        u, var = pair_u[rr], var_u[pair_u[rr]]
        x = enc.D[pair_p[rr], tt, :width]
        lost = np.zeros(x.shape, dtype=bool)
        a, b = np.searchsorted(lost_at, [sl.start, sl.stop])
        li, lj = lost_at[a:b] - sl.start, lost_j[a:b]
        lost[li, lj] = True
        labels = problem.cell_labels(x, var, tt)
        base = hist[var, tt]
        top = lj < d  # documents below d that are lost are in ``removed`` already
        width_l = base.shape[1]
        gone_hist = np.bincount(
            li[top] * width_l + labels[li[top], lj[top]], minlength=len(rr) * width_l
        ).reshape(len(rr), width_l)
        inner_hist = base - removed[u, tt][:, :width_l] - gone_hist
        after = problem.score_cells(np.where(lost, K.UNJUDGED, labels), inner_hist, ms)
        out_d[sl] = b_vals[b_pos[inv[rr] * enc.T + tt]] - after
    return pr[sel], t[sel], out_d


def _unpooled_judged(problem: Problem, C, CX, ginv, replace: bool) -> np.ndarray:
    """Per run to score and topic: the label histogram of Q_u's judged documents that no run of
    R_p(u) placed in its top d (and, with ``replace``, nor r_u): they are outside every inner
    pool, for every p. Empty in a leave-out experiment, where Q_u is the pool of R_p(u)."""
    enc, d = problem.enc, problem.depth
    width_l = problem.hist.shape[2]
    out = np.zeros((len(problem.new), enc.T, width_l), dtype=np.int64)
    for g in range(len(CX)):  # one pass per distinct R_p (a handful of configurations)
        nobody = C == CX[g]  # every pooler of x is outside R_p
        for u in np.flatnonzero(ginv == g):  # runs sharing R_p: vectorised over topics/docs
            lab = problem.lab[problem.new_var[u]]
            lost = (lab >= 0) & nobody
            if not lost.any():
                continue
            if replace:
                item, t, docs = enc.run_rows(problem.new[u : u + 1], None, d)
                i, j = np.nonzero(docs >= 0)
                lost[t[i], docs[i, j]] = False
            ti, _x = np.nonzero(lost)
            out[u] = np.bincount(
                ti * width_l + lab[lost].astype(np.int64), minlength=enc.T * width_l
            ).reshape(enc.T, width_l)
    return out
