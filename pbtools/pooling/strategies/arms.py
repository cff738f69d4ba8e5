"""Runs as arms: reading positions down every (topic, run) ranking, and a seeded argmax.

Shared by the strategies that walk down the runs and choose, at each judgment, which run to read
next (move-to-front, the multi-armed bandits). Both helpers work on many topics at once.
"""

from __future__ import annotations

import numpy as np

from pbtools.pooling.strategies.base import PoolingTask

__all__ = ["Cursors", "pick"]


class Cursors:
    """How far each run has been read on each topic (``pos[t, r]``, documents popped).

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling.strategies import PoolingTask, from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2"], ("B", "1"): ["d2"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d2"], "label": [1]}))
    >>> c = Cursors(PoolingTask(runs, qrels))
    >>> c.pop(np.array([0]), np.array([1])).tolist(), c.alive(np.array([0])).tolist()
    ([1], [[True, False]])
    """

    def __init__(self, problem: PoolingTask) -> None:
        self.D = problem.D
        self.length = problem.length.T.astype(np.int64)  # (T, R)
        self.pos = np.zeros_like(self.length)

    def alive(self, t: np.ndarray) -> np.ndarray:
        """``(len(t), R)``: which runs still have documents to read on topics ``t``."""
        return self.pos[t] < self.length[t]

    def pop(self, t: np.ndarray, r: np.ndarray) -> np.ndarray:
        """The next document (local id) of run ``r[i]`` on topic ``t[i]``; advances it."""
        x = self.D[r, t, self.pos[t, r]].astype(np.int64)
        self.pos[t, r] += 1
        return x


def pick(values: np.ndarray, alive: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, the column of the largest ``values`` among ``alive`` ones, ties at random.

    Returns -1 for a row with no alive column. One seeded draw per (row, column).

    Examples
    --------
    >>> pick(np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 0.0]]),
    ...      np.array([[True, False, True], [False, False, False]]), np.random.default_rng(0))
    array([ 2, -1])
    """
    v = np.where(alive, values, -np.inf)
    best = v.max(axis=1, initial=-np.inf)
    cand = alive & (v == best[:, None])
    key = np.where(cand, rng.random(cand.shape), -1.0)
    return np.where(cand.any(axis=1), np.argmax(key, axis=1), -1)
