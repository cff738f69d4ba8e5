"""Fusion-based selection: judge in the order of a fused ranking of the runs.

Every strategy here scores each document once from the runs (non-adaptive, one ``bincount``
over all ranked documents) and judges in descending fused score, ties to docno order.

References
----------
PoolBiasEstimators ``RRFBasedPool`` (method ``a``: the sum), ``BordaBasedPool``,
``FusionBasedPool`` (``combsum``); trectools ``TrecPoolMaker`` strategy ``rrf``.
"""

from __future__ import annotations

import numpy as np

from pbtools.errors import InputError
from pbtools.pooling.strategies.base import PoolingTask, Strategy

__all__ = ["RRF", "Borda", "CombSUM"]


class RRF(Strategy):
    """Reciprocal rank fusion: documents in order of Σ_r 1 / (k + ρ_r(d)).

    Parameters
    ----------
    k : int
        The RRF constant (default 60, Cormack et al.'s choice).

    References
    ----------
    Cormack, Clarke & Büttcher, "Reciprocal rank fusion outperforms Condorcet and individual
    rank learning methods", SIGIR 2009. PoolBiasEstimators ``RRFBasedPool`` (``a``); trectools
    ``TrecPoolMaker`` strategy ``rrf`` (``rrf_den``).

    Examples
    --------
    d2: 1/62 + 1/62 beats d1, d4: 1/61 each.

    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d2"], "label": [1]}))
    >>> Pool.simulate(runs, qrels, RRF(60), budget=4).order["docno"].tolist()
    ['d2', 'd1', 'd4', 'd3']
    """

    name = "rrf"

    def __init__(self, k: int = 60) -> None:
        self.k = k

    def check(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int | float) or self.k < 0:
            raise InputError(f"{self.name}: k must be a non-negative number, got {self.k!r}")

    def keys(self, problem: PoolingTask, rng: np.random.Generator):
        w = 1.0 / (float(self.k) + problem.rows["rank"])
        return [problem.sum_rows(w)], problem.best > 0


class Borda(Strategy):
    """Borda count: each run gives |D| - ρ + 1 points to the document it ranks at ρ, and shares
    the remaining points equally among the documents it does not retrieve.

    |D| is the number of documents the runs retrieve on the topic; a run of length n gives each
    unretrieved document (|D| - n + 1) / 2, the mean of the points 1 .. |D| - n (Aslam &
    Montague's Borda-fuse). The reference tool's ``BordaBasedPool`` gives them the mean of the
    points it *used* instead, (Σ_{i=|D|-n+1}^{|D|} i) / (|D| - n).

    References
    ----------
    Aslam & Montague, "Models for metasearch", SIGIR 2001. PoolBiasEstimators
    ``BordaBasedPool``.

    Examples
    --------
    |D| = 5: d2 gets 4 + 4, d1 5 + 1.5 (B's share), d4 1.5 + 5.

    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d2"], "label": [1]}))
    >>> Pool.simulate(runs, qrels, Borda(), budget=3).order["docno"].tolist()
    ['d2', 'd1', 'd4']
    """

    name = "borda"

    def __init__(self) -> None:
        pass

    def keys(self, problem: PoolingTask, rng: np.random.Generator):
        rows = problem.rows
        n = problem.n_docs.astype(float)  # |D| per topic
        length = problem.length.T.astype(float)  # (T, R)
        share = np.where(length > 0, (n[:, None] - length + 1) / 2, 0.0)  # unretrieved share
        pts = n[rows["t"]] - rows["rank"] + 1 - share[rows["t"], rows["r"]]
        return [problem.sum_rows(pts)], problem.best > 0  # + Σ_r share_r, equal on a topic


class CombSUM(Strategy):
    """CombSUM: documents in order of the sum of their min-max normalised run scores.

    Each run's scores on a topic are mapped to [0, 1] by (s - min) / (max - min); a run whose
    scores are all equal gives its documents 1 (the reference tool keeps such raw scores).
    A run that does not retrieve a document adds 0.

    References
    ----------
    Fox & Shaw, "Combination of multiple searches", TREC-2 1994; Lee, "Analyses of multiple
    evidence combination", SIGIR 1997 (min-max normalisation). PoolBiasEstimators
    ``FusionBasedPool`` method ``combsum``.

    Examples
    --------
    Scores 3, 2, 1 normalise to 1, .5, 0: d2 sums .5 + .5 = 1, as do d1 and d4; docno order
    breaks the tie.

    >>> import pandas as pd
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling import Pool
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d2"], "label": [1]}))
    >>> Pool.simulate(runs, qrels, CombSUM(), budget=3).order["docno"].tolist()
    ['d1', 'd2', 'd4']
    """

    name = "combsum"

    def __init__(self) -> None:
        pass

    def keys(self, problem: PoolingTask, rng: np.random.Generator):
        S, rows = problem.score_grid, problem.rows
        hi = S[:, :, 0]  # rankings are in trec order: the first score is the largest
        n = problem.length.astype(np.int64)
        lo = np.take_along_axis(S, np.maximum(n - 1, 0)[:, :, None], axis=2)[:, :, 0]
        s, r, t = problem.scores, rows["r"], rows["t"]
        span = hi[r, t] - lo[r, t]
        norm = np.where(span > 0, (s - lo[r, t]) / np.where(span > 0, span, 1.0), 1.0)
        return [problem.sum_rows(norm)], problem.best > 0
