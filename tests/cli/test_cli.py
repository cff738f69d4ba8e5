"""The ``pbtools`` command line: output formats, trec_eval layout, errors as messages."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pandas as pd
import pytest

from pbtools import io
from pbtools.cli import main


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def conformance(shared_dir):
    d = shared_dir / "data" / "trec_eval_conformance"
    if not d.is_dir():
        pytest.skip("../shared/data/trec_eval_conformance is absent")
    return d


def test_trec_layout_matches_trec_eval_lines(capsys, conformance):
    """``--trec --per-topic`` prints byte-identical lines to trec_eval's ``-q`` output."""
    code, out, _ = run_cli(
        capsys,
        "evaluate",
        conformance / "qrels.test",
        conformance / "results.test",
        "-m",
        "map",
        "-m",
        "P_5",
        "-m",
        "num_ret",
        "-m",
        "ndcg_cut_10",
        "--trec",
        "--per-topic",
    )
    assert code == 0
    expected = [
        ln
        for ln in (conformance / "out.test.aq").read_text().splitlines()
        if ln.split("\t")[0].strip() in {"map", "P_5", "num_ret", "ndcg_cut_10", "runid", "num_q"}
    ]
    assert sorted(out.splitlines()) == sorted(expected)


def test_table_tsv_and_parquet_outputs(capsys, tmp_path, toy_dir):
    qrels = toy_dir / "QRels" / "qrels"
    code, out, _ = run_cli(capsys, "evaluate", qrels, toy_dir / "Runs", "-m", "P@5", "-m", "AP")
    assert code == 0
    header = out.splitlines()[0].split()
    assert header == ["name", "P@5", "AP"]
    assert len(out.splitlines()) == 1 + 5  # five runs

    tsv = tmp_path / "r.tsv"
    code, _, _ = run_cli(
        capsys,
        "evaluate",
        qrels,
        toy_dir / "Runs",
        "-m",
        "P@5",
        "--per-topic",
        "--format",
        "tsv",
        "-o",
        tsv,
    )
    assert code == 0
    df = pd.read_csv(tsv, sep="\t")
    assert list(df.columns) == ["name", "qid", "measure", "value"]
    assert df["measure"].unique().tolist() == ["P@5"]

    pq = tmp_path / "r.parquet"
    code, _, _ = run_cli(
        capsys, "evaluate", qrels, toy_dir / "Runs", "-m", "AP", "--format", "parquet", "-o", pq
    )
    assert code == 0
    back = io.read_parquet(pq)
    assert list(back.columns) == ["name", "measure", "value"]
    assert back.attrs["metadata"]["measures"] == ["AP"]


def test_bad_input_is_a_message_not_a_traceback(capsys, tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 1\n")
    run = tmp_path / "input.x"
    run.write_text("1 Q0 d1 1 2.0 x\n1 Q0 d2 2 oops x\n")
    code, out, err = run_cli(capsys, "evaluate", qrels, run, "-m", "P@5")
    assert code == 2
    assert f"{run}:2:" in err and "score" in err
    assert "Traceback" not in err


def test_unknown_measure_is_reported(capsys, tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 1\n")
    run = tmp_path / "input.x"
    run.write_text("1 Q0 d1 1 2.0 x\n")
    code, _, err = run_cli(capsys, "evaluate", qrels, run, "-m", "Pfoo@5")
    assert code == 2 and "Pfoo@5" in err


def test_lenient_flag_repairs_and_warns(capsys, tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n")
    run = tmp_path / "input.x.gz"
    with gzip.open(run, "wt") as fh:
        fh.write("1 Q0 d1 1 2.0 x\n1 Q0 d2 2 1.0 x extra\n1 Q0 short\n")
    code, _, _ = run_cli(capsys, "evaluate", qrels, run, "-m", "P@2")
    assert code == 2
    code, out, err = run_cli(
        capsys, "evaluate", qrels, run, "-m", "P@2", "-m", "NumRet", "--lenient", "--format", "tsv"
    )
    assert code == 0
    assert "pbtools: warning:" in err and "input.x.gz" in err
    df = pd.read_csv(pd.io.common.StringIO(out), sep="\t")
    assert df.set_index("measure")["value"].to_dict() == {"P@2": 0.5, "NumRet": 2.0}


def test_console_script_entry_point(tmp_path):
    """``python -m pbtools`` and the parser's --help work as a separate process."""
    proc = subprocess.run(
        [sys.executable, "-m", "pbtools", "--help"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0
    for command in ("evaluate", "pool", "correct", "analyze"):
        assert command in proc.stdout
    assert json.loads(json.dumps({"ok": True}))["ok"]


SAMPLE = __import__("pbtools.experiments.analysis").experiments.analysis.SAMPLE


def test_pool_json_on_bundled_sample(capsys):
    code, out, _ = run_cli(capsys, "pool", SAMPLE, "--json")
    assert code == 0
    info = json.loads(out)
    for key in ("runs", "orgs", "pooled_runs", "depth", "topics"):
        assert key in info
    assert isinstance(info["depth"], int) and info["depth"] == 20
    assert len(info["runs"]) == 12 and len(info["pooled_runs"]) == 10
    assert set(info["pooled_runs"]) <= set(info["runs"])


def test_pool_leave_out_writes_reduced_qrels(capsys, tmp_path):
    out_file = tmp_path / "lo.parquet"
    code, _, _ = run_cli(capsys, "pool", SAMPLE, "--leave-out", "org", "-o", out_file)
    assert code == 0
    reduced = io.read_parquet(out_file)
    assert list(reduced.columns[:3]) == ["qid", "docno", "label"]
    full = io.read_qrels(SAMPLE / "QRels")
    sizes = reduced.groupby("left_out", observed=True).size()
    assert len(sizes) == 6 and (sizes <= len(full)).all() and (sizes < len(full)).any()
    assert reduced.attrs["metadata"]["depth"] == 20


def test_pool_qrels_runs_desc_form(capsys):
    code, out, _ = run_cli(
        capsys,
        "pool",
        SAMPLE / "QRels" / "qrels",
        SAMPLE / "Runs",
        "--desc",
        SAMPLE / "desc.xml",
        "--json",
    )
    assert code == 0
    assert json.loads(out)["depth"] == 20


@pytest.mark.slow
def test_pool_trec2_matches_lipani_table2(capsys, trec2_dir):
    code, out, _ = run_cli(capsys, "pool", trec2_dir, "--lenient", "--json")
    assert code == 0
    info = json.loads(out)
    assert info["depth"] == 100 and len(info["topics"]) == 50
    assert info["|R| files"] == 38 and info["|R_p| files"] == 36 and info["|O|"] == 22
    assert sorted(set(info["runs"]) - set(info["pooled_runs"])) == ["rutfmed", "uicah"]


def test_correct_leave_out_reports_true_and_bounds(capsys, tmp_path):
    out_file = tmp_path / "c.parquet"
    code, _, _ = run_cli(
        capsys,
        "correct",
        SAMPLE / "QRels" / "qrels",
        SAMPLE / "Runs",
        SAMPLE / "Runs" / "input.o01r1",
        "--desc",
        SAMPLE / "desc.xml",
        "-m",
        "P@10",
        "-m",
        "RBP(p=0.8)@10",
        "--leave-out",
        "org",
        "--format",
        "parquet",
        "-o",
        out_file,
    )
    assert code == 0
    res = io.read_parquet(out_file)
    assert list(res.columns[:4]) == ["name", "measure", "estimator", "value"]
    p10 = res[res["measure"] == "P@10"].set_index("estimator")
    assert set(p10.index) == {"true", "reduced", "webber", "lipani", "condensed"}
    # Lipani's correction stays in [P@n, P@n + k]
    lip, red = p10.loc["lipani"], p10.loc["reduced"]
    assert red["value"] <= lip["value"] <= red["value"] + red["k"] + 1e-12
    # leaving the run's organisation out can only lower the reduced-pool score
    assert red["value"] <= p10.loc["true", "value"]
    rbp = res[res["measure"] == "RBP(p=0.8)@10"]
    assert "lipani" not in set(rbp["estimator"])  # Lipani is defined for P@n only


def test_correct_unpooled_run(capsys):
    code, out, err = run_cli(
        capsys,
        "correct",
        SAMPLE / "QRels" / "qrels",
        SAMPLE / "Runs",
        SAMPLE / "Runs" / "input.o03r1",
        "--desc",
        SAMPLE / "desc.xml",
        "--format",
        "tsv",
    )
    assert code == 0
    df = pd.read_csv(pd.io.common.StringIO(out), sep="\t")
    assert set(df["estimator"]) == {"reduced", "webber", "lipani", "condensed"}
    assert (df["name"] == "o03r1").all()


def test_correct_jobs_is_checked_and_changes_no_result(capsys):
    """``correct --jobs`` (issue 30): ``Execution``'s check, before any input is read (exit 2,
    naming the option); one core gives the table of every core."""
    args = (SAMPLE / "QRels" / "qrels", SAMPLE / "Runs", SAMPLE / "Runs" / "input.o03r1")
    code, out, err = run_cli(capsys, "correct", *args, "--jobs", "-2")
    assert code == 2 and out == ""
    assert "--jobs -2: jobs must be an integer >= 1" in err
    quick = ("--desc", SAMPLE / "desc.xml", "--no-prediction", "--format", "tsv")
    code, one, _ = run_cli(capsys, "correct", *args, *quick, "--jobs", "1")
    assert code == 0 and "o03r1" in one
    code, every, _ = run_cli(capsys, "correct", *args, *quick)
    assert code == 0 and every == one


def test_missing_paths_are_named(capsys, tmp_path):
    for argv, name in (
        (["analyze", tmp_path / "nope"], "nope"),
        (["pool", tmp_path / "nope"], "nope"),
        (["evaluate", tmp_path / "q", tmp_path / "r"], "q"),
    ):
        code, _, err = run_cli(capsys, *argv)
        assert code == 2
        assert "no such file or directory" in err and str(tmp_path / name) in err


def test_entry_exit_fast_keeps_output_and_exit_status(capsys, tmp_path):
    """``evaluate`` ends its process without the interpreter's teardown (cli.entry): what it
    wrote to a pipe or a file is complete, ``atexit`` handlers run, and a refusal still exits 2."""
    qrels, runs = SAMPLE / "QRels" / "qrels", SAMPLE / "Runs"
    args = ["evaluate", str(qrels), str(runs), "-m", "P@5", "-m", "AP", "--per-topic"]
    code, expected, _ = run_cli(capsys, *args)
    assert code == 0 and expected.count("\n") > 10
    script = (
        "import atexit, sys; atexit.register(lambda: print('atexit ran'));"
        "from pbtools.cli import entry; sys.argv = ['pbtools', *sys.argv[1:]]; entry()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected + "atexit ran\n"
    pq = tmp_path / "out.parquet"
    proc = subprocess.run(
        [sys.executable, "-m", "pbtools", *args, "--format", "parquet", "-o", str(pq)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(io.read_parquet(pq)) == expected.count("\n") - 1  # the table less its header
    missing = tmp_path / "none"
    proc = subprocess.run(
        [sys.executable, "-m", "pbtools", "evaluate", str(qrels), str(missing)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "none" in proc.stderr
