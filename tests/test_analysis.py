"""``pbtools analyze`` / :func:`pbtools.experiments.analysis.analyze` on the bundled sample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pbtools import io, stats
from pbtools.cli import main
from pbtools.experiments.analysis import SAMPLE, analyze


@pytest.fixture(scope="module")
def result():
    return analyze(SAMPLE, measures=("P@5", "P@10", "P@20"), progress=False)


def test_properties_of_the_sample(result):
    p = result.properties.iloc[0]
    assert (p["R"], p["O"], p["R_p"], p["d"], p["T"]) == (12, 6, 10, 20, 20)


def test_every_configuration_and_estimator_is_there(result):
    e = result.errors
    assert list(e.columns) == [
        "leave_out",
        "runs",
        "measure",
        "estimator",
        "mae",
        "sre",
        "sre_star",
        "tau",
    ]
    assert len(e) == 2 * 2 * 3 * 3  # leave-out × run set × measure × estimator
    assert set(e["estimator"]) == {"reduced", "webber", "lipani"}
    assert (e["mae"] >= 0).all() and (e["sre_star"] <= e["sre"]).all()
    assert e["tau"].between(-1, 1).all()


def test_scores_obey_the_estimators_bounds(result):
    s = result.scores
    wide = s.pivot_table(
        index=["leave_out", "runs", "measure", "name"],
        columns="estimator",
        values="estimate",
        observed=True,
    )
    k = s[s["estimator"] == "reduced"].set_index(["leave_out", "runs", "measure", "name"])["k"]
    # reduced ≤ Lipani ≤ reduced + k̄ (Algorithm 1) and the reduced pool never beats the truth
    assert (wide["lipani"] >= wide["reduced"] - 1e-12).all()
    assert (wide["lipani"] <= wide["reduced"] + k.reindex(wide.index) + 1e-12).all()
    truth = s[s["estimator"] == "reduced"]
    assert (truth["estimate"] <= truth["true"] + 1e-12).all()


def test_errors_agree_with_stats_on_the_scores(result):
    s = result.scores
    sel = s[
        (s["leave_out"] == "org")
        & (s["runs"] == "all")
        & (s["measure"] == "P@10")
        & (s["estimator"] == "lipani")
    ]
    row = result.errors.query(
        "leave_out == 'org' and runs == 'all' and measure == 'P@10' and estimator == 'lipani'"
    ).iloc[0]
    assert row["mae"] == pytest.approx(np.mean(np.abs(sel["true"] - sel["estimate"])))
    frame = sel[["name", "true", "estimate"]]
    assert row["sre"] == stats.sre(frame, by=[])["sre"].iloc[0]
    assert row["tau"] == pytest.approx(
        stats.kendall_tau(sel.set_index("name")["true"], sel.set_index("name")["estimate"])
    )


def test_truth_is_balanced_and_matches_scores(result):
    t = result.truth
    counts = t.groupby(["runs", "measure", "name"]).size()
    assert counts.nunique() == 1  # every run has every topic (missing topics score 0)
    means = t.groupby(["runs", "measure", "name"])["value"].mean()
    s = result.scores[
        (result.scores["leave_out"] == "org") & (result.scores["estimator"] == "reduced")
    ]
    true = s.set_index(["runs", "measure", "name"])["true"]
    pd.testing.assert_series_equal(means.reindex(true.index), true, check_names=False)


def test_write_parquet_with_parameters(result, tmp_path):
    paths = result.write(tmp_path)
    assert {p.name for p in paths} == {f"{t}.parquet" for t in result.TABLES}
    back = io.read_parquet(tmp_path / "errors.parquet")
    pd.testing.assert_frame_equal(back, result.errors, check_like=False)
    assert back.attrs["metadata"]["measures"] == ["P@5", "P@10", "P@20"]
    assert back.attrs["metadata"]["depth"] == 20


def test_cli_main_job_on_the_sample(capsys, tmp_path):
    code = main(
        ["analyze", "-m", "P@10", "--run-sets", "all", "--no-progress", "-v", "-o", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "|R| = 12" in out and "leave-one-organization-out" in out
    assert "× the parse time" in out
    assert (tmp_path / "scores.parquet").is_file()


def test_jobs_give_identical_results(monkeypatch, capsys):
    from pbtools.experiments import analysis

    a = analyze(SAMPLE, measures=("P@10",), progress=False, jobs=1)
    # the sample is too small to pay for worker processes: jobs=2 runs serially and says why
    b = analyze(SAMPLE, measures=("P@10",), progress=False, jobs=2)
    err = capsys.readouterr().err
    assert "--jobs 2: running serially" in err and "too little work" in err
    # forced onto two processes (disjoint groups of configurations), the same tables
    monkeypatch.setattr(analysis, "MIN_ROWS_PER_JOB", 0)
    c = analyze(SAMPLE, measures=("P@10",), progress=False, jobs=2)
    assert capsys.readouterr().err == ""
    for other in (b, c):
        pd.testing.assert_frame_equal(a.errors, other.errors)
        pd.testing.assert_frame_equal(a.scores, other.scores)
        pd.testing.assert_frame_equal(a.truth, other.truth)
        pd.testing.assert_frame_equal(a.significance, other.significance)


def test_plan_configs_never_asks_for_more_than_it_can_use():
    from pbtools.experiments.analysis import MIN_ROWS_PER_JOB, plan_configs
    from pbtools.grid import default_jobs

    configs = [{"leave_out": lo, "runs": rs} for lo in ("org", "run") for rs in ("all", "top75")]
    big = 100 * MIN_ROWS_PER_JOB
    assert plan_configs(configs, 1, None, big) == (1, None)
    n, reason = plan_configs(configs, 64, None, big)
    assert n == min(4, default_jobs()) and reason is not None
    n, reason = plan_configs(configs[:1], 2, None, big)
    assert (n, reason) == (1, "only 1 task to run")
    n, reason = plan_configs(configs, 2, None, MIN_ROWS_PER_JOB)
    assert n == 1 and "too little work" in reason
    assert plan_configs(configs, 1, "tcp://x:8786", 10) == (4, None)
    assert plan_configs(configs, 2, "tcp://x:8786", 10) == (2, None)


def test_dask_cluster_gives_identical_results():
    distributed = pytest.importorskip("distributed", reason="dask[distributed] not installed")
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        a = analyze(SAMPLE, measures=("P@10",), progress=False, dask=client)
    b = analyze(SAMPLE, measures=("P@10",), progress=False)
    pd.testing.assert_frame_equal(a.errors, b.errors)
    pd.testing.assert_frame_equal(a.scores, b.scores)
