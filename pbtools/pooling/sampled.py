"""The qrels of a sampled pool: the universe, its strata, the sample and inclusion probabilities.

A pool simulated with a sampling strategy (``uniform``, ``stratified``:
:mod:`pbtools.pooling.strategies.sampling`) judges a random sample of a *universe* — the
documents some pooled run ranks within the strategy's depth, put in strata by their best rank.
The estimators of :mod:`pbtools.measures.sampled` (xinfAP, infNDCG, statAP, trec_eval's infAP)
need the whole universe, not only the judged documents: :func:`sampled_qrels` lists it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.errors import InputError
from pbtools.frames import LABEL_DTYPE, encode
from pbtools.pooling.pool import Pool
from pbtools.pooling.strategies import PoolingTask

__all__ = ["sampled_qrels", "is_sampling"]


def is_sampling(strategy) -> bool:
    """Whether ``strategy`` draws a probability sample (it defines ``strata``).

    Examples
    --------
    >>> from pbtools.pooling.strategies import parse
    >>> is_sampling(parse("uniform:100")), is_sampling(parse("take"))
    (True, False)
    """
    return callable(getattr(strategy, "strata", None))


def sampled_qrels(pool: Pool, problem: PoolingTask | None = None) -> pd.DataFrame:
    """Every document of a sampled pool's universe with its stratum, label and ``prob``.

    Parameters
    ----------
    pool : Pool
        A pool from :meth:`Pool.simulate` with a sampling strategy.
    problem : PoolingTask, optional
        The encoded runs (``PoolingTask(runs, qrels, pooled)``) the pool was simulated over,
        reused when given.

    Returns
    -------
    DataFrame
        ``qid``, ``docno``, ``stratum`` (int16, 1-based: stratum 1 holds the best ranks),
        ``label`` (the sampled documents' source label — a document the source never judged
        counts as non-relevant, 0, as the adaptive strategies count it; −1: in the universe,
        not sampled) and ``prob`` (n_s / N_s, the inclusion probability of the stratum), sorted
        by topic and docno. :func:`pbtools.io.to_sampled_qrels` writes it; the estimators
        :func:`pbtools.measures.sampled.evaluate_sampled` read it.

    Examples
    --------
    >>> from pbtools.frames import as_qrels
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2", "d3"], ("B", "1"): ["d4", "d2", "d5"]})
    >>> qrels = as_qrels(pd.DataFrame({"qid": "1", "docno": ["d1", "d2", "d4"],
    ...                                "label": [1, 1, 0]}))
    >>> pool = Pool.simulate(runs, qrels, "stratified:1,2:1,0.5", budget=3, seed=1)
    >>> sampled_qrels(pool)
      qid docno  stratum  label  prob
    0   1    d1        1      1   1.0
    1   1    d2        2      1   1.0
    2   1    d4        1      0   1.0
    """
    if not is_sampling(pool.strategy):
        raise InputError(
            f"pool strategy {pool.strategy.spec!r} does not sample: sampled qrels need a "
            "sampling strategy (uniform, stratified)"
        )
    pb = problem if problem is not None else PoolingTask(pool.runs, pool.qrels, pool.pooled)
    strata = pool.strategy.strata(pb.best)
    t, x = np.nonzero(strata >= 0)
    s = strata[t, x]
    qid, docno = pb.ids(t, x)
    universe = pd.DataFrame({"qid": qid, "docno": docno, "stratum": (s + 1).astype(np.int16)})
    judged = pool.qrels[["qid", "docno", "label"]].astype({"qid": str, "docno": str})
    merged = universe.astype({"qid": str, "docno": str}).merge(judged, how="left")
    label = merged["label"].to_numpy(dtype=np.int64, na_value=-2)
    label = np.where(label == -1, 0, np.where(label == -2, -1, label))
    universe["label"] = label.astype(LABEL_DTYPE)
    sampled = (label >= 0).astype(np.float64)
    cell = t * (int(s.max(initial=0)) + 1) + s
    _, inv = np.unique(cell, return_inverse=True)
    n = np.bincount(inv, weights=sampled)
    N = np.bincount(inv)
    universe["prob"] = (n / N)[inv]
    key = np.lexsort((encode(universe["docno"]).cat.codes.to_numpy(), t))
    return universe.iloc[key].reset_index(drop=True)
