"""Sampled qrels through ``pbtools evaluate`` (five-column files: the estimators, sample_eval.pl's
output with ``--trec``) and through ``pbtools.evaluate`` (frames with a stratum column)."""

from __future__ import annotations

import gzip

import pandas as pd
import pytest

import pbtools
from pbtools.cli import main
from pbtools.errors import InputError
from pbtools.io.sampled import is_sampled_qrels
from pbtools.measures.sampled import evaluate_sampled

QRELS = pd.DataFrame(
    {
        "qid": ["1"] * 6 + ["2"] * 3 + ["3"],
        "docno": list("abcdef") + list("abc") + ["a"],
        "label": [1, 0, 1, 0, -1, -1, 2, -1, 0, 1],
        "stratum": [1, 1, 2, 2, 2, 2, 1, 2, 2, 1],
    }
)
RUN = pd.DataFrame(
    {
        "name": "r",
        "qid": ["1"] * 4 + ["2"] * 3,
        "docno": list("abcd") + list("cba"),
        "score": [4.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0],
    }
)


@pytest.fixture
def files(tmp_path):
    q = tmp_path / "sampled.qrels"
    lines = [f"{r.qid} 0 {r.docno} {r.stratum} {r.label}" for r in QRELS.itertuples()]
    q.write_text("\n".join(lines) + "\n")
    run = tmp_path / "input.r"
    rows = [f"{r.qid} Q0 {r.docno} 0 {r.score} r" for r in RUN.itertuples()]
    run.write_text("\n".join(rows) + "\n")
    return q, run


def _cli(capsys, *argv):
    code = main(["evaluate", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_five_columns_are_detected(tmp_path, files):
    q, run = files
    gz = tmp_path / "q.gz"
    gz.write_bytes(gzip.compress(b"\n\n" + q.read_bytes()))  # the first line with fields decides
    assert is_sampled_qrels(q) and is_sampled_qrels(gz)
    four = tmp_path / "four"
    four.write_text("1 0 a 1\n1 0 b 0 extra\n")
    assert not is_sampled_qrels(four) and not is_sampled_qrels(tmp_path)


def test_cli_scores_the_estimators_of_a_sampled_qrels(capsys, files):
    q, run = files
    code, out, err = _cli(capsys, "--format", "tsv", "-q", q, run)
    assert code == 0, err
    got = pd.read_csv(__import__("io").StringIO(out), sep="\t", dtype={"qid": str})
    want = evaluate_sampled(RUN, QRELS, ["infP@10", "xinfAP", "infNDCG", "statAP"], per_topic=True)
    want = want[["name", "qid", "measure"]].astype(str).assign(v=want["value"])
    both = got[got["qid"] != "all"].merge(want, on=["name", "qid", "measure"])
    assert len(both) == 8 and (both["value"] - both["v"]).abs().max() < 5.001e-5  # tsv: 4 decimals
    # -c: every qrels topic; topic 3 (unanswered) estimates 0, so the mean is over 3 topics
    code, out, err = _cli(capsys, "--trec", "-c", "-m", "xinfAP", "-m", "infNumRel", q, run)
    assert code == 0, err
    avg = evaluate_sampled(RUN, QRELS, ["xinfAP", "infNumRel"], per_topic=True)
    x = avg[avg["measure"] == "xinfAP"]["value"].sum() / 3
    r = avg[avg["measure"] == "infNumRel"]["value"].sum() + 1  # topic 3: one sampled relevant
    assert f"xinfAP                \tall\t{x:.4f}" in out
    assert f"infNumRel             \tall\t{r:.4f}" in out  # an estimate: 4 decimals, not %ld


def test_cli_refuses_plain_measures_unless_asked(capsys, files, tmp_path):
    q, run = files
    code, out, err = _cli(capsys, "-m", "xinfAP", "-m", "P@10", q, run)
    assert code == 2 and "P@10 would count the unsampled documents" in err and "--plain" in err
    code, out, err = _cli(capsys, "--trec", "-m", "official", q, run)  # trec_eval's set: plain
    assert code == 2 and "AP" in err
    code, out, err = _cli(capsys, "--plain", "--trec", "-m", "P@2", "-m", "infAP", q, run)
    assert code == 0, err
    assert "P_2                   \tall\t0.2500" in out  # (1/2 + 0/2) / 2: b unsampled
    code, out, err = _cli(capsys, "-J", "-m", "xinfAP", q, run)
    assert code == 2 and "-J" in err
    four = tmp_path / "four"
    four.write_text("1 0 a 1\n")
    code, out, err = _cli(capsys, "--plain", four, run)
    assert code == 2 and "--plain applies to sampled qrels" in err


def test_cli_prints_what_sample_eval_prints(capsys, shared_dir):
    """rutfmed's 24 topics: every line of sample_eval.pl -q's output, same names, same order,
    same printed values (its inum_rel average sums R̂ over all 50 qrels topics)."""
    d = shared_dir / "data" / "sample_eval"
    if not d.is_dir():
        pytest.skip("../shared/data/sample_eval is absent")
    code, out, err = _cli(
        capsys, "--trec", "-q", d / "qrels.stratified.gz", d / "runs/input.rutfmed.gz"
    )
    assert code == 0, err
    gold = [line.split() for line in open(d / "expected" / "rutfmed.sample_eval")]
    got = [line.split() for line in out.splitlines()]
    assert [g[:2] for g in got] == [g[:2] for g in gold]
    assert max(abs(float(a[2]) - float(b[2])) for a, b in zip(got, gold, strict=True)) < 1e-9


def test_python_evaluate_routes_a_sampled_frame():
    est = pbtools.evaluate(RUN, QRELS, ["xinfAP", "infAP", "statAP", "NumRet"], per_topic=True)
    want = evaluate_sampled(RUN, QRELS, ["xinfAP", "infAP", "statAP", "NumRet"], per_topic=True)
    pd.testing.assert_frame_equal(est, want)
    c = pbtools.evaluate(RUN, QRELS, ["xinfAP", "infNumRel"], topics="all", per_topic=True)
    assert set(c["qid"]) == {"1", "2", "3"}
    assert c.set_index(["measure", "qid"])["value"][("infNumRel", "3")] == 1.0
    with pytest.raises(InputError, match="AP would count every unsampled document"):
        pbtools.evaluate(RUN, QRELS, ["xinfAP", "AP"])
    with pytest.raises(InputError, match="answered"):
        pbtools.evaluate(RUN, QRELS, ["xinfAP"], topics="answered")
    # without the stratum column the frame is ordinary qrels: AP counts -1 as unjudged
    plain = pbtools.evaluate(RUN, QRELS.drop(columns="stratum"), ["AP"])
    assert plain["value"].iloc[0] > 0
