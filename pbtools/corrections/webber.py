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
from pbtools.pooling.dense import row_chunks

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
    rr, tt, diff = problem.memo(
        ("webber_loss", tuple(ms), replace), lambda: _loss_rows(problem, ms, replace)
    )
    w = None if problem.weights is None else problem.weights[tt]
    loss = np.zeros((len(pair_u), len(ms)))
    for j in range(len(ms)):  # a handful of measures
        v = diff[:, j] if w is None else diff[:, j] * w
        loss[:, j] = np.bincount(rr, weights=v, minlength=len(loss))
    with np.errstate(invalid="ignore", divide="ignore"):
        inner = full - loss / n_topics[:, None]
    return full, inner, pair_u


def _loss_rows(problem: Problem, ms, replace: bool):
    """Per (R_p pair, topic) row where p's withdrawal changes Q_u: ``(pair, t, loss)`` with
    loss = score(p, Q_u) − score(p, Q_u,p) on that topic (rows × measures)."""
    enc, d = problem.enc, problem.depth
    S, new, pair_u, pair_p = problem.pooled, problem.new, problem.pair_u, problem.pair_p
    # who pooled what: C counts every pooled run, CX[g] the pooled runs outside R_p(u) of group g
    C = enc.top_counts(S, d).astype(np.int32)
    in_rp = np.zeros((len(new), enc.R), dtype=bool)
    in_rp[pair_u, pair_p] = True
    gX, ginv = np.unique(~in_rp[:, S], axis=0, return_inverse=True)
    ginv = ginv.ravel()
    gi, si = np.nonzero(gX)
    CX = enc.top_counts(S[si], d, groups=gi, n_groups=len(gX)).astype(np.int32)
    var_u = problem.new_var
    removed = _unpooled_judged(problem, C, CX, ginv, replace)  # new × T × labels
    touched = removed.any(axis=2)  # (run, topic) whose inner pools all lose judged documents
    rows = problem.topic_rows(pair_p, var_u[pair_u])
    pr, t = np.nonzero(rows)
    width = K.depth_needed(ms)
    width = enc.L if width is None else max(1, min(width, enc.L))
    out_r, out_t, out_d = [], [], []
    hist = problem.hist
    in_top = np.arange(width)[None, :] < d
    for sl in row_chunks(len(pr), width):
        rr, tt = pr[sl], t[sl]
        u, p = pair_u[rr], pair_p[rr]
        x = enc.D[p, tt, :width]
        xc = np.maximum(x, 0)
        cell = tt[:, None] * enc.U + xc  # (topic, doc) cell in the T × U count tables
        count = np.take(C.reshape(-1), cell) - np.take(
            CX.reshape(-1), (ginv[u] * (enc.T * enc.U))[:, None] + cell
        )
        survive = count - in_top > 0
        if replace:
            ur = enc.rank(new[u][:, None], tt[:, None], x)
            survive |= (ur >= 1) & (ur <= d)
        var = var_u[u]
        judged = np.take(problem.lab.reshape(-1), (var * enc.T * enc.U)[:, None] + cell) >= 0
        lost = (x >= 0) & ~survive & judged
        lossy = lost.any(axis=1) | touched[u, tt]
        if not lossy.any():
            continue
        rr, tt, u, var, x, lost = rr[lossy], tt[lossy], u[lossy], var[lossy], x[lossy], lost[lossy]
        labels = problem.cell_labels(x, var, tt)
        base = hist[var, tt]
        gone = lost & in_top  # documents below d that are lost are in ``removed`` already
        gi_, gj = np.nonzero(gone)
        width_l = base.shape[1]
        gone_hist = np.bincount(
            gi_ * width_l + labels[gi_, gj], minlength=len(rr) * width_l
        ).reshape(len(rr), width_l)
        inner_hist = base - removed[u, tt][:, :width_l] - gone_hist
        before = problem.score_cells(labels, base, ms)
        after = problem.score_cells(np.where(lost, K.UNJUDGED, labels), inner_hist, ms)
        out_r.append(rr)
        out_t.append(tt)
        out_d.append(before - after)
    if not out_r:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, len(ms)))
    return np.concatenate(out_r), np.concatenate(out_t), np.concatenate(out_d)


def _unpooled_judged(problem: Problem, C, CX, ginv, replace: bool) -> np.ndarray:
    """Per run to score and topic: the label histogram of Q_u's judged documents that no run of
    R_p(u) placed in its top d (and, with ``replace``, nor r_u): they are outside every inner
    pool, for every p. Empty in a leave-out experiment, where Q_u is the pool of R_p(u)."""
    enc, d = problem.enc, problem.depth
    width_l = problem.hist.shape[2]
    out = np.zeros((len(problem.new), enc.T, width_l), dtype=np.int64)
    for g in range(len(CX)):  # one pass per distinct R_p (a handful of configurations)
        nobody = (C - CX[g]) == 0
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
