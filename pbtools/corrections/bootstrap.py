"""Confidence intervals for corrected scores: the percentile bootstrap over topics.

A corrected score is a function of per-topic quantities of the run to score and of the pooled
runs it is compared with (their scores, the merged runs' scores, Webber & Park's per-topic
losses), averaged over topics and then combined — non-linearly for Lipani et al.'s estimator
(λ, the indicator, the rounding of PROTOCOL item 10). :func:`topic_bootstrap` therefore
re-estimates on every replicate: a replicate draws |T| topics with replacement (the topics the
qrels judge) and gives each its multiplicity as a weight in every average over topics
(:meth:`~pbtools.engine.problem.Problem.topic_means`), so that a replicate is exactly the
estimator run on the resampled collection. The per-row scores do not depend on the weights and
are computed once (:meth:`~pbtools.engine.problem.Problem.memo`); a replicate only
re-averages and re-combines.

The interval is the percentile interval (Efron & Tibshirani 1993, §13.3) of the replicates:
``topic_ci_low``/``topic_ci_high`` are their (1 − c)/2 and (1 + c)/2 quantiles for confidence
c; ``topic_se`` is their standard deviation. The interval measures topic-sampling spread only: it
says how the estimate would move on another sample of topics, not how far it is from the score
the run would have had had it been pooled (that is the estimator's error, which
:mod:`pbtools.experiments.intervals` bounds; ``docs/uncertainty.md``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from pbtools.engine.problem import Problem
from pbtools.errors import InputError

__all__ = ["topic_bootstrap", "check_bootstrap", "CI_COLUMNS", "DEFAULT_N_BOOT"]

#: replicates of :func:`topic_bootstrap` by default (``pbtools.correct``'s default too)
DEFAULT_N_BOOT = 200

#: the columns :func:`topic_bootstrap` adds after ``value``
CI_COLUMNS = ("topic_ci_low", "topic_ci_high", "topic_se")

_KEYS = ["name", "measure", "estimator"]


def check_bootstrap(n_boot: int, confidence: float) -> None:
    """Refuse a replicate count below 1 or a coverage outside (0, 1) (before any work)."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 1:
        raise InputError(f"n_boot must be an integer >= 1, not {n_boot!r}")
    if not isinstance(confidence, float | int) or not 0 < float(confidence) < 1:
        raise InputError(f"confidence must be in (0, 1), not {confidence!r}")


def topic_bootstrap(
    problem: Problem,
    estimate: Callable[[Problem], pd.DataFrame],
    *,
    n_boot: int = DEFAULT_N_BOOT,
    confidence: float = 0.95,
    seed: int | None = 0,
    progress=None,
) -> pd.DataFrame:
    """Every estimator's estimate with a percentile bootstrap interval over topics.

    Parameters
    ----------
    problem : Problem
        The encoded problem (its weights are reset to None on return).
    estimate : callable
        ``estimate(problem)`` → a tidy estimates frame with ``name``, ``measure``,
        ``estimator``, ``value`` (e.g. :func:`pbtools.corrections.correct.run_estimators`
        with its measures and estimators bound).
    n_boot : int
        Number of replicates B (≥ 1; default :data:`DEFAULT_N_BOOT`).
    confidence : float
        Coverage c of the interval, in (0, 1).
    seed : int or None
        Seed of the topic resampling (:func:`numpy.random.default_rng`).
    progress : callable, optional
        ``progress(i, n)`` after each replicate (a progress bar's hook).

    Returns
    -------
    DataFrame
        The frame of ``estimate(problem)`` with ``topic_ci_low``, ``topic_ci_high`` and ``topic_se``
        inserted after ``value``. An estimate whose replicates are all undefined gets NaN.

    Examples
    --------
    >>> from pbtools.presets import resolve
    >>> from pbtools.corrections.correct import run_estimators
    >>> from pbtools.engine.build import from_frames
    >>> def run(name, topic_docs):
    ...     return pd.concat([pd.DataFrame({"name": name, "qid": q, "docno": list(d),
    ...                                     "score": range(len(d), 0, -1)})
    ...                       for q, d in topic_docs.items()])
    >>> pooled = pd.concat([run("p1", {"1": "abcd", "2": "efgh"}),
    ...                     run("p2", {"1": "bade", "2": "fehg"})])
    >>> qrels = pd.DataFrame({"qid": ["1", "1", "2", "2"], "docno": list("abef"),
    ...                       "label": [1, 0, 1, 1]})
    >>> pr = from_frames(pooled, run("u", {"1": "xayb", "2": "efxy"}), qrels, depth=2)
    >>> from pbtools.measures import parse_all
    >>> est = lambda p: run_estimators(p, parse_all(["P@2"]), ["reduced"], resolve(None))
    >>> out = topic_bootstrap(pr, est, n_boot=200)
    >>> out[["value", "topic_ci_low", "topic_ci_high"]].to_numpy().tolist()
    [[0.75, 0.5, 1.0]]
    """
    check_bootstrap(n_boot, confidence)
    point = estimate(problem)
    index = pd.MultiIndex.from_frame(point[_KEYS].astype(str))
    judged = np.flatnonzero(problem.present.any(axis=0))
    T = problem.present.shape[1]
    reps = np.full((int(n_boot), len(point)), np.nan)
    if len(judged) and len(point):
        rng = np.random.default_rng(seed)
        counts = rng.multinomial(len(judged), np.full(len(judged), 1.0 / len(judged)), int(n_boot))
        problem.memoize = True
        try:
            for b in range(int(n_boot)):  # replicates: per-row scores are memoised
                w = np.zeros(T)
                w[judged] = counts[b]
                problem.set_weights(w)
                reps[b] = _aligned(estimate(problem), point, index)
                if progress is not None:
                    progress(b + 1, int(n_boot))
        finally:
            problem.set_weights(None)
            problem.memoize = False
            problem.forget()
    a = (1.0 - float(confidence)) / 2.0
    ok = np.isfinite(reps).any(axis=0)
    lo = np.full(len(point), np.nan)
    hi = np.full(len(point), np.nan)
    se = np.full(len(point), np.nan)
    if ok.any():
        q = np.nanquantile(reps[:, ok], [a, 1.0 - a], axis=0)
        lo[ok], hi[ok] = q[0], q[1]
        se[ok] = np.nanstd(reps[:, ok], axis=0, ddof=1) if len(reps) > 1 else np.nan
    at = point.columns.get_loc("value") + 1
    for i, (c, v) in enumerate(zip(CI_COLUMNS, (lo, hi, se), strict=True)):
        point.insert(at + i, c, v)
    return point


def _aligned(out: pd.DataFrame, point: pd.DataFrame, index: pd.MultiIndex) -> np.ndarray:
    """``out``'s values in ``point``'s row order (NaN for rows ``out`` lacks)."""
    if len(out) == len(point) and all(
        np.array_equal(out[c].to_numpy(dtype=object), point[c].to_numpy(dtype=object))
        for c in _KEYS
    ):
        return out["value"].to_numpy(dtype=np.float64)
    key = pd.MultiIndex.from_frame(out[_KEYS].astype(str))
    return pd.Series(out["value"].to_numpy(), index=key).reindex(index).to_numpy()
