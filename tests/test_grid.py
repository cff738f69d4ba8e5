"""pbtools.grid: serial, process and Dask execution give identical, ordered, seeded results."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pbtools import grid


def _draw(width: int, repeat: int, seed: int, table: pd.DataFrame) -> dict:
    """A task using its explicit seed and a shared frame."""
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(table), size=width, replace=False)
    return {
        "width": width,
        "repeat": repeat,
        "seed": seed,
        "value": float(table["x"].to_numpy()[pick].sum() + rng.normal()),
    }


def _fail(k: int) -> int:
    if k == 3:
        raise ValueError("boom")
    return k


def _square(k: int) -> int:
    return k * k


PARAMS = grid.product(width=[2, 4, 8], repeat=range(4))
TABLE = pd.DataFrame({"x": np.arange(20, dtype=float) ** 1.5})


def _run(**kw) -> list:
    return grid.run_grid(_draw, PARAMS, seed=7, shared={"table": TABLE}, progress=False, **kw)


def test_product_and_seeds():
    assert len(PARAMS) == 12 and PARAMS[0] == {"width": 2, "repeat": 0}
    s = grid.task_seeds(7, 12)
    assert s == grid.task_seeds(7, 12) and len(set(s)) == 12
    assert grid.task_seeds(7, 5) == s[:5]
    assert all(0 <= v < 2**63 for v in s)


def test_serial_vs_processes_identical_and_ordered():
    serial = _run(jobs=1)
    assert [(r["width"], r["repeat"]) for r in serial] == [
        (p["width"], p["repeat"]) for p in PARAMS
    ]
    assert [r["seed"] for r in serial] == grid.task_seeds(7, 12)
    assert _run(jobs=2) == serial
    assert _run(jobs=2, chunksize=1) == serial


def test_task_pairs_and_explicit_seed_kept():
    tasks = [(_square, {"k": k}) for k in range(5)] + [
        grid.Task(_draw, {"width": 1, "repeat": 0, "seed": 123, "table": TABLE})
    ]
    out = grid.run_grid(tasks, seed=1, progress=False, jobs=2)
    assert out[:5] == [0, 1, 4, 9, 16]
    assert out[5]["seed"] == 123


def test_errors_name_the_task():
    for jobs in (1, 2):
        with pytest.raises(grid.GridError, match="task 3"):
            grid.run_grid(_fail, [{"k": k} for k in range(6)], jobs=jobs, progress=False)
    with pytest.raises(ValueError, match="overlap"):
        grid.run_grid(_square, [{"k": 1}], shared={"k": 2})


@pytest.mark.slow
def test_dask_local_cluster_identical():
    distributed = pytest.importorskip("distributed", reason="dask[distributed] not installed")
    serial = _run(jobs=1)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert _run(dask=client) == serial
        assert _run(dask=cluster.scheduler_address) == serial


def test_dask_missing_gives_clear_error(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)
    with pytest.raises(ImportError, match=r"dask\[distributed\]"):
        grid.run_grid(_square, [{"k": 1}], dask="tcp://127.0.0.1:1", progress=False)


def test_progress_bar_forced_off_and_on(capsys):
    assert grid.run_grid(_square, [{"k": k} for k in range(3)], progress=True) == [0, 1, 4]
    assert grid.run_grid(_square, [{"k": k} for k in range(3)], progress=False) == [0, 1, 4]
    assert grid.run_grid(_square, [{"k": k} for k in range(3)], jobs=None, progress=False) == [
        0,
        1,
        4,
    ]


def _threads(k: int) -> int:
    from pbtools import threads

    return threads.max_threads()


def test_workers_run_one_thread_each_and_env_caps_threads(monkeypatch):
    """pbtools.threads: a grid worker process caps pbtools' own pools at one thread; the
    PBTOOLS_THREADS variable caps them in any process and is refused when it is not an
    integer >= 1."""
    from pbtools import threads

    if grid.plan_jobs(2, 2)[0] < 2:
        pytest.skip("one usable core: run_grid runs serially")
    got = grid.run_grid(_threads, grid.product(k=[0, 1]), jobs=2, progress=False)
    assert got == [1, 1]
    monkeypatch.setenv(threads.ENV, "1")
    assert threads.max_threads() == 1 and threads.threads_for(10) == 1
    monkeypatch.setenv(threads.ENV, "99")
    assert threads.max_threads() == threads.usable_cores()
    for bad in ("0", "two", "-3"):
        monkeypatch.setenv(threads.ENV, bad)
        with pytest.raises(ValueError, match="PBTOOLS_THREADS must be an integer"):
            threads.max_threads()
