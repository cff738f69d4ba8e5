"""``pbtools evaluate --trec``: trec_eval's command line (-m all_trec/official/P.5,10, -l, -M,
-J, -N, -n, -q, -c) and its output, line for line."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from pbtools import io
from pbtools import measures as M
from pbtools.cli import main
from pbtools.measures.trec import trec_measures


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.fixture
def conformance(shared_dir):
    d = shared_dir / "data" / "trec_eval_conformance"
    if not d.is_dir():
        pytest.skip("../shared/data/trec_eval_conformance is absent")
    return d


def _name(line: str) -> str:
    return line.split("\t")[0].strip()


def test_all_trec_q_prints_out_test_aq(capsys, conformance):
    """``evaluate --trec -m all_trec -q qrels.test results.test`` is ``out.test.aq`` byte for
    byte, but for the lines of a measure this pbtools says (a warning) it does not compute."""
    code, out, err = run_cli(
        capsys,
        "evaluate",
        "--trec",
        "-m",
        "all_trec",
        "-q",
        conformance / "qrels.test",
        conformance / "results.test",
    )
    assert code == 0
    ref = (conformance / "out.test.aq").read_text().splitlines()
    missing = {_name(ln) for ln in ref} - {_name(ln) for ln in out.splitlines()}
    for name in missing:
        assert f"trec_eval's {name} is not computed" in err
    assert len(missing) <= 1
    assert out.splitlines() == [ln for ln in ref if _name(ln) not in missing]
    assert len(out.splitlines()) >= 380


def test_default_is_official_as_in_trec_eval(capsys, conformance):
    code, out, _ = run_cli(
        capsys, "evaluate", "--trec", conformance / "qrels.test", conformance / "results.test"
    )
    assert code == 0
    assert out == (conformance / "out.test").read_text()


def test_only_the_measures_asked_for(capsys, conformance):
    """``-m map`` prints the map line alone (no runid/num_q: trec_eval prints what is marked)."""
    code, out, _ = run_cli(
        capsys,
        "evaluate",
        "--trec",
        "-m",
        "map",
        "-m",
        "P.10,5",
        conformance / "qrels.test",
        conformance / "results.test",
    )
    assert code == 0
    assert [_name(ln) for ln in out.splitlines()] == ["map", "P_5", "P_10"]
    assert out.splitlines()[0] == "map                   \tall\t0.1785"


@pytest.fixture
def toy(toy_dir):
    return toy_dir / "QRels" / "qrels", sorted((toy_dir / "Runs").iterdir())[0]


def _trec_values(out: str) -> dict[tuple[str, str], float]:
    return {(_name(ln), ln.split("\t")[1]): float(ln.split("\t")[2]) for ln in out.splitlines()}


def test_max_per_topic_truncates_rankings(capsys, toy):
    """``-M 5``: the first 5 documents only, so P_10 = (relevant in the top 5) / 10."""
    qrels, run = toy
    code, out, _ = run_cli(capsys, "evaluate", "--trec", "-q", "-M", "5", "-m", "P.10", qrels, run)
    assert code == 0
    per = M.evaluate(io.read_runs(run), io.read_qrels(qrels), ["P@5"], per_topic=True)
    got = _trec_values(out)
    for qid, p5 in zip(per["qid"].astype(str), per["value"], strict=True):
        assert got[("P_10", qid)] == pytest.approx(p5 / 2, abs=5e-5)


def test_judged_only_and_level_and_num_docs(capsys, toy):
    """``-J`` scores the condensed list, ``-l 2`` moves the binary measures' threshold, ``-N``
    enters utility's fourth term; each equals the library's measure."""
    qrels, run = toy
    args = ["evaluate", "--trec", "-q", qrels, run]
    code, out, _ = run_cli(capsys, *args, "-J", "-l", "2", "-m", "map", "-m", "ndcg")
    assert code == 0
    per = M.evaluate(
        io.read_runs(run),
        io.read_qrels(qrels),
        ["AP(rel=2,judged_only=True)", "nDCG'"],
        per_topic=True,
    )
    got = _trec_values(out)
    for qid, meas, v in zip(per["qid"].astype(str), per["measure"], per["value"], strict=True):
        name = "map" if str(meas).startswith("AP") else "ndcg"
        assert got[(name, qid)] == pytest.approx(v, abs=5e-5)
    code, out, _ = run_cli(capsys, *args, "-N", "1000", "-m", "utility.0,0,0,1")
    assert code == 0
    pt = M.evaluate(
        io.read_runs(run), io.read_qrels(qrels), ["NumRet", "NumRel", "NumRelRet"], per_topic=True
    )
    wide = pt.pivot_table(index="qid", columns="measure", values="value", observed=True)
    got = _trec_values(out)
    for qid, row in wide.iterrows():
        d = 1000 + row["NumRelRet"] - row["NumRet"] - row["NumRel"]
        assert got[("utility_0,0,0,1", str(qid))] == pytest.approx(d)


def test_no_summary_prints_per_topic_lines_only(capsys, toy):
    qrels, run = toy
    code, out, _ = run_cli(capsys, "evaluate", "--trec", "-q", "-n", "-m", "official", qrels, run)
    assert code == 0 and out
    assert not any("\tall\t" in ln for ln in out.splitlines())
    assert {_name(ln) for ln in out.splitlines()} >= {"map", "P_10", "iprec_at_recall_0.50"}
    assert "gm_map" not in out  # geometric means: in the summary only


def test_trec_arguments_without_trec_layout(capsys, toy):
    """trec_eval's ``-m`` arguments work in pbtools' own tables, under canonical names."""
    qrels, run = toy
    code, out, _ = run_cli(capsys, "evaluate", "-m", "P.5,10", "-m", "gm_map", qrels, run)
    assert code == 0
    assert out.splitlines()[0].split() == ["name", "GMAP", "P@5", "P@10"]  # trec_eval's order


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["-l", "0"], "-l must be an integer >= 1"),
        (["-l", "x"], "-l must be an integer >= 1"),
        (["-M", "-3"], "-M must be an integer >= 1"),
        (["-N", "many"], "-N must be an integer >= 0"),
        (["-m", "P.x"], "-m P.x: 'x' is not a list of numbers"),
        (["-m", "P.0,5"], "-m P.0,5: cut-offs must be > 0"),
        (["-m", "all_trec.5"], "the nickname all_trec takes no parameters"),
        (["-m", "map.5"], "-m map.5: map takes no parameters"),
        (["-m", "utility.1,2"], "utility needs 4 coefficients"),
        (["-m", "ndcg.1"], "parameters must read name=value"),
        (["-n"], "-n (no summary) needs -q"),
        (["-Z", "x"], "unrecognized arguments: -Z"),
    ],
)
def test_bad_trec_flags_are_refused(capsys, toy, extra, says):
    qrels, run = toy
    code, _, err = run_cli(capsys, "evaluate", "--trec", qrels, run, *extra)
    assert code == 2
    assert says in err


def test_trec_measures_order_and_names():
    """trec_eval's order (measures.c), its printed names and the parameters' first use."""
    lines = trec_measures(["set", "P.20", "P.5", "relstring.3"])
    assert [t.name for t in lines] == [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "P_20",
        "relstring_3",
        "utility",
        "set_P",
        "set_relative_P",
        "set_recall",
        "set_map",
        "set_F",
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # infAP, until the sampled-pool estimators land
        kinds = {t.name: t.kind for t in trec_measures(["all_trec"])}
    assert kinds["gm_map"] == "summary" and kinds["relstring"] == "text"
    assert kinds["num_nonrel_judged_ret"] == "long" and kinds["map"] == "float"


def test_relstring_marks_unpooled_and_unjudged_documents():
    """relstring: the label, '-' for a document the qrels lack, '.' for one they hold unjudged
    (a negative label), '>' above 9; per topic only (no average)."""
    runs = pd.DataFrame(
        {"name": "r", "qid": "1", "docno": list("abcde"), "score": [5.0, 4, 3, 2, 1]}
    )
    qrels = pd.DataFrame({"qid": "1", "docno": list("abd"), "label": [2, -1, 12]})
    per = M.evaluate(runs, qrels, ["Relstring@4", "P@2"], per_topic=True)
    assert per.set_index("measure")["text"]["Relstring@4"] == "2.->"
    assert list(M.aggregate(per)["measure"].astype(str)) == ["P@2"]


def test_string_measure_in_pbtools_tables(capsys, toy):
    """``-q`` tables carry relstring's strings in a ``text`` column; its average row is absent."""
    qrels, run = toy
    code, out, _ = run_cli(
        capsys, "evaluate", "-q", "-m", "relstring", "-m", "P@5", "--format", "tsv", qrels, run
    )
    assert code == 0
    rows = [ln.split("\t") for ln in out.splitlines()]
    assert rows[0] == ["name", "qid", "measure", "value", "text"]
    texts = [r[4] for r in rows[1:] if r[2] == "Relstring@10"]
    assert texts and all(len(t) == 10 for t in texts)
    assert not any(r[1] == "all" and r[2] == "Relstring@10" for r in rows)
