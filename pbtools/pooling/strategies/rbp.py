"""RBP-based selection: methods A, B and C of Moffat, Webber & Zobel (2007).

Every method weighs a document d by the RBP weights the runs give it, w_r(d) = (1 - p) p^(ρ_r(d)
- 1) for a run r that ranks it at ρ_r(d) (0 when r does not retrieve it; w = 1 when p = 1):

* **A** (non-adaptive): judge in order of Σ_r w_r(d) (trectools' ``rbp`` strategy with
  ``rbp_strategy="sum"``);
* **B** (sequential): judge next the document maximising Σ_r w_r(d) · res_r, with res_r = 1 -
  Σ_{judged d' ∈ r} w_r(d') the residual of run r — runs whose score is still uncertain pull;
* **C** (adaptive): the same with res_r · (rbp_r + res_r / 2)^3, rbp_r = Σ_{judged relevant
  d' ∈ r} w_r(d') — uncertain runs that look good pull hardest.

References
----------
Moffat, Webber & Zobel, "Strategic system comparisons via targeted relevance judgments",
SIGIR 2007. PoolBiasEstimators ``RBPBasedPool`` (methods ``a``, ``b``, ``c``: residuals over the
whole ranking, as here); trectools ``TrecPoolMaker._make_pool_rbp``.
"""

from __future__ import annotations

import numpy as np

from pbtools.errors import InputError
from pbtools.pooling.strategies.base import PoolingTask, Strategy
from pbtools.pooling.strategies.selection import Selection, sequential

__all__ = ["RBPA", "RBPB", "RBPC"]


def _weights(p: float, rank: np.ndarray) -> np.ndarray:
    """RBP weight (1 - p) p^(rank - 1) of 1-based ranks (1 for p = 1; 0 for rank 0)."""
    w = np.ones(rank.shape) if p == 1 else (1 - p) * np.power(p, np.maximum(rank, 1) - 1.0)
    return np.where(rank > 0, w, 0.0)


class RBPA(Strategy):
    """RBP-based method A: documents in order of the sum of their RBP weights over the runs.

    Parameters
    ----------
    p : float
        RBP persistence in (0, 1] (default 0.8).

    References
    ----------
    Moffat, Webber & Zobel, SIGIR 2007, method A; PoolBiasEstimators ``RBPBasedPool`` method
    ``a``; trectools ``TrecPoolMaker`` strategy ``rbp`` (sum). Module docstring for B and C.

    Examples
    --------
    d2 has weight .2·.8 from both runs (.32), d1 and d4 .2 each: d2 first, then d1 (docno order).

    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d2"], "label": [1]}))
    >>> Pool.simulate(runs, qrels, RBPA(0.8), budget=3).order["docno"].tolist()
    ['d2', 'd1', 'd4']
    """

    name = "rbp"

    def __init__(self, p: float = 0.8) -> None:
        self.p = p

    def check(self) -> None:
        if isinstance(self.p, bool) or not isinstance(self.p, int | float) or not 0 < self.p <= 1:
            raise InputError(f"{self.name}: p must lie in (0, 1], got {self.p!r}")

    def keys(self, problem: PoolingTask, rng: np.random.Generator):
        w = _weights(float(self.p), problem.rows["rank"])
        return [problem.sum_rows(w)], problem.best > 0


class _Residual:
    """Policy of methods B and C: the argmax of Σ_r w_r(d) · coef_r over unjudged documents."""

    def __init__(self, problem: PoolingTask, p: float, cubic: bool) -> None:
        self.pb, self.p, self.cubic = problem, p, cubic
        self.w = _weights(p, problem.rows["rank"])
        self.res = np.where(problem.length.T > 0, 1.0, 0.0)  # (T, R)
        self.rbp = np.zeros_like(self.res)
        self.open = problem.best > 0

    def step(self, t: np.ndarray) -> np.ndarray:
        coef = self.res * (self.rbp + self.res / 2) ** 3 if self.cubic else self.res
        score = self.pb.sum_rows(self.w * self.pb.gather(coef))[t]
        score = np.where(self.open[t], score, -np.inf)
        x = np.argmax(score, axis=1)
        return np.where(self.open[t, x], x, -1)

    def update(self, t, x, new, rel) -> None:
        self.open[t, x] = False
        ranks = self.pb.ranks(t, x)
        w = _weights(self.p, ranks)
        self.res[t] -= w
        self.rbp[t] += np.where(rel[:, None], w, 0.0)


class RBPB(RBPA):
    """RBP-based method B: the next document maximises Σ_r w_r(d) · res_r (module docstring).

    Sequential (each choice lowers the residuals of the runs that retrieve it) but blind to the
    labels. Ties go to docno order.

    Parameters
    ----------
    p : float
        RBP persistence in (0, 1] (default 0.8).

    References
    ----------
    Moffat, Webber & Zobel, SIGIR 2007, method B; PoolBiasEstimators ``RBPBasedPool`` ``b``.

    Examples
    --------
    After d2 (.32) is judged, both runs' residuals drop to .84: d1 and d4 tie (.168), d1 wins
    on docno; then d4.

    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d2"], "label": [1]}))
    >>> Pool.simulate(runs, qrels, RBPB(0.8), budget=3).order["docno"].tolist()
    ['d2', 'd1', 'd4']
    """

    name = "rbpb"
    cubic = False

    def select(self, problem, assessor, budget, rng) -> Selection:
        policy = _Residual(problem, float(self.p), self.cubic)
        return sequential(problem, assessor, budget, policy)


class RBPC(RBPB):
    """RBP-based method C: Σ_r w_r(d) · res_r (rbp_r + res_r / 2)³ (module docstring).

    Adaptive: a run's pull grows with the RBP it has earned from the relevant documents judged.

    Parameters
    ----------
    p : float
        RBP persistence in (0, 1] (default 0.8).

    References
    ----------
    Moffat, Webber & Zobel, SIGIR 2007, method C; PoolBiasEstimators ``RBPBasedPool`` ``c``.

    Examples
    --------
    d2 and d4 are relevant, d1 is not: after d2, d1, d4 run B has earned more RBP than run A,
    so its third document d5 comes before A's d3 (method B, blind to labels, takes d3: a tie
    broken by docno).

    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> lab = {"d2": 1, "d1": 0, "d4": 1}
    >>> qrels = as_qrels(pd.DataFrame({"qid": "1", "docno": [*lab], "label": [*lab.values()]}))
    >>> Pool.simulate(runs, qrels, RBPC(0.8), budget=4).order["docno"].tolist()
    ['d2', 'd1', 'd4', 'd5']
    >>> Pool.simulate(runs, qrels, RBPB(0.8), budget=4).order["docno"].tolist()
    ['d2', 'd1', 'd4', 'd3']
    """

    name = "rbpc"
    cubic = True
