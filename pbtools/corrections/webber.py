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

from pbtools.corrections.base import RESULT_COLUMNS, Estimator
from pbtools.engine.losses import loss_rows
from pbtools.engine.problem import Problem
from pbtools.measures.names import measure_list

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
    >>> pooled = pd.concat([run("p1", "abzy"), run("p2", "cdwv")])
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("abcd"), "label": [1, 1, 1, 0]})
    >>> est = WebberOnRuns(measures=["P@2", "AP"], depth=2).fit(pooled, qrels)
    >>> out = est.predict(run("u", "cqrs"))
    >>> out[["measure", "value", "adjustment"]].round(4).to_numpy().tolist()
    [['P@2', 1.0, 0.5], ['AP', 0.6667, 0.3333]]
    """

    name = "webber"
    label = "Webber & Park"
    colour = "#ff7f0e"
    marker = "s"
    description = (
        "Webber & Park 2009: the reduced score plus the mean error that the pooled runs "
        "show when each is left out of the pool in turn."
    )
    default_for = frozenset({"analyze", "correct", "cli"})
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

    def estimate_columns(self, problem: Problem, measures) -> dict:
        """Algorithm 1 for every run of the problem and every measure at once."""
        ms = measure_list(measures, "Webber.estimate")
        own = problem.own(ms)
        n_new, M = len(problem.new), len(ms)
        if len(problem.pair_u) == 0:
            zero = np.zeros_like(own)
            return problem.columns(
                own, ms, self.name, RESULT_COLUMNS, adjustment=zero, n_pooled=zero
            )
        replace = bool(self.choices()["replace"])
        full, inner, pu = _losses(problem, ms, replace)
        term = problem.rounded(full) - problem.rounded(inner)  # pairs × measures
        ok = np.isfinite(term).all(axis=1)
        adj = Problem.means(pu[ok], term[ok], n_new)
        n_pooled = np.bincount(pu[ok], minlength=n_new).astype(np.float64)
        adj = np.where(np.isfinite(adj), adj, 0.0)
        return problem.columns(
            own + adj,
            ms,
            self.name,
            RESULT_COLUMNS,
            adjustment=adj,
            n_pooled=np.repeat(n_pooled, M),
        )


def _losses(problem: Problem, ms, replace: bool):
    """score(p, Q_u) and score(p, Q_u,p) run means for every R_p pair (pairs × measures).

    score(p, Q_u,p) = score(p, Q_u) − the mean loss over p's topics: the per-topic losses
    (:func:`~pbtools.engine.losses.loss_rows`) do not depend on the topic weights of
    a bootstrap replicate, so they are computed once (:meth:`Problem.memo`) and only
    re-averaged.
    """
    pair_u = problem.pair_u
    # score(p, Q_u): every pooled run once per variant it is compared under (its own topics),
    # scored once for every estimator of the problem
    full, n_topics = problem.pooled_scores(ms)
    rr, tt, diff = problem.memo(
        ("webber_loss", tuple(ms), replace), lambda: loss_rows(problem, ms, replace)
    )
    w = None if problem.weights is None else problem.weights[tt]
    loss = np.zeros((len(pair_u), len(ms)))
    for j in range(len(ms)):  # a handful of measures
        v = diff[:, j] if w is None else diff[:, j] * w
        loss[:, j] = np.bincount(rr, weights=v, minlength=len(loss))
    with np.errstate(invalid="ignore", divide="ignore"):
        inner = full - loss / n_topics[:, None]
    return full, inner, pair_u
