"""SRE*'s significance tests on the topics of the ranking they check, the reference tool's
p-values files, and the tie rule of the top-75 % cut (issue 24, item 6)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from pbtools import io, measures, stats
from pbtools.cli import main
from pbtools.experiments.analysis import SAMPLE, analyze
from pbtools.pooling import TopTieWarning, infer_pool, top_fraction
from pbtools.stats.significance import COMPACT_COLUMNS as COMPACT
from pbtools.stats.significance import PValuesWarning, pvalue_significance, read_pvalues

# a, b answer topics 1-4; c only 1-2 (its average, 0.8, is over those two)
TRUTH = pd.DataFrame(
    {
        "name": list("aaaabbbbcccc"),
        "qid": list("1234") * 3,
        "value": [0.6, 0.5, 0.7, 0.6, 0.3, 0.25, 0.35, 0.3, 0.8, 0.8, 0.0, 0.0],
        "ranked": [True] * 10 + [False] * 2,
    }
)


@pytest.mark.parametrize("test", ["hsd", "t"])
def test_unanswered_topics_are_not_zeros(test):
    """c (0.8 on its 2 topics) is above a (0.6): with its unanswered topics scored 0 its mean
    would fall to 0.4 and the test would weigh a difference the ranking does not have."""
    sig = stats.pair_significance(TRUTH, test).set_index(["name_a", "name_b"])
    filled = stats.pair_significance(TRUTH.drop(columns="ranked"), test)
    filled = filled.set_index(["name_a", "name_b"])
    assert sig.loc[("a", "c"), "diff"] == pytest.approx(0.6 - 0.8 if test == "hsd" else 0.55 - 0.8)
    assert filled.loc[("a", "c"), "diff"] == pytest.approx(0.6 - 0.4)
    assert sig.loc[("a", "b"), "diff"] == pytest.approx(0.3)
    assert bool(sig.loc[("a", "b"), "reject"])


def test_paired_t_uses_the_topics_both_runs_have():
    from scipy import stats as sps

    sig = stats.pair_significance(TRUTH, "t").set_index(["name_a", "name_b"])
    want = sps.ttest_rel([0.6, 0.5], [0.8, 0.8])
    assert sig.loc[("a", "c"), "p_value"] == pytest.approx(want.pvalue, rel=1e-12)
    want = sps.ttest_rel([0.6, 0.5, 0.7, 0.6], [0.3, 0.25, 0.35, 0.3])
    assert sig.loc[("a", "b"), "p_value"] == pytest.approx(want.pvalue, rel=1e-12)


def test_unbalanced_hsd_is_the_least_squares_two_way_model():
    """MSE and df of the additive model fitted by statsmodels on the cells present; the pair's
    standard error Tukey-Kramer's; balanced data: the same test as before, to the bit."""
    smf = pytest.importorskip("statsmodels.formula.api")
    rng = np.random.default_rng(3)
    full = pd.DataFrame(
        {"name": np.repeat(list("abcde"), 8), "qid": np.tile(list("12345678"), 5)}
    ).assign(value=rng.random(40))
    part = full.drop(index=[4, 5, 6, 7, 20, 31])  # a lacks 4 topics, c 1, d 1
    res = stats.tukey_hsd(part, unbalanced=True)
    fit = smf.ols("value ~ C(name) + C(qid)", data=part).fit()
    assert res.attrs["mse"] == pytest.approx(fit.mse_resid, rel=1e-10)
    assert res.attrs["df_resid"] == fit.df_resid == 34 - 5 - 8 + 1
    n = part.groupby("name").size()
    means = part.groupby("name")["value"].mean()
    row = res[(res["name_a"] == "a") & (res["name_b"] == "b")].iloc[0]
    se = np.sqrt(fit.mse_resid / 2 * (1 / n["a"] + 1 / n["b"]))
    assert row["diff"] == pytest.approx(means["a"] - means["b"], abs=1e-15)
    assert row["q"] == pytest.approx(abs(means["a"] - means["b"]) / se, rel=1e-10)
    pd.testing.assert_frame_equal(stats.tukey_hsd(full, unbalanced=True), stats.tukey_hsd(full))
    with pytest.raises(ValueError, match="unbalanced design"):
        stats.tukey_hsd(part)


# --------------------------------------------------------------------------------------------
# the reference tool's p-values files
# --------------------------------------------------------------------------------------------


def test_read_pvalues(tmp_path):
    f = tmp_path / "pValues.P_10.csv"
    f.write_text("runA,runB,p\ninput.x,input.y,0.01\ny,z,1e-3\n\n")
    assert read_pvalues(f).values.tolist() == [["x", "y", 0.01], ["y", "z", 0.001]]
    f.write_text("x,y,0.01\nx;z;0.2\n")
    with pytest.raises(ValueError, match=r"pValues.P_10.csv, line 2: expected 'runA,runB,p'"):
        read_pvalues(f)
    f.write_text("x,y,1.5\n")
    with pytest.raises(ValueError, match="line 1: p-value 1.5"):
        read_pvalues(f)


def test_missing_pair_is_not_significant(tmp_path):
    (tmp_path / "pValues.P_10.csv").write_text("A,B,0.001\n")  # matched in lower case
    truth = TRUTH.assign(measure="P@10")
    with pytest.warns(PValuesWarning, match="2 of 3 pairs of runs absent"):
        sig = pvalue_significance(truth, tmp_path)
    assert sig["reject"].tolist() == [True, False, False]
    # b's estimate passes a (a significant pair), c's falls below a (not significant)
    frame = pd.DataFrame(
        {"name": list("abc"), "true": [0.6, 0.3, 0.8], "estimate": [0.6, 0.65, 0.5]}
    )
    assert stats.sre(frame)["sre"].tolist() == [2]
    assert stats.sre_star(frame, sig.drop(columns="measure"))["sre_star"].tolist() == [1]


def test_sre_significance_refuses_an_unknown_test():
    with pytest.raises(ValueError, match="neither a test"):
        stats.sre_significance(TRUTH.assign(measure="P@10"), "tukey")


@pytest.fixture(scope="module")
def sample_pvalues(tmp_path_factory):
    """A p-values file for P@10 on the bundled sample: every pair significant but one."""
    d = tmp_path_factory.mktemp("pv")
    col = io.read_collection(SAMPLE)
    names = sorted(infer_pool(col.runs, col.qrels).pooled_runs)
    lines = [f"input.{a},input.{b},0.001" for i, a in enumerate(names) for b in names[i + 1 :]]
    (d / "pValues.P_10.csv").write_text("\n".join(lines[1:]) + "\n")
    return d, names


def test_analyze_with_pvalues_files(sample_pvalues):
    d, _names = sample_pvalues
    kw = dict(measures=("P@10",), leave_out=("org",), run_sets=("all",), progress=False)
    with pytest.warns(PValuesWarning, match="1 of"):
        a = analyze(SAMPLE, sre_test=d, **kw)
    assert a.params["sre_test"] == str(d)
    # every pair but one significant: SRE* is SRE less the reversals of that pair
    assert (a.errors["sre_star"] <= a.errors["sre"]).all()
    assert (a.errors["sre"] - a.errors["sre_star"]).max() <= 2
    t = analyze(SAMPLE, sre_test="t", **kw)
    assert t.params["sre_test"] == "t"
    # the t-test's p-values (the analysis keeps the compact table: no 'statistic' column)
    want = stats.pair_significance(t.truth, "t", ["runs", "measure"])
    np.testing.assert_array_equal(t.significance["p_value"], want["p_value"])
    assert list(t.significance.columns) == ["runs", "measure", *COMPACT]


def test_cli_sre_options(sample_pvalues, capsys):
    d, _ = sample_pvalues
    base = ["analyze", "-m", "P@10", "--run-sets", "all", "--leave-out", "org", "--no-progress"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PValuesWarning)
        assert main([*base, "--sre-pvalues", str(d)]) == 0
    assert main([*base, "--sre-pvalues", str(d / "pValues.P_10.csv")]) == 0
    capsys.readouterr()
    assert main([*base, "-m", "P@5", "--sre-pvalues", str(d)]) == 2
    assert "pValues.P_5.csv" in capsys.readouterr().err
    assert main([*base, "--sre-test", "t", "--sre-pvalues", str(d)]) == 2
    assert main([*base, "--sre-test", "bonferroni"]) == 2


# --------------------------------------------------------------------------------------------
# a tie at the top-75 % cut
# --------------------------------------------------------------------------------------------


def test_top_fraction_tie_rules():
    s = pd.DataFrame(
        {"name": list("abcdef"), "measure": "P@5", "value": [0.6, 0.5, 0.4, 0.4, 0.4, 0.1]}
    )
    got = {}
    for rule in ("order", "include", "exclude"):
        with pytest.warns(TopTieWarning, match=r"cut after 4 of 6 runs falls inside a tie"):
            out = top_fraction(s, ties=rule)
        got[rule] = out["name"].tolist()
        (tie,) = out.attrs["ties"]
        assert tie["tied"] == ["c", "d", "e"] and tie["rule"] == rule and tie["cut"] == 4
    assert got == {
        "order": ["a", "b", "c", "d"],
        "include": ["a", "b", "c", "d", "e"],
        "exclude": ["a", "b"],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no tie across the cut: no warning
        assert top_fraction(s.assign(value=[0.6, 0.5, 0.4, 0.3, 0.2, 0.2])).attrs["ties"] == []
    with pytest.raises(ValueError, match="ties must be one of"):
        top_fraction(s, ties="random")


def test_analyze_reports_a_tie_at_the_cut():
    """The sample with the 8th best pooled run on P@10 duplicated (same organization): 11
    pooled runs, a cut after 8 that falls between the twins."""
    col = io.read_collection(SAMPLE)
    runs, qrels, orgs = col.runs, col.qrels, col.orgs
    pooled = infer_pool(runs, qrels).pooled_runs
    avg = measures.evaluate(runs[runs["name"].isin(pooled)], qrels, ["P@10"])
    avg = avg.assign(value=measures.round_half_up(avg["value"].to_numpy(), 4))
    avg = avg.sort_values(["value", "name"], ascending=[False, True], kind="stable")
    eighth, ninth = avg["value"].iloc[7], avg["value"].iloc[8]
    assert eighth != ninth  # the twins make the tie; no other run is in it
    x = str(avg["name"].iloc[7])
    twin = runs[runs["name"] == x].assign(name=x + "z")
    runs2 = pd.concat([runs, twin], ignore_index=True)
    org = orgs.loc[orgs["name"] == x, "org"].iloc[0]
    orgs2 = pd.concat([orgs, pd.DataFrame({"name": [x + "z"], "org": [org]})], ignore_index=True)
    kw = dict(measures=("P@10",), leave_out=("org",), run_sets=("top75",), progress=False)
    n_runs = {}
    for rule in ("order", "include", "exclude"):
        with pytest.warns(TopTieWarning, match=f"{x}, {x}z"):
            a = analyze((runs2, qrels, orgs2), top_ties=rule, **kw)
        (tie,) = a.params["top75_ties"]
        assert tie["tied"] == [x, x + "z"] and tie["rule"] == rule and tie["n"] == 11
        n_runs[rule] = a.scores["name"].nunique()
        assert a.params["top_ties"] == rule
    assert n_runs == {"order": 8, "include": 9, "exclude": 7}
