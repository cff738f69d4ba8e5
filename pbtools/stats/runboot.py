"""Run-to-run noise of estimator errors: a paired bootstrap over the evaluated runs.

An MAE or SRE measured on a collection depends on which runs happened to be evaluated: another
set of systems would give other numbers. :func:`error_intervals` resamples the evaluated runs
of each group (a configuration and measure) with replacement — the *same* resample for every
estimator of the group (paired), seeded — and recomputes each estimator's MAE and SRE, and the
difference between every two estimators, on each replicate. Percentile intervals (Efron &
Tibshirani 1993, §13.3) of those replicates say which differences exceed the run-to-run noise:
an estimator is "better" than another only where the interval of their MAE difference excludes
0.

Replicate b draws counts w_i (multinomial, Σ w_i = n) over the n evaluated runs; with
a_i = |true_i − estimate_i| and C_ij = 1 when run j lies in run i's crossed interval
(:mod:`pbtools.stats.errors`: min(t_i, e_i) < t_j ≤ max(t_i, e_i), j ≠ i),

    MAE_b = Σ_i w_i a_i / n,        SRE_b = Σ_i Σ_{j≠i} w_i w_j C_ij

(copies of one run never cross each other). Without resampling (w = 1) these are
:func:`~pbtools.stats.mae` and :func:`~pbtools.stats.sre` exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.errors import InputError
from pbtools.frames import require_columns

__all__ = ["error_intervals", "DEFAULT_N_BOOT"]

#: replicates of :func:`error_intervals` by default
DEFAULT_N_BOOT = 1000


def _replicate_sre(t: np.ndarray, e: np.ndarray, w: np.ndarray) -> np.ndarray:
    """SRE of every replicate and estimator: Σ_i Σ_j w_bi C_kij w_bj ((B + 1) × E), with
    C_kij = 1 when j ≠ i lies in i's crossed interval (lo, hi] (lo, hi: min and max of the
    truth t_i and estimate e_ki).

    Never builds C: Σ_j w_bj C_kij = W_b(hi_ki) − W_b(lo_ki) − w_bi·[lo_ki < t_i], with
    W_b(x) = Σ_{j: t_j ≤ x} w_bj the replicate's cumulative weight along the sorted truth, read
    where ``searchsorted`` places lo and hi (the same places for every replicate): B × n work
    per estimator, not B × n². Every term is an integer (the weights are multinomial counts),
    so the sums are exact in float64 whatever their order.

    Examples
    --------
    >>> t, e = np.array([0.4, 0.3, 0.2]), np.array([[0.4, 0.45, 0.2]])
    >>> _replicate_sre(t, e, np.array([[1.0, 1.0, 1.0], [0.0, 3.0, 0.0], [2.0, 1.0, 0.0]]))
    array([[1.],
           [0.],
           [2.]])
    """
    lo, hi = np.minimum(t, e), np.maximum(t, e)  # E × n
    order = np.argsort(t, kind="stable")
    cum = np.zeros((len(w), t.size + 1))  # W_b at each sorted position, 0 before the first
    np.cumsum(w[:, order], axis=1, out=cum[:, 1:])
    below_lo = np.searchsorted(t[order], lo, side="right")  # #{j: t_j ≤ lo_ki}
    below_hi = np.searchsorted(t[order], hi, side="right")
    itself = lo < t  # i lies in its own interval (t_i ≤ hi_ki always)
    out = np.zeros((len(w), len(e)))
    for k in range(len(e)):  # a handful of estimators
        crossed = cum[:, below_hi[k]] - cum[:, below_lo[k]] - w * itself[k]
        out[:, k] = (w * crossed).sum(axis=1)
    return out


def _percentiles(reps: np.ndarray, confidence: float):
    """The percentile interval of each column's finite replicates (NaN where none is)."""
    a = (1.0 - confidence) / 2.0
    r = np.asarray(reps, dtype=np.float64)
    two = r.reshape(len(r), -1)
    two = np.where(np.isfinite(two), two, np.nan)
    out = np.full((2, two.shape[1]), np.nan)
    nan = np.isnan(two)
    full, some = ~nan.any(axis=0), ~nan.all(axis=0)
    if full.any():  # one vectorised quantile: what nanquantile does column by column
        out[:, full] = np.quantile(two[:, full], [a, 1.0 - a], axis=0)
    some &= ~full
    if some.any():
        out[:, some] = np.nanquantile(two[:, some], [a, 1.0 - a], axis=0)
    if r.ndim == 1:
        return float(out[0, 0]), float(out[1, 0])
    return out[0], out[1]


def _wide(grp: pd.DataFrame, ests: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The truth and the estimates of ``grp`` as two E × n matrices, estimators in the order of
    ``ests``, the runs (``name``) that have both values for every estimator in the order they
    first appear — the rows and order of ``pivot_table(index="name", columns="estimator",
    sort=False)`` with the incomplete runs dropped (a run listed twice for an estimator gets
    its mean, as there).

    >>> g = pd.DataFrame({"name": list("baab"), "estimator": list("xxyy"),
    ...     "true": [0.5, 0.4, 0.4, 0.5], "estimate": [0.1, 0.2, 0.3, np.nan]})
    >>> _wide(g, ["x", "y"])
    (array([[0.4],
           [0.4]]), array([[0.2],
           [0.3]]))
    """
    # ``ests``: the estimators in the order they first appear, so their factorized codes
    est, seen = pd.factorize(grp["estimator"].astype(str), sort=False)
    assert list(seen) == list(ests), (list(seen), ests)
    runs, names = pd.factorize(grp["name"], sort=False)
    pair = runs.astype(np.int64) * len(ests) + est
    if np.unique(pair).size < pair.size:  # a run twice for an estimator: its mean
        grp = grp.groupby(["name", "estimator"], sort=False, observed=True, as_index=False)
        return _wide(grp[["true", "estimate"]].mean(), ests)
    out = []
    for col in ("true", "estimate"):
        m = np.full(len(names) * len(ests), np.nan)
        ok = runs >= 0  # a missing name is no run (pivot_table drops it)
        m[pair[ok]] = grp[col].to_numpy(np.float64)[ok]
        out.append(m.reshape(len(names), len(ests)))
    keep = ~(np.isnan(out[0]).any(axis=1) | np.isnan(out[1]).any(axis=1))
    return out[0][keep].T.copy(), out[1][keep].T.copy()


def error_intervals(
    frame: pd.DataFrame,
    by: Sequence[str] = ("measure",),
    *,
    n_boot: int = DEFAULT_N_BOOT,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """MAE and SRE intervals per estimator, and intervals of every estimator pair's difference.

    Parameters
    ----------
    frame : DataFrame
        Run-level errors: ``name``, ``estimator``, ``true``, ``estimate`` + the ``by`` keys
        (one row per run, estimator and group; e.g. an analysis' ``scores``).
    by : sequence of str
        The group keys (``estimator`` excluded): runs are resampled within each group, the
        same resample for every estimator of the group.
    n_boot : int
        Replicates B.
    confidence : float
        Coverage of the percentile intervals.
    seed : int or None
        Seed of the resampling (the same draws for every group of the same size).

    Returns
    -------
    (errors, differences) : tuple of DataFrame
        ``errors``: keys, ``estimator``, ``n_runs``, ``mae``, ``mae_low``, ``mae_high``,
        ``sre``, ``sre_low``, ``sre_high``. ``differences``: keys, ``estimator_a``,
        ``estimator_b`` (every ordered pair),
        ``mae_diff`` (MAE_a − MAE_b), ``mae_diff_low``, ``mae_diff_high``, ``cut`` (1 −
        MAE_a / MAE_b: the share of b's error a removes; NaN where b has none; its interval
        from the replicates where b errs), ``cut_low``, ``cut_high``,
        ``sre_diff``, ``sre_diff_low``, ``sre_diff_high`` and ``significant`` (the MAE
        difference's interval excludes 0).

    Examples
    --------
    Estimator x errs by 0.1 on every run, y by 0.2: the difference is −0.1 whatever runs are
    drawn, so its interval excludes 0.

    >>> f = pd.DataFrame({"name": list("abcdabcd"), "estimator": list("xxxxyyyy"),
    ...     "measure": "P@10", "true": [0.5, 0.4, 0.3, 0.2] * 2,
    ...     "estimate": [0.4, 0.3, 0.2, 0.1, 0.3, 0.2, 0.1, 0.0]})
    >>> err, diff = error_intervals(f, n_boot=200)
    >>> err[["estimator", "mae", "mae_low", "mae_high"]].round(4).to_numpy().tolist()
    [['x', 0.1, 0.1, 0.1], ['y', 0.2, 0.2, 0.2]]
    >>> diff[["estimator_a", "estimator_b", "mae_diff", "cut", "significant"]].round(4)
      estimator_a estimator_b  mae_diff  cut  significant
    0           x           y      -0.1  0.5         True
    1           y           x       0.1 -1.0         True
    """
    by = [by] if isinstance(by, str) else list(by)
    require_columns(frame, ("name", "estimator", "true", "estimate", *by), "error frame")
    if not 0 < float(confidence) < 1:
        raise InputError(f"confidence must be in (0, 1), not {confidence!r}")
    if isinstance(n_boot, bool) or int(n_boot) < 1:
        raise InputError(f"n_boot must be an integer >= 1, not {n_boot!r}")
    err_rows, diff_rows = [], []
    draws: dict[int, np.ndarray] = {}  # the seed's replicate weights by group size
    groups = frame.groupby(by, sort=False, observed=True) if by else [((), frame)]
    for key, grp in groups:  # configurations × measures: tens of groups
        key = key if isinstance(key, tuple) else (key,)
        ests = list(dict.fromkeys(grp["estimator"].astype(str)))
        t, e = _wide(grp, ests)  # E × n (the truth is the same for every estimator)
        n = t.shape[1]
        if n < 2:
            continue
        if n not in draws:  # a seed draws the same for every group of the same size: once
            w = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), int(n_boot))
            w = np.vstack([np.ones(n), w]).astype(np.float64)  # row 0: the sample itself
            if isinstance(seed, int | np.integer):
                draws[n] = w
        else:
            w = draws[n]
        mae = w @ np.abs(t - e).T / n  # (B + 1) × E
        sre = _replicate_sre(t[0], e, w)
        n_est = len(ests)
        pa = [(a, b) for a in range(n_est) for b in range(n_est) if a != b]
        ia, ib = [a for a, _ in pa], [b for _, b in pa]
        d = mae[:, ia] - mae[:, ib]  # every ordered pair of estimators, as columns
        with np.errstate(divide="ignore", invalid="ignore"):  # b error-free: NaN
            cut = np.where(mae[:, ib] > 0, 1.0 - mae[:, ia] / mae[:, ib], np.nan)
        ds = sre[:, ia] - sre[:, ib]
        # every interval of the group in one call: [mae | sre | d | cut | ds] column blocks
        lo, hi = _percentiles(np.hstack([mae, sre, d, cut, ds])[1:], confidence)
        cuts = np.cumsum([n_est, n_est, len(pa), len(pa)])
        (m_lo, s_lo, d_lo, c_lo, r_lo), (m_hi, s_hi, d_hi, c_hi, r_hi) = (
            np.split(lo, cuts),
            np.split(hi, cuts),
        )
        base = dict(zip(by, key, strict=True))
        for k, est in enumerate(ests):
            err_rows.append(
                {
                    **base,
                    "estimator": est,
                    "n_runs": n,
                    "mae": mae[0, k],
                    "mae_low": m_lo[k],
                    "mae_high": m_hi[k],
                    "sre": int(round(sre[0, k])),
                    "sre_low": s_lo[k],
                    "sre_high": s_hi[k],
                }
            )
        for j, (a, b) in enumerate(pa):  # a handful of estimators
            diff_rows.append(
                {
                    **base,
                    "estimator_a": ests[a],
                    "estimator_b": ests[b],
                    "mae_diff": d[0, j],
                    "mae_diff_low": d_lo[j],
                    "mae_diff_high": d_hi[j],
                    "cut": cut[0, j],
                    "cut_low": c_lo[j],
                    "cut_high": c_hi[j],
                    "sre_diff": ds[0, j],
                    "sre_diff_low": r_lo[j],
                    "sre_diff_high": r_hi[j],
                    "significant": bool(d_lo[j] > 0 or d_hi[j] < 0),
                }
            )
    err_cols = [*by, "estimator", "n_runs", "mae", "mae_low", "mae_high", "sre"]
    err_cols += ["sre_low", "sre_high"]
    diff_cols = [*by, "estimator_a", "estimator_b", "mae_diff", "mae_diff_low", "mae_diff_high"]
    diff_cols += ["cut", "cut_low", "cut_high", "sre_diff", "sre_diff_low", "sre_diff_high"]
    diff_cols += ["significant"]
    return (
        pd.DataFrame(err_rows, columns=err_cols),
        pd.DataFrame(diff_rows, columns=diff_cols),
    )
