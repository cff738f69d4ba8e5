"""pbtools.compare and ``pbtools compare``: paired tests against scipy, corrections against
statsmodels, alignment on qid, tables with significance marks, the command line."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import pbtools
from pbtools import io, synth
from pbtools import measures as m
from pbtools.cli import main
from pbtools.stats import p_adjust, tukey_hsd

multitest = pytest.importorskip("statsmodels.stats.multitest")


def per_topic_frame(values: dict[str, list[float]], measure: str = "AP") -> pd.DataFrame:
    """Runs → per-topic scores on topics q01, q02, …"""
    rows = [
        (name, f"q{i + 1:02d}", measure, v)
        for name, vals in values.items()
        for i, v in enumerate(vals)
    ]
    return pd.DataFrame(rows, columns=["name", "qid", "measure", "value"])


@pytest.fixture(scope="module")
def synthetic():
    """Per-topic P@10 and AP of 6 synthetic runs on 30 topics (every topic scored)."""
    c = synth.generate(topics=30, docs=300, runs=6, orgs=3, run_length=100, depth=20, seed=3)
    per = m.evaluate(c.runs, c.truth, ["P@10", "AP"], per_topic=True, topics="all")
    return c, per


def _matrix(per, measure):
    one = per[per["measure"].astype(str) == measure]
    return one.pivot(index="name", columns="qid", values="value")


# --------------------------------------------------------------------------- against scipy


def test_baseline_tests_match_scipy(synthetic):
    _, per = synthetic
    cmp = pbtools.compare(per, baseline="o01r1", seed=1)
    assert set(cmp.tests["test"]) == {"t", "wilcoxon", "randomisation"}
    for measure in ("P@10", "AP"):
        x = _matrix(per, measure)
        base = x.loc["o01r1"].to_numpy()
        rows = cmp.tests[cmp.tests["measure"] == measure]
        assert sorted(rows["name_a"].unique()) == sorted(set(x.index) - {"o01r1"})
        assert (rows["name_b"] == "o01r1").all()
        for r in rows.itertuples():
            run = x.loc[r.name_a].to_numpy()
            assert r.diff == pytest.approx(run.mean() - base.mean(), abs=1e-12)
            if r.test == "t":
                ref = scipy.stats.ttest_rel(run, base)
                assert r.statistic == pytest.approx(ref.statistic, rel=1e-10)
                assert r.p_value == pytest.approx(ref.pvalue, rel=1e-9)
            elif r.test == "wilcoxon":
                ref = scipy.stats.wilcoxon(run, base)
                assert r.statistic == pytest.approx(ref.statistic)
                assert r.p_value == pytest.approx(ref.pvalue, rel=1e-9)
        for _, grp in rows.groupby("test"):
            ref = multitest.multipletests(grp["p_value"], method="holm")[1]
            np.testing.assert_allclose(grp["p_corrected"], ref, rtol=1e-12)
            assert (grp["reject"] == (grp["p_corrected"] < 0.05)).all()


def test_summary_means_intervals_and_wins(synthetic):
    _, per = synthetic
    cmp = pbtools.compare(per, baseline="o02r1", tests=["t"], alpha=0.1)
    s = cmp.summary
    expected = "measure name label n_topics mean ci_low ci_high diff wins ties losses"
    assert list(s.columns) == expected.split()
    assert s[s["measure"] == "AP"]["name"].iloc[0] == "o02r1"  # the baseline is run a
    assert s[s["measure"] == "AP"]["label"].tolist() == list("abcdef")
    for r in s.itertuples():
        v = _matrix(per, r.measure).loc[r.name].to_numpy()
        b = _matrix(per, r.measure).loc["o02r1"].to_numpy()
        lo, hi = scipy.stats.t.interval(0.9, len(v) - 1, loc=v.mean(), scale=scipy.stats.sem(v))
        assert (r.mean, r.ci_low, r.ci_high) == pytest.approx((v.mean(), lo, hi), abs=1e-12)
        assert r.n_topics == 30 and r.diff == pytest.approx(v.mean() - b.mean())
        assert (r.wins, r.ties, r.losses) == ((v > b).sum(), (v == b).sum(), (v < b).sum())


def test_all_pairs_adds_tukey_and_corrects_over_all_pairs(synthetic):
    _, per = synthetic
    cmp = pbtools.compare(per, tests=("t",), correction="bonferroni")
    assert set(cmp.tests["test"]) == {"t", "tukey"}
    ap = cmp.tests[cmp.tests["measure"] == "AP"]
    pairs = list(itertools.combinations(sorted(per["name"].astype(str).unique()), 2))
    t_rows = ap[ap["test"] == "t"]
    assert list(zip(t_rows["name_a"], t_rows["name_b"], strict=True)) == pairs
    np.testing.assert_allclose(
        t_rows["p_corrected"], np.minimum(t_rows["p_value"] * len(pairs), 1.0), rtol=1e-12
    )
    hsd = tukey_hsd(per[per["measure"].astype(str) == "AP"])
    tk = ap[ap["test"] == "tukey"]
    np.testing.assert_allclose(tk["p_value"], hsd["p_value"], rtol=1e-12)
    np.testing.assert_allclose(tk["statistic"], hsd["q"], rtol=1e-12)
    assert (tk["p_corrected"] == tk["p_value"]).all() and (tk["correction"] == "tukey").all()
    assert cmp.summary["diff"].isna().all() and cmp.summary["wins"].isna().all()


def test_randomisation_is_seeded_and_close_to_the_exact_test():
    rng = np.random.default_rng(0)
    base = rng.random(10)
    per = per_topic_frame({"base": base, "up": base + rng.normal(0.08, 0.1, 10)})
    a = pbtools.compare(per, baseline="base", tests=["randomisation"], B=20_000, seed=5)
    b = pbtools.compare(per, baseline="base", tests=["randomization"], B=20_000, seed=5)
    c = pbtools.compare(per, baseline="base", tests=["randomisation"], B=20_000, seed=6)
    pd.testing.assert_frame_equal(a.tests, b.tests)
    assert a.tests["p_value"].item() != c.tests["p_value"].item()
    z = per[per["name"] == "up"]["value"].to_numpy() - base
    # exact sign-flip test: all 2^10 sign vectors
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=10)))
    exact = np.mean(np.abs(signs @ z) >= np.abs(z.sum()) - 1e-12)
    assert a.tests["p_value"].item() == pytest.approx(exact, abs=0.01)
    assert a.tests["statistic"].item() == pytest.approx(z.mean())


# --------------------------------------------------------------------------- corrections


@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh"])
def test_p_adjust_matches_statsmodels(method, monkeypatch):
    import gc

    # statsmodels runs gc.collect() in every Holm call, which costs ~0.3 s in a test process
    # holding the suite's objects: switched off here, it changes no number
    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    rng = np.random.default_rng(11)
    cases = [rng.random(n) ** rng.uniform(0.2, 5) for n in rng.integers(1, 60, 20)]
    cases += [np.round(rng.random(30), 1), np.zeros(5), np.ones(4), np.array([0.0, 1.0, 0.5])]
    for p in cases:
        ref = multitest.multipletests(p, method={"bh": "fdr_bh"}.get(method, method))[1]
        np.testing.assert_allclose(p_adjust(p, method), ref, rtol=1e-12, atol=1e-15)


def test_p_adjust_nan_ties_and_errors():
    p = np.array([0.01, np.nan, 0.01, 0.5, 0.03])
    ok = ~np.isnan(p)
    for method, sm in (("holm", "holm"), ("fdr_bh", "fdr_bh"), ("Bonferroni", "bonferroni")):
        out = p_adjust(p, method)
        assert np.isnan(out[1])
        np.testing.assert_allclose(out[ok], multitest.multipletests(p[ok], method=sm)[1])
    np.testing.assert_array_equal(p_adjust(p, None)[ok], p[ok])
    with pytest.raises(ValueError, match="correction must be one of"):
        p_adjust(p, "sidak")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        p_adjust([0.5, 1.5])


# --------------------------------------------------------------------------- alignment, errors


def test_paired_tests_align_on_qid_not_on_row_order():
    rng = np.random.default_rng(1)
    per = per_topic_frame({"a": rng.random(8), "b": rng.random(8)})
    shuffled = per.sample(frac=1.0, random_state=3)
    one = pbtools.compare(per, baseline="a", tests=["t"])
    two = pbtools.compare(shuffled, baseline="a", tests=["t"])
    pd.testing.assert_frame_equal(one.tests, two.tests)


def test_a_run_lacking_topics_is_refused_naming_run_and_topics():
    per = per_topic_frame({"a": [0.1, 0.2, 0.3, 0.4], "b": [0.2, 0.3, 0.4, 0.5]})
    per = per[~((per["name"] == "b") & per["qid"].isin(["q02", "q04"]))]
    with pytest.raises(ValueError, match=r"AP: .*b lacks \['q02', 'q04'\].*topics='all'"):
        pbtools.compare(per, baseline="a")


def test_bad_arguments_are_refused():
    per = per_topic_frame({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.3, 0.5]})
    with pytest.raises(ValueError, match="baseline 'zz' is not among the runs"):
        pbtools.compare(per, baseline="zz")
    with pytest.raises(ValueError, match="unknown test"):
        pbtools.compare(per, tests=["sign"])
    with pytest.raises(ValueError, match="alpha"):
        pbtools.compare(per, alpha=1.5)
    with pytest.raises(ValueError, match="correction"):
        pbtools.compare(per, correction="fdr_by")
    with pytest.raises(ValueError, match="at least 2 topics"):
        pbtools.compare(per[per["qid"] == "q01"], baseline="a")


def test_all_rows_of_evaluate_per_topic_output_are_ignored():
    per = per_topic_frame({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.3, 0.5]})
    avg = per.groupby(["name", "measure"], as_index=False)["value"].mean().assign(qid="all")
    with_all = pd.concat([per, avg], ignore_index=True)
    pd.testing.assert_frame_equal(
        pbtools.compare(with_all, baseline="a").tests, pbtools.compare(per, baseline="a").tests
    )


# --------------------------------------------------------------------------- renderings


def test_markdown_marks_follow_ranx_conventions():
    # c is far better than a and b on every topic; a and b are indistinguishable
    rng = np.random.default_rng(2)
    a = rng.random(20) * 0.3
    per = per_topic_frame({"a": a, "b": a + rng.normal(0, 0.01, 20), "c": a + 0.5})
    cmp = pbtools.compare(per, tests=["t"])
    md = cmp.to_markdown()
    lines = md.splitlines()
    assert lines[0] == "| # | run | AP |"
    row_c = next(ln for ln in lines if ln.startswith("| c | c |"))
    assert row_c.endswith("**" + f"{per[per['name'] == 'c']['value'].mean():.4f}" + "**ᵃᵇ |")
    for label in ("a", "b"):
        row = next(ln for ln in lines if ln.startswith(f"| {label} | {label} |"))
        assert not any(ch in row for ch in "ᵃᵇᶜ")
    assert "Tukey's HSD test, p < 0.05, 20 topics" in md.replace("\n", " ")
    # the t-test's marks instead of Tukey's, and intervals
    md_t = cmp.to_markdown(test="t", ci=True)
    assert "paired t-test, Holm-corrected p < 0.05" in md_t.replace("\n", " ")
    assert "95% t confidence interval" in md_t.replace("\n", " ")
    with pytest.raises(ValueError, match="was not run"):
        cmp.to_markdown(test="wilcoxon")


def test_latex_table_is_balanced_and_escaped():
    rng = np.random.default_rng(4)
    a = rng.random(15) * 0.3
    per = per_topic_frame({"bm25_rm3": a, "dense&co": a + 0.4}, measure="nDCG_cut_10")
    tex = pbtools.compare(per, baseline="bm25_rm3").to_latex()
    assert tex.count(r"\begin{") == tex.count(r"\end{") == 2
    assert tex.count("{") == tex.count("}")
    assert r"bm25\_rm3 (baseline)" in tex and r"dense\&co" in tex and r"nDCG\_cut\_10" in tex
    assert r"\textbf{" in tex and "$^{a}$" in tex and r"\hphantom{$^{b}$}" in tex
    assert r"\caption{" in tex and "Holm-corrected $p < 0.05$" in tex
    bare = pbtools.compare(per, baseline="bm25_rm3").to_latex(caption=False)
    assert bare.startswith(r"\begin{tabular}") and r"\caption" not in bare


def test_many_runs_get_two_letter_labels():
    rng = np.random.default_rng(5)
    per = per_topic_frame({f"r{i:02d}": rng.random(6) for i in range(28)})
    cmp = pbtools.compare(per, tests=["t"], correction="none")
    assert cmp.summary["label"].tolist()[-2:] == ["aa", "ab"]
    assert "| ab | r27 |" in cmp.to_markdown()


# --------------------------------------------------------------------------- command line


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def synth_track(tmp_path_factory, synthetic):
    c, _ = synthetic
    root = tmp_path_factory.mktemp("synth")
    c.write(root / "S")
    return root / "S"


def test_cli_compare_markdown_with_baseline(capsys, synth_track, synthetic):
    _, per = synthetic
    q, runs = synth_track / "QRels" / "qrels", synth_track / "Runs"
    code, out, _ = run_cli(capsys, "compare", q, runs, "--baseline", "o01r1", "-m", "AP", "-c")
    assert code == 0
    assert out.startswith("| # | run | AP |")
    assert "| a | o01r1 (baseline) |" in out
    assert "| measure | run | vs | test | diff | p | p (Holm) | significant |" in out


def test_cli_compare_tsv_and_parquet_carry_everything(capsys, tmp_path, synth_track):
    q, runs = synth_track / "QRels" / "qrels", synth_track / "Runs"
    args = ["compare", q, runs, "-m", "P@10", "-c", "--test", "t", "--seed", "3"]
    code, out, _ = run_cli(capsys, *args, "--format", "tsv")
    assert code == 0
    tsv = pd.read_csv(pd.io.common.StringIO(out), sep="\t")
    assert set(tsv["test"]) == {"t", "tukey"} and len(tsv) == 2 * 15
    pq = tmp_path / "cmp.parquet"
    code, _, _ = run_cli(capsys, *args, "--format", "parquet", "-o", pq)
    assert code == 0
    back = io.read_parquet(pq)
    meta = back.attrs["metadata"]
    assert meta["command"] == "compare" and meta["parameters"]["seed"] == 3
    assert meta["pbtools_version"] == pbtools.__version__
    assert len(meta["inputs"]) == 1 + 6  # the qrels and six runs, each with its SHA-256
    assert list(meta["summary"]["name"])[:2] == ["o01r1", "o01r2"]
    np.testing.assert_allclose(back["p_value"], tsv["p_value"], rtol=1e-12)


def test_cli_compare_latex(capsys, synth_track):
    q, runs = synth_track / "QRels" / "qrels", synth_track / "Runs"
    code, out, _ = run_cli(capsys, "compare", q, runs, "-m", "AP", "-c", "--format", "latex")
    assert code == 0 and out.startswith(r"\begin{table}") and "Tukey's HSD test" in out


def test_cli_compare_refusals_exit_2(capsys, tmp_path, synth_track):
    q, runs = synth_track / "QRels" / "qrels", synth_track / "Runs"
    cases = [
        (["--baseline", "nope"], "--baseline 'nope' is not among the runs"),
        (["--alpha", "0"], "--alpha must be in (0, 1)"),
        (["--format", "parquet"], "needs -o FILE"),
        (["-o", tmp_path / "missing" / "x.md"], "does not exist"),
    ]
    for extra, message in cases:
        code, _, err = run_cli(capsys, "compare", q, runs, "-m", "AP", *extra)
        assert code == 2 and message in err, (extra, err)


def test_cli_compare_names_runs_lacking_topics(capsys, tmp_path, synth_track):
    q = synth_track / "QRels" / "qrels"
    run = io.read_run(synth_track / "Runs" / "input.o01r1")
    io.to_trec(run[run["qid"].astype(str) != "001"], tmp_path / "input.short")
    code, _, err = run_cli(
        capsys, "compare", q, synth_track / "Runs" / "input.o01r2", tmp_path / "input.short"
    )
    assert code == 2 and "o01r1 lacks ['001']" in err and "--all-topics" in err
