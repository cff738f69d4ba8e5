"""Rank-based strategies: depth-d pooling and its fixed-cost form, take-N."""

from __future__ import annotations

import numpy as np

from pbtools.errors import InputError
from pbtools.pooling.strategies.base import PoolingTask, Strategy

__all__ = ["Depth", "TakeN"]


def _positive_int(name: str, value, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < 1:
        raise InputError(f"{name}: {what} must be a positive integer, got {value!r}")


class TakeN(Strategy):
    """Take-N: documents in order of their best rank over the runs, up to the budget.

    The fixed-cost form of depth pooling: a document's priority is the best (smallest) rank any
    run gives it; ties go to the document more runs retrieve, then to docno order. Judging the
    first N documents of every topic gives the depth-d pool whenever N is its size, and
    otherwise the depth-d pool plus the best-placed documents of depth d + 1.

    References
    ----------
    Lipani, Losada, Zuccon & Lupu, "Fixed-cost pooling strategies", IEEE TKDE 2019 (Take@N);
    PoolBiasEstimators ``TakeNPool`` / ``FairTakeNPool`` (best rank; the reference breaks the
    remaining ties at random, pbtools by the number of runs, then docno).

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d2"], "label": [1]}))
    >>> Pool.simulate(runs, qrels, TakeN(), budget=3).order["docno"].tolist()
    ['d1', 'd4', 'd2']
    """

    name = "take"

    def __init__(self) -> None:
        pass

    def keys(self, problem: PoolingTask, rng: np.random.Generator):
        best = problem.best
        return [-best, problem.count], best > 0


class Depth(TakeN):
    """Depth-d pooling: every document some run ranks in its top ``depth`` (Spärck Jones &
    van Rijsbergen 1975; TREC).

    Without a budget the selection is exactly :func:`pbtools.pooling.pool` of the runs at that
    depth; with a budget per topic, a topic whose depth-d pool is larger is cut in take-N order
    (:class:`TakeN`), so that depth-d can be compared at a fixed cost too.

    Parameters
    ----------
    depth : int
        The pool depth d (default 100).

    References
    ----------
    PoolBiasEstimators ``DepthNPool``; trectools ``TrecPoolMaker`` strategy ``topX``.

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d2"], "label": [1]}))
    >>> sorted(Pool.simulate(runs, qrels, Depth(2)).qrels["docno"])
    ['d1', 'd2', 'd4']
    """

    name = "depth"
    needs_budget = False

    def __init__(self, depth: int = 100) -> None:
        self.depth = depth

    def check(self) -> None:
        _positive_int(self.name, self.depth, "depth")

    def capacity(self, problem: PoolingTask) -> np.ndarray:
        b = problem.best
        return ((b > 0) & (b <= int(self.depth))).sum(axis=1)

    def keys(self, problem: PoolingTask, rng: np.random.Generator):
        keys, valid = super().keys(problem, rng)
        return keys, valid & (problem.best <= int(self.depth))
