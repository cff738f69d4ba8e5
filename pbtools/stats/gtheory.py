"""Generalizability theory for test-collection reliability (Lipani §5.2; Urbano, Marrero & Martín,
SIGIR 2013; Brennan 2001): the two-way crossed design system × topic without replication."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.errors import InputError
from pbtools.stats.matrix import score_matrix


def generalizability(
    results: pd.DataFrame, measure: str | None = None, n_topics=None
) -> pd.DataFrame:
    """Variance components and the stability coefficients Eρ² and Φ.

    ANOVA of x_st = μ + ν_s + ν_t + ν_st,e with n_s systems and n_t topics: mean squares MS_s,
    MS_t, MS_e (residual, df (n_s-1)(n_t-1)); expected-mean-square estimates
    σ²_e = MS_e, σ²_s = (MS_s - MS_e)/n_t, σ²_t = (MS_t - MS_e)/n_s (negatives set to 0).
    For a topic-set size n':  Eρ² = σ²_s / (σ²_s + σ²_e/n'),
    Φ = σ²_s / (σ²_s + (σ²_t + σ²_e)/n') (NaN when the denominator is 0).

    Parameters
    ----------
    results : DataFrame
        Per-topic results ``name``, ``qid``, ``value`` [, ``measure``], runs aligned on qid.
    measure : str, optional
        The measure to use when ``results`` holds several.
    n_topics : int or list of int, optional
        None (only the collection's own topic count), or a hypothetical count or list of
        counts; the first row is always the observed count, then the hypothetical ones.

    Returns
    -------
    DataFrame
        ``var_system``, ``var_topic``, ``var_residual``, ``n_topics``, ``e_rho2``, ``phi``.

    Examples
    --------
    By hand: system means 0.6, 0.3, topic means 0.3, 0.4, 0.65, grand mean 0.45; MS_s =
    3·(0.15² + 0.15²) = 0.135, MS_t = 2·(0.15² + 0.05² + 0.2²)/2 = 0.065, residuals ±0.05, 0
    so MS_e = 0.01/2 = 0.005; σ²_s = 0.13/3 = 0.0433, σ²_t = 0.06/2 = 0.03; Eρ² =
    0.0433/(0.0433 + 0.005/3) = 0.963, Φ = 0.0433/(0.0433 + 0.035/3) = 0.788.

    >>> import pandas as pd
    >>> scores = {"a": [0.4, 0.6, 0.8], "b": [0.2, 0.2, 0.5]}
    >>> res = pd.DataFrame([{"name": n, "qid": str(q), "value": x}
    ...                     for n, xs in scores.items() for q, x in enumerate(xs)])
    >>> generalizability(res, n_topics=30).round(4)
       var_system  var_topic  var_residual  n_topics  e_rho2     phi
    0      0.0433       0.03         0.005         3  0.9630  0.7879
    1      0.0433       0.03         0.005        30  0.9962  0.9738
    """
    sm = score_matrix(results, measure)
    x, ns, nt = sm.values, sm.k, sm.t
    if nt < 2:
        raise InputError("G-theory needs at least 2 topics")
    grand = x.mean()
    sys_means, top_means = x.mean(axis=1), x.mean(axis=0)
    ms_s = nt * np.sum((sys_means - grand) ** 2) / (ns - 1)
    ms_t = ns * np.sum((top_means - grand) ** 2) / (nt - 1)
    resid = x - sys_means[:, None] - top_means[None, :] + grand
    ms_e = np.sum(resid**2) / ((ns - 1) * (nt - 1))
    var_e = float(ms_e)
    var_s = max(float((ms_s - ms_e) / nt), 0.0)
    var_t = max(float((ms_t - ms_e) / ns), 0.0)
    extra = [] if n_topics is None else np.atleast_1d(n_topics).tolist()
    sizes = [nt] + [int(n) for n in extra if int(n) != nt]
    if any(n < 1 for n in sizes):
        raise InputError(f"n_topics must be positive, got {extra}")
    n = np.asarray(sizes, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        e_rho2 = var_s / (var_s + var_e / n)
        phi = var_s / (var_s + (var_t + var_e) / n)
    return pd.DataFrame(
        {
            "var_system": var_s,
            "var_topic": var_t,
            "var_residual": var_e,
            "n_topics": np.asarray(sizes, dtype=np.int64),
            "e_rho2": e_rho2,
            "phi": phi,
        }
    )
