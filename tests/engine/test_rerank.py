"""Tests of the merge operator r_p ∘ r_u and the δ/Δ/λ indicators (Lipani 2015 §3)."""

import numpy as np
import pandas as pd
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from pbtools.corrections.indicators import deltas, fires, indicators
from pbtools.corrections.merge import merge
from pbtools.measures import evaluate, round_half_up


def pa(frame, qrels, ns):
    """Run means of P@n and AntiP@n (from pbtools.measures) in the indicators' layout:
    ``name``, ``measure`` (P@n), ``P``, ``AntiP`` (+ ``unpooled`` for merged runs)."""
    f = frame if "score" in frame else frame.assign(score=-frame["rank"].astype(float))
    ms = [f"P@{n}" for n in ns] + [f"AntiP@{n}" for n in ns]
    ev = evaluate(f[["name", "qid", "docno", "score"]], qrels, ms, warn=False)
    ev = ev.astype({"name": str, "measure": str})
    wide = ev.pivot_table(index="name", columns="measure", values="value")
    rows = [
        (name, f"P@{n}", wide.loc[name, f"P@{n}"], wide.loc[name, f"AntiP@{n}"])
        for name in wide.index
        for n in ns
    ]
    out = pd.DataFrame(rows, columns=["name", "measure", "P", "AntiP"])
    if "unpooled" in frame:
        out.insert(0, "unpooled", str(frame["unpooled"].iloc[0]))
    return out


def run(name, docs, qid="1"):
    return pd.DataFrame(
        {
            "name": name,
            "qid": qid,
            "docno": list(docs),
            "score": np.arange(len(docs), 0, -1, dtype=float),
        }
    )


def order(m):
    return "".join(m.sort_values("rank")["docno"].astype(str))


P = run("p", "abcdef")
U = run("u", "xeyb")


def test_merge_alpha_one_hand_computed():
    # μ: a1 b4 c3 d4 e2 f6 → a e c (d b: tie at 4, exclusive first) f
    m = merge(P, U)
    assert order(m) == "aecdbf"
    assert m.set_index("docno").loc["b", "u_rank"] == 4
    assert m.set_index("docno").loc["c", "u_rank"] == 0


def test_merge_alpha_half_and_ties():
    # μ: a1 b3 c3 d4 e3.5 f6 → a c b e d f (c exclusive before b at 3)
    assert order(merge(P, U, weight=0.5)) == "acbedf"


def test_merge_tie_rule_lipani2015_moved_up_goes_first():
    p = run("p", "abcd")
    u = run("u", "qrd")  # d: ρ_p 4 → ρ_u 3, ties with exclusive c at 3
    assert order(merge(p, u, tie="exclusive_first")) == "abcd"
    assert order(merge(p, u, tie="lipani2015")) == "abdc"
    # moved down: b 2 → 4 ties with exclusive d at 4: exclusive first in both rules
    u2 = run("u", "qrsb")
    assert order(merge(p, u2, tie="lipani2015")) == "acdb"
    assert order(merge(p, u2)) == "acdb"


def test_merge_disjoint_and_identical_and_alpha_zero():
    p = run("p", "abcde")
    assert order(merge(p, run("u", "vwxyz"))) == "abcde"
    assert order(merge(p, run("u", "abcde"))) == "abcde"
    assert order(merge(p, run("u", "edcba"), weight=0.0)) == "abcde"
    assert order(merge(p, run("u", "edcba"))) == "edcba"


def test_merge_depth_and_topics_of_unpooled_only():
    p = pd.concat([run("p", "abcdef", "1"), run("p", "ghi", "2")])
    u = run("u", "fedcba", "1")
    m = merge(p, u, depth=3)
    assert set(m["qid"].astype(str)) == {"1"}
    assert order(m) == "fed"
    full = merge(p, u)
    assert order(full[full["rank"] <= 3]) == "fed"


def test_merge_many_pairs_one_frame():
    ps = pd.concat([run("p1", "abcd"), run("p2", "dcba")])
    us = pd.concat([run("u1", "dc"), run("u2", "ab")])
    m = merge(ps, us)
    got = {(u, p): order(g) for (u, p), g in m.groupby(["unpooled", "name"], observed=True)}
    assert got == {
        ("u1", "p1"): order(merge(run("p1", "abcd"), run("u1", "dc"))),
        ("u1", "p2"): order(merge(run("p2", "dcba"), run("u1", "dc"))),
        ("u2", "p1"): order(merge(run("p1", "abcd"), run("u2", "ab"))),
        ("u2", "p2"): order(merge(run("p2", "dcba"), run("u2", "ab"))),
    }


def test_round_half_up():
    assert round_half_up(0.00125, 4) == 0.0013
    assert round_half_up(0.12345, 4) == 0.1235
    assert round_half_up(-0.00125, 4) == -0.0013
    assert np.isnan(round_half_up(np.nan, 4))


def test_precision_and_indicators_hand_computed():
    qrels = pd.DataFrame({"qid": "1", "docno": list("abce"), "label": [1, 0, 1, 0]})
    per = pa(P, qrels, [2, 4])
    row = per.set_index("measure")
    assert row.loc["P@2", "P"] == 0.5 and row.loc["P@2", "AntiP"] == 0.5
    assert row.loc["P@4", "P"] == 0.5 and row.loc["P@4", "AntiP"] == 0.25
    m = merge(P, U)  # a e c d b f
    assert order(m) == "aecdbf"
    d = deltas(pa(m, qrels, [2, 4]), per)
    d2 = d.set_index("measure")
    # top2 of r' = a e → P .5 P̄ .5 ; r_p top2 = a b → same → δ = 0
    assert d2.loc["P@2", "dP"] == 0 and d2.loc["P@2", "dAntiP"] == 0
    # top4 of r' = a e c d → P .5, P̄ .25 ; r_p top4 = a b c d → P .5, P̄ .25
    assert d2.loc["P@4", "dk"] == 0
    own = pa(U, qrels, [2, 4])
    ind = indicators(own, d)
    assert list(ind["n_pooled"]) == [1, 1]
    k = 1 - ind["P"] - ind["AntiP"]
    assert np.allclose(ind["lam"], k * (ind["dP"] * ind["AntiP"] - ind["dAntiP"] * ind["P"]))
    assert list(fires(ind, "always")) == [True, True]
    with pytest.raises(ValueError):
        fires(ind, "nope")


docs = st.lists(st.sampled_from(list("abcdefghijkl")), min_size=1, max_size=12, unique=True)


@settings(max_examples=examples(60), deadline=None)
@given(
    docs,
    docs,
    st.sampled_from([0.0, 0.25, 0.5, 1.0]),
    st.sampled_from(["exclusive_first", "lipani2015"]),
)
def test_properties_merge(dp, du, alpha, tie):
    p, u = run("p", dp), run("u", du)
    m = merge(p, u, weight=alpha, tie=tie)
    assert sorted(m["docno"].astype(str)) == sorted(dp)  # only r_p's documents
    assert sorted(m["rank"]) == list(range(1, len(dp) + 1))
    if alpha == 0.0:
        assert order(m) == "".join(dp)
    assert order(merge(p, run("u", dp), weight=alpha, tie=tie)) == "".join(dp)
    # depth-bounded merge agrees with the full merge on the top n
    n = 3
    assert order(merge(p, u, weight=alpha, tie=tie, depth=n)) == order(m[m["rank"] <= n])


@settings(max_examples=examples(60), deadline=None)
@given(docs, docs, st.lists(st.integers(0, 1), min_size=12, max_size=12))
def test_properties_dk_nonnegative_when_judged_to_depth(dp, du, labels):
    # r_p judged to depth m ≥ n (deeper documents unjudged): δk ≥ 0 for every n ≤ m
    m_ = max(1, len(dp) // 2)
    qrels = pd.DataFrame({"qid": "1", "docno": list(dp[:m_]), "label": labels[:m_]})
    p, u = run("p", dp), run("u", du)
    ns = list(range(1, m_ + 1))
    pm = pa(p, qrels, ns)
    d = deltas(pa(merge(p, u), qrels, ns), pm)
    assert (d["dk"] >= -1e-12).all()
    same = deltas(pa(merge(p, run("u", dp)), qrels, ns), pm)
    assert np.allclose(same[["dP", "dAntiP", "dk"]].to_numpy(), 0.0)


# --------------------------------------------------------------------------------------------
# the dense merge against a slow but obvious reference
# --------------------------------------------------------------------------------------------


def reference_merge(dp, du, alpha, tie):
    """Lipani Eq. 2 literally: μ per document of r_p, sorted with the tie code, then ρ_p."""
    from fractions import Fraction

    a = Fraction(alpha).limit_denominator(10_000)
    ur = {d: i + 1 for i, d in enumerate(du)}
    keyed = []
    for i, d in enumerate(dp):
        rp = i + 1
        if d in ur:
            mu = (1 - a) * rp + a * ur[d]
            code = 1 if tie == "lipani2015" and mu < rp else 3
        else:
            mu, code = Fraction(rp), 2
        keyed.append((mu, code, rp, d))
    return [d for *_, d in sorted(keyed)]


pool = [f"d{i:02d}" for i in range(40)]
ranking = st.lists(st.sampled_from(pool), min_size=0, max_size=40, unique=True)


@settings(max_examples=examples(80), deadline=None)
@given(
    st.lists(ranking, min_size=8, max_size=8),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.sampled_from(["exclusive_first", "lipani2015"]),
    st.sampled_from([None, 1, 3, 10]),
)
def test_merge_matches_reference(rankings, alpha, tie, depth):
    # 2 pooled and 2 unpooled runs on 2 topics (a ranking may be empty: the topic is absent);
    # long rankings with shared heads exercise the window fallback of the α = 1 path
    names = ["p1", "p2", "u1", "u2"]
    frames, docs = [], {}
    for k, r in enumerate(rankings):
        name, qid = names[k // 2], str(k % 2)
        docs[name, qid] = r
        if r:
            frames.append(run(name, r, qid))
    pooled = [f for f in frames if f["name"].iloc[0].startswith("p")]
    unpooled = [f for f in frames if f["name"].iloc[0].startswith("u")]
    if not pooled or not unpooled:
        return
    m = merge(pd.concat(pooled), pd.concat(unpooled), weight=alpha, tie=tie, depth=depth)
    got = {
        k: list(g.sort_values("rank")["docno"].astype(str))
        for k, g in m.groupby(["unpooled", "name", "qid"], observed=True)
    }
    want = {}
    for u in ("u1", "u2"):
        for p in ("p1", "p2"):
            for q in ("0", "1"):
                if docs[u, q] and docs[p, q]:
                    ref = reference_merge(docs[p, q], docs[u, q], alpha, tie)
                    want[u, p, q] = ref if depth is None else ref[:depth]
    assert got == want
    assert (m["rank"].to_numpy() >= 1).all()
    ur = m["u_rank"].to_numpy()
    for (u, p, q), g in m.groupby(["unpooled", "name", "qid"], observed=True):
        pos_p = {d: i + 1 for i, d in enumerate(docs[p, q])}
        pos_u = {d: i + 1 for i, d in enumerate(docs[u, q])}
        dd = g["docno"].astype(str)
        assert list(g["p_rank"]) == [pos_p[d] for d in dd]
        assert list(g["u_rank"]) == [pos_u.get(d, 0) for d in dd]
    assert len(ur) == len(m)


@pytest.mark.parametrize("tie", ["exclusive_first", "lipani2015"])
@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_merge_rows_pairs_both_ways_repeated_and_self(tie, alpha):
    # merge_rows groups (u, p, t) and (p, u, t) to share their lookups: ask pairs in both
    # orientations, in one only, twice, and a run with itself, on runs of unequal lengths
    # (some topics absent) whose tops overlap, and compare every row with the reference
    from pbtools.engine.dense import DenseRuns
    from pbtools.engine.merge import merge_rows
    from pbtools.frames import ranked
    from pbtools.synth import generate

    c = generate(topics=4, docs=80, runs=6, orgs=3, run_length=30, depth=10, seed=3)
    runs = ranked(c.runs)
    rng = np.random.default_rng(0)
    runs = runs[rng.random(len(runs)) < 0.9]  # holes: rankings of unequal length
    runs = runs[
        ~(
            (runs["qid"].astype(str) == runs["qid"].cat.categories[0])
            & (runs["name"].astype(str) == runs["name"].cat.categories[1])
        )
    ]
    enc = DenseRuns([ranked(runs.drop(columns="rank"))])  # ranks 1..n again
    u = np.array([0, 1, 1, 2, 3, 0, 4, 5, 5, 2, 1])
    p = np.array([1, 0, 2, 3, 2, 1, 4, 0, 1, 5, 3])
    docs = {}
    for r in range(enc.R):
        for t in range(enc.T):
            d = enc.D[r, t]
            docs[r, t] = [int(x) for x in d[d >= 0]]
    for depth in (1, 3, 12, None):
        pair, t, M, PR, UR = merge_rows(enc, u, p, weight=alpha, tie=tie, depth=depth, ranks=True)
        want_rows = [
            (i, q) for i in range(len(u)) for q in range(enc.T) if docs[u[i], q] and docs[p[i], q]
        ]
        assert list(zip(pair.tolist(), t.tolist(), strict=True)) == want_rows
        for row, (i, q) in enumerate(want_rows):
            dp, du = docs[p[i], q], docs[u[i], q]
            ref = reference_merge(dp, du, alpha, tie)
            ref = ref if depth is None else ref[:depth]
            got = M[row]
            assert got[got >= 0].tolist() == ref
            assert (got[len(ref) :] == -1).all()
            assert PR[row, : len(ref)].tolist() == [dp.index(d) + 1 for d in ref]
            assert UR[row, : len(ref)].tolist() == [du.index(d) + 1 if d in du else 0 for d in ref]
    none = np.zeros(0, dtype=np.int64)  # no pair at all
    pair, t, M = merge_rows(enc, none, none, weight=alpha, tie=tie, depth=3)
    assert len(pair) == len(t) == 0 and M.shape == (0, 3)


def test_indicator_values_match_the_frames():
    # Lipani.estimate takes the δ/Δ/λ on arrays: the same numbers as deltas() + indicators()
    # on frames, NaN δ's (a pooled run without topics) skipped in the means but counted in
    # n_pooled, a run without any pair left with NaN
    from pbtools.corrections.indicators import delta_values, indicator_values

    rng = np.random.default_rng(5)
    own = pd.DataFrame(
        {
            "name": np.repeat(["u1", "u2", "u3"], 2),
            "measure": ["P@5", "P@10"] * 3,
            "P": rng.random(6).round(2),
            "AntiP": rng.random(6).round(2) / 2,
        }
    )
    pairs = [(u, p) for u in ("u1", "u2") for p in ("p1", "p2", "p3")]
    merged = pd.DataFrame(
        [(u, p, m, *rng.random(2).round(3)) for u, p in pairs for m in ("P@5", "P@10")],
        columns=["unpooled", "name", "measure", "P", "AntiP"],
    )
    pooled = pd.DataFrame(
        [(p, m, *rng.random(2).round(3)) for p in ("p1", "p2", "p3") for m in ("P@5", "P@10")],
        columns=["name", "measure", "P", "AntiP"],
    )
    pooled.loc[pooled["name"] == "p3", ["P", "AntiP"]] = np.nan
    want = indicators(own, deltas(merged, pooled))
    pm = pooled.set_index(["name", "measure"])
    key = pd.MultiIndex.from_frame(merged[["name", "measure"]])
    dP, dA, dk = delta_values(
        merged["P"].to_numpy(),
        merged["AntiP"].to_numpy(),
        pm["P"].reindex(key).to_numpy(),
        pm["AntiP"].reindex(key).to_numpy(),
    )
    row = {(n, m): i for i, (n, m) in enumerate(zip(own["name"], own["measure"], strict=True))}
    group = [row[n, m] for n, m in zip(merged["unpooled"], merged["measure"], strict=True)]
    got = indicator_values(own["P"], own["AntiP"], dP, dA, dk, np.array(group))
    for c in ("k", "dP", "dAntiP", "dk", "n_pooled", "lam"):
        np.testing.assert_array_equal(got[c], want[c].to_numpy(np.float64), err_msg=c)
    assert np.isnan(got["lam"][4:]).all() and (got["n_pooled"][:4] == 3).all()
    np.testing.assert_array_equal(fires(got), fires(want))
