"""Move-to-front pooling (Cormack, Palmer & Clarke 1998)."""

from __future__ import annotations

import numpy as np

from pbtools.pooling.strategies.arms import Cursors, pick
from pbtools.pooling.strategies.base import PoolingTask, Strategy
from pbtools.pooling.strategies.selection import Selection, sequential

__all__ = ["MoveToFront"]


class _MTFPolicy:
    """Priorities per (topic, run); the current run is read while it gives relevant documents."""

    def __init__(self, problem: PoolingTask, rng: np.random.Generator) -> None:
        self.cur = Cursors(problem)
        self.names = problem.names
        self.prio = np.zeros(self.cur.length.shape)
        self.run = np.full(problem.T, -1, dtype=np.int64)
        self.rng = rng

    def step(self, t: np.ndarray) -> np.ndarray:
        need = t[self.run[t] < 0]
        if len(need):
            self.run[need] = pick(self.prio[need], self.cur.alive(need), self.rng)
        r = self.run[t]
        x = np.full(len(t), -1, dtype=np.int64)
        ok = r >= 0
        x[ok] = self.cur.pop(t[ok], r[ok])
        return x

    def record(self, t, x) -> np.ndarray:
        """The run each document was read from (its name)."""
        return np.asarray(self.names)[self.run[t]]

    def update(self, t, x, new, rel) -> None:
        r = self.run[t]
        miss = new & ~rel
        self.prio[t[miss], r[miss]] -= 1
        spent = self.cur.pos[t, r] >= self.cur.length[t, r]
        self.run[t[miss | spent]] = -1


class MoveToFront(Strategy):
    """Move-to-front (MTF): read the runs in priority order, staying on a run while it pays.

    All runs start with the same priority. The run of highest priority (ties at random, seeded)
    is read down its ranking: each document not yet judged is judged; while they are relevant the
    same run is read on; a non-relevant one lowers the run's priority by one and the next
    document comes from a run of highest priority. Documents already judged are skipped at no
    cost and do not change priorities (Cormack et al.); the reference tool also lowers the
    priority when it meets an already judged non-relevant document.

    References
    ----------
    Cormack, Palmer & Clarke, "Efficient construction of large test collections", SIGIR 1998.
    PoolBiasEstimators ``MTFBasedPool``.

    Examples
    --------
    A is read first (seed 0 picks it from the tie): d1 relevant, d2 not → A drops to -1; B is
    read: d4 relevant, d2 already judged (free), d5.

    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> lab = {"d1": 1, "d2": 0, "d4": 1}
    >>> qrels = as_qrels(pd.DataFrame({"qid": "1", "docno": [*lab], "label": [*lab.values()]}))
    >>> Pool.simulate(runs, qrels, MoveToFront(), budget=4, seed=0).order["docno"].tolist()
    ['d1', 'd2', 'd4', 'd5']
    """

    name = "mtf"
    adaptive = True

    def __init__(self) -> None:
        pass

    def select(self, problem, assessor, budget, rng) -> Selection:
        return sequential(problem, assessor, budget, _MTFPolicy(problem, rng))
