"""Prediction intervals for the pooled score of an unpooled run (split-conformal, Vovk et al.).

The question a researcher asks of a corrected score is *how far can this estimate be from the
score my run would have had if it had contributed to the pool?* That error is the estimator's
bias for this run, which resampling topics cannot see. Every pooled collection carries its own
calibration data for it: the leave-one-out errors e_i = true_i − estimate_i of its pooled runs
(:func:`pbtools.experiments.leaveout.leave_one_out_experiment`: each run scored without its
organisation's, or its own, contributions, against its score on the full pool).

**Interval.** Let |e|_(1) ≤ … ≤ |e|_(n) be the absolute calibration errors of one estimator at
one measure and α = 1 − confidence. The interval for a new run with estimate x is
``[x − q, x + q]`` with q = |e|_(k), k = ⌈(n + 1)(1 − α)⌉ — the split-conformal quantile at the
finite-sample level ⌈(n + 1)(1 − α)⌉/n. When k > n (fewer than 1/α − 1 calibration runs: 19
at 95 %) q is unbounded and only the bounds below remain. (Signed errors with α/2 in each
tail would follow an estimator's bias more closely, but need 2/α − 1 = 39 calibration runs
for a finite 95 % interval — more organisations' runs than most TREC tracks pool.)

**Assumption: exchangeability.** If the new run's error and the n calibration errors are
exchangeable — the new run is like a run drawn from the same population as the pooled runs,
left out the same way (a new organisation ↔ leave-one-organisation-out) — the interval covers
its pooled score with probability at least 1 − α, and at most 1 − α + 1/(n + 1) for errors
without ties (Lei et al. 2018, Thm 2.2). Runs of one organisation are not independent; the
unit that is exchangeable is the organisation, so an evaluation leaves whole organisations out
(``benchmarks/interval_coverage.py``). The guarantee is marginal — over new runs, not for
every run: a run unlike all pooled runs (more unjudged documents than any of them) is an
extrapolation, which :func:`prediction_intervals` warns about (:class:`ExtrapolationWarning`).

**Scaling** (``scale="unjudged"``): normalised residuals r_i = |e_i| / σ_i with σ_i the run's
unjudged share k̄ at the measure's cut-off (at the pool depth d for a measure without one) on
its reduced pool, floored at one document (1 / cut-off); the interval is x ± σ·r_(k): the
error of a run with few unjudged documents is small, so the interval adapts.

**Bounds.** Every interval is clipped to [0, 1]. For P@n with n ≤ d the pooled score lies in
[reduced, reduced + k̄@n] exactly (pooling the run judges its top n; each unjudged document
becomes relevant or not), so the interval is intersected with that range.

References
----------
Vovk, Gammerman & Shafer, *Algorithmic Learning in a Random World* (2005); Lei, G'Sell,
Rinaldo, Tibshirani & Wasserman, "Distribution-free predictive inference for regression",
JASA 2018; Barber, Candès, Ramdas & Tibshirani, "Predictive inference with the jackknife+",
Ann. Statist. 2021.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from pbtools.errors import InputError
from pbtools.measures.names import Measure, measure_column, measure_list, parse, parse_all

__all__ = [
    "ExtrapolationWarning",
    "SCALES",
    "PI_COLUMNS",
    "conformal_offsets",
    "share_measure",
    "unjudged_share",
    "calibration_errors",
    "prediction_inputs",
    "with_prediction",
    "prediction_intervals",
    "nested_intervals",
]

#: the scalings of the residuals: none, or the run's unjudged share
SCALES = (None, "unjudged")
#: the columns :func:`prediction_intervals` adds
PI_COLUMNS = ("pi_low", "pi_high")

_KEYS = ["measure", "estimator"]


class ExtrapolationWarning(UserWarning):
    """The new run lies outside the range of the calibration runs (more unjudged documents
    than any pooled run had when left out): its prediction interval is an extrapolation."""


def conformal_offsets(residuals, confidence: float = 0.95) -> tuple[float, float]:
    """The split-conformal interval offsets ``(−q, q)``: q = |e|_(k), k = ⌈(n + 1)·c⌉.

    |e|_(k) is the k-th smallest of the n finite absolute residuals (the finite-sample
    quantile level ⌈(n + 1)c⌉/n); q = inf when k > n.

    Examples
    --------
    Nineteen calibration errors at 90 %: k = 18 — a 20th exchangeable error falls inside
    [−|e|_(18), |e|_(18)] with probability 18/20 = 0.9 exactly (no ties).

    >>> conformal_offsets(np.arange(1, 20) / 100, 0.9)
    (-0.18, 0.18)
    >>> conformal_offsets([0.1, -0.2, 0.3], 0.9)  # 3 errors cannot bound a 90 % interval
    (-inf, inf)
    """
    if not 0 < float(confidence) < 1:
        raise InputError(f"confidence must be in (0, 1), not {confidence!r}")
    r = np.asarray(residuals, dtype=np.float64).ravel()
    q = float(_leave_out_quantiles(r, np.full(len(r), -1), 1, confidence)[0])
    return -q, q


def _leave_out_quantiles(residuals, units, n_units: int, confidence: float) -> np.ndarray:
    """The conformal quantile q of :func:`conformal_offsets` for every unit u = 0 … n_units − 1
    of the calibration set *without* u's residuals (``units``: each residual's unit code, −1
    for one no unit owns), all at once: the finite absolute residuals sorted once, and for
    each unit the position where the count of the others' reaches k_u = ⌈(n_u + 1)·c⌉ — the
    k_u-th smallest of the n_u others' (inf when k_u > n_u). U × n booleans."""
    r = np.abs(np.asarray(residuals, dtype=np.float64))
    u = np.asarray(units, dtype=np.int64)
    fin = np.isfinite(r)
    order = np.argsort(r[fin], kind="stable")
    r, u = r[fin][order], u[fin][order]
    q = np.full(int(n_units), np.inf)
    if not r.size:
        return q
    kept = np.cumsum(u[None, :] != np.arange(int(n_units))[:, None], axis=1)  # U × n
    n = kept[:, -1]
    # a tiny tolerance so that (n + 1)·c = 18.000000000000004 counts as 18
    k = np.ceil((n + 1) * float(confidence) - 1e-9).astype(np.int64)
    ok = (k >= 1) & (k <= n)
    pos = np.argmax(kept >= np.maximum(k, 1)[:, None], axis=1)  # the k-th kept residual
    q[ok] = r[pos[ok]]
    return q


def unjudged_share(measure: Measure, depth: int) -> Measure:
    """:func:`share_measure` of a parsed measure, parsed (``Unjudged@n``)."""
    return Measure("Unjudged", int(measure.cutoff) if measure.cutoff else int(depth))


def share_measure(measure, depth: int) -> str:
    """The unjudged-share measure that goes with ``measure``: ``Unjudged@n`` at its cut-off,
    at the pool depth d for a measure without one.

    >>> share_measure("P@10", 100), share_measure("AP", 100)
    ('Unjudged@10', 'Unjudged@100')
    """
    return str(unjudged_share(parse(str(measure)), depth))


def _bounded(measure: str, depth: int) -> bool:
    """P@n with n ≤ d: the pooled score lies in [reduced, reduced + k̄@n]."""
    m = parse(measure)
    return m.base == "P" and m.cutoff is not None and int(m.cutoff) <= int(depth)


def _sigma(share, measure: str, depth: int) -> np.ndarray:
    """σ of the scaled residuals: the unjudged share, floored at one document."""
    m = parse(measure)
    floor = 1.0 / (int(m.cutoff) if m.cutoff else int(depth))
    return np.maximum(np.nan_to_num(np.asarray(share, dtype=np.float64), nan=1.0), floor)


def calibration_errors(
    collection_or_frames,
    measures: Sequence[str],
    estimators: Iterable[str],
    *,
    pooled: Iterable[str],
    depth: int,
    leave_out: str = "org",
    protocol: str | None = None,
    **choices,
) -> pd.DataFrame:
    """The leave-one-out errors of the pooled runs: the calibration set of the intervals.

    One :func:`~pbtools.experiments.leaveout.leave_one_out_experiment` (all pooled runs) over
    ``measures`` and their unjudged shares (:func:`share_measure`), ``reduced`` always among
    the estimators.

    Returns
    -------
    DataFrame
        One row per (evaluated run, measure, estimator of ``estimators``): ``name``,
        ``left_out`` (the unit), ``measure``, ``estimator``, ``true``, ``estimate``,
        ``reduced`` (the run's reduced-pool score at the measure) and ``share`` (its unjudged
        share on the reduced pool). ``attrs["depth"]`` is d.
    """
    from pbtools.experiments.leaveout import leave_one_out_experiment

    parsed = parse_all(measures)  # a guard: the callers here pass parsed measures
    share_of = [unjudged_share(m, depth) for m in parsed]
    ms = measure_column(parsed)  # matched against the experiment's measure column
    shares = dict(zip(ms, measure_column(share_of), strict=True))
    asked = [e for e in dict.fromkeys(estimators) if e != "true"]
    res = leave_one_out_experiment(
        collection_or_frames,
        list(dict.fromkeys([*parsed, *share_of])),
        leave_out=leave_out,
        estimators=list(dict.fromkeys(["reduced", *asked])),
        protocol=protocol,
        pooled=list(pooled),
        depth=int(depth),
        **choices,
    )
    res = res.assign(
        name=res["name"].astype(str),
        measure=res["measure"].astype(str),
        estimator=res["estimator"].astype(str),
        left_out=res["left_out"].astype(str),
    )
    red = res[res["estimator"] == "reduced"].set_index(["name", "measure"])["estimate"]
    out = res.loc[res["measure"].isin(ms) & res["estimator"].isin(asked)]
    out = out[["name", "left_out", "measure", "estimator", "true", "estimate"]].reset_index(
        drop=True
    )
    out["reduced"] = red.reindex(pd.MultiIndex.from_frame(out[["name", "measure"]])).to_numpy()
    key = pd.MultiIndex.from_arrays([out["name"], out["measure"].map(shares)])
    out["share"] = red.reindex(key).to_numpy()
    out.attrs = {"depth": int(depth), "leave_out": leave_out}
    return out


def _residuals(calib: pd.DataFrame, measure, depth, scale) -> np.ndarray:
    """The calibration residuals e = true − estimate, divided by σ with ``scale="unjudged"``."""
    e = (calib["true"] - calib["estimate"]).to_numpy(dtype=np.float64)
    return e / _sigma(calib["share"], measure, depth) if scale == "unjudged" else e


def _rows_bounds(sub: pd.DataFrame, column: str, q, measure, depth, scale):
    """``(low, high, h)``: the intervals est ± h of the rows ``sub`` (their ``column`` estimate)
    for the conformal quantile q (a scalar or one per row), h = q (σ·q with
    ``scale="unjudged"``), clipped to [0, 1] and, for P@n with n ≤ d, to [reduced,
    reduced + share] (the rows' ``reduced`` score and unjudged ``share``)."""
    est, reduced, share = (sub[c].to_numpy(dtype=np.float64) for c in (column, "reduced", "share"))
    half = _sigma(share, measure, depth) * q if scale == "unjudged" else q
    low, high = np.maximum(est - half, 0.0), np.minimum(est + half, 1.0)
    if _bounded(measure, depth):
        ok = np.isfinite(reduced) & np.isfinite(share)
        low = np.where(ok, np.maximum(low, reduced), low)
        high = np.where(ok, np.minimum(high, reduced + share), high)
    return low, high, half


def _check(confidence, scale):
    if scale not in SCALES:
        raise InputError(f"scale must be one of {SCALES}, not {scale!r}")
    if not 0 < float(confidence) < 1:
        raise InputError(f"confidence must be in (0, 1), not {confidence!r}")


def prediction_intervals(
    estimates: pd.DataFrame,
    calibration: pd.DataFrame,
    *,
    confidence: float = 0.95,
    scale: str | None = None,
    exclude: dict | None = None,
) -> pd.DataFrame:
    """``pi_low``/``pi_high`` for every estimate: the split-conformal interval for the score
    the run would have had had it contributed to the pool (see the module docstring).

    Parameters
    ----------
    estimates : DataFrame
        ``name``, ``measure``, ``estimator``, ``value``, plus ``reduced`` and ``share`` (the
        run's reduced score and unjudged share at the measure, as in the calibration).
    calibration : DataFrame
        :func:`calibration_errors` of the collection.
    confidence : float
        Coverage 1 − α.
    scale : {None, "unjudged"}
        Raw or share-scaled residuals.
    exclude : dict, optional
        run name → calibration unit to leave out of that run's calibration set (a pooled run
        scored as if left out is not calibrated on its own unit).

    Returns
    -------
    DataFrame
        ``estimates`` with ``pi_low``, ``pi_high`` after ``value`` and ``extrapolated`` (True:
        the run's unjudged share exceeds every calibration run's; an
        :class:`ExtrapolationWarning` names it). Estimates the calibration lacks (``true``)
        get NaN.

    Examples
    --------
    >>> calib = pd.DataFrame({"name": list("abcd"), "left_out": list("abcd"),
    ...     "measure": "AP", "estimator": "reduced", "true": [0.3, 0.2, 0.5, 0.4],
    ...     "estimate": [0.25, 0.2, 0.4, 0.38], "reduced": [0.25, 0.2, 0.4, 0.38],
    ...     "share": [0.3, 0.1, 0.5, 0.2]})
    >>> new = pd.DataFrame({"name": ["u"], "measure": ["AP"], "estimator": ["reduced"],
    ...     "value": [0.3], "reduced": [0.3], "share": [0.2]})
    >>> prediction_intervals(new, calib, confidence=0.5)[["pi_low", "pi_high"]].round(2)
       pi_low  pi_high
    0    0.25     0.35
    """
    _check(confidence, scale)
    depth = int(calibration.attrs.get("depth", 100))
    out = estimates.copy()
    low = np.full(len(out), np.nan)
    high = np.full(len(out), np.nan)
    extra = np.zeros(len(out), dtype=bool)
    exclude = exclude or {}
    groups = calibration.groupby(_KEYS, sort=False)
    for (measure, est), idx in _row_groups(out):
        if (measure, est) not in groups.groups:
            continue
        cal = groups.get_group((measure, est))
        for name, rows in idx:  # the runs to score: a handful
            c = cal[cal["left_out"] != exclude[name]] if name in exclude else cal
            sub = out.iloc[rows]
            _lo, q = conformal_offsets(_residuals(c, measure, depth, scale), confidence)
            lo, hi, _h = _rows_bounds(sub, "value", q, measure, depth, scale)
            low[rows], high[rows] = lo, hi
            top = float(c["share"].max()) if len(c) else math.nan
            far = sub["share"].to_numpy(dtype=np.float64) > top + 1e-12
            extra[rows] = far
            if far.any():
                warnings.warn(
                    f"{name}: its unjudged share at {measure} ({float(sub['share'].max()):.3f}) "
                    f"exceeds every calibration run's (at most {top:.3f}): the {est} "
                    "prediction interval is an extrapolation",
                    ExtrapolationWarning,
                    stacklevel=2,
                )
    at = out.columns.get_loc("value") + 1
    out.insert(at, "pi_low", low)
    out.insert(at + 1, "pi_high", high)
    out["extrapolated"] = extra
    return out


def _row_groups(out: pd.DataFrame):
    """``((measure, estimator), [(name, row positions), …])`` of an estimates frame."""
    keys = pd.DataFrame(
        {
            "measure": out["measure"].astype(str).to_numpy(),
            "estimator": out["estimator"].astype(str).to_numpy(),
            "name": out["name"].astype(str).to_numpy(),
        }
    )
    result: dict = {}
    for (m, e, n), rows in keys.groupby(
        ["measure", "estimator", "name"], sort=False
    ).indices.items():
        result.setdefault((m, e), []).append((n, rows))
    return result.items()


def nested_intervals(
    calibration: pd.DataFrame, *, confidence: float = 0.95, scale: str | None = None
) -> pd.DataFrame:
    """Every calibration run's own interval, built from the *other* units' errors only
    (nested leave-one-unit-out): the honest check of :func:`prediction_intervals`.

    Returns ``calibration`` with ``pi_low`` and ``pi_high``, ``halfwidth`` (the conformal
    half-width q — σ·q scaled — before the clipping to [0, 1] and the P@n bound; inf when
    the other units are too few for the level) and ``covered`` (the run's true score inside
    its interval). The quantile of every unit's calibration set comes from one sort of the
    group's residuals (:func:`conformal_offsets`' rule, leave-one-unit-out at once).

    Examples
    --------
    >>> calib = pd.DataFrame({"name": list("abcde"), "left_out": list("aabcd"),
    ...     "measure": "AP", "estimator": "reduced", "true": [0.3, 0.2, 0.5, 0.4, 0.1],
    ...     "estimate": [0.25, 0.2, 0.4, 0.38, 0.1], "reduced": 0.0, "share": 0.2})
    >>> nested_intervals(calib, confidence=0.5)["covered"].tolist()
    [False, True, False, True, True]
    """
    _check(confidence, scale)
    depth = int(calibration.attrs.get("depth", 100))
    low, high, half = (np.full(len(calibration), np.nan) for _ in range(3))
    units = calibration["left_out"].astype(str).to_numpy()
    for (measure, _est), rows in calibration.groupby(_KEYS, sort=False).indices.items():
        sub = calibration.iloc[rows]  # one (measure, estimator): every unit's q at once
        code, uniq = pd.factorize(units[rows])
        q = _leave_out_quantiles(
            _residuals(sub, measure, depth, scale), code, len(uniq), confidence
        )
        low[rows], high[rows], half[rows] = _rows_bounds(
            sub, "estimate", q[code], measure, depth, scale
        )
    out = calibration.assign(pi_low=low, pi_high=high, halfwidth=half)
    t = out["true"].to_numpy(dtype=np.float64)
    out["covered"] = (low - 1e-12 <= t) & (t <= high + 1e-12)
    return out


def prediction_inputs(measures, estimators, depth: int) -> tuple[list, list[str]]:
    """The extra measures (parsed, :class:`~pbtools.measures.Measure`) and estimators to score
    the new runs with so that :func:`with_prediction` has their reduced score and unjudged
    share. ``measures``: parsed measures (:func:`pbtools.measures.parse_all`).

    >>> from pbtools.measures.names import measure_column, parse_all
    >>> extra, est = prediction_inputs(parse_all(["P@10", "AP"]), ["webber"], 100)
    >>> measure_column(extra), est
    (['Unjudged@10', 'Unjudged@100'], ['reduced'])
    """
    ms = measure_list(measures, "prediction_inputs")
    extra = [m for m in dict.fromkeys(unjudged_share(m, depth) for m in ms) if m not in ms]
    return extra, ([] if "reduced" in estimators else ["reduced"])


def with_prediction(
    out, frames, pooled_runs, depth, ms, names, *, leave_out, confidence, scale, protocol, **choices
):
    """``out`` (estimates of :func:`pbtools.corrections.correct` over ``ms`` and ``names`` plus
    the rows :func:`prediction_inputs` names) with :func:`prediction_intervals` calibrated on
    the collection ``frames`` (``(runs, qrels, orgs)``; a pooled run no orgs row lists is its
    own organisation), those helper rows dropped; and the calibration size per
    ``"measure estimator"``. ``leave_out``: the new runs are pooled runs scored as if their
    ``"run"``/``"org"`` had not contributed (the calibration then leaves that unit out, and
    excludes it from each run's calibration set); None: new runs, calibrated by
    leave-one-organisation-out."""
    runs, qrels, orgs = frames
    org_of = dict(zip(orgs["name"].astype(str), orgs["org"].astype(str), strict=True))
    missing = [r for r in pooled_runs if r not in org_of]  # runs no desc.xml lists: their
    if missing:  # own organisation, so that every pooled run calibrates
        orgs = pd.concat([orgs, pd.DataFrame({"name": missing, "org": missing})], ignore_index=True)
        org_of.update({r: r for r in missing})
    unit = leave_out or "org"
    calib = calibration_errors(
        (runs, qrels, orgs),
        ms,
        names,
        pooled=pooled_runs,
        depth=depth,
        leave_out=unit,
        protocol=protocol,
        **choices,
    )
    parsed = dict(zip(measure_column(ms), ms, strict=True))  # the frames' column → measure
    ms = list(parsed)
    name = out["name"].astype(str)
    measure = out["measure"].astype(str)
    red = out[out["estimator"].astype(str) == "reduced"]
    red = pd.Series(
        red["value"].to_numpy(dtype=float),
        index=pd.MultiIndex.from_arrays([red["name"].astype(str), red["measure"].astype(str)]),
    )
    keep = (measure.isin(ms) & out["estimator"].astype(str).isin(names)).to_numpy()
    est = out.loc[keep].reset_index(drop=True)
    n, m = name[keep].to_numpy(), measure[keep].to_numpy()
    shares = [str(unjudged_share(parsed[x], depth)) for x in m]
    est["reduced"] = red.reindex(pd.MultiIndex.from_arrays([n, m])).to_numpy()
    est["share"] = red.reindex(pd.MultiIndex.from_arrays([n, shares])).to_numpy()
    exclude = {}
    if leave_out is not None:  # a pooled run scored as if left out: not calibrated on itself
        exclude = {r: (org_of.get(r, r) if unit == "org" else r) for r in set(n)}
    res = prediction_intervals(est, calib, confidence=confidence, scale=scale, exclude=exclude)
    sizes = calib.groupby(["measure", "estimator"], sort=False).size()
    return res.drop(columns=["reduced", "share"]), {
        f"{a} {b}": int(v) for (a, b), v in sizes.items()
    }
