"""Multi-armed-bandit selection: MaxMean (Losada, Parapar & Barreiro 2016)."""

from __future__ import annotations

import numpy as np

from pbtools.pooling.strategies.arms import Cursors, pick
from pbtools.pooling.strategies.base import PoolingTask, Strategy
from pbtools.pooling.strategies.selection import Selection, sequential

__all__ = ["MaxMean"]


class _MaxMeanPolicy:
    """Per (topic, run): documents read ``n`` and relevant among them ``hits``."""

    def __init__(self, problem: PoolingTask, rng: np.random.Generator) -> None:
        self.cur = Cursors(problem)
        self.names = problem.names
        self.n = np.zeros(self.cur.length.shape)
        self.hits = np.zeros(self.cur.length.shape)
        self.run = np.full(problem.T, -1, dtype=np.int64)
        self.rng = rng

    def step(self, t: np.ndarray) -> np.ndarray:
        mean = (1.0 + self.hits[t]) / (2.0 + self.n[t])
        r = pick(mean, self.cur.alive(t), self.rng)
        self.run[t] = r
        x = np.full(len(t), -1, dtype=np.int64)
        ok = r >= 0
        x[ok] = self.cur.pop(t[ok], r[ok])
        return x

    def record(self, t, x) -> np.ndarray:
        """The run each document was read from (its name)."""
        return np.asarray(self.names)[self.run[t]]

    def update(self, t, x, new, rel) -> None:
        r = self.run[t]
        self.n[t, r] += 1
        self.hits[t, r] += rel


class MaxMean(Strategy):
    """MaxMean (MM): play the run with the highest expected rate of relevant documents.

    Runs are the arms of a Bernoulli bandit. The expected reward of run r is the posterior mean
    of its rate of relevant documents under a Beta(1, 1) prior, (1 + hits_r) / (2 + n_r), over
    the n_r documents read from the top of r so far (hits_r of them relevant). The best run (ties
    at random, seeded) gives its next document: judged if new, otherwise read at no cost with its
    known label — as the reference tool does.

    References
    ----------
    Losada, Parapar & Barreiro, "Feeling lucky? Multi-armed bandits for ordering judgements in
    pooling-based evaluation", ACM SAC 2016; "Multi-armed bandits for adjudicating documents in
    pooling-based evaluation of information retrieval systems", IP&M 2017.
    PoolBiasEstimators ``DepthNMABBasedPool`` method ``maxmean`` (here without its initial
    depth-n pool).

    Examples
    --------
    Both runs start at 1/2; seed 0 reads A: d1 relevant (2/3), d2 not (2/4) → tie with B (1/2):
    the seeded draw picks B: d4 relevant.

    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> lab = {"d1": 1, "d2": 0, "d4": 1}
    >>> qrels = as_qrels(pd.DataFrame({"qid": "1", "docno": [*lab], "label": [*lab.values()]}))
    >>> Pool.simulate(runs, qrels, MaxMean(), budget=3, seed=0).order["docno"].tolist()
    ['d1', 'd2', 'd4']
    """

    name = "maxmean"
    adaptive = True

    def __init__(self) -> None:
        pass

    def select(self, problem, assessor, budget, rng) -> Selection:
        return sequential(problem, assessor, budget, _MaxMeanPolicy(problem, rng))
