"""Sampling strategies: a uniform sample of the depth-k pool, and a sample stratified by rank.

Both record in the order frame the inclusion probability ``prob`` of every judged document
(the fraction of its stratum that was sampled), which is what the sampling estimators infAP and
statAP weigh judgments by. Samples are drawn without replacement with the seeded generator of
the simulation; the judging order is stratum by stratum (best ranks first), random within.
"""

from __future__ import annotations

import numpy as np

from pbtools.errors import InputError
from pbtools.frames import group_starts, ranks_from_starts
from pbtools.pooling.strategies.base import PoolingTask, Strategy
from pbtools.pooling.strategies.depth import _positive_int
from pbtools.pooling.strategies.selection import Selection

__all__ = ["UniformSample", "Stratified", "stratum_sizes"]


def stratum_sizes(n: np.ndarray, weights: np.ndarray, budget: np.ndarray) -> np.ndarray:
    """Sample sizes per (topic, stratum) for inclusion rates proportional to ``weights``.

    Per topic the rate of stratum s is π_s = min(1, c · weights_s), with c the level at which
    Σ_s n_s π_s equals the topic's budget (all of a stratum is taken before its rate would pass
    1); sizes are n_s π_s rounded by largest remainder so that they add up to min(budget, Σ n).
    ``n``: (T, S) stratum sizes; ``weights``: (S,) positive; ``budget``: (T,).

    Examples
    --------
    Ten documents in each of two strata, weights 1 and 1/4, budget 10: c = 0.8, π = (.8, .2).

    >>> stratum_sizes(np.array([[10, 10]]), np.array([1.0, 0.25]), np.array([10])).tolist()
    [[8, 2]]
    """
    n = np.asarray(n, dtype=np.int64)
    w = np.asarray(weights, dtype=float)
    target = np.minimum(np.asarray(budget, dtype=np.int64), n.sum(axis=1))
    # f(c) = Σ_s n_s min(1, c w_s) is piecewise linear with knots at c = 1 / w_s
    knots = np.sort(1.0 / w)
    f_knots = (n[:, None, :] * np.minimum(1.0, knots[None, :, None] * w[None, None, :])).sum(2)
    seg = (f_knots < target[:, None]).sum(axis=1)  # knots passed below the target
    lo = np.where(seg > 0, knots[np.maximum(seg - 1, 0)], 0.0)
    f_lo = np.where(seg > 0, f_knots[np.arange(len(n)), np.maximum(seg - 1, 0)], 0.0)
    slope = (n * w[None, :] * (lo[:, None] * w[None, :] < 1)).sum(axis=1)
    c = lo + np.where(slope > 0, (target - f_lo) / np.where(slope > 0, slope, 1.0), 0.0)
    exact = n * np.minimum(1.0, c[:, None] * w[None, :])
    size = np.floor(exact + 1e-9).astype(np.int64)
    short = target - size.sum(axis=1)
    order = np.argsort(-(exact - size), axis=1, kind="stable")
    bump = np.zeros_like(size)
    np.put_along_axis(bump, order, (np.arange(n.shape[1])[None, :] < short[:, None]), axis=1)
    return np.minimum(size + bump, n)


def _sample(problem: PoolingTask, stratum: np.ndarray, weights, budget, rng) -> Selection:
    """Sample per (topic, stratum) as :func:`stratum_sizes` says; stratum −1 is never chosen."""
    S = len(weights)
    t, x = np.nonzero(stratum >= 0)
    s = stratum[t, x]
    n = np.bincount(t * S + s, minlength=problem.T * S).reshape(problem.T, S)
    size = stratum_sizes(n, np.asarray(weights, float), budget)
    order = np.lexsort((rng.random(len(t)), s, t))
    t, x, s = t[order], x[order], s[order]
    pos = ranks_from_starts(group_starts(t, s))
    keep = pos <= size[t, s]
    prob = size[t, s] / np.maximum(n[t, s], 1)
    return Selection(t[keep], x[keep], {"prob": prob[keep]})


class UniformSample(Strategy):
    """A uniform random sample of the depth-k pool, ``budget`` documents per topic.

    Parameters
    ----------
    depth : int
        The pool sampled from: documents some run ranks in its top ``depth`` (default 100).

    References
    ----------
    Yilmaz & Aslam, "Estimating average precision with incomplete and imperfect judgments"
    (infAP), CIKM 2006 — uniform samples of the depth-100 pool. PoolBiasEstimators
    ``UniformSampledPool`` (a sampling *rate*; here a budget, so sizes are exact).

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d2"], "label": [1]}))
    >>> o = Pool.simulate(runs, qrels, UniformSample(2), budget=2, seed=1).order
    >>> set(o["docno"]) <= {"d1", "d2", "d4"}, o["prob"].tolist()
    (True, [0.6666666666666666, 0.6666666666666666])
    """

    name = "uniform"

    def __init__(self, depth: int = 100) -> None:
        self.depth = depth

    def check(self) -> None:
        _positive_int(self.name, self.depth, "depth")

    def capacity(self, problem: PoolingTask) -> np.ndarray:
        b = problem.best
        return ((b > 0) & (b <= int(self.depth))).sum(axis=1)

    def strata(self, best: np.ndarray) -> np.ndarray:
        """Stratum of each document from its best rank (0: none): 0 within ``depth``, else −1."""
        return np.where((best > 0) & (best <= int(self.depth)), 0, -1)

    def select(self, problem, assessor, budget, rng) -> Selection:
        return _sample(problem, self.strata(problem.best), [1.0], budget, rng)


class Stratified(Strategy):
    """Stratified sampling by best rank, as the statAP / infAP collections were built.

    Documents are put in strata by the best rank any run gives them (``bounds`` = (10, 30, 100):
    ranks 1-10, 11-30, 31-100; deeper documents are never judged) and sampled at inclusion rates
    proportional to ``weights`` (:func:`stratum_sizes`): with the default weights the top
    stratum is judged fully first, as in TREC's stratified pools, and the deeper strata get
    what is left of the budget at ever lower rates.

    Parameters
    ----------
    bounds : tuple of int
        Increasing last ranks of the strata (default (10, 30, 100)).
    weights : tuple of float
        Relative inclusion rates of the strata, positive (default (1, 0.25, 0.0625)).

    References
    ----------
    Yilmaz, Kanoulas & Aslam, "A simple and efficient sampling method for estimating AP and
    NDCG" (xinfAP), SIGIR 2008; Aslam, Pavlu & Yilmaz, "A statistical method for system
    evaluation using incomplete judgments" (statAP), SIGIR 2006. PoolBiasEstimators
    ``StratifiedPool`` (strata with fixed rates; here rates are scaled to the budget).

    Examples
    --------
    Strata 1-1 and 2-3 with equal weights: the top stratum {d1, d4} has 2 documents, the next
    {d2, d3, d5} 3; a budget of 4 samples each at rate 4/5 (1.6 and 2.4 documents, rounded by
    largest remainder to 2 and 2).

    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d2"], "label": [1]}))
    >>> o = Pool.simulate(runs, qrels, Stratified((1, 3), (1.0, 1.0)), budget=4, seed=0).order
    >>> sorted(o["docno"][:2]), o["prob"].round(3).tolist()
    (['d1', 'd4'], [1.0, 1.0, 0.667, 0.667])
    """

    name = "stratified"

    def __init__(self, bounds: tuple = (10, 30, 100), weights: tuple = (1.0, 0.25, 0.0625)) -> None:
        self.bounds = bounds
        self.weights = weights

    def check(self) -> None:
        b, w = tuple(self.bounds), tuple(self.weights)
        if not b or len(b) != len(w):
            raise InputError(f"{self.name}: give one weight per stratum, got {b!r} and {w!r}")
        for v in b:
            _positive_int(self.name, v, "a stratum bound")
        if any(b2 <= b1 for b1, b2 in zip(b, b[1:], strict=False)):
            raise InputError(f"{self.name}: stratum bounds must increase, got {b!r}")
        if any(not isinstance(v, int | float) or not v > 0 for v in w):
            raise InputError(f"{self.name}: stratum weights must be positive, got {w!r}")

    def capacity(self, problem: PoolingTask) -> np.ndarray:
        b = problem.best
        return ((b > 0) & (b <= int(self.bounds[-1]))).sum(axis=1)

    def strata(self, best: np.ndarray) -> np.ndarray:
        """Stratum of each document from its best rank (0: none): the index of the first bound
        it does not pass, −1 past the last bound."""
        s = np.searchsorted(np.asarray(self.bounds), best, side="left")
        return np.where((best > 0) & (s < len(self.bounds)), s, -1)

    def select(self, problem, assessor, budget, rng) -> Selection:
        weights = list(map(float, self.weights))
        return _sample(problem, self.strata(problem.best), weights, budget, rng)
