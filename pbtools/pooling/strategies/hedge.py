"""Hedge: online learning of the runs' weights (Aslam, Pavlu & Savell 2003)."""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from pbtools.errors import InputError
from pbtools.pooling.strategies.base import PoolingTask, Strategy
from pbtools.pooling.strategies.selection import Selection, sequential

__all__ = ["Hedge"]


class _HedgePolicy:
    """Run weights per topic; the loss table l(r, d) is fixed, the weights learn."""

    def __init__(self, problem: PoolingTask, beta: float) -> None:
        self.pb, self.beta = problem, beta
        rows = problem.rows
        nd = problem.n_docs.astype(float)  # |D_t|
        n = problem.length.T.astype(float)  # (T, R) ranking lengths
        log_nd = np.log(np.maximum(nd, 1.0))
        self.log_nd = log_nd
        # unretrieved documents: the mean loss of the positions len .. |D| - 1 (reference tool)
        gap = nd[:, None] - n
        mean_log = (gammaln(np.maximum(nd, 1.0))[:, None] - gammaln(np.maximum(n, 1.0))) / np.where(
            gap > 0, gap, 1.0
        )
        self.rloss = np.where((n > 0) & (gap > 0), 0.5 * log_nd[:, None] - 0.5 * mean_log, 0.0)
        loss = 0.5 * (log_nd[rows["t"]] - np.log(rows["rank"]))
        self.excess = loss - self.rloss[rows["t"], rows["r"]]
        self.w = np.where(n > 0, 1.0, 0.0)
        self.open = problem.best > 0

    def step(self, t: np.ndarray) -> np.ndarray:
        p = self.w / np.maximum(self.w.sum(axis=1, keepdims=True), 1e-300)
        score = self.pb.sum_rows(self.pb.gather(p) * self.excess)[t]
        score = np.where(self.open[t], score, -np.inf)
        x = np.argmax(score, axis=1)
        return np.where(self.open[t, x], x, -1)

    def update(self, t, x, new, rel) -> None:
        self.open[t, x] = False
        rk = self.pb.ranks(t, x)
        loss = np.where(
            rk > 0, 0.5 * (self.log_nd[t][:, None] - np.log(np.maximum(rk, 1))), self.rloss[t]
        )
        sign = np.where(rel, -1.0, 1.0)[:, None]
        w = self.w[t] * np.power(self.beta, sign * loss)
        self.w[t] = w / np.maximum(w.max(axis=1, keepdims=True), 1e-300)


class Hedge(Strategy):
    """Hedge: judge the document of largest expected loss under the runs' learned weights.

    Each run r has a weight w_r (initially equal; runs without the topic have none). A document
    d ranked at ρ by r has loss l(r, d) = ½ (ln |D| − ln ρ), |D| being the documents the runs
    retrieve on the topic; a document r does not retrieve gets the mean of ½ (ln |D| − ln i) over
    the positions i = |r| .. |D| − 1 it could occupy. The next document judged maximises
    Σ_r p_r l(r, d) with p = w / Σw; once its label is known every run is updated,
    w_r ← w_r β^(±l(r, d)) — minus for a relevant document (the weights of the runs that ranked
    it high grow), plus for a non-relevant one.

    Parameters
    ----------
    beta : float
        The Hedge learning rate β in (0, 1) (default 0.1, the reference tool's example).

    References
    ----------
    Aslam, Pavlu & Savell, "A unified model for metasearch, pooling, and system evaluation",
    CIKM 2003; Freund & Schapire's Hedge(β), 1997. PoolBiasEstimators ``HedgeBasedPool``.

    Examples
    --------
    |D| = 5: the top documents d1 and d4 have loss ½ ln 5 = .805 for the run that ranks them
    and .18 (the mean over positions 3 and 4) for the other, the largest mean loss: d1 is judged
    first (docno order). If it is relevant A's weight grows and A's d2 follows; if not, B's d4.

    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> for label in (1, 0):
    ...     qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d1"], "label": [label]}))
    ...     print(Pool.simulate(runs, qrels, Hedge(0.1), budget=2).order["docno"].tolist())
    ['d1', 'd2']
    ['d1', 'd4']
    """

    name = "hedge"
    adaptive = True

    def __init__(self, beta: float = 0.1) -> None:
        self.beta = beta

    def check(self) -> None:
        b = self.beta
        if isinstance(b, bool) or not isinstance(b, int | float) or not 0 < b < 1:
            raise InputError(f"{self.name}: beta must lie in (0, 1), got {b!r}")

    def select(self, problem, assessor, budget, rng) -> Selection:
        return sequential(problem, assessor, budget, _HedgePolicy(problem, float(self.beta)))
