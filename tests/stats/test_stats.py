"""Tests for pbtools.stats: hand-checked small cases, independent re-computations (scipy,
statsmodels, brute-force loops) and hypothesis properties."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from pbtools import stats as S


def per_topic(matrix, names=None, measure="AP") -> pd.DataFrame:
    """Tidy per-topic frame from a runs × topics list/array."""
    x = np.asarray(matrix, dtype=float)
    names = names or [f"r{i}" for i in range(x.shape[0])]
    qids = [f"q{j:03d}" for j in range(x.shape[1])]  # string order = column order
    return pd.DataFrame(
        {
            "name": np.repeat(names, x.shape[1]),
            "qid": np.tile(qids, x.shape[0]),
            "measure": measure,
            "value": x.ravel(),
        }
    )


def synthetic(k=8, t=15, seed=3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 0.5, k)[:, None] + rng.normal(0, 0.1, t)[None, :]
    return np.clip(x + rng.normal(0, 0.08, (k, t)), 0, 1)


def brute_sre(true, est, sig=None):
    """Literal PROTOCOL items 16/17, one run at a time."""
    total = star = 0
    n = len(true)
    for i in range(n):
        others = [j for j in range(n) if j != i]
        o = 1 + sum(true[j] > true[i] for j in others)
        r = 1 + sum(true[j] > est[i] for j in others)
        total += abs(o - r)
        lo, hi = min(true[i], est[i]), max(true[i], est[i])
        star += sum(lo < true[j] <= hi and (sig is None or sig[i][j]) for j in others)
    return total, star


# --------------------------------------------------------------------------- input validation


def test_unbalanced_design_names_runs_and_topics():
    df = per_topic([[0.1, 0.2, 0.3], [0.2, 0.3, 0.4]]).iloc[:-1]  # r1 lacks q2
    with pytest.raises(ValueError, match=r"r1 lacks \['q002'\]"):
        S.tukey_hsd(df)
    with pytest.raises(ValueError, match="unbalanced"):
        S.discriminative_power(df)


def test_bad_inputs():
    df = per_topic([[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(ValueError, match="at least 2 runs"):
        S.tukey_hsd(df[df.name == "r0"])
    with pytest.raises(ValueError, match="lacks column"):
        S.tukey_hsd(df.drop(columns="qid"))
    with pytest.raises(ValueError, match="duplicate"):
        S.tukey_hsd(pd.concat([df, df.iloc[:1]]))
    two = pd.concat([df, df.assign(measure="P@10")])
    with pytest.raises(ValueError, match="several measures"):
        S.tukey_hsd(two)
    assert len(S.tukey_hsd(two, measure="P@10")) == 1
    with pytest.raises(ValueError, match="lacks column"):
        S.sre(pd.DataFrame({"name": ["a"], "true": [1.0]}))


# --------------------------------------------------------------------------- Tukey HSD


def test_studentized_range_sf_matches_scipy():
    q = np.linspace(0, 8, 9)
    for k, df in [(2, 2), (3, 5), (6, 40), (38, 1813)]:
        ours = S.studentized_range_sf(q, k, df)
        np.testing.assert_allclose(ours, scipy.stats.studentized_range.sf(q, k, df), atol=1e-8)
    assert S.studentized_range_isf(0.05, 3, 10) == pytest.approx(
        scipy.stats.studentized_range.ppf(0.95, 3, 10), abs=1e-8
    )


def test_tukey_two_way_by_hand():
    # A=[.1,.3] B=[.2,.6] C=[.3,.3]; run means .2 .4 .3, topic means .2 .4, grand .3
    # residuals x - m_r - m_q + m: A 0,0; B -.1,.1; C .1,-.1 -> SSE .04, df (3-1)(2-1)=2
    # MSE .02, se = sqrt(.02/2) = .1; A-B: diff -.2, q 2; A-C: -.1, q 1; B-C: .1, q 1
    h = S.tukey_hsd(per_topic([[0.1, 0.3], [0.2, 0.6], [0.3, 0.3]], names=["A", "B", "C"]))
    assert list(zip(h.name_a, h.name_b, strict=True)) == [("A", "B"), ("A", "C"), ("B", "C")]
    np.testing.assert_allclose(h["diff"], [-0.2, -0.1, 0.1], atol=1e-12)
    np.testing.assert_allclose(h["q"], [2.0, 1.0, 1.0], atol=1e-9)
    assert h.attrs["mse"] == pytest.approx(0.02) and h.attrs["df_resid"] == 2
    np.testing.assert_allclose(
        h["p_value"], scipy.stats.studentized_range.sf([2, 1, 1], 3, 2), atol=1e-8
    )
    assert not h["reject"].any()


def test_tukey_two_way_matches_ols_residuals():
    import statsmodels.formula.api as smf

    x = synthetic(k=5, t=12)
    df = per_topic(x)
    fit = smf.ols("value ~ C(name) + C(qid)", data=df.astype({"name": object, "qid": object})).fit()
    mse, dfr = fit.ssr / fit.df_resid, fit.df_resid
    h = S.tukey_hsd(df)
    assert h.attrs["mse"] == pytest.approx(mse, rel=1e-10) and h.attrs["df_resid"] == dfr
    means = x.mean(axis=1)
    pairs = list(itertools.combinations(range(5), 2))
    diff = np.array([means[a] - means[b] for a, b in pairs])
    q = np.abs(diff) / np.sqrt(mse / 12)
    np.testing.assert_allclose(h["diff"], diff, atol=1e-12)
    np.testing.assert_allclose(h["q"], q, rtol=1e-10)
    np.testing.assert_allclose(h["p_value"], scipy.stats.studentized_range.sf(q, 5, dfr), atol=1e-8)
    assert h["reject"].tolist() == (scipy.stats.studentized_range.sf(q, 5, dfr) < 0.05).tolist()
    assert h["reject"].any() and not h["reject"].all()


def test_tukey_one_way_matches_statsmodels():
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    x = synthetic(k=5, t=10, seed=11)
    df = per_topic(x)
    ref = pairwise_tukeyhsd(df["value"].to_numpy(), df["name"].to_numpy(dtype=object))
    h = S.tukey_hsd(df, two_way=False)
    # statsmodels: meandiff = mean(group2) - mean(group1); ours diff = mean_a - mean_b
    np.testing.assert_allclose(h["diff"], -ref.meandiffs, atol=1e-12)
    np.testing.assert_allclose(h["p_value"], ref.pvalues, atol=1e-6)
    assert h["reject"].tolist() == list(ref.reject)
    np.testing.assert_allclose(h["upper"], -ref.confint[:, 0], atol=1e-8)


def test_tukey_hsd_groups_by_keys():
    df = pd.concat(
        [per_topic(synthetic(4, 6, 1)).assign(n=5), per_topic(synthetic(4, 6, 2)).assign(n=10)]
    )
    out = S.tukey_hsd(df, by=["n"])
    assert out.columns[0] == "n" and len(out) == 12
    solo = S.tukey_hsd(df[df.n == 10])
    np.testing.assert_allclose(out[out.n == 10]["p_value"], solo["p_value"])


# --------------------------------------------------------------------------- MAE / SRE / SRE*


def test_mae_run_level_and_per_topic():
    # run a: true (.2, .4) mean .3, est (.3, .3) mean .3 -> run error 0, topic errors .1 .1
    # run b: true (.5, .5) mean .5, est (.4, .2) mean .3 -> run error .2, topic errors .1 .3
    f = pd.DataFrame(
        {
            "name": list("aabb"),
            "qid": ["1", "2"] * 2,
            "true": [0.2, 0.4, 0.5, 0.5],
            "estimate": [0.3, 0.3, 0.4, 0.2],
        }
    )
    assert S.mae(f)["mae"].item() == pytest.approx(0.1)  # (0 + .2) / 2
    assert S.mae(f, per_topic=True)["mae"].item() == pytest.approx(0.15)  # (.1+.1+.1+.3)/4


def test_sre_and_sre_star_by_hand():
    # true: A .5 B .4 C .3 D .2; estimates: A .35 (falls between B and C), D .45 (rises above B)
    # A: oR 1, nR 1+#{B}=2 -> 1 (crosses B);  D: oR 4, nR 1+#{A}=2 -> 2 (crosses B, C)
    # B, C exact -> 0. SRE = 3. With only (A,B) significant: SRE* = 1 (A over B) + 0 = 1.
    f = pd.DataFrame(
        {
            "name": list("ABCD"),
            "true": [0.5, 0.4, 0.3, 0.2],
            "estimate": [0.35, 0.4, 0.3, 0.45],
            "estimator": "x",
        }
    )
    assert S.sre(f)["sre"].item() == 3
    sig = pd.DataFrame(
        {
            "name_a": ["A", "A", "A", "B", "B", "C"],
            "name_b": ["B", "C", "D", "C", "D", "D"],
            "reject": [True, False, False, False, False, False],
        }
    )
    assert S.sre_star(f, sig)["sre_star"].item() == 1
    sig.loc[4, "reject"] = True  # (B, D): D's rise over B is now significant too
    assert S.sre_star(f, sig)["sre_star"].item() == 2
    # orientation of the pair and p_value instead of reject
    flipped = sig.rename(columns={"name_a": "name_b", "name_b": "name_a"})
    flipped = flipped.assign(p_value=np.where(sig.reject, 0.01, 0.5)).drop(columns="reject")
    assert S.sre_star(f, flipped)["sre_star"].item() == 2
    table = S.error_table(f, sig)
    assert table.columns.tolist() == ["estimator", "mae", "sre", "sre_star"]
    assert table.iloc[0][["sre", "sre_star"]].tolist() == [3, 2]


def test_sre_ties_and_groups():
    # true A .4 B .4 C .1; estimate of C = .4 ties A and B: nR = 1 + #{t_j > .4} = 1, oR = 3 -> 2
    # A, B exact: oR = nR = 1. Group g2 is the same data with C exact -> 0.
    base = pd.DataFrame({"name": list("ABC"), "true": [0.4, 0.4, 0.1], "estimate": [0.4, 0.4, 0.4]})
    f = pd.concat([base.assign(g="g1"), base.assign(g="g2", estimate=[0.4, 0.4, 0.1])])
    out = S.sre(f)
    assert out.columns.tolist() == ["g", "sre"] and out["sre"].tolist() == [2, 0]
    with pytest.raises(ValueError, match="at least 2 runs"):
        S.sre(base.iloc[:1])


def test_sre_star_join_on_keys_and_missing_pairs():
    f = pd.DataFrame(
        {
            "name": list("ABAB"),
            "true": [0.5, 0.4] * 2,
            "estimate": [0.3, 0.4] * 2,
            "n": [5, 5, 10, 10],
            "estimator": "e",
        }
    )
    sig = pd.DataFrame(
        {"n": [5, 10], "name_a": ["A", "A"], "name_b": ["B", "B"], "reject": [True, False]}
    )
    out = S.sre_star(f, sig)
    assert out["sre_star"].tolist() == [1, 0] and out["n"].tolist() == [5, 10]
    with pytest.raises(ValueError, match="lacks crossed pairs"):
        S.sre_star(f, sig.iloc[:1])
    # the pair is unordered: (B, A) in the significance matches the crossed (A, B)
    swapped = sig.assign(name_a=["B", "B"], name_b=["A", "A"])
    assert S.sre_star(f, swapped)["sre_star"].tolist() == [1, 0]
    with pytest.raises(ValueError, match="duplicate pairs"):
        S.sre_star(f, pd.concat([sig, swapped.iloc[:1]]))
    with pytest.raises(ValueError, match="several rows per"):
        S.sre(pd.concat([f, f.iloc[:1]]))


def test_per_topic_error_frames_average_first():
    f = pd.DataFrame(
        {
            "name": list("aabb"),
            "qid": ["1", "2"] * 2,
            "true": [0.2, 0.4, 0.5, 0.5],
            "estimate": [0.3, 0.3, 0.6, 0.6],
        }
    )
    # run means: a true .3 est .3, b true .5 est .6 -> no crossing
    assert S.sre(f)["sre"].item() == 0


values = st.lists(
    st.sampled_from([0.0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 1.0]), min_size=2, max_size=9
)


@settings(max_examples=examples(80), deadline=None)
@given(true=values, data=st.data())
def test_sre_properties(true, data):
    n = len(true)
    est = data.draw(
        st.lists(st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.45, 0.5, 1.0]), min_size=n, max_size=n)
    )
    sig = data.draw(
        st.lists(st.lists(st.booleans(), min_size=n, max_size=n), min_size=n, max_size=n)
    )
    sig = [[sig[min(i, j)][max(i, j)] for j in range(n)] for i in range(n)]  # symmetric
    names = [f"r{i}" for i in range(n)]
    f = pd.DataFrame({"name": names, "true": true, "estimate": est})
    pairs = pd.DataFrame(
        [(names[i], names[j], sig[i][j]) for i, j in itertools.combinations(range(n), 2)],
        columns=["name_a", "name_b", "reject"],
    )
    all_sig = pairs.assign(reject=True)
    want_sre, want_star = brute_sre(true, est, sig)
    got_sre = S.sre(f)["sre"].item()
    got_star = S.sre_star(f, pairs)["sre_star"].item()
    assert got_sre == want_sre
    assert got_star == want_star <= got_sre
    assert S.sre_star(f, all_sig)["sre_star"].item() == got_sre
    # categorical names (dictionaries in other orders) join as their strings do
    cat = f.assign(name=pd.Categorical(names, categories=names[::-1]))
    pc = pairs.assign(name_a=pd.Categorical(pairs["name_a"]), name_b=pairs["name_b"].astype(object))
    assert S.sre_star(cat, pc)["sre_star"].item() == got_star
    exact = f.assign(estimate=f["true"])
    assert S.sre(exact)["sre"].item() == 0
    assert S.mae(exact)["mae"].item() == 0


def test_sre_star_memory_follows_the_crossed_pairs():
    """SRE* materialises the crossed pairs only, not every pair of a group: 3,000 runs with
    two crossings allocate well under one runs² array (72 MB of int64 here)."""
    import tracemalloc

    n = 3000
    names = [f"r{i:04d}" for i in range(n)]
    true = np.linspace(0, 1, n)
    est = true.copy()
    est[0] = (true[2] + true[3]) / 2  # run 0 passes runs 1 and 2
    f = pd.DataFrame({"name": pd.Categorical(names), "true": true, "estimate": est})
    sig = pd.DataFrame({"name_a": ["r0000", "r0002"], "name_b": ["r0001", "r0000"]})
    sig["reject"] = [True, False]
    tracemalloc.start()
    try:
        got = S.error_table(f, sig)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got[["sre", "sre_star"]].values.tolist() == [[2, 1]]
    assert peak < 8 * n * n / 10, peak


# --------------------------------------------------------------------------- Kendall's tau


def test_kendall_tau_by_hand_and_ap():
    # y swaps the bottom two of x: 6 pairs, 5 concordant, 1 discordant -> tau_b = 4/6
    x = pd.Series([0.4, 0.3, 0.2, 0.1], index=list("abcd"))
    y = pd.Series([0.2, 0.1, 0.4, 0.3], index=list("dcab"))  # other order, same runs
    assert S.kendall_tau(x, y) == pytest.approx(4 / 6)
    # tau_AP: truth order a b c d; C(2)=1 (a above b), C(3)=2, C(4)=2 (a, b above d; c not)
    # 2/3 * (1/1 + 2/2 + 2/3) - 1 = 2/3 * 8/3 - 1 = 7/9
    assert S.kendall_tau(x, y, variant="ap") == pytest.approx(7 / 9)
    # the swap at the top costs tau_AP more: y2 swaps a and b -> C(2)=0, C(3)=2, C(4)=3
    y2 = pd.Series([0.3, 0.4, 0.2, 0.1], index=list("abcd"))
    assert S.kendall_tau(x, y2, variant="ap") == pytest.approx(2 / 3 * (0 + 1 + 1) - 1)
    with pytest.raises(ValueError, match="only in x"):
        S.kendall_tau(x, y.rename({"d": "z"}))
    with pytest.raises(ValueError, match="variant"):
        S.kendall_tau(x, y, variant="c")


def _tau_b_pairs(a: np.ndarray, b: np.ndarray) -> float:
    """The definition, pair by pair (the O(n²) formula pbtools used before scipy)."""
    iu = np.triu_indices(len(a), 1)
    dx = np.sign(a[:, None] - a[None, :])[iu]
    dy = np.sign(b[:, None] - b[None, :])[iu]
    n0 = dx.size
    denom = np.sqrt(float(n0 - np.sum(dx == 0)) * float(n0 - np.sum(dy == 0)))
    return float(np.sum(dx * dy) / denom) if denom > 0 else float("nan")


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=3, max_size=30))
def test_kendall_tau_b_matches_scipy_and_the_pair_formula_exactly(pairs):
    x, y = (np.array(v, dtype=float) for v in zip(*pairs, strict=True))
    ref = scipy.stats.kendalltau(x, y).statistic
    ours = S.kendall_tau(x, y)
    assert (np.isnan(ref) and np.isnan(ours)) or ours == pytest.approx(ref, abs=1e-12)
    pair = _tau_b_pairs(x, y)
    assert (np.isnan(pair) and np.isnan(ours)) or ours == pair  # bit for bit


def test_kendall_tau_b_identical_on_larger_rankings():
    """Floats, heavy ties and n in the hundreds: the same float as the pair formula."""
    rng = np.random.default_rng(7)
    for n in (2, 17, 150, 600):
        a = rng.random(n)
        for b in (a + rng.random(n), rng.integers(0, 4, n).astype(float), -a, a.copy()):
            assert S.kendall_tau(a, b) == _tau_b_pairs(a, b)
    assert np.isnan(S.kendall_tau(np.ones(5), np.arange(5.0)))


def test_kendall_tau_b_direct_and_scipy_paths_agree(monkeypatch):
    """Small rankings count pairs directly, large ones go through scipy: the same float."""
    from pbtools.stats import tau as tau_module

    rng = np.random.default_rng(11)
    cases = [(rng.random(n), rng.integers(0, 5, n).astype(float)) for n in (2, 40, 300)]
    direct = [S.kendall_tau(a, b) for a, b in cases]
    monkeypatch.setattr(tau_module, "_DIRECT_MAX", 0)
    assert [S.kendall_tau(a, b) for a, b in cases] == direct
    assert np.isnan(S.kendall_tau(np.ones(5), np.arange(5.0)))


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=25, unique=True))
def test_kendall_tau_self_is_one(x):
    assert S.kendall_tau(x, x) == pytest.approx(1.0)
    assert S.kendall_tau(x, x, variant="ap") == pytest.approx(1.0)
    assert S.kendall_tau(x, [-v for v in x], variant="ap") == pytest.approx(-1.0)


def test_kendall_tau_groups_a_frame_by_keys():
    f = pd.DataFrame(
        {
            "name": list("abcabc"),
            "true": [3, 2, 1, 3, 2, 1],
            "estimate": [3, 2, 1, 1, 2, 3],
            "n": [5, 5, 5, 10, 10, 10],
        }
    )
    out = S.kendall_tau(f)
    assert out["tau"].tolist() == pytest.approx([1.0, -1.0]) and out["n"].tolist() == [5, 10]


# --------------------------------------------------------------------------- discriminative power


def naive_bootstrap(x, B, seed):
    """Sakai's bootstrap test, one pair and one sample at a time, same draws as the library."""
    k, n = x.shape
    idx = np.random.default_rng(seed).integers(0, n, size=(B, n))
    asl = []
    for a, b in itertools.combinations(range(k), 2):
        z = x[a] - x[b]
        t = z.mean() / (z.std(ddof=1) / np.sqrt(n))
        w = z - z.mean()
        count = 0
        for row in idx:
            s = w[row]
            if abs(s.mean() / (s.std(ddof=1) / np.sqrt(n))) >= abs(t) - 1e-9:
                count += 1
        asl.append(count / B)
    return np.array(asl)


def test_bootstrap_matches_naive_loop_and_is_deterministic():
    x = synthetic(k=5, t=12, seed=5)
    df = per_topic(x)
    d = S.discriminative_power(df, B=300, seed=7)
    np.testing.assert_allclose(d["asl"], naive_bootstrap(x, 300, 7))
    assert d["p_value"].equals(d["asl"])
    assert d.equals(S.discriminative_power(df, B=300, seed=7))
    assert not d["asl"].equals(S.discriminative_power(df, B=300, seed=8)["asl"])
    assert d.attrs["share_significant"] == pytest.approx(d["significant"].mean())
    assert d.attrs["required_difference"] == pytest.approx(d["required_diff"].max())
    # a significant pair's |diff| exceeds its own required difference, and conversely
    assert ((d["diff"].abs() > d["required_diff"]) == d["significant"]).mean() > 0.8


def test_paired_t_matches_scipy_and_summary():
    x = synthetic(k=4, t=10, seed=9)
    d = S.discriminative_power(per_topic(x), method="t")
    ref = [scipy.stats.ttest_rel(x[a], x[b]) for a, b in itertools.combinations(range(4), 2)]
    np.testing.assert_allclose(d["p_value"], [r.pvalue for r in ref], rtol=1e-9)
    np.testing.assert_allclose(d["t"], [r.statistic for r in ref], rtol=1e-9)
    # with the t-test, significance is exactly |diff| > required_diff
    assert ((d["diff"].abs() > d["required_diff"]) == d["significant"]).all()
    s = S.discriminative_power_summary(per_topic(x), method="t")
    assert s.shape[0] == 1 and s["n_pairs"].item() == 6
    assert s["share_significant"].item() == pytest.approx(d["significant"].mean())


def test_randomization_by_hand():
    # two runs, 3 topics, z = (.1, .2, .3), mean .2; of the 8 sign patterns only (+,+,+) and
    # (-,-,-) reach |mean| >= .2, so with many samples p -> 2/8 = .25
    d = S.discriminative_power(
        per_topic([[0.4, 0.5, 0.6], [0.3, 0.3, 0.3]]), method="randomization", B=20000, seed=1
    )
    assert d["p_value"].item() == pytest.approx(0.25, abs=0.015)
    assert d["diff"].item() == pytest.approx(0.2)


def test_misses_false_alarms_by_hand():
    full = pd.DataFrame(
        {
            "name_a": list("aab"),
            "name_b": list("bcc"),
            "diff": [0.1, 0.2, -0.1],
            "significant": [True, True, False],
        }
    )
    # reduced: (a,b) lost -> miss; (b,c) gained -> false alarm; (a,c) given as (c,a) with
    # diff +.1, i.e. a - c = -.1: significant both times but reversed
    red = pd.DataFrame(
        {
            "name_a": ["a", "c", "b"],
            "name_b": ["b", "a", "c"],
            "diff": [0.1, 0.1, -0.1],
            "significant": [False, True, True],
        }
    )
    out = S.misses_false_alarms(full, red).iloc[0]
    assert (out["misses"], out["false_alarms"], out["sign_reversals"]) == (1, 1, 1)
    assert (out["sig_full"], out["sig_reduced"], out["n_pairs"]) == (2, 2, 3)


# --------------------------------------------------------------------------- G-theory


def test_generalizability_by_hand():
    # x = [[1, 2], [3, 5]]: grand 2.75, system means 1.5 4, topic means 2 3.5
    # MS_s = 2 * (1.25² + 1.25²) / 1 = 6.25; MS_t = 2 * (.75² + .75²) / 1 = 2.25
    # residuals ±.25 -> MS_e = .25; var_s = (6.25-.25)/2 = 3, var_t = (2.25-.25)/2 = 1
    # Eρ²(2) = 3 / (3 + .125) = .96; Φ(2) = 3 / (3 + 1.25/2) = 3/3.625
    g = S.generalizability(per_topic([[1, 2], [3, 5]]), n_topics=[10])
    assert g.columns.tolist() == [
        "var_system",
        "var_topic",
        "var_residual",
        "n_topics",
        "e_rho2",
        "phi",
    ]
    row = g.iloc[0]
    assert (row.var_system, row.var_topic, row.var_residual) == pytest.approx((3, 1, 0.25))
    assert (row.e_rho2, row.phi) == pytest.approx((0.96, 3 / 3.625))
    assert g["n_topics"].tolist() == [2, 10]
    assert g.iloc[1]["e_rho2"] == pytest.approx(3 / (3 + 0.025))


def test_generalizability_matches_anova_and_clips():
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    x = synthetic(k=6, t=9, seed=4)
    df = per_topic(x).astype({"name": object, "qid": object})
    a = sm.stats.anova_lm(smf.ols("value ~ C(name) + C(qid)", data=df).fit())
    ms = a["mean_sq"]
    g = S.generalizability(per_topic(x)).iloc[0]
    assert g.var_residual == pytest.approx(ms["Residual"])
    assert g.var_system == pytest.approx(max((ms["C(name)"] - ms["Residual"]) / 9, 0))
    assert g.var_topic == pytest.approx(max((ms["C(qid)"] - ms["Residual"]) / 6, 0))
    # identical systems: the system component is clipped to 0, so Eρ² = Φ = 0
    same = S.generalizability(per_topic([[0.1, 0.5, 0.3]] * 3 + [[0.2, 0.4, 0.3]]))
    assert same["var_system"].item() == 0 and same["e_rho2"].item() == 0


# --------------------------------------------------------------------------- Table 2


def test_table2_counts_and_renderers():
    rows = []
    # row 1: MAE x < y < z (x top, z worst); SRE x = y < z (no top; z worst);
    #        SRE* all 0 (no top, no worst)
    # row 2: MAE y best, x worst; SRE z best, x = y worst (tie: no worst); SRE* y best, z worst
    data = {
        ("T", 5): {"x": (0.01, 3, 0), "y": (0.02, 3, 0), "z": (0.03, 5, 0)},
        ("T", 10): {"x": (0.05, 7, 2), "y": (0.01, 7, 1), "z": (0.02, 6, 4)},
    }
    for (track, n), by_est in data.items():
        for est, (m, s, ss) in by_est.items():
            rows.append(
                {"track": track, "n": n, "estimator": est, "mae": m, "sre": s, "sre_star": ss}
            )
    t = S.table2(pd.DataFrame(rows))
    assert t.shape == (4, 9)
    top, worst = t.loc[("top performer", "")], t.loc[("worst performer", "")]
    assert top[("x", "MAE")] == 1 and top[("y", "MAE")] == 1 and top[("z", "MAE")] == 0
    assert top[("z", "SRE")] == 1 and top[("x", "SRE")] == 0
    assert top[("y", "SRE*")] == 1 and worst[("z", "SRE*")] == 1
    assert worst[("z", "MAE")] == 1 and worst[("x", "MAE")] == 1
    assert worst[("z", "SRE")] == 1 and worst[("x", "SRE")] == 0
    assert t.loc[("T", 10), ("y", "MAE")] == pytest.approx(0.01)
    md = S.to_markdown(t)
    assert md.splitlines()[0].startswith("| track | n | x MAE | x SRE | x SRE*")
    assert "| T | 5 | 0.0100 | 3 | 0 |" in md
    assert "| top performer |  | 1 | 0 | 0 |" in md
    tex = S.to_latex(t)
    assert r"\multicolumn{3}{c}{x}" in tex and r"SRE$^*$" in tex
    assert r"T & 5 & 0.0100 & 3 & 0 & 0.0200 & 3 & 0 & 0.0300 & 5 & 0 \\" in tex
    with pytest.raises(ValueError, match="several rows"):
        S.table2(pd.DataFrame(rows + rows[:1]))


def test_group_frame_rows_is_groupby_ngroup():
    """The statistics' grouping (through pbtools.groups.group_rows) equals pandas' ngroup."""
    from pbtools.groups import group_frame_rows

    rng = np.random.default_rng(0)
    for _ in range(100):
        n = int(rng.integers(0, 40))
        f = pd.DataFrame(
            {
                "a": rng.choice(["x", "y", "z", None], n),
                "b": rng.integers(0, 3, n),
                "c": pd.Categorical(rng.choice(["p", "q"], n)),
            }
        )
        for by in (["a"], ["a", "b"], ["b", "c", "a"]):
            for dropna in (True, False):
                codes, first = group_frame_rows(f, by, dropna=dropna)
                g = f.groupby(by, sort=False, observed=True, dropna=dropna).ngroup()
                want = g.fillna(-1).to_numpy().astype(np.int64)
                assert codes.tolist() == want.tolist()
                k = np.flatnonzero(want >= 0)
                assert first.tolist() == k[np.unique(want[k], return_index=True)[1]].tolist()
