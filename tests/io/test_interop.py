"""Interop with the libraries IR researchers use (ir_measures, ranx, ir_datasets, PyTerrier
frames), and outputs a user can trust later (trec_eval layout, ``all`` rows, provenance)."""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pbtools
from pbtools import io
from pbtools import measures as m
from pbtools.cli import main

ir_measures = pytest.importorskip("ir_measures")


@pytest.fixture(scope="module")
def good_and_bad():
    """20 topics, 10 relevant documents each. ``good`` ranks them all first (P@10 = 1);
    ``bad`` retrieves only non-relevant documents, with higher scores (P@10 = 0)."""
    q = [f"{t:02d}" for t in range(20)]
    qrels = pd.DataFrame(
        [(t, f"r{t}-{i}", 1) for t in q for i in range(10)]
        + [(t, f"n{t}-{i}", 0) for t in q for i in range(10)],
        columns=["qid", "docno", "label"],
    )
    good = [("good", t, f"r{t}-{i}", 10.0 - i) for t in q for i in range(10)]
    bad = [("bad", t, f"n{t}-{i}", 100.0 - i) for t in q for i in range(10)]
    runs = io.from_ir_measures(pd.DataFrame(good + bad, columns=["name", "qid", "docno", "score"]))
    return runs, io.from_ir_measures(qrels)


def test_to_ir_measures_splits_runs_instead_of_merging_them(good_and_bad):
    runs, qrels = good_and_bad
    P10 = ir_measures.parse_measure("P@10")
    ours = m.evaluate(runs, qrels, ["P@10"]).set_index("name")["value"]
    assert ours.to_dict() == {"bad": 0.0, "good": 1.0}
    irm_qrels = io.to_ir_measures(qrels)
    # what the adapter used to return: one frame with both runs, which ir_measures scores as
    # one ranking (the bad run's documents outscore the good run's)
    merged = pd.concat([io.to_ir_measures(r, by_run=True)[n] for n, r in runs.groupby("name")])
    assert ir_measures.calc_aggregate([P10], irm_qrels, merged)[P10] == 0.0
    split = io.to_ir_measures(runs)
    assert isinstance(split, dict) and sorted(split) == ["bad", "good"]
    for name, frame in split.items():
        assert ir_measures.calc_aggregate([P10], irm_qrels, frame)[P10] == ours[name]
    with pytest.raises(ValueError, match=r"2 runs \(bad, good\).*by_run=True"):
        io.to_ir_measures(runs, by_run=False)
    one = runs[runs["name"] == "good"]
    assert isinstance(io.to_ir_measures(one), pd.DataFrame)
    assert list(io.to_ir_measures(one, by_run=True)) == ["good"]


def test_ir_measures_agrees_run_by_run_on_the_toy_track(toy_dir):
    qrels = io.read_qrels(toy_dir / "QRels" / "qrels")
    runs = io.read_runs(toy_dir / "Runs")
    meas = [ir_measures.parse_measure(x) for x in ("P@10", "AP", "nDCG@10")]
    ours = m.evaluate(runs, qrels, ["P@10", "AP", "nDCG@10"])
    irm_qrels = io.to_ir_measures(qrels)
    for name, frame in io.to_ir_measures(runs).items():
        theirs = ir_measures.calc_aggregate(meas, irm_qrels, frame)
        mine = ours[ours["name"] == name].set_index("measure")["value"]
        for x in meas:
            assert theirs[x] == pytest.approx(mine[str(x)], abs=1e-12), (name, x)


def test_ir_measures_readers_and_empty_iterators(tmp_path, good_and_bad):
    runs, qrels = good_and_bad
    good = runs[runs["name"] == "good"]
    io.to_trec(good, tmp_path / "good.run")
    io.to_trec_qrels(qrels, tmp_path / "qrels")
    back = io.from_ir_measures(ir_measures.read_trec_run(str(tmp_path / "good.run")), name="good")
    pd.testing.assert_frame_equal(back, io.read_run(tmp_path / "good.run"))
    q = io.from_ir_measures(ir_measures.read_trec_qrels(str(tmp_path / "qrels")))
    pd.testing.assert_frame_equal(q, io.read_qrels(tmp_path / "qrels"))
    empty = io.from_ir_measures(iter([]))
    assert len(empty) == 0 and list(empty.columns) == ["name", "qid", "docno", "score", "rank"]
    empty_q = io.from_ir_measures([], qrels=True)
    assert len(empty_q) == 0 and list(empty_q.columns) == ["qid", "docno", "label"]
    with pytest.raises(ValueError, match="needs fields query_id, doc_id and score"):
        io.from_ir_measures([("1", "d1", 1.0)])


def test_ir_datasets_tuples_load(good_and_bad):
    formats = pytest.importorskip("ir_datasets.formats")
    qrels = io.from_ir_datasets(
        [formats.TrecQrel("1", "d1", 2, "0"), formats.TrecQrel("1", "d2", 0, "0")]
    )
    assert qrels["label"].tolist() == [2, 0] and list(qrels.columns) == ["qid", "docno", "label"]
    run = io.from_ir_datasets(
        [formats.GenericScoredDoc("1", "d2", 1.0), formats.GenericScoredDoc("1", "d1", 3.0)],
        name="bm25",
    )
    assert run["docno"].astype(str).tolist() == ["d1", "d2"] and (run["name"] == "bm25").all()


# --------------------------------------------------------------------------- ranx


@pytest.fixture(scope="module")
def ranx():
    """ranx, imported by the tests that use it (its numba import costs seconds; the other
    tests of this module need no ranx)."""
    return pytest.importorskip("ranx")


@pytest.mark.slow  # ranx compiles its numba code on first use (~10 s)
def test_from_ranx_objects_and_several_runs(ranx, good_and_bad):
    runs, qrels = good_and_bad
    d = io.to_ranx(runs)
    assert sorted(d) == ["bad", "good"]
    objs = [ranx.Run(d["good"], name="good"), ranx.Run(d["bad"], name="bad")]
    for source in (objs, {"good": objs[0], "bad": objs[1]}, d):
        pd.testing.assert_frame_equal(io.from_ranx(source), runs)
    good = runs[runs["name"] == "good"].reset_index(drop=True)
    one = io.from_ranx(objs[0])
    as_str = {"name": str, "qid": str, "docno": str}
    pd.testing.assert_frame_equal(one.astype(as_str), good.astype(as_str))
    renamed = io.from_ranx(objs[0], name="mine")
    assert renamed["name"].astype(str).unique().tolist() == ["mine"]
    q = io.from_ranx(ranx.Qrels(io.to_ranx(qrels)))
    pd.testing.assert_frame_equal(
        q.sort_values(["qid", "docno"], ignore_index=True),
        qrels.sort_values(["qid", "docno"], ignore_index=True),
    )
    assert len(io.from_ranx({})) == 0
    with pytest.raises(ValueError, match="two runs are named 'good'"):
        io.from_ranx([objs[0], objs[0]])
    with pytest.raises(ValueError, match="by_run=True"):
        io.to_ranx(runs, by_run=False)


@pytest.mark.slow
def test_ranx_scores_and_t_tests_agree_with_pbtools(ranx, toy_dir):
    qrels = io.read_qrels(toy_dir / "QRels" / "qrels")
    runs = io.read_runs(toy_dir / "Runs")
    per = m.evaluate(runs, qrels, ["P@10"], per_topic=True, topics="all")
    rq = ranx.Qrels(io.to_ranx(qrels))
    rruns = [ranx.Run(v, name=n) for n, v in io.to_ranx(runs).items()]
    report = ranx.compare(
        rq, rruns, metrics=["precision@10"], stat_test="student", max_p=0.05, make_comparable=True
    )
    ours = pbtools.compare(per, tests=["t"], correction="none")
    means = ours.summary.set_index("name")["mean"]
    for r in rruns:
        assert report.results[r.name]["precision@10"] == pytest.approx(means[r.name], abs=1e-12)
    p = report.to_dict()
    for row in ours.tests[ours.tests["test"] == "t"].itertuples():
        theirs = p[row.name_a]["comparisons"][row.name_b]["precision@10"]
        if np.isnan(theirs):  # ranx: 0/0 for runs equal on every topic; pbtools: t = 0, p = 1
            assert row.diff == 0 and row.p_value == 1.0
        else:
            assert row.p_value == pytest.approx(theirs, rel=1e-6, abs=1e-12)
    assert ours.tests["p_value"].lt(1.0).any()


# --------------------------------------------------------------------------- PyTerrier frames


@pytest.fixture
def pyterrier_frame(good_and_bad):
    """A PyTerrier result frame: qid, docid, docno, rank (from 0), score, query; no name."""
    runs, _ = good_and_bad
    g = runs[runs["name"] == "good"]
    return pd.DataFrame(
        {
            "qid": g["qid"].astype(str).to_numpy(),
            "docid": np.arange(len(g)),
            "docno": g["docno"].astype(str).to_numpy(),
            "rank": g["rank"].to_numpy() - 1,
            "score": g["score"].to_numpy(),
            "query": "some words",
        }
    )


def test_pyterrier_frame_in_the_adapters_and_writers(tmp_path, pyterrier_frame, good_and_bad):
    runs, _ = good_and_bad
    irm = io.to_ir_measures(pyterrier_frame)
    assert list(irm.columns) == ["query_id", "doc_id", "score"] and len(irm) == 200
    assert io.to_ranx(pyterrier_frame) == io.to_ranx(runs[runs["name"] == "good"])
    io.to_trec(pyterrier_frame, tmp_path / "pt.run")
    back = io.read_run(tmp_path / "pt.run")
    assert back["name"].astype(str).unique().tolist() == ["run"]
    assert back["rank"].min() == 1 and len(back) == 200
    frame = io.from_ir_measures(pyterrier_frame)
    assert frame["name"].astype(str).unique().tolist() == ["run"] and len(frame) == 200


def test_pyterrier_frame_is_evaluated(pyterrier_frame, good_and_bad):
    _, qrels = good_and_bad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = m.evaluate(pyterrier_frame, qrels, ["P@10"])
        via_pb = pyterrier_frame.pb.evaluate(qrels, ["P@10"])
    assert out["value"].tolist() == [1.0] and via_pb["value"].tolist() == [1.0]


# --------------------------------------------------------------------------- trec_eval output


@pytest.fixture
def conformance(shared_dir):
    """trec_eval's own outputs (``out.test*``) on its test collection, when ../shared has it."""
    path = shared_dir / "data" / "trec_eval_conformance"
    if not (path / "out.test.aq").is_file():
        pytest.skip("../shared/data/trec_eval_conformance is absent")
    return path


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    return (code, *capsys.readouterr())


MEASURES = ("num_ret", "num_rel", "num_rel_ret", "map", "P_5", "ndcg_cut_10", "bpref")


def _trec_eval_lines(path, keep=MEASURES + ("runid", "num_q")):
    return [ln for ln in path.read_text().splitlines() if ln.split("\t")[0].strip() in keep]


@pytest.mark.parametrize(
    ("results", "expected", "extra"),
    [
        ("results.test", "out.test", []),
        ("results.test", "out.test.aq", ["-q"]),
        ("results.trunc", "out.test.aqc", ["-q", "-c", "--lenient"]),
    ],
)
def test_trec_output_is_trec_eval_line_for_line(capsys, conformance, results, expected, extra):
    """The lines trec_eval prints for these measures, runid and num_q included, in its order:
    per-topic lines, then runid, num_q and the ``all`` lines."""
    want = _trec_eval_lines(conformance / expected)
    present = [ms for ms in MEASURES if any(ln.startswith(ms + " ") for ln in want)]
    assert len(present) >= 6
    args = ["evaluate", conformance / "qrels.test", conformance / results, "--trec", *extra]
    code, out, _ = run_cli(capsys, *args, *[x for ms in present for x in ("-m", ms)])
    assert code == 0
    got = out.splitlines()
    assert sorted(got) == sorted(want)
    # the block structure: per-topic lines, then runid, num_q, then the averages
    i = got.index(next(ln for ln in got if ln.startswith("runid")))
    assert got[i + 1].startswith("num_q") and all("\tall\t" in ln for ln in got[i:])
    assert not any("\tall\t" in ln for ln in got[:i])


def _parse_trec_eval(text: str) -> pd.DataFrame:
    """A trec_eval-output reader as trectools' ``TrecRes.read_res`` is: whitespace-separated
    ``metric query value``, the ``runid`` line dropped, values as floats."""
    df = pd.read_csv(
        pd.io.common.StringIO(text),
        sep=r"\s+",
        names=["metric", "query", "value"],
        dtype={"query": str},
    )
    return df[df["metric"] != "runid"].astype({"value": float})


def test_trec_output_reads_back_with_a_trec_eval_parser(capsys, tmp_path, toy_dir):
    """Several runs: one trec_eval block per run; each block parses as trec_eval output and
    gives back the per-topic values, num_q and the averages."""
    qrels, runs = toy_dir / "QRels" / "qrels", toy_dir / "Runs"
    out_file = tmp_path / "toy.trec"
    code, _, _ = run_cli(
        capsys, "evaluate", qrels, runs, "-m", "AP", "-m", "P@5", "-q", "--trec", "-o", out_file
    )
    assert code == 0
    text = out_file.read_text()
    runs_f = io.read_runs(runs)
    per = m.evaluate(runs_f, io.read_qrels(qrels), ["AP", "P@5"], per_topic=True)
    names = list(runs_f["name"].cat.categories)
    chunks = _blocks(text)
    assert len(chunks) == len(names) == text.count("\nrunid") + text.startswith("runid")
    for chunk, name in zip(chunks, names, strict=True):
        df = _parse_trec_eval(chunk)
        mine = per[(per["name"] == name) & (per["measure"] == "AP")]
        mine = mine.set_index(mine["qid"].astype(str))["value"].sort_index()
        assert f"runid                 \tall\t{name}" in chunk
        assert df[df["metric"] == "num_q"]["value"].item() == len(mine)
        ap = df[(df["metric"] == "map") & (df["query"] != "all")].set_index("query")["value"]
        np.testing.assert_allclose(ap.sort_index(), mine, atol=5e-5)
        avg = df[(df["metric"] == "map") & (df["query"] == "all")]["value"].item()
        assert avg == pytest.approx(mine.mean(), abs=5e-5)


def _blocks(text: str) -> list[str]:
    """Split concatenated trec_eval outputs after each block's last ``all`` line."""
    out, cur, seen_all = [], [], False
    for ln in text.splitlines():
        is_all = "\tall\t" in ln
        if seen_all and not is_all:
            out.append("\n".join(cur))
            cur, seen_all = [], False
        cur.append(ln)
        seen_all = seen_all or is_all
    out.append("\n".join(cur))
    return out


def test_per_topic_output_has_the_all_rows(capsys, tmp_path, toy_dir):
    qrels, runs = toy_dir / "QRels" / "qrels", toy_dir / "Runs"
    tsv = tmp_path / "pt.tsv"
    code, _, _ = run_cli(
        capsys,
        "evaluate",
        qrels,
        runs,
        "-m",
        "AP",
        "-m",
        "NumRet",
        "-q",
        "--format",
        "tsv",
        "-o",
        tsv,
    )
    assert code == 0
    df = pd.read_csv(tsv, sep="\t", dtype={"qid": str})
    avg = m.evaluate(io.read_runs(runs), io.read_qrels(qrels), ["AP", "NumRet"])
    alls = df[df["qid"] == "all"]
    assert len(alls) == len(avg)
    merged = alls.merge(avg.astype({"name": str, "measure": str}), on=["name", "measure"])
    np.testing.assert_allclose(merged["value_x"], merged["value_y"], atol=5e-5)
    # each run's per-topic rows come first, then its all rows (trec_eval -q)
    for _, grp in df.groupby("name", sort=False):
        is_all = (grp["qid"] == "all").to_numpy()
        assert is_all[-2:].all() and not is_all[:-2].any()


# --------------------------------------------------------------------------- provenance


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_parquet_outputs_carry_version_inputs_and_parameters(capsys, tmp_path, toy_dir):
    qrels, runs = toy_dir / "QRels" / "qrels", toy_dir / "Runs"
    pq = tmp_path / "ev.parquet"
    code, _, _ = run_cli(
        capsys, "evaluate", qrels, runs, "-m", "AP", "-q", "--format", "parquet", "-o", pq
    )
    assert code == 0
    meta = io.read_parquet(pq).attrs["metadata"]
    assert meta["pbtools_version"] == pbtools.__version__
    assert meta["command"] == "evaluate" and meta["measures"] == ["AP"]
    params = meta["parameters"]
    assert params["measure"] == ["AP"] and params["per_topic"] is True
    assert params["all_topics"] is False and params["lenient"] is False
    files = [qrels, *sorted(p for p in runs.iterdir() if p.is_file())]
    assert [i["path"] for i in meta["inputs"]] == [str(f) for f in files]
    assert [i["sha256"] for i in meta["inputs"]] == [_sha(f) for f in files]
    assert [i["bytes"] for i in meta["inputs"]] == [f.stat().st_size for f in files]
    # an "all" qid in the per-topic Parquet too
    assert "all" in io.read_parquet(pq)["qid"].astype(str).tolist()


def test_pool_correct_compare_parquet_carry_provenance(capsys, tmp_path, toy_dir):
    qrels, runs = toy_dir / "QRels" / "qrels", toy_dir / "Runs"
    commands = {
        "pool": ["pool", toy_dir, "--leave-out", "run", "-o"],
        "correct": [
            "correct",
            qrels,
            runs,
            runs / "input.A",
            "--desc",
            toy_dir / "desc.xml",
            "--leave-out",
            "run",
            "--format",
            "parquet",
            "-o",
        ],
        "compare": ["compare", qrels, runs, "-m", "P@5", "-c", "--format", "parquet", "-o"],
    }
    for command, argv in commands.items():
        pq = tmp_path / f"{command}.parquet"
        code, _, err = run_cli(capsys, *argv, pq)
        assert code == 0, err
        meta = io.read_parquet(pq).attrs["metadata"]
        assert meta["command"] == command and meta["pbtools_version"] == pbtools.__version__
        assert meta["parameters"]["output"] == str(pq)
        paths = {i["path"] for i in meta["inputs"]}
        assert str(qrels) in paths and str(runs / "input.E") in paths
        for i in meta["inputs"]:
            assert i["sha256"] == _sha(Path(i["path"]))


def test_analyze_tables_carry_provenance(capsys, tmp_path):
    from pbtools.experiments import analysis

    if not analysis.SAMPLE.is_dir():
        pytest.skip("the bundled sample is absent")
    argv = ["analyze", "-m", "P@10", "--leave-out", "org", "--run-sets", "all"]
    code, _, err = run_cli(capsys, *argv, "--no-progress", "-o", tmp_path / "out")
    assert code == 0, err
    meta = io.read_parquet(tmp_path / "out" / "errors.parquet").attrs["metadata"]
    assert meta["command"] == "analyze" and meta["pbtools_version"] == pbtools.__version__
    assert meta["parameters"]["leave_out"] == "org" and meta["parameters"]["measure"] == ["P@10"]
    files = sorted(p for p in analysis.SAMPLE.rglob("*") if p.is_file())
    assert sorted(i["path"] for i in meta["inputs"]) == sorted(str(f) for f in files)
    assert all(i["sha256"] == _sha(Path(i["path"])) for i in meta["inputs"])
