"""Every command on the awkward fixture (issue 14): graded qrels, tab-separated runs, a shallow pool
of a subset of the runs, planted unjudged documents, a topic every run answers but the qrels lack,
a qrels-only topic, NaN scores (lenient) and many organizations."""

from __future__ import annotations

import pandas as pd
import pytest
import track_fixtures as fixtures

from pbtools import io
from pbtools.cli import main


@pytest.fixture(scope="module")
def track(tmp_path_factory):
    return fixtures.awkward_track(
        tmp_path_factory.mktemp("awk") / "AWK", qrels_only_topics=1, runs=16, pooled=10, orgs=9
    )


@pytest.fixture(scope="module")
def nan_track(tmp_path_factory):
    return fixtures.awkward_track(
        tmp_path_factory.mktemp("awkn") / "AWKN", nan_scores=3, runs=16, pooled=10, orgs=9
    )


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def qrels_file(track):
    return next((track.path / "QRels").iterdir())


def new_run(track):
    unpooled = sorted(
        set(io.read_collection(track.path).runs["name"].astype(str)) - set(track.pooled)
    )
    return track.path / "Runs" / f"input.{unpooled[0]}", unpooled[0]


def test_evaluate_reports_the_run_only_topic(capsys, track):
    code, out, err = run_cli(
        capsys, "evaluate", qrels_file(track), track.path / "Runs", "-m", "P@10", "-m", "nDCG@10"
    )
    assert code == 0
    assert track.run_only_topics[0] in err and "not evaluated" in err


def test_pool_infers_the_generators_pool(capsys, track):
    code, out, err = run_cli(capsys, "pool", track.path, "--json")
    assert code == 0
    import json

    info = json.loads(out)
    assert info["d"] == track.depth
    assert sorted(info["pooled_runs"]) == sorted(track.expected_pooled("paper"))


def test_correct_every_measure_and_estimator(capsys, track, tmp_path):
    path, name = new_run(track)
    out_file = tmp_path / "c.parquet"
    code, out, err = run_cli(
        capsys,
        "correct",
        qrels_file(track),
        track.path / "Runs",
        path,
        "--desc",
        track.path / "desc.xml",
        "-m",
        "P@10",
        "-m",
        "AP",
        "-m",
        "nDCG@10",
        "--estimators",
        "true,reduced,webber,lipani,condensed",
        "--format",
        "parquet",
        "-o",
        out_file,
    )
    assert code == 0, err
    res = io.read_parquet(out_file)
    got = set(zip(res["estimator"].astype(str), res["measure"].astype(str), strict=True))
    for est in ("true", "reduced", "webber", "condensed"):
        assert {(est, m) for m in ("P@10", "AP", "nDCG@10")} <= got
    assert ("lipani", "P@10") in got and ("lipani", "AP") not in got
    assert res["value"].notna().all()


def test_one_definition_of_a_runs_topics(capsys, track, tmp_path):
    """trec_eval averaging leaves the qrels-less topic out; the 2015 averaging scores it 0."""
    path, name = new_run(track)
    values = {}
    for label, extra in (("judged", []), ("answered", ["--protocol", "lipani2015"])):
        out_file = tmp_path / f"{label}.parquet"
        code, _, err = run_cli(
            capsys,
            "correct",
            qrels_file(track),
            track.path / "Runs",
            path,
            "--desc",
            track.path / "desc.xml",
            "-m",
            "P@10",
            "--estimators",
            "reduced",
            "--format",
            "parquet",
            "-o",
            out_file,
            *extra,
        )
        assert code == 0, err
        values[label] = float(io.read_parquet(out_file)["value"].iloc[0])
    judged = len(track.judged_topics)
    assert values["answered"] == pytest.approx(values["judged"] * judged / (judged + 1), abs=1e-4)


def test_analyze_strict_and_lenient(capsys, track, nan_track):
    code, out, err = run_cli(
        capsys,
        "analyze",
        track.path,
        "-m",
        "P@10",
        "-m",
        "AP",
        "--run-sets",
        "all",
        "--no-progress",
    )
    assert code == 0, err
    assert "lipani" in out and "webber" in out
    code, out, err = run_cli(
        capsys, "analyze", nan_track.path, "-m", "P@10", "--run-sets", "all", "--no-progress"
    )
    assert code == 2 and "NaN" in err or "nan" in err.lower()
    code, out, err = run_cli(
        capsys,
        "analyze",
        nan_track.path,
        "-m",
        "P@10",
        "--run-sets",
        "all",
        "--no-progress",
        "--lenient",
    )
    assert code == 0, err
    assert "repair" in err


def test_evaluate_and_pool_lenient_with_nan(capsys, nan_track):
    code, out, err = run_cli(
        capsys,
        "evaluate",
        qrels_file(nan_track),
        nan_track.path / "Runs",
        "-m",
        "P@10",
        "--lenient",
    )
    assert code == 0 and "repair" in err
    code, out, err = run_cli(capsys, "pool", nan_track.path, "--lenient", "--json")
    assert code == 0
    assert isinstance(pd.read_json(__import__("io").StringIO(out), typ="series"), pd.Series)


def _script(name: str):
    import importlib

    return importlib.import_module(f"pbtools.papers.{name}")


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, params",
    [
        ("lipani2015", {"cutoffs": (5, 10), "alphas": (0.5, 1.0), "indicators": ("lambda",)}),
        ("sakai2008", {"B": 20, "combos": 0, "depths": (5,)}),
        ("webber2009", {"repeats": 1, "widths": (2,), "common": (2,), "topic_samples": 5}),
        ("buckley2006", {"depths": (None,)}),
    ],
)
def test_paper_scripts_run_on_the_awkward_track(track, tmp_path, name, params):
    """The four paper scripts read a track they were not written against (graded qrels, tab
    runs, a shallow pool of a subset, run-only and qrels-only topics) and write their claims."""
    import warnings

    mod = _script(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod.run(track.path, tmp_path, jobs=1, progress=False, **params)
    claims = io.read_parquet(next(tmp_path.rglob("claims.parquet")))
    assert len(claims) > 0 and set(claims["holds"].astype(str)) <= {"true", "false", "n.a."}
