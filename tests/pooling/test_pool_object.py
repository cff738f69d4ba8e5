"""The pool object (pbtools.pooling.Pool): reductions as its operations, simulated depth pools
equal to the existing pooling functions, and the ``pool --strategy`` / ``analyze --strategy``
command line (qrels that ``pbtools evaluate`` reads back)."""

from __future__ import annotations

from io import StringIO as io_text

import numpy as np
import pandas as pd
import pytest

from pbtools import io, measures, pooling, synth
from pbtools.cli import main
from pbtools.experiments.analysis import SAMPLE  # noqa: E402  (the bundled sample track)
from pbtools.pooling import Pool


@pytest.fixture(scope="module")
def col():
    return synth.generate(topics=6, docs=120, runs=8, orgs=4, run_length=60, depth=15, seed=9)


def _sorted(df: pd.DataFrame, key: str | None = None) -> pd.DataFrame:
    cols = [c for c in (key, "qid", "docno") if c is not None]
    out = df.astype({c: str for c in cols}).sort_values(cols).reset_index(drop=True)
    return out[[*cols, *[c for c in out.columns if c not in cols]]]


# --------------------------------------------------------------------------------------------
# a simulated depth-d pool is the depth-d pool, and its reductions are the existing ones
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 5, 15])
def test_simulated_depth_pool_equals_repool(col, depth):
    pooled = sorted(col.pooled)
    sim = Pool.simulate(col.runs, col.truth, pooling.strategies.Depth(depth), pooled=pooled)
    want = pooling.repool(col.runs[col.runs["name"].isin(pooled)], col.truth, depth)
    pd.testing.assert_frame_equal(_sorted(sim.qrels), _sorted(want), check_dtype=False)
    docs = pooling.pool(col.runs[col.runs["name"].isin(pooled)], depth)
    pd.testing.assert_frame_equal(_sorted(sim.documents()), _sorted(docs))
    assert sim.depth == depth and sim.cost == len(want)


def test_reductions_of_a_simulated_depth_pool(col):
    pooled, d = sorted(col.pooled), 10
    sim = Pool.simulate(col.runs, col.truth, f"depth:{d}", pooled=pooled)
    q = sim.qrels
    args = dict(pooled=pooled)
    cases = [
        (
            sim.leave_out("org", col.orgs),
            pooling.leave_one_out(col.runs, q, d, "org", col.orgs, **args),
            "left_out",
        ),
        (sim.leave_out("run"), pooling.leave_one_out(col.runs, q, d, "run", **args), "left_out"),
        (
            sim.take_teams(2, "org", col.orgs),
            pooling.take_teams(col.runs, q, d, 2, "org", col.orgs, **args),
            "kept",
        ),
        (
            sim.subset(3, n=4, seed=1),
            pooling.subset_pool(col.runs, q, d, 3, n=4, seed=1, **args),
            "kept",
        ),
        (sim.shallow([5, 1]), pooling.shallow(col.runs, q, [5, 1], **args), "depth"),
    ]
    for got, want, key in cases:
        pd.testing.assert_frame_equal(_sorted(got, key), _sorted(want, key), check_dtype=False)


def test_from_depth_is_the_collection_pool(col):
    pooled = sorted(col.pooled)
    p = Pool.from_depth(col.runs, col.qrels, col.depth, pooled=pooled)
    assert p.strategy == pooling.strategies.Depth(col.depth) and p.cost == len(col.qrels)
    got = p.leave_out("org", col.orgs, repool=True)
    want = pooling.leave_one_out(
        col.runs, col.qrels, col.depth, "org", col.orgs, pooled=pooled, repool=True
    )
    pd.testing.assert_frame_equal(got, want)
    assert repr(p).startswith(f"Pool(depth:{col.depth} over {len(pooled)} runs")


# --------------------------------------------------------------------------------------------
# reductions of a pool that is not a depth pool
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["mtf", "rbpc", "uniform:20"])
def test_leave_out_of_a_simulated_pool_unjudges_unique_contributions(col, spec):
    pooled = sorted(col.pooled)
    sim = Pool.simulate(col.runs, col.truth, spec, 12, seed=4, pooled=pooled)
    contrib = sim.contributions("org", col.orgs).astype({"qid": str, "docno": str, "unit": str})
    judged = set(zip(sim.qrels["qid"].astype(str), sim.qrels["docno"].astype(str), strict=True))
    assert judged <= set(zip(contrib["qid"], contrib["docno"], strict=True))  # all contributed
    unique = contrib[contrib["n_units"] == 1]
    red = sim.leave_out("org", col.orgs)
    for org, g in red.groupby("left_out", observed=True):
        gone = judged - set(zip(g["qid"].astype(str), g["docno"].astype(str), strict=True))
        mine = unique[unique["unit"] == str(org)]
        assert gone == judged & set(zip(mine["qid"], mine["docno"], strict=True))


def test_simulation_reports_order_budget_and_source_labels(col):
    qrels = col.truth[col.truth["label"] > 0]  # the source judged only relevant documents
    sim = Pool.simulate(col.runs, qrels, "take", 7)
    assert (sim.budget["cost"] == 7).all() and sim.cost == 7 * 6
    assert set(sim.qrels["label"].unique()) <= {-1, 1}
    assert (
        sim.order.groupby("qid", observed=True)["step"].apply(list) == [list(range(1, 8))] * 6
    ).all()
    # the qrels hold the same judgments as the order, sorted by topic and docno
    pd.testing.assert_frame_equal(
        _sorted(sim.qrels), _sorted(sim.order[["qid", "docno", "label"]]), check_dtype=False
    )


# --------------------------------------------------------------------------------------------
# TREC-2: depth-d equals the existing pool exactly
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.shared
def test_trec2_depth_pools_equal_the_existing_pool(trec2_tag):
    c = trec2_tag
    info = pooling.infer_pool(c.runs, c.qrels)
    runs = c.runs[c.runs["name"].astype(str).isin(info.pooled_runs)]
    problem = pooling.strategies.PoolingTask(c.runs, c.qrels, info.pooled_runs)
    for d in (10, 100):
        sim = Pool.simulate(c.runs, c.qrels, f"depth:{d}", pooled=info.pooled_runs, problem=problem)
        pd.testing.assert_frame_equal(_sorted(sim.documents()), _sorted(pooling.pool(runs, d)))
        want = pooling.repool(runs, c.qrels, d)
        judged = sim.qrels[sim.qrels["label"] >= 0]
        pd.testing.assert_frame_equal(_sorted(judged), _sorted(want), check_dtype=False)
    # the depth-100 pool is TREC-2's pool: the few documents it lacks labels for are the
    # documents pool inference steps over (PROTOCOL item 6)
    assert (sim.qrels["label"] < 0).mean() < 0.01


# --------------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------------


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


needs_sample = pytest.mark.skipif(not SAMPLE.is_dir(), reason="the bundled sample is absent")


@needs_sample
@pytest.mark.parametrize("spec", ["depth:10", "rbp:0.8", "mtf"])
def test_cli_pool_strategy_writes_qrels_evaluate_reads_back(capsys, tmp_path, spec):
    out, order = tmp_path / "sim.qrels", tmp_path / "order.parquet"
    code, stdout, err = run_cli(
        capsys,
        "pool",
        SAMPLE,
        "--strategy",
        spec,
        "--budget",
        15,
        "--seed",
        3,
        "-o",
        out,
        "--order",
        order,
    )
    assert code == 0, err
    assert "simulated pool" in stdout and out.is_file() and order.is_file()
    col = io.read_collection(SAMPLE)
    info = pooling.infer_pool(col.runs, col.qrels)
    sim = Pool.simulate(col.runs, col.qrels, spec, 15, seed=3, pooled=info.pooled_runs)
    back = io.read_qrels(out)
    pd.testing.assert_frame_equal(_sorted(back), _sorted(sim.qrels), check_dtype=False)
    code, stdout, err = run_cli(
        capsys, "evaluate", out, SAMPLE / "Runs", "-m", "P@10", "-m", "AP", "--format", "tsv"
    )
    assert code == 0, err
    got = pd.read_csv(io_text(stdout), sep="\t", dtype={"name": str})
    got = got.pivot(index="name", columns="measure", values="value")
    want = measures.evaluate(col.runs, sim.qrels, ["P@10", "AP"], warn=False)
    want = want.astype({"name": str, "measure": str}).pivot(index="name", columns="measure")
    np.testing.assert_allclose(got["P@10"], want["value"]["P@10"].loc[got.index], atol=5e-5)
    np.testing.assert_allclose(got["AP"], want["value"]["AP"].loc[got.index], atol=5e-5)
    written = io.read_parquet(order)
    assert len(written) == len(sim.qrels) and written.attrs["metadata"]["strategy"]


@needs_sample
@pytest.mark.parametrize(
    "argv, msg",
    [
        (["--strategy", "rbp"], "needs --budget"),
        (["--strategy", "nope", "--budget", "5"], "unknown pooling strategy"),
        (["--strategy", "rbp:7", "--budget", "5"], "p must lie"),
        (["--strategy", "rbp", "--budget", "0"], "positive integer"),
        (["--strategy", "rbp", "--budget", "5", "--total", "9"], "not both"),
        (["--budget", "5"], "needs --strategy"),
        (["--strategy", "rbp", "--budget", "5", "--leave-out", "org"], "give one"),
    ],
)
def test_cli_pool_strategy_refuses_bad_arguments_before_work(capsys, tmp_path, argv, msg):
    out = tmp_path / "sim.qrels"
    code, _, err = run_cli(capsys, "pool", SAMPLE, *argv, "-o", out)
    assert code == 2 and msg in err and "Traceback" not in err
    assert not out.exists()


def test_cli_pool_strategy_refuses_bad_paths_before_reading(capsys, tmp_path):
    missing = tmp_path / "nowhere" / "sim.qrels"
    code, _, err = run_cli(
        capsys, "pool", tmp_path / "no-track", "--strategy", "take", "--budget", 3, "-o", missing
    )
    assert code == 2 and f"no such file or directory: {tmp_path / 'no-track'}" in err
    code, _, err = run_cli(
        capsys, "pool", tmp_path, "--strategy", "take", "--budget", 3, "-o", missing
    )
    assert code == 2 and f"the directory {missing.parent} does not exist" in err
    code, _, err = run_cli(capsys, "pool", tmp_path, "--strategy", "take", "--budget", 3)
    assert code == 2 and "needs -o QRELS" in err


@needs_sample
def test_cli_analyze_strategy(capsys):
    code, out, err = run_cli(
        capsys,
        "analyze",
        SAMPLE,
        "--strategy",
        "depth:10",
        "--leave-out",
        "org",
        "--run-sets",
        "all",
        "-m",
        "P@10",
        "--no-progress",
    )
    assert code == 0, err
    assert "simulated pool depth:10" in out and "d = 10" in out and "reduced" in out
    # a fixed-cost pool is analysed with the strategy's pooled runs and contribution depth
    code, out, err = run_cli(
        capsys,
        "analyze",
        SAMPLE,
        "--strategy",
        "rbp",
        "--budget",
        5,
        "--run-sets",
        "all",
        "-m",
        "P@10",
        "--no-progress",
    )
    assert code == 0, err
    assert "contribution depth" in out and "lipani" in out
