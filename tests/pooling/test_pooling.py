"""Tests for pbtools.pooling: hand-checked cases, properties, TREC-2 (inference: test_inference)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbtools import frames, pooling
from pbtools.pooling.inference import infer_pool

# --------------------------------------------------------------------------------------------
# a tiny collection: runs A, B (org X) and C (org Y), topics 1 and 2, pool depth 2
#
#   topic 1   A: d1 d2 d3      B: d2 d4 d5      C: d1 d6 d7
#   topic 2   A: e1 e2         B: e1 e3         C: e4 e1
#
# depth-2 pool: {d1, d2, d4, d6} and {e1, e2, e3, e4}; qrels also judge d3 (A's rank 3) and x9
# (no run), which no pooled run placed in its top 2.
# --------------------------------------------------------------------------------------------

RUNS = {
    ("A", "1"): ["d1", "d2", "d3"],
    ("B", "1"): ["d2", "d4", "d5"],
    ("C", "1"): ["d1", "d6", "d7"],
    ("A", "2"): ["e1", "e2"],
    ("B", "2"): ["e1", "e3"],
    ("C", "2"): ["e4", "e1"],
}
LABELS = {
    ("1", "d1"): 1,
    ("1", "d2"): 1,
    ("1", "d3"): 0,
    ("1", "d4"): 0,
    ("1", "d6"): 1,
    ("1", "x9"): 1,
    ("2", "e1"): 0,
    ("2", "e2"): 1,
    ("2", "e3"): 0,
    ("2", "e4"): 1,
}


def make_runs(rankings: dict) -> pd.DataFrame:
    rows = [
        (name, qid, doc, float(len(docs) - i), i + 1)
        for (name, qid), docs in rankings.items()
        for i, doc in enumerate(docs)
    ]
    return frames.as_run(pd.DataFrame(rows, columns=["name", "qid", "docno", "score", "rank"]))


def make_qrels(labels: dict) -> pd.DataFrame:
    rows = [(q, d, lab) for (q, d), lab in labels.items()]
    return frames.as_qrels(pd.DataFrame(rows, columns=["qid", "docno", "label"]))


@pytest.fixture
def tiny():
    runs, qrels = make_runs(RUNS), make_qrels(LABELS)
    orgs = pd.DataFrame({"name": ["A", "B", "C"], "org": ["X", "X", "Y"]})
    return runs, qrels, orgs


def pairs(df: pd.DataFrame) -> set[tuple[str, str]]:
    return set(zip(df["qid"].astype(str), df["docno"].astype(str), strict=True))


def blocks(df: pd.DataFrame, key: str) -> dict[str, set]:
    return {str(k): pairs(g) for k, g in df.groupby(key, observed=True)}


ALL = set(LABELS)


def test_pool_by_hand(tiny):
    runs, _, _ = tiny
    assert pairs(pooling.pool(runs, 2)) == {
        ("1", "d1"),
        ("1", "d2"),
        ("1", "d4"),
        ("1", "d6"),
        ("2", "e1"),
        ("2", "e2"),
        ("2", "e3"),
        ("2", "e4"),
    }
    assert pairs(pooling.pool(runs, 1)) == {("1", "d1"), ("1", "d2"), ("2", "e1"), ("2", "e4")}
    assert len(pooling.pool(runs, 0)) == 0


def test_pool_orders_unordered_runs(tiny):
    runs, _, _ = tiny
    shuffled = runs.sample(frac=1.0, random_state=1).assign(rank=0)
    assert pairs(pooling.pool(shuffled, 2)) == pairs(pooling.pool(runs, 2))


def test_repool_by_hand(tiny):
    runs, qrels, _ = tiny
    out = pooling.repool(runs, qrels, 2)
    assert pairs(out) == ALL - {("1", "d3"), ("1", "x9")}
    assert list(out.columns) == ["qid", "docno", "label"]
    assert out["label"].dtype == np.int16
    assert pairs(pooling.repool(runs, qrels, 3)) == ALL - {("1", "x9")}


def test_contributions_by_hand(tiny):
    runs, _, orgs = tiny
    c = pooling.contributions(runs, 2)
    assert list(c.columns) == ["qid", "docno", "unit", "n_units"]
    got = {(str(q), str(d), str(u)): int(n) for q, d, u, n in c.itertuples(index=False)}
    assert got[("1", "d1", "A")] == 2 and got[("1", "d1", "C")] == 2
    assert got[("1", "d4", "B")] == 1 and got[("2", "e1", "B")] == 3
    assert len(got) == 2 + 2 + 1 + 1 + 3 + 1 + 1 + 1
    c = pooling.contributions(runs, 2, unit="org", orgs=orgs)
    got = {(str(q), str(d), str(u)): int(n) for q, d, u, n in c.itertuples(index=False)}
    assert got == {
        ("1", "d1", "X"): 2,
        ("1", "d1", "Y"): 2,
        ("1", "d2", "X"): 1,
        ("1", "d4", "X"): 1,
        ("1", "d6", "Y"): 1,
        ("2", "e1", "X"): 2,
        ("2", "e1", "Y"): 2,
        ("2", "e2", "X"): 1,
        ("2", "e3", "X"): 1,
        ("2", "e4", "Y"): 1,
    }


def test_leave_one_run_out_by_hand(tiny):
    runs, qrels, _ = tiny
    lo = pooling.leave_one_out(runs, qrels, 2)
    assert list(lo.columns) == ["qid", "docno", "label", "left_out"]
    assert list(lo["left_out"].cat.categories) == ["A", "B", "C"]
    got = blocks(lo, "left_out")
    assert got["A"] == ALL - {("2", "e2")}
    assert got["B"] == ALL - {("1", "d4"), ("2", "e3")}
    assert got["C"] == ALL - {("1", "d6"), ("2", "e4")}


def test_leave_one_org_out_by_hand(tiny):
    runs, qrels, orgs = tiny
    got = blocks(pooling.leave_one_out(runs, qrels, 2, leave_out="org", orgs=orgs), "left_out")
    assert got == {
        "X": ALL - {("1", "d2"), ("1", "d4"), ("2", "e2"), ("2", "e3")},
        "Y": ALL - {("1", "d6"), ("2", "e4")},
    }
    rep = blocks(
        pooling.leave_one_out(runs, qrels, 2, leave_out="org", orgs=orgs, repool=True), "left_out"
    )
    never = {("1", "d3"), ("1", "x9")}
    assert rep == {k: v - never for k, v in got.items()}


def test_leave_out_labels_and_judge(tiny):
    runs, qrels, orgs = tiny
    lo = pooling.leave_one_out(runs, qrels, 2, leave_out="org", orgs=orgs)
    for row in lo.itertuples(index=False):
        assert row.label == LABELS[(str(row.qid), str(row.docno))]
    judged = frames.judge(runs, lo)
    assert len(judged) == 2 * len(runs)
    x = judged[(judged["left_out"] == "X") & (judged["name"] == "A") & (judged["qid"] == "1")]
    assert x["label"].isna().tolist() == [False, True, False]  # d2 unjudged without X


def test_leave_out_units_and_pooled(tiny):
    runs, qrels, orgs = tiny
    lo = pooling.leave_one_out(runs, qrels, 2, units=["C", "nobody"])
    got = blocks(lo, "left_out")
    assert got["nobody"] == ALL and got["C"] == ALL - {("1", "d6"), ("2", "e4")}
    # only A and B pooled: d1 is now A's alone; C's documents were never contributed and are
    # kept (default) or dropped (repool=True)
    lo = pooling.leave_one_out(runs, qrels, 2, pooled=["A", "B"])
    assert sorted(lo["left_out"].cat.categories) == ["A", "B"]
    assert blocks(lo, "left_out")["A"] == ALL - {("1", "d1"), ("2", "e2")}
    lo = pooling.leave_one_out(runs, qrels, 2, pooled=["A", "B"], repool=True)
    assert blocks(lo, "left_out")["A"] == {("1", "d2"), ("1", "d4"), ("2", "e1"), ("2", "e3")}


def test_org_needs_orgs(tiny):
    runs, qrels, _ = tiny
    with pytest.raises(ValueError, match="orgs"):
        pooling.leave_one_out(runs, qrels, 2, leave_out="org")
    with pytest.raises(ValueError, match="unit must be"):
        pooling.contributions(runs, 2, unit="team")


def test_unlisted_run_is_its_own_org(tiny):
    runs, qrels, orgs = tiny
    partial = orgs[orgs["name"] != "C"]
    lo = pooling.leave_one_out(runs, qrels, 2, leave_out="org", orgs=partial)
    assert sorted(lo["left_out"].cat.categories) == ["C", "X"]


def test_take_teams_by_hand(tiny):
    runs, qrels, orgs = tiny
    t1 = pooling.take_teams(runs, qrels, 2, k=1, orgs=orgs)
    assert list(t1.columns) == ["qid", "docno", "label", "kept"]
    assert blocks(t1, "kept") == {
        "X": {("1", "d1"), ("1", "d2"), ("1", "d4"), ("2", "e1"), ("2", "e2"), ("2", "e3")},
        "Y": {("1", "d1"), ("1", "d6"), ("2", "e1"), ("2", "e4")},
    }
    t2 = pooling.take_teams(runs, qrels, 2, k=2, unit="run")
    assert blocks(t2, "kept")["A+C"] == {
        ("1", "d1"),
        ("1", "d2"),
        ("1", "d6"),
        ("2", "e1"),
        ("2", "e2"),
        ("2", "e4"),
    }
    assert sorted(t2["kept"].cat.categories) == ["A+B", "A+C", "B+C"]
    t = pooling.take_teams(runs, qrels, 2, unit="run", combos=[["C", "B"]])
    assert list(t["kept"].cat.categories) == ["B+C"]


def test_take_teams_sample_is_seeded(tiny):
    runs, qrels, _ = tiny
    a = pooling.take_teams(runs, qrels, 2, k=2, unit="run", sample=2, seed=5)
    b = pooling.take_teams(runs, qrels, 2, k=2, unit="run", sample=2, seed=5)
    pd.testing.assert_frame_equal(a, b)
    assert a["kept"].nunique() == 2


def test_shallow_by_hand(tiny):
    runs, qrels, _ = tiny
    sh = pooling.shallow(runs, qrels, (2, 1))
    assert list(sh.columns) == ["qid", "docno", "label", "depth"]
    got = {int(k): pairs(g) for k, g in sh.groupby("depth")}
    assert got[1] == {("1", "d1"), ("1", "d2"), ("2", "e1"), ("2", "e4")}
    assert got[2] == pairs(pooling.repool(runs, qrels, 2))


def test_subset_pool(tiny):
    runs, qrels, _ = tiny
    sp = pooling.subset_pool(runs, qrels, 2, [1, 3], n=5, seed=0)
    got = blocks(sp, "kept")
    assert set(got) == {"A", "B", "C", "A+B+C"}
    assert got["A+B+C"] == pairs(pooling.repool(runs, qrels, 2))
    assert got["B"] == {("1", "d2"), ("1", "d4"), ("2", "e1"), ("2", "e3")}


def test_top_fraction():
    scores = pd.DataFrame(
        {
            "name": list("abcdefgh") * 2,
            "measure": ["P@10"] * 8 + ["AP"] * 8,
            "value": [0.1, 0.30004, 0.3, 0.2, 0.5, 0.0, 0.29996, 0.4] + list(np.arange(8) / 10),
        }
    )
    top = pooling.top_fraction(scores)
    p10 = top[top["measure"] == "P@10"]
    # b, c and g all round to 0.3000: the stable sort keeps their input order
    assert p10["name"].tolist() == ["e", "h", "b", "c", "g", "d"]
    assert p10["rank"].tolist() == [1, 2, 3, 4, 5, 6]
    assert top[top["measure"] == "AP"]["name"].tolist() == list("hgfedc")
    assert len(pooling.top_fraction(scores.iloc[:8], decimals=None)) == 6
    n36 = pd.DataFrame(
        {"name": [f"r{i}" for i in range(36)], "measure": "P@5", "value": np.linspace(0, 1, 36)}
    )
    assert len(pooling.top_fraction(n36)) == 27


def test_unique_contributions_by_hand(tiny):
    pytest.importorskip("pbtools.measures")
    runs, qrels, orgs = tiny
    u = pooling.unique_contributions(runs, qrels, orgs, 2, ("P@2",))
    x = u[u["org"] == "X"].iloc[0]
    assert x["runs"] == 2 and x["unique"] == 2.0 and x["unique_rel"] == 1.0
    # A: P@2 0.75 -> 0.25 (-66.7%); B: 0.25 -> 0 (-100%)
    assert x["mean_diff"] == pytest.approx((200 / 3 + 100) / 2)
    assert x["max_diff"] == pytest.approx(100.0)
    y = u[u["org"] == "Y"].iloc[0]
    assert y["unique"] == 1.0 and y["unique_rel"] == 1.0  # d6 (rel) and e4 (rel) over 2 topics
    # C: t1 d1 d6 -> 1.0 / 0.5, t2 e4 e1 -> 0.5 / 0.0: 0.75 -> 0.25
    assert y["mean_diff"] == pytest.approx(200 / 3)


# --------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------

DOCS = [f"d{i}" for i in range(8)]


@st.composite
def collections(draw):
    n_runs = draw(st.integers(1, 4))
    n_topics = draw(st.integers(1, 2))
    rankings = {}
    for r in range(n_runs):
        for t in range(n_topics):
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
            rankings[(f"r{r}", str(t + 1))] = docs
    judged = draw(
        st.sets(
            st.tuples(
                st.sampled_from([str(t + 1) for t in range(n_topics)]), st.sampled_from(DOCS)
            ),
            min_size=1,
        )
    )
    labels = {k: draw(st.integers(0, 2)) for k in sorted(judged)}
    org_of = {f"r{r}": f"o{draw(st.integers(0, 1))}" for r in range(n_runs)}
    depth = draw(st.integers(1, 6))
    orgs = pd.DataFrame({"name": list(org_of), "org": list(org_of.values())})
    return make_runs(rankings), make_qrels(labels), orgs, depth


def naive_repool(qrels, runs, depth, names):
    top = runs[(runs["rank"] <= depth) & runs["name"].astype(str).isin(names)]
    return {p for p in pairs(qrels) if p in pairs(top)}


PROP = settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROP
@given(collections(), st.sampled_from(["run", "org"]))
def test_leave_out_properties(coll, by):
    runs, qrels, orgs, depth = coll
    full = pairs(qrels)
    nothing = pooling.leave_one_out(runs, qrels, depth, leave_out=by, orgs=orgs, units=["none"])
    pd.testing.assert_frame_equal(nothing.drop(columns="left_out"), qrels)
    lo = pooling.leave_one_out(runs, qrels, depth, leave_out=by, orgs=orgs)
    rep = pooling.leave_one_out(runs, qrels, depth, leave_out=by, orgs=orgs, repool=True)
    umap = pooling.unit_map(runs["name"].astype(str).unique(), by, orgs)
    assert set(lo["left_out"].cat.categories) == set(umap)
    got, got_rep = blocks(lo, "left_out"), blocks(rep, "left_out")
    pool_all = pairs(pooling.pool(runs, depth))
    for unit in umap.unique():
        others = [n for n, u in umap.items() if u != unit]
        expected_rep = naive_repool(qrels, runs, depth, others)
        assert got_rep.get(unit, set()) == expected_rep
        # never gains a judgment; removes exactly what only this unit pooled
        assert got.get(unit, set()) <= full
        assert got.get(unit, set()) == (full - pool_all) | expected_rep
    assert len(lo) == sum(len(v) for v in got.values())


@PROP
@given(collections())
def test_take_all_and_shallow_properties(coll):
    runs, qrels, orgs, depth = coll
    reference = pairs(pooling.repool(runs, qrels, depth))
    n_orgs = orgs["org"].nunique()
    take_all = pooling.take_teams(runs, qrels, depth, k=n_orgs, orgs=orgs)
    assert pairs(take_all) == reference
    sh = pooling.shallow(runs, qrels, depth)
    assert pairs(sh) == reference
    assert pairs(pooling.shallow(runs, qrels, 1)) <= reference
    c = pooling.contributions(runs, depth)
    assert {(q, d) for q, d, _u, _n in c.itertuples(index=False)} == pairs(
        pooling.pool(runs, depth)
    )
    counts = c.groupby(["qid", "docno"], observed=True)["unit"].size()
    assert (c.set_index(["qid", "docno"])["n_units"].groupby(level=[0, 1]).first() == counts).all()


# --------------------------------------------------------------------------------------------
# TREC-2 ad hoc (../shared)
# --------------------------------------------------------------------------------------------


# trec2_tag, trec2_file: read once per session (conftest.py)


@pytest.mark.shared
@pytest.mark.slow
def test_trec2_leave_one_org_out(trec2_tag):
    col = trec2_tag
    info = infer_pool(col.runs, col.qrels)
    rp = col.runs[col.runs["name"].astype(str).isin(info.pooled_runs)]
    lo = pooling.leave_one_out(rp, col.qrels, 100, leave_out="org", orgs=col.orgs, repool=True)
    assert lo["left_out"].nunique() == 21  # PRC's runs are prceo1; UIC's only run is unpooled
    umap = pooling.unit_map(info.pooled_runs, "org", col.orgs)
    for org in ("CLARIT Corporation", "prceo1"):
        others = [n for n, o in umap.items() if o != org]
        ref = pooling.repool(rp[rp["name"].astype(str).isin(others)], col.qrels, 100)
        assert pairs(lo[lo["left_out"] == org]) == pairs(ref)
