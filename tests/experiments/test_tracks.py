"""Several collections as one grid (:func:`pbtools.experiments.tracks.analyze_tracks`): serially,
on processes and on a Dask ``LocalCluster``, the same tables; ``pbtools analyze --dask``."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from pbtools import synth
from pbtools.cli import main
from pbtools.experiments.analysis import Analysis, analyze
from pbtools.experiments.tracks import analyze_tracks

OPTIONS = {"measures": ["P@5", "P@10"], "leave_out": ["org", "run"], "run_sets": ["all"]}


@pytest.fixture(scope="module")
def tracks(tmp_path_factory):
    root = tmp_path_factory.mktemp("tracks")
    shape = {"topics": 5, "docs": 50, "runs": 6, "orgs": 3, "run_length": 30, "depth": 10}
    return [synth.generate(**shape, seed=s).write(root / f"t{s}") for s in (1, 2, 3)]


@pytest.fixture(scope="module")
def serial(tracks):
    return analyze_tracks(tracks, progress=False, **OPTIONS)


def _same(a: list[Analysis], b: list[Analysis]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.params == y.params
        for table in Analysis.TABLES:
            pd.testing.assert_frame_equal(getattr(x, table), getattr(y, table))


def test_serial_grid_is_analyze_of_each_track(tracks, serial):
    # each named by its folder with the parent's (pbtools.io.track_name)
    assert [a.params["collection"] for a in serial] == [f"{t.parent.name}/{t.name}" for t in tracks]
    assert all(a.frames is None for a in serial)
    one = analyze(tracks[1], progress=False, **OPTIONS)
    _same([serial[1]], [one])
    assert serial[0].scores["true"].tolist() != serial[1].scores["true"].tolist()


def test_processes_give_identical_results(tracks, serial):
    _same(analyze_tracks(tracks, jobs=2, progress=False, **OPTIONS), serial)


@pytest.mark.slow
def test_dask_local_cluster_gives_identical_results(tracks, serial):
    distributed = pytest.importorskip("distributed", reason="dask[distributed] not installed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        _same(analyze_tracks(tracks, dask=client, progress=False, **OPTIONS), serial)
        # the CLI pointed at the same (running) cluster by its scheduler address
        code = main(
            ["analyze", str(tracks[0]), "-m", "P@5", "--run-sets", "all", "--no-progress",
             "--dask", cluster.scheduler_address]
        )  # fmt: skip
    assert code == 0


def test_cli_dask_without_distributed_is_a_usage_error(monkeypatch, capsys, tracks):
    monkeypatch.setitem(sys.modules, "distributed", None)
    code = main(["analyze", str(tracks[0]), "--dask", "local", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--dask local" in err and 'pip install "dask[distributed]"' in err
