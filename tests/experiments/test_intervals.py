"""Prediction intervals for the pooled score (issue 26) and the run-to-run noise of estimator
errors (issue 26 item 4 / issue 24 item 7): conformal quantiles, coverage, columns, the
extrapolation warning, the paired bootstrap over runs and the "best" rule."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import pbtools
from pbtools import stats, synth
from pbtools.experiments.analysis import Analysis
from pbtools.experiments.intervals import (
    ExtrapolationWarning,
    calibration_errors,
    conformal_offsets,
    nested_intervals,
    prediction_intervals,
)
from pbtools.experiments.noise import best_estimator
from pbtools.experiments.report import summary


@pytest.mark.parametrize("n", [9, 19, 24, 40])
@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95])
def test_conformal_quantile_is_exact_on_exchangeable_points(n, confidence):
    """Each of n + 1 distinct errors in turn is the new one, the other n calibrate: the share
    covered is ⌈(n + 1)c⌉ / (n + 1) exactly (1 when that index exceeds n: unbounded)."""
    rng = np.random.default_rng(n)
    errors = rng.normal(size=n + 1)
    hits = 0
    for i in range(n + 1):
        lo, hi = conformal_offsets(np.delete(errors, i), confidence)
        hits += lo <= errors[i] <= hi
    k = math.ceil((n + 1) * confidence - 1e-9)
    assert hits / (n + 1) == pytest.approx(min(k, n + 1) / (n + 1))
    assert hits / (n + 1) >= confidence - 1e-12


def test_conformal_quantile_level():
    # 19 errors at 95 %: k = ⌈20 · 0.95⌉ = 19 = n, the largest absolute error
    lo, hi = conformal_offsets(-np.arange(1, 20) / 100, 0.95)
    assert (lo, hi) == (-0.19, 0.19)
    assert conformal_offsets(np.arange(1, 19) / 100, 0.95) == (-math.inf, math.inf)
    with pytest.raises(ValueError, match="confidence"):
        conformal_offsets([0.1], 1.0)


@pytest.mark.parametrize("scale", [None, "unjudged"])
@pytest.mark.parametrize("confidence", [0.8, 0.95])
def test_nested_intervals_match_a_loop_over_units(scale, confidence):
    """The leave-one-unit-out quantiles, all at once, equal each run's interval built from the
    other units' errors one unit at a time (prediction_intervals with the run's unit excluded):
    units of one to three runs, tied and missing errors, a bounded measure (P@10) and AP."""
    rng = np.random.default_rng(7)
    n = 45
    unit = rng.integers(0, 22, n).astype(str)
    true = rng.uniform(0.1, 0.6, n)
    estimate = true - np.round(rng.normal(0, 0.05, n), 2)  # rounded: ties between units
    estimate[[3, 17]] = np.nan  # an estimator without an estimate for a run
    share = rng.uniform(0, 0.4, n)
    names = [f"r{i}" for i in range(n)]
    frames = []
    for measure in ("P@10", "AP"):
        frames.append(
            pd.DataFrame(
                {
                    "name": names,
                    "left_out": unit,
                    "measure": measure,
                    "estimator": "webber",
                    "true": true,
                    "estimate": estimate,
                    "reduced": true - share / 2,
                    "share": share,
                }
            )
        )
    calib = pd.concat(frames, ignore_index=True)
    calib.attrs = {"depth": 20}
    out = nested_intervals(calib, confidence=confidence, scale=scale)
    new = calib.rename(columns={"estimate": "value"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        loop = prediction_intervals(
            new,
            calib,
            confidence=confidence,
            scale=scale,
            exclude=dict(zip(names, unit, strict=True)),
        )
    np.testing.assert_array_equal(out["pi_low"].to_numpy(), loop["pi_low"].to_numpy())
    np.testing.assert_array_equal(out["pi_high"].to_numpy(), loop["pi_high"].to_numpy())
    # the half-width before clipping: the interval where neither bound cuts it
    free = (out["measure"] == "AP") & (out["pi_low"] > 0) & (out["pi_high"] < 1)
    width = (out["pi_high"] - out["pi_low"])[free]
    np.testing.assert_allclose(width, 2 * out["halfwidth"][free], atol=1e-12)
    assert free.sum() > 10


@pytest.fixture(scope="module")
def synthetic():
    c = synth.generate(
        topics=15, docs=400, runs=40, orgs=20, run_length=60, depth=10, unpooled=0, seed=11
    )
    calib = calibration_errors(
        (c.runs, c.qrels, c.orgs), ["P@10", "AP"], ["reduced", "webber"], pooled=c.pooled, depth=10
    )
    return c, calib


def test_nested_coverage_on_a_small_synthetic_collection(synthetic):
    _c, calib = synthetic
    assert len(calib) == 40 * 4 and calib[["reduced", "share"]].notna().all().all()
    out = nested_intervals(calib, confidence=0.8)
    cover = out.groupby(["measure", "estimator"])["covered"].mean()
    # 38 calibration runs: coverage in [0.8, 0.8 + 1/39] in expectation; one collection varies
    assert (cover >= 0.65).all() and (cover <= 0.95).all(), cover
    # P@10 at depth 10: the pooled score lies in [reduced, reduced + unjudged share]
    p10 = out[out["measure"] == "P@10"]
    assert (p10["pi_low"] >= p10["reduced"] - 1e-12).all()
    assert (p10["pi_high"] <= p10["reduced"] + p10["share"] + 1e-12).all()
    assert (p10["true"] >= p10["reduced"] - 1e-12).all()
    assert (p10["true"] <= p10["reduced"] + p10["share"] + 1e-12).all()
    # wider at 95 % than at 80 %
    wide = nested_intervals(calib, confidence=0.95)
    assert ((wide["pi_high"] - wide["pi_low"]) >= (out["pi_high"] - out["pi_low"]) - 1e-12).all()


def test_scaled_residuals_follow_the_unjudged_share(synthetic):
    _c, calib = synthetic
    out = nested_intervals(calib, confidence=0.8, scale="unjudged")
    ap = out[(out["measure"] == "AP") & (out["estimator"] == "webber")]
    w = (ap["pi_high"] - ap["pi_low"]).to_numpy()
    inside = (ap["pi_low"] > 0) & (ap["pi_high"] < 1)  # not clipped to [0, 1]
    s = ap["share"].to_numpy()[inside.to_numpy()]
    assert np.corrcoef(s, w[inside.to_numpy()])[0, 1] > 0.9
    with pytest.raises(ValueError, match="scale"):
        nested_intervals(calib, scale="topics")


def test_correct_returns_prediction_and_topic_columns(synthetic):
    c, _calib = synthetic
    collection = (c.runs[c.runs["name"] != "o20r2"], c.qrels, c.orgs)
    new = c.runs[c.runs["name"] == "o20r2"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExtrapolationWarning)
        out = pbtools.correct(new, collection, ["P@10", "AP"], n_boot=5, estimators=["reduced"])
    assert list(out.columns[3:9]) == [
        "value",
        "pi_low",
        "pi_high",
        "topic_ci_low",
        "topic_ci_high",
        "topic_se",
    ]
    assert (out["pi_low"] <= out["value"] + 1e-12).all()
    assert (out["value"] <= out["pi_high"] + 1e-12).all()
    assert not out["extrapolated"].any()
    assert out.attrs["n_calibration"] == {"P@10 reduced": 39, "AP reduced": 39}
    plain = pbtools.correct(new, collection, ["P@10"], n_boot=5, prediction=False)
    assert "pi_low" not in plain.columns


def test_a_run_beyond_every_calibration_run_is_an_extrapolation(synthetic):
    c, _calib = synthetic
    collection = (c.runs, c.qrels, c.orgs)
    # a run of documents nobody pooled: its unjudged share at 10 is 1
    new = c.runs[c.runs["name"] == "o01r1"].assign(name="novel")
    new["docno"] = new["docno"].astype(str) + "-novel"
    with pytest.warns(ExtrapolationWarning, match="novel.*extrapolation"):
        out = pbtools.correct(new, collection, ["P@10"], n_boot=2, estimators=["reduced"])
    assert out["extrapolated"].all()
    # P@10: the bound [reduced, reduced + 1] still holds, clipped to [0, 1]
    assert out["pi_low"].iloc[0] == pytest.approx(0.0)


def test_a_pooled_run_is_not_calibrated_on_itself():
    names = list("abcdefghij")
    calib = pd.DataFrame(
        {
            "name": names,
            "left_out": names,
            "measure": "AP",
            "estimator": "reduced",
            "true": 0.4,
            "estimate": [0.4] * 9 + [0.0],  # j's own error is the only one
            "reduced": 0.0,
            "share": 0.1,
        }
    )
    est = pd.DataFrame(
        {"name": ["j"], "measure": ["AP"], "estimator": ["reduced"], "value": [0.5]}
    ).assign(reduced=0.5, share=0.1)
    # 9 others at 90 %: k = 9, q = 0; with j itself, 10 errors: k = 10, q = 0.4
    alone = prediction_intervals(est, calib, confidence=0.9, exclude={"j": "j"})
    both = prediction_intervals(est, calib, confidence=0.9)
    assert alone["pi_high"].iloc[0] == pytest.approx(0.5)
    assert both["pi_high"].iloc[0] == pytest.approx(0.9)


def _errors_frame(noise: float, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    true = rng.uniform(0.2, 0.6, 30)
    a = true - rng.uniform(0.01, 0.05, 30)  # the reduced pool: biased downwards
    b = true - rng.uniform(0.01, 0.05, 30) * noise
    return pd.concat(
        [
            pd.DataFrame(
                {"name": [f"r{i}" for i in range(30)], "true": true, "estimate": e}
            ).assign(estimator=k, measure="P@10")
            for k, e in (("reduced", a), ("webber", b))
        ],
        ignore_index=True,
    )


def test_error_intervals_match_mae_and_sre_and_are_seeded():
    f = _errors_frame(0.5)
    err, diff = stats.error_intervals(f, n_boot=300, seed=3)
    ref = stats.error_table(f[["measure", "estimator", "name", "true", "estimate"]])
    pd.testing.assert_series_equal(
        err.set_index("estimator")["mae"], ref.set_index("estimator")["mae"], check_names=False
    )
    assert err["sre"].tolist() == ref["sre"].tolist()
    assert (err["mae_low"] <= err["mae"]).all() and (err["mae"] <= err["mae_high"]).all()
    again, _ = stats.error_intervals(f, n_boot=300, seed=3)
    other, _ = stats.error_intervals(f, n_boot=300, seed=4)
    pd.testing.assert_frame_equal(err, again)
    assert not np.allclose(err["mae_low"], other["mae_low"])
    d = diff.set_index(["estimator_a", "estimator_b"]).loc[("webber", "reduced")]
    mae = err.set_index("estimator")["mae"]
    assert d["mae_diff"] == pytest.approx(mae["webber"] - mae["reduced"])
    assert d["cut"] == pytest.approx(1 - mae["webber"] / mae["reduced"])


def test_best_only_beyond_the_run_to_run_noise():
    clear = _errors_frame(0.2)  # webber's errors a fifth of reduced's: a real difference
    close = _errors_frame(1.0)  # errors of the same size: only noise
    for f, real in ((clear, True), (close, False)):
        f = f.assign(leave_out="org", runs="all")
        keys = ["leave_out", "runs", "measure", "estimator"]
        err, diff = stats.error_intervals(f, keys[:-1], n_boot=500, seed=0)
        row = diff[(diff["estimator_a"] == "webber") & (diff["estimator_b"] == "reduced")]
        assert bool(row["significant"].iloc[0]) is real
        errors = stats.error_table(f[[*keys, "name", "true", "estimate"]], by=keys)
        errors = errors.merge(err[[*keys, "mae_low", "mae_high"]], on=keys)
        analysis = Analysis(
            properties=pd.DataFrame([{"collection": "toy"}]),
            scores=f,
            truth=pd.DataFrame(),
            significance=pd.DataFrame(),
            errors=errors,
            params={"estimators": ["reduced", "webber"]},
            differences=diff,
        )
        best = best_estimator(analysis, "org", "all", "P@10")
        text = summary(analysis)
        if real:
            assert best is not None and best[0] == "webber"
            assert "cut the error by" in text and "95% interval" in text
        else:
            assert best is None
            assert "cut" not in text and "within the run-to-run noise" in text


@pytest.mark.slow  # a whole analysis and its HTML page
def test_reports_show_the_intervals():
    from pbtools.experiments.analysis import SAMPLE, analyze
    from pbtools.experiments.htmlreport import html_report
    from pbtools.experiments.report import text_report

    a = analyze(SAMPLE, measures=("P@10",), leave_out=("org",), run_sets=("all",), progress=False)
    assert {"mae_low", "mae_high", "sre_low", "sre_high"} <= set(a.errors.columns)
    assert len(a.differences) == 6  # 3 estimators, ordered pairs
    page = html_report(a)
    assert 'rowspan="2">measure</th>' in page  # the error table's header is intact
    row = a.errors.set_index("estimator").loc["webber"]
    assert f"{row['mae']:.4f} [{row['mae_low']:.4f}, {row['mae_high']:.4f}]" in page
    # bold only beyond the noise: webber's MAE (its differences all exclude 0 on the sample)
    assert best_estimator(a, "org", "all", "P@10")[0] == "webber"
    assert f'class="best">{row["mae"]:.4f} [' in page
    assert "How far a new run" in page and "pi_low" in page
    text = text_report(a)
    assert "run-to-run noise" in text and "95% interval" in text


def test_an_error_free_baseline_gives_no_cut_and_no_crash():
    """Reduced exact on most runs: replicates with MAE_reduced = 0 have no cut (NaN), and the
    intervals come from the others; an estimator with no error at all has none."""
    f = pd.DataFrame(
        {
            "name": list("abcdabcd"),
            "estimator": ["reduced"] * 4 + ["webber"] * 4,
            "measure": "P@5",
            "true": [0.4, 0.3, 0.2, 0.1] * 2,
            "estimate": [0.4, 0.3, 0.2, 0.0, 0.4, 0.3, 0.25, 0.1],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _err, diff = stats.error_intervals(f, n_boot=200)
    d = diff.set_index(["estimator_a", "estimator_b"])
    w = d.loc[("webber", "reduced")]
    assert w["cut"] == pytest.approx(0.5) and np.isfinite([w["cut_low"], w["cut_high"]]).all()
    f0 = f.assign(estimate=f["true"])
    _err, diff0 = stats.error_intervals(f0, n_boot=50)
    assert diff0["cut"].isna().all() and diff0["cut_low"].isna().all()
    assert not diff0["significant"].any()
