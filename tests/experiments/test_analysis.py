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
        "mae_low",
        "mae_high",
        "sre_low",
        "sre_high",
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
    # the significance table was written a block at a time, never whole (issue 30 item 4):
    # read back, it is the whole table of the truth written, and SRE* was counted on it
    back = io.read_results(tmp_path)
    whole = stats.sre_significance(back["truth"], "hsd", ["runs", "measure"], compact=True)
    pd.testing.assert_frame_equal(back["significance"], whole, check_exact=True)
    keys = ["leave_out", "runs", "measure", "estimator"]
    sre_star = stats.error_table(back["scores"], whole, by=keys)["sre_star"]
    assert back["errors"]["sre_star"].tolist() == sre_star.tolist()


@pytest.mark.slow
def test_jobs_give_identical_results(monkeypatch, capsys):
    from pbtools.experiments import configs

    a = analyze(SAMPLE, measures=("P@10",), progress=False, jobs=1)  # one thread
    b = analyze(SAMPLE, measures=("P@10",), progress=False, jobs=2)  # this process, 2 threads
    assert capsys.readouterr().err == ""
    # more cores than usable: granted what is usable, with a note
    c = analyze(SAMPLE, measures=("P@10",), progress=False, jobs=10_000)
    assert "--jobs 10000: using" in capsys.readouterr().err
    # forced onto two worker processes (disjoint groups of configurations), the same tables
    monkeypatch.setattr(configs, "MIN_ROWS_PER_JOB", 0)
    monkeypatch.setattr(configs, "CORES_PER_PROCESS", 1)
    calls = []
    monkeypatch.setattr(configs, "config_tables", _counting(configs.config_tables, calls))
    d = analyze(SAMPLE, measures=("P@10",), progress=False, jobs=2)
    assert capsys.readouterr().err == ""
    assert calls == []  # the configurations ran in the workers, not in this process
    for other in (b, c, d):
        pd.testing.assert_frame_equal(a.errors, other.errors)
        pd.testing.assert_frame_equal(a.scores, other.scores)
        pd.testing.assert_frame_equal(a.truth, other.truth)
        pd.testing.assert_frame_equal(a.significance, other.significance)


def _counting(fn, calls):
    def wrapped(*args, **kwargs):
        calls.append(1)
        return fn(*args, **kwargs)

    return wrapped


def test_jobs_cap_the_threads_of_the_analysis(monkeypatch):
    """--jobs N is the cores: the leave-out blocks see a thread cap of N (1: serial)."""
    from pbtools.experiments import configs
    from pbtools.threads import max_threads

    seen = []
    original = configs.config_tables

    def spy(*args, **kwargs):
        seen.append(max_threads())
        return original(*args, **kwargs)

    import pbtools.io.parse as parse

    parsed = []
    threads_for = parse.threads_for

    def spy_parse(n):
        parsed.append(max_threads())
        return threads_for(n)

    monkeypatch.setattr(configs, "config_tables", spy)
    monkeypatch.setattr(parse, "threads_for", spy_parse)
    analyze(SAMPLE, measures=("P@10",), run_sets=("all",), progress=False, jobs=1)
    analyze(SAMPLE, measures=("P@10",), run_sets=("all",), progress=False, jobs=None)
    assert seen[0] == 1 and parsed[0] == 1  # the parse of the run files too
    assert seen[1] == parsed[-1] == max_threads()


def test_cli_refuses_a_bad_thread_cap_before_any_work(monkeypatch, capsys, tmp_path):
    from pbtools.experiments import analysis

    def never(*args, **kwargs):  # pragma: no cover - the refusal must come first
        raise AssertionError("analysis started")

    monkeypatch.setattr(analysis, "analyze", never)
    monkeypatch.setenv("PBTOOLS_THREADS", "two")
    assert main(["analyze", "-m", "P@10", "--no-progress", "-o", str(tmp_path / "o")]) == 2
    assert "PBTOOLS_THREADS must be an integer >= 1, got 'two'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_plan_configs_never_asks_for_more_than_it_can_use(monkeypatch):
    from pbtools.experiments import configs as planner
    from pbtools.experiments.analysis import MIN_ROWS_PER_JOB, plan_configs
    from pbtools.threads import max_threads

    configs = [{"leave_out": lo, "runs": rs} for lo in ("org", "run") for rs in ("all", "top75")]
    big = 100 * MIN_ROWS_PER_JOB
    cores = max_threads()
    assert plan_configs(configs, 1, None, big) == (1, 1, None)
    # up to CORES_PER_PROCESS cores: this process's threads
    n, threads, note = plan_configs(configs, 64, None, big)
    assert n * threads <= cores and note is not None and f"only {cores}" in note
    # beyond it: one worker per CORES_PER_PROCESS cores, at most one per configuration
    monkeypatch.setattr(planner, "CORES_PER_PROCESS", 1)
    monkeypatch.setattr(planner, "max_threads", lambda: 64)
    monkeypatch.setattr("pbtools.threads.max_threads", lambda: 64)
    assert plan_configs(configs, 64, None, big) == (4, 16, None)
    assert plan_configs(configs[:1], 2, None, big) == (1, 2, None)
    # too few rows for worker processes: one process on the threads
    assert plan_configs(configs, 2, None, MIN_ROWS_PER_JOB) == (1, 2, None)
    assert plan_configs(configs, 3, None, 2 * MIN_ROWS_PER_JOB) == (2, 1, None)
    assert plan_configs(configs, 1, "tcp://x:8786", 10) == (4, 1, None)
    assert plan_configs(configs, 2, "tcp://x:8786", 10) == (2, 1, None)


@pytest.mark.slow
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
