"""Every measure through every command (issue 24, item 1).

Each command — ``analyze``, ``report``, ``correct``, ``compare``, ``pool --unique`` — and its
Python function runs on each measure family pbtools computes, on the bundled sample (fast) and
on TREC-2 (slow, several measures per call). An estimator runs on the measures it supports
(Lipani et al.: P@n only); the measures it skips are announced once (a
``SkippedMeasuresWarning``, one ``pbtools: warning:`` line on the CLI) and its cells there are
absent ('-' in the tables), never zero; the summary sentence names Lipani et al. only at P@n.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import pbtools
from pbtools import corrections, io, measures, pooling
from pbtools.cli import main
from pbtools.corrections.registry import SkippedMeasuresWarning, skipped
from pbtools.experiments.analysis import SAMPLE, analyze
from pbtools.experiments.report import summary, text_report

#: one measure of each family pbtools computes
FAMILIES = {
    "P@n": "P@10",
    "R@n": "R@10",
    "AP": "AP",
    "nDCG": "nDCG",
    "nDCG@k": "nDCG@10",
    "RBP": "RBP(p=0.8)@10",
    "bpref": "Bpref",
    "RR": "RR",
    "Rprec": "Rprec",
    "Q": "Q",
    "condensed AP": "AP(judged_only=True)",
    "condensed P@n": "P(judged_only=True)@10",
}
ALL = list(FAMILIES.values())
#: what Lipani et al.'s estimator corrects: P@n, not its condensed list
LIPANI = {"P@10"}
PARAMS = [pytest.param(m, id=k) for k, m in FAMILIES.items()]


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def skip_warnings(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, SkippedMeasuresWarning)]


@pytest.fixture(scope="module")
def sample():
    return io.read_collection(SAMPLE)


def test_skipped_names_what_lipani_does_not_correct():
    assert skipped(["true", "reduced", "webber", "condensed", "lipani"], ALL) == {
        "lipani": [m for m in ALL if m not in LIPANI]
    }
    assert skipped(["reduced", "lipani"], ["P@5", "P@100"]) == {}


# ------------------------------------------------------------------ analyze (Python and CLI)
@pytest.mark.parametrize("measure", PARAMS)
def test_analyze_every_family_on_the_sample(measure):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        a = analyze(measures=[measure], leave_out=["org"], progress=False)
    ests = {"reduced", "webber"} | ({"lipani"} if measure in LIPANI else set())
    for runs in ("all", "top75"):
        e = a.errors[a.errors["runs"] == runs]
        assert set(e["estimator"]) == ests
        assert e["mae"].notna().all() and np.isfinite(e["tau"]).all()
    s = a.scores
    assert set(s["estimator"]) == ests and s["estimate"].notna().all()
    said = skip_warnings(record)
    if measure in LIPANI:
        assert said == [] and a.params["skipped"] == {}
        assert "Lipani" in summary(a)
    else:
        assert len(said) == 1 and measure in said[0] and "P@n only" in said[0]
        assert a.params["skipped"] == {"lipani": [measure]}
        # the sentence claims only numbers it has: Lipani et al. only as giving no estimate
        assert re.search(r"Lipani et al\.(?! gives no estimate)", summary(a)) is None


def test_analyze_true_scores_are_the_evaluated_scores(sample):
    """Every family's true score of a pooled run (all pooled runs, nothing left out of the
    truth) is what ``measures.evaluate`` gives on the qrels: one engine."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedMeasuresWarning)
        a = analyze(measures=ALL, leave_out=["run"], run_sets=["all"], progress=False)
    red = a.scores[a.scores["estimator"] == "reduced"]
    ev = measures.evaluate(sample.runs, sample.qrels, ALL)
    both = red.merge(ev, on=["name", "measure"])
    assert len(both) == len(red) == 10 * len(ALL)
    np.testing.assert_allclose(both["true"], both["value"], atol=1e-12)
    # the reduced pool cannot raise a score that counts unjudged documents as non-relevant and
    # does not divide by R (P@n, RBP, RR); AP, R@n, nDCG, Rprec, Q and bpref can rise when
    # relevant documents lose their judgments (tests/papers/test_relevance_removal.py)
    plain = both[both["measure"].isin(["P@10", "RBP(p=0.8)@10", "RR"])]
    assert plain["measure"].nunique() == 3
    assert (plain["estimate"] <= plain["true"] + 1e-12).all()


@pytest.mark.slow
def test_analyze_cli_every_family_at_once(capsys):
    code, out, err = run_cli(capsys, "analyze", *(f"-m{m}" for m in ALL), "--jobs", "1")
    assert code == 0
    said = [line for line in err.splitlines() if "skips" in line]
    assert len(said) == 1  # once, for all four configurations
    assert said[0].startswith("pbtools: warning: the lipani estimator skips ")
    for m in ALL:
        assert (m in said[0]) == (m not in LIPANI)
    rows = {}
    for line in out.splitlines():  # the first table: one row per measure
        parts = line.split()
        if parts and parts[0] in ALL and parts[0] not in rows:
            rows[parts[0]] = parts
    assert set(rows) == set(ALL)
    for m, parts in rows.items():
        # MAE reduced, webber, lipani; then SRE / SRE*: Lipani's cells '-' where it skips
        assert parts[3] == "-" if m not in LIPANI else float(parts[3]) > 0
        assert float(parts[1]) > 0 and float(parts[2]) > 0
    assert "no estimate: the estimator does not correct this measure" in out


@pytest.mark.parametrize("measure", ["AP", "nDCG@10", "RBP(p=0.8)@10"])
def test_analyze_cli_one_measure_lipani_skips(capsys, measure):
    """The issue's failure: any measure but P@n alone stopped with 'no measures given'."""
    code, out, err = run_cli(capsys, "analyze", "-m", measure, "--leave-out", "org", "--jobs", "1")
    assert code == 0, err
    assert "lipani" not in out.split("what the columns mean")[0]
    assert err.count("the lipani estimator skips") == 1


# ------------------------------------------------------------------ correct
@pytest.mark.parametrize("measure", PARAMS)
def test_correct_every_family_on_the_sample(sample, measure):
    others = sample.runs[sample.runs["name"] != "o03r1"]  # o03r1: unpooled
    pooled = pooling.infer_pool(others, sample.qrels).pooled(others)
    new = sample.runs[sample.runs["name"] == "o03r1"]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = pbtools.correct(new, (others, sample.qrels, sample.orgs), [measure], n_boot=20)
        low = corrections.correct(new, (pooled, sample.qrels, sample.orgs), [measure])
    lipani = measure in LIPANI
    want = {"reduced", "webber"} | ({"lipani"} if lipani else set())
    for res in (out, low):
        assert set(res["estimator"]) == want and res["value"].notna().all()
        assert (res["measure"] == measure).all()
        assert res.attrs["skipped"] == ({} if lipani else {"lipani": [measure]})
    assert ((out["topic_ci_low"] <= out["value"]) & (out["value"] <= out["topic_ci_high"])).all()
    said = skip_warnings(record)
    assert len(said) == (0 if lipani else 2)  # once per call
    # the estimates agree between the one-liner and the library call
    both = out.merge(low, on=["name", "measure", "estimator"])
    np.testing.assert_allclose(both["value_x"], both["value_y"], atol=1e-12)


def test_correct_cli_every_family_at_once(capsys):
    d = SAMPLE
    argv = ["correct", d / "QRels" / "qrels", d / "Runs", d / "Runs" / "input.o01r1"]
    argv += ["--desc", d / "desc.xml", "--leave-out", "org", "--format", "tsv"]
    code, out, err = run_cli(capsys, *argv, *(f"-m{m}" for m in ALL))
    assert code == 0, err
    assert err.count("the lipani estimator skips") == 1
    from io import StringIO

    res = pd.read_csv(StringIO(out), sep="\t")
    counts = res.groupby("measure")["estimator"].agg(set)
    for m in ALL:
        want = {"true", "reduced", "webber", "condensed"} | ({"lipani"} if m in LIPANI else set())
        assert counts[m] == want
    # P@10 and its condensed list share one condensed score (once failed: arrays of two lengths)
    cond = res[res["estimator"] == "condensed"].set_index("measure")["value"]
    assert cond["P@10"] == cond["P(judged_only=True)@10"]


# ------------------------------------------------------------------ compare
@pytest.mark.parametrize("measure", PARAMS)
def test_compare_every_family_on_the_sample(sample, measure):
    per = measures.evaluate(sample.runs, sample.qrels, [measure], per_topic=True)
    cmp = pbtools.compare(per, baseline="o01r1")
    md = cmp.to_markdown()
    assert measure in md.splitlines()[0]
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert md.count("(baseline)") == 1 and len(rows) == 2 + 12  # header, rule, 12 runs


def test_compare_cli_every_family_at_once(capsys):
    d = SAMPLE
    code, out, err = run_cli(
        capsys, "compare", d / "QRels" / "qrels", d / "Runs", *(f"-m{m}" for m in ALL)
    )
    assert code == 0, err
    header = out.splitlines()[0]
    assert all(m in header for m in ALL)


# ------------------------------------------------------------------ pool --unique
def test_unique_contributions_every_family(sample):
    info = pooling.infer_pool(sample.runs, sample.qrels)
    rep = pooling.unique_contributions(
        sample.runs, sample.qrels, sample.orgs, info.depth, ALL, pooled=info.pooled_runs
    )
    assert set(rep["measure"]) == set(ALL)
    assert rep.groupby("measure").size().eq(rep["org"].nunique()).all()
    assert np.isfinite(rep["mean_diff"]).all()


def test_pool_unique_cli_every_family(capsys):
    code, out, err = run_cli(capsys, "pool", SAMPLE, "--unique", *(f"-m{m}" for m in ALL))
    assert code == 0, err
    body = out.split("unique contributions per organization")[1]
    for m in ALL:
        assert m in body


# ------------------------------------------------------------------ report
@pytest.mark.slow
def test_report_cli_every_family(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    out_file = tmp_path / "r.html"
    code, _out, err = run_cli(
        capsys, "report", *(f"-m{m}" for m in ALL), "--jobs", "1", "-o", out_file
    )
    assert code == 0, err
    assert err.count("the lipani estimator skips") == 1
    page = out_file.read_text()
    for m in ALL:
        assert m in page
    assert "-: the lipani estimator skips" in page


# ------------------------------------------------------------------ TREC-2
@pytest.fixture(scope="module")
def trec2(trec2_tag):
    return trec2_tag  # read once per session (conftest.py)


TREC2_MEASURES = ["P@10", "AP", "nDCG@10", "RBP(p=0.8)@10", "Bpref", "AP(judged_only=True)"]


@pytest.mark.slow
def test_trec2_analyze_several_families(trec2):
    """Several measure families in one analysis of TREC-2's first 10 topics (every run and
    organization; what is checked does not depend on the topic count, and the README's AP
    figure on all 50 topics is tests/test_docs.py's headline test)."""
    first = sorted(trec2.qrels["qid"].astype(str).unique())[:10]
    runs = trec2.runs[trec2.runs["qid"].astype(str).isin(first)]
    qrels = trec2.qrels[trec2.qrels["qid"].astype(str).isin(first)]
    frames = (runs, qrels, trec2.orgs)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        a = analyze(
            frames, measures=TREC2_MEASURES, leave_out=["org"], run_sets=["all"], progress=False
        )
    assert len(skip_warnings(record)) == 1
    assert a.params["skipped"] == {"lipani": TREC2_MEASURES[1:]}
    e = a.errors
    assert len(e) == 2 * len(TREC2_MEASURES) + 1  # reduced, webber; lipani at P@10 only
    assert e["mae"].notna().all()
    assert set(e.loc[e["estimator"] == "lipani", "measure"]) == {"P@10"}
    # Webber & Park lowers the error of the reduced pool at AP (README, all topics: by 39 %)
    mae = e.set_index(["measure", "estimator"])["mae"]
    assert mae["AP", "webber"] < mae["AP", "reduced"]
    report = text_report(a)
    assert "Lipani et al." in report.split("At AP")[0]
    from pbtools.experiments.report import summary_text

    for paragraph in summary_text(a).splitlines():  # the last measure's sentence: no Lipani number
        last = paragraph.split("At ")[-1]
        assert re.search(r"Lipani et al\.(?! gives no estimate)", last) is None


@pytest.mark.slow
def test_trec2_correct_compare_unique_several_families(trec2):
    info = pooling.infer_pool(trec2.runs, trec2.qrels)
    new = trec2.runs[trec2.runs["name"] == "rutfmed"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedMeasuresWarning)
        res = corrections.correct(new, (info.pooled(trec2.runs), trec2.qrels), TREC2_MEASURES)
    got = res.groupby("measure")["estimator"].agg(set)
    for m in TREC2_MEASURES:
        assert got[m] == ({"reduced", "webber", "lipani"} if m == "P@10" else {"reduced", "webber"})
    assert res["value"].notna().all()
    sub = trec2.runs[trec2.runs["name"].isin(["Brkly3", "citymf", "rutfmed"])]
    # rutfmed answers 24 topics: the paired tests need all 50 (-c)
    per = measures.evaluate(sub, trec2.qrels, TREC2_MEASURES, per_topic=True, topics="all")
    md = pbtools.compare(per, baseline="Brkly3").to_markdown()
    assert all(m in md.splitlines()[0] for m in TREC2_MEASURES)
    rep = pooling.unique_contributions(
        trec2.runs, trec2.qrels, trec2.orgs, info.depth, TREC2_MEASURES, pooled=info.pooled_runs
    )
    assert set(rep["measure"]) == set(TREC2_MEASURES) and np.isfinite(rep["mean_diff"]).all()
