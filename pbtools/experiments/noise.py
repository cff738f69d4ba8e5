"""Run-to-run noise in a bias analysis: which differences between estimators are real.

The errors of :func:`pbtools.experiments.analysis.analyze` carry 95 % paired bootstrap
intervals over the evaluated runs (:func:`pbtools.stats.error_intervals`). The words of the
reports follow one rule, applied here: an estimator is called *best*, or said to *cut the
error by X %*, only where the interval of its MAE (or SRE) difference excludes 0.
:func:`prediction_halfwidths` gives the 95 % prediction half-width of each estimator from the
analysis' own leave-one-out errors (:mod:`pbtools.experiments.intervals`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.experiments.intervals import conformal_offsets

__all__ = ["best_estimator", "noise_rows", "pct", "prediction_halfwidths"]


def _in(frame: pd.DataFrame, leave_out, runs) -> pd.DataFrame:
    return frame[(frame["leave_out"] == leave_out) & (frame["runs"] == runs)]


def best_estimator(analysis, leave_out: str, runs: str, measure: str, error: str = "mae"):
    """The estimator with the lowest ``error`` (``"mae"`` or ``"sre"``) in one configuration and
    measure — only if its advantage over every other estimator exceeds the run-to-run noise
    (the 95 % paired bootstrap interval of the difference excludes 0, ``analysis.differences``);
    else None. Returns ``(estimator, {other: (diff, low, high)})`` or None."""
    d = getattr(analysis, "differences", None)
    e = analysis.errors
    cfg = _in(e, leave_out, runs)
    cfg = cfg[cfg["measure"] == measure]
    cfg = cfg[cfg[error].notna()]
    if d is None or not len(d) or len(cfg) < 2:
        return None
    best = str(cfg.loc[cfg[error].astype(float).idxmin(), "estimator"])
    sel = _in(d, leave_out, runs)
    sel = sel[(sel["measure"] == measure) & (sel["estimator_a"] == best)]
    lo, hi = sel[f"{error}_diff_low"].astype(float), sel[f"{error}_diff_high"].astype(float)
    if not len(sel) or not (hi < 0).all() or not (lo <= hi).all():
        return None
    return best, {
        str(r["estimator_b"]): (
            float(r[f"{error}_diff"]),
            float(r[f"{error}_diff_low"]),
            float(r[f"{error}_diff_high"]),
        )
        for _, r in sel.iterrows()
    }


def pct(share: float) -> str:
    """A signed percentage of the error, "+5%" (more error) or "-12%" (less).

    >>> pct(0.052), pct(-0.12), pct(0.001), pct(float("nan"))
    ('+5%', '-12%', '0%', 'n/a')
    """
    if not np.isfinite(float(share)):
        return "n/a"
    v = int(round(float(share) * 100))
    return f"{v:+d}%" if v else "0%"


def noise_rows(analysis, leave_out: str, runs: str, ests: list[str]) -> pd.DataFrame:
    """One configuration's MAE intervals, in measure then ``ests`` order, with each corrected
    estimator's ``cut`` of the reduced pool's MAE (``cut_low``, ``cut_high``,
    ``significant``; NaN for ``reduced``)."""
    e = _in(analysis.errors, leave_out, runs)
    e = e[e["estimator"].isin(ests)]
    measures = list(dict.fromkeys(e["measure"].astype(str)))
    rank = {x: i for i, x in enumerate(ests)}
    order = [
        measures.index(str(m)) * len(ests) + rank[x]
        for m, x in zip(e["measure"], e["estimator"], strict=True)
    ]
    out = e.iloc[np.argsort(order, kind="stable")][
        ["measure", "estimator", "mae", "mae_low", "mae_high"]
    ]
    out = out.astype({"measure": str, "estimator": str}).reset_index(drop=True)
    d = getattr(analysis, "differences", None)
    cols = ["cut", "cut_low", "cut_high", "significant"]
    if d is None or not len(d):
        return out.assign(cut=np.nan, cut_low=np.nan, cut_high=np.nan, significant=False)
    d = _in(d, leave_out, runs)
    d = d[d["estimator_b"] == "reduced"].astype({"measure": str, "estimator_a": str})
    d = d.rename(columns={"estimator_a": "estimator"})[["measure", "estimator", *cols]]
    return out.merge(d, on=["measure", "estimator"], how="left")


def prediction_halfwidths(analysis, leave_out: str, runs: str, ests: list[str], confidence=0.95):
    """Per measure and estimator the half-width q of the split-conformal prediction interval
    estimate ± q, from one configuration's leave-one-out errors (inf: too few runs), and the
    number of runs."""
    s = _in(analysis.scores, leave_out, runs)
    rows = []
    for (measure, est), grp in s.groupby(["measure", "estimator"], sort=False, observed=True):
        if str(est) in ests:
            err = (grp["true"] - grp["estimate"]).to_numpy(np.float64)
            q = conformal_offsets(err, confidence)[1]
            rows.append({"measure": str(measure), "estimator": str(est), "q": q, "n": len(err)})
    return pd.DataFrame(rows, columns=["measure", "estimator", "q", "n"])
