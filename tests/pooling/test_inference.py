"""Tests for pbtools.pooling.inference: the four pool-inference rules (PROTOCOL items 4-6).

Hand-made rankings that separate the rules, a slow transcription of the reference code's
``getApproximateSize`` walk as an oracle for property tests, the topic rules (qrels rows, not qid
categories), clear errors for an empty pool, and TREC-2 (../shared).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbtools import frames, pooling
from pbtools.pooling.inference import (
    ALIASES,
    POLICIES,
    EmptyPoolError,
    get_policy,
    infer_pool,
    judged_prefixes,
)

POLICY_NAMES = ["paper", "snapshot2015", "later", "counted10"]


def make_runs(rankings: dict) -> pd.DataFrame:
    """Run frame from {(name, qid): [docno, ...]}, ranked in list order."""
    keys = list(rankings)
    df = pd.DataFrame(
        {
            "name": [k[0] for k in keys],
            "qid": [k[1] for k in keys],
            "docno": list(rankings.values()),
        }
    ).explode("docno")
    df["rank"] = df.groupby(level=0).cumcount() + 1
    df["score"] = 1000.0 - df["rank"]
    return frames.as_run(df.reset_index(drop=True))


def make_qrels(judged: dict) -> pd.DataFrame:
    """Qrels frame from {qid: [docno, ...]} (label 1 for every other document, else 0)."""
    rows = [(q, d, i % 2) for q, docs in judged.items() for i, d in enumerate(docs)]
    return frames.as_qrels(pd.DataFrame(rows, columns=["qid", "docno", "label"]))


# --------------------------------------------------------------------------------------------
# the oracle: the reference code's walk, transcribed one ranking at a time
# --------------------------------------------------------------------------------------------


def approximate_size(docs: list[str], judged: set[str], an: int, counted: bool) -> int:
    """``getApproximateSize``: 2015 code (``counted=False``) or later code (``counted=True``)."""
    n = 0
    for doc in docs:
        if doc in judged:
            n += 1
        elif an > 0:
            an -= 1
            n += int(counted)
        else:
            break
    return n


def mode_right(values: list[int]) -> int:
    values = [v for v in values if v != 0]
    if not values:
        return 0
    counts = Counter(values)
    return max(counts, key=lambda v: (counts[v], v))


def oracle(rankings: dict, judged: dict, policy: str, depth: int | None = None):
    """(d, pooled run names) by the rule of ``policy``, one ranking at a time."""
    pol = POLICIES[policy]
    names = sorted({n for n, _ in rankings})
    topics = {n: [q for (m, q) in rankings if m == n and q in judged] for n in names}
    if depth is None:
        if pol.depth_from == "rankings":
            depth = mode_right(
                [
                    approximate_size(rankings[n, q], judged[q], 0, False)
                    for n in names
                    for q in topics[n]
                ]
            )
        else:
            votes = []
            for n in names:
                sizes = [
                    (approximate_size(rankings[n, q], judged[q], 0, False), len(rankings[n, q]))
                    for q in topics[n]
                ]
                if not sizes or any(a == 0 for a, _ in sizes):
                    continue
                nonfull = [a for a, length in sizes if a < length]
                votes.append(min(nonfull) if nonfull else max(length for _, length in sizes))
            depth = mode_right(votes)
    if depth == 0:
        return 0, []
    t = depth // pol.divisor
    pooled = []
    for n in names:
        ok = bool(topics[n])
        for q in topics[n]:
            docs = rankings[n, q]
            a = approximate_size(docs, judged[q], t, pol.counted)
            if pol.counted:
                ok &= a >= depth or a >= len(docs)
            else:
                ok &= a >= depth or len(docs) < a + depth // 10
        if ok:
            pooled.append(n)
    return depth, pooled


# --------------------------------------------------------------------------------------------
# hand-made rankings that separate the rules (d = 10: t = 2, 1, 0, 1)
# --------------------------------------------------------------------------------------------


def separating_case():
    """Two topics judged to depth 10 (documents j1..j40); u* are never judged.

    P1-P3 clean; G1: one unjudged document inside its top 10; G2: two; M: a judged document of
    its top 10 replaced by an unjudged one, and two more unjudged just below (ranks 11, 12); B:
    top 10 judged, an unjudged document just below (rank 11); S: only 6 documents on topic 2,
    all judged; S1: 6 documents on topic 2, one unjudged.
    """
    j = {q: [f"{q}j{i}" for i in range(1, 41)] for q in ("1", "2")}

    def clean(q, k=0):  # top 10 judged then unjudged documents
        return j[q][k : k + 10] + [f"{q}u{k}{i}" for i in range(20)]

    r = {}
    for n, k in (("P1", 0), ("P2", 3), ("P3", 6)):
        r[n, "1"], r[n, "2"] = clean("1", k), clean("2", k)
    r["G1", "1"] = j["1"][:3] + ["uG1"] + j["1"][3:10] + ["uG1b"] + j["1"][20:30]
    r["G1", "2"] = clean("2")
    r["G2", "1"] = j["1"][:2] + ["uG2a"] + j["1"][2:6] + ["uG2b"] + j["1"][6:10] + ["uG2c"]
    r["G2", "1"] += [f"uG2{i}" for i in range(10)]
    r["G2", "2"] = clean("2")
    r["M", "1"] = j["1"][:5] + ["uM"] + j["1"][6:10] + ["uM1", "uM2"] + j["1"][20:30]
    r["M", "2"] = clean("2")
    r["B", "1"] = j["1"][:10] + ["uB"] + j["1"][20:30]
    r["B", "2"] = clean("2")
    r["S", "1"], r["S", "2"] = clean("1"), j["2"][:6]
    r["S1", "1"], r["S1", "2"] = clean("1"), j["2"][:2] + ["uS1"] + j["2"][2:5]
    return r, {q: set(docs[:30]) for q, docs in j.items()}


SEPARATING = {
    "paper": ["B", "G1", "G2", "P1", "P2", "P3", "S"],
    "snapshot2015": ["B", "G1", "P1", "P2", "P3", "S"],
    "later": ["B", "P1", "P2", "P3", "S"],
    "counted10": ["B", "G1", "M", "P1", "P2", "P3", "S", "S1"],
}


@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_separating_rankings(policy):
    rankings, judged = separating_case()
    runs, qrels = make_runs(rankings), make_qrels({q: sorted(d) for q, d in judged.items()})
    info = infer_pool(runs, qrels, policy)
    assert info.depth == 10 and info.policy == policy
    assert info.skip == {"paper": 2, "snapshot2015": 1, "later": 0, "counted10": 1}[policy]
    assert info.pooled_runs == SEPARATING[policy]
    assert (info.depth, info.pooled_runs) == oracle(rankings, judged, policy)
    table = info.runs.set_index(info.runs["name"].astype(str))
    assert table.loc["G1", "run_depth"] == 3 and table.loc["S", "run_depth"] == 10
    assert table.loc["S1", "run_depth"] == 2 and table.loc["P1", "prefix_min"] == 10
    ranks = info.rankings.set_index([info.rankings["name"].astype(str), "qid"])
    # a: judged documents (paper, snapshot) or positions (later, counted10) before the stop
    a_g2 = {"paper": 10, "snapshot2015": 6, "later": 2, "counted10": 7}[policy]
    assert ranks.loc[("G2", "1"), "a"] == a_g2


def test_separating_rankings_differ_between_all_rules():
    sets = {tuple(v) for v in SEPARATING.values()}
    assert len(sets) == 4


# --------------------------------------------------------------------------------------------
# depth: rankings mode (2015) vs per-run votes (later)
# --------------------------------------------------------------------------------------------


def _prefix_ranking(q: str, tag: str, prefix: int, length: int) -> list[str]:
    """``prefix`` judged documents (q-j0..), then unjudged ones up to ``length``."""
    return [f"{q}j{i}" for i in range(prefix)] + [f"{tag}{q}u{i}" for i in range(length - prefix)]


def _prefix_case(spec: dict) -> tuple[pd.DataFrame, pd.DataFrame, dict, dict]:
    """spec: {run: [(prefix, length) per topic]}; topic q judges q-j0..q-j49."""
    rankings = {
        (n, str(t + 1)): _prefix_ranking(str(t + 1), n, p, length)
        for n, topics in spec.items()
        for t, (p, length) in enumerate(topics)
    }
    nt = max(len(v) for v in spec.values())
    judged = {str(t + 1): {f"{t + 1}j{i}" for i in range(50)} for t in range(nt)}
    qrels = make_qrels({q: sorted(d) for q, d in judged.items()})
    return make_runs(rankings), qrels, rankings, judged


def test_depth_rankings_mode_vs_run_votes():
    # rankings: 10 x7, 4 x3 -> 10; runs: Y* vote 4 (x3), Z* vote 10 (x2) -> 4
    spec = {f"Y{i}": [(10, 30), (4, 30)] for i in range(3)}
    spec |= {f"Z{i}": [(10, 30), (10, 30)] for i in range(2)}
    runs, qrels, rankings, judged = _prefix_case(spec)
    assert infer_pool(runs, qrels, "paper").depth == 10
    assert infer_pool(runs, qrels, "later").depth == 4
    for policy in POLICY_NAMES:
        info = infer_pool(runs, qrels, policy)
        assert (info.depth, info.pooled_runs) == oracle(rankings, judged, policy)


def test_zero_prefix_run_is_ignored_not_a_fallback():
    # W* have a topic of prefix 0: ignored. A fallback to their smallest non-zero prefix (5)
    # would outvote the two runs voting 10.
    spec = {f"W{i}": [(0, 30), (5, 30)] for i in range(3)}
    spec |= {f"Z{i}": [(10, 30), (10, 30)] for i in range(2)}
    runs, qrels, rankings, judged = _prefix_case(spec)
    info = infer_pool(runs, qrels, "later")
    assert info.depth == 10 and info.pooled_runs == ["Z0", "Z1"]
    table = info.runs.set_index(info.runs["name"].astype(str))
    assert (table.loc[["W0", "W1", "W2"], "run_depth"] == 0).all()
    assert infer_pool(runs, qrels, "per_run").depth == 10  # the alias is the same rule


def test_depth_ties_to_larger_and_full_runs_vote_longest():
    # F: every ranking judged to its end (8 and 12 documents) -> votes 12; G votes 12; H 8
    spec = {"F": [(8, 8), (12, 12)], "G": [(12, 30), (20, 30)], "H": [(8, 30), (9, 30)]}
    runs, qrels, rankings, judged = _prefix_case(spec)
    info = infer_pool(runs, qrels, "later")
    table = info.runs.set_index(info.runs["name"].astype(str))
    assert table["run_depth"].to_dict() == {"F": 12, "G": 12, "H": 8}
    assert info.depth == 12
    # rankings: 8 x2, 12 x2, 20, 9 -> tie between 8 and 12 goes to 12
    assert infer_pool(runs, qrels, "paper").depth == 12
    for policy in POLICY_NAMES:
        assert (lambda i: (i.depth, i.pooled_runs))(infer_pool(runs, qrels, policy)) == oracle(
            rankings, judged, policy
        )


def test_short_ranking_margin_is_d_over_10():
    # d = 20: the 2015 rules let a short ranking end fewer than floor(d/10) = 2 documents
    # after a; the counted rules need the walk to reach its end
    spec = {f"P{i}": [(20, 40)] for i in range(3)}
    spec["S1"] = [(7, 7)]
    runs, qrels, rankings, judged = _prefix_case(spec)
    extra = {("S2", "1"): ["1j0", "1j1", "1j2", "uS2", "1j3", "1j4", "1j5", "1j6"]}
    extra[("S3", "1")] = ["1j0", "uS3a", "1j1", "1j2", "uS3b", "1j3", "1j4", "1j5"]
    rankings |= extra
    runs = make_runs(rankings)
    got = {p: infer_pool(runs, qrels, p).pooled_runs for p in POLICY_NAMES}
    # S2 (one unjudged): paper 8 < 7 + 2 pooled; later t = 1 reaches the end; S3 (two): paper
    # 8 < 6 + 2 fails, later stops at the second unjudged document; counted10 (t = 2) reaches
    assert got["paper"] == got["snapshot2015"] == ["P0", "P1", "P2", "S1", "S2"]
    assert got["later"] == ["P0", "P1", "P2", "S1", "S2"]
    assert got["counted10"] == ["P0", "P1", "P2", "S1", "S2", "S3"]
    for policy in POLICY_NAMES:
        info = infer_pool(runs, qrels, policy)
        assert (info.depth, info.pooled_runs) == oracle(rankings, judged, policy)


# --------------------------------------------------------------------------------------------
# the oracle on random collections
# --------------------------------------------------------------------------------------------


@st.composite
def random_collections(draw):
    """Rankings drawn as judged/unjudged patterns (mostly judged, so that d and t vary)."""
    n_runs, n_topics = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    flag = st.sampled_from([True, True, True, True, True, False])
    rankings, judged = {}, {str(t): {f"{t}j-extra"} for t in range(n_topics)}
    for r in range(n_runs):
        for t in range(n_topics + 1):  # topic n_topics is in the runs only
            if t == 0 or draw(st.booleans()):
                pattern = draw(st.lists(flag, min_size=1, max_size=40))
                docs = [f"{t}{'j' if j else 'u'}{i}" for i, j in enumerate(pattern)]
                rankings[(f"r{r}", str(t))] = docs
                if str(t) in judged:
                    judged[str(t)] |= {d for d, j in zip(docs, pattern, strict=True) if j}
    return rankings, judged


PROP = settings(
    max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROP
@given(random_collections(), st.sampled_from(POLICY_NAMES), st.none() | st.integers(1, 40))
def test_matches_the_reference_walk(coll, policy, depth):
    rankings, judged = coll
    runs, qrels = make_runs(rankings), make_qrels({q: sorted(d) for q, d in judged.items()})
    want_d, want = oracle(rankings, judged, policy, depth)
    answered = {q for (_, q) in rankings} & set(judged)
    if not answered or want_d == 0 or not want:
        with pytest.raises(EmptyPoolError, match="no pool"):
            infer_pool(runs, qrels, policy, depth=depth)
        return
    info = infer_pool(runs, qrels, policy, depth=depth)
    assert (info.depth, info.pooled_runs) == (want_d, want)
    t = want_d // POLICIES[policy].divisor
    for row in info.rankings.astype({"name": str, "qid": str}).itertuples():
        docs = rankings[row.name, row.qid]
        assert row.prefix == approximate_size(docs, judged[row.qid], 0, False)
        assert row.a == approximate_size(docs, judged[row.qid], t, POLICIES[policy].counted)


# --------------------------------------------------------------------------------------------
# topics, names, errors
# --------------------------------------------------------------------------------------------


def test_qid_categories_are_not_judged_topics():
    """Issue 14 item 1: shared id dictionaries put a run-only topic into the qrels' categories;
    inference must use the topics of the qrels' rows."""
    rankings, judged = separating_case()
    for n in {n for n, _ in rankings}:
        rankings[n, "3"] = [f"3d{i}" for i in range(12)]  # every run answers unjudged topic 3
    runs = make_runs(rankings)
    qrels = make_qrels({q: sorted(d) for q, d in judged.items()} | {"4": ["4j0"]})  # no run
    shared = pd.CategoricalDtype(pd.Index(["1", "2", "3", "4"], dtype="str"))
    qrels_shared = qrels.assign(qid=qrels["qid"].astype(str).astype(shared))
    runs_shared = runs.assign(qid=runs["qid"].astype(str).astype(shared))
    for policy in POLICY_NAMES:
        info = infer_pool(runs_shared, qrels_shared, policy)
        assert (info.depth, info.pooled_runs) == (10, SEPARATING[policy])
        assert set(info.rankings["qid"].astype(str)) == {"1", "2"}


def test_run_without_a_qrels_topic_is_listed_not_pooled():
    rankings, judged = separating_case()
    rankings["X", "3"] = ["1j0", "1j1"]
    info = infer_pool(make_runs(rankings), make_qrels({q: sorted(d) for q, d in judged.items()}))
    row = info.runs[info.runs["name"].astype(str) == "X"].iloc[0]
    assert row["topics"] == 0 and not row["pooled"] and row["run_depth"] == 0
    assert "X" in info.unpooled_runs and info.pooled_runs == SEPARATING["paper"]


def test_policy_names_and_aliases():
    assert list(POLICIES) == POLICY_NAMES
    assert ALIASES == {"lipani2015": "paper", "per_run": "later"}
    assert get_policy("lipani2015") is POLICIES["paper"]
    rankings, judged = separating_case()
    runs, qrels = make_runs(rankings), make_qrels({q: sorted(d) for q, d in judged.items()})
    assert infer_pool(runs, qrels).policy == "paper"
    assert infer_pool(runs, qrels, "lipani2015").pooled_runs == SEPARATING["paper"]
    assert infer_pool(runs, qrels, "per_run").pooled_runs == SEPARATING["later"]
    with pytest.raises(ValueError, match="paper, snapshot2015, later, counted10"):
        infer_pool(runs, qrels, "median")
    with pytest.raises(ValueError, match="depth"):
        infer_pool(runs, qrels, depth=0)


def test_tolerance_overrides_t():
    runs = make_runs(
        {
            ("A", "1"): ["a", "b", "x", "c", "d", "e", "y"],
            ("B", "1"): ["a", "b", "c", "d", "e", "f"],
        }
    )
    qrels = make_qrels({"1": list("abcde")})
    for policy in POLICY_NAMES:
        assert infer_pool(runs, qrels, policy, depth=5, tolerance=0.0).pooled_runs == ["B"]
        info = infer_pool(runs, qrels, policy, depth=5, tolerance=0.2)
        assert info.pooled_runs == ["A", "B"] and info.skip == 1 and info.tolerance == 0.2


def test_judged_prefixes_by_hand():
    runs = make_runs({("A", "1"): ["a", "b", "x", "c", "y", "z", "d"]})
    qrels = make_qrels({"1": list("abcd")})
    p = judged_prefixes(runs, qrels, 0).iloc[0]
    assert (p["length"], p["prefix"], p["walk"]) == (7, 2, 2)
    p = judged_prefixes(runs, qrels, 1).iloc[0]
    assert p["walk"] == 4 and p["judged_walk"] == 3
    p = judged_prefixes(runs, qrels, 3).iloc[0]
    assert p["walk"] == 7 and p["judged_walk"] == 4  # fewer than 4 unjudged: to the end


def test_empty_pool_is_a_clear_error():
    runs = make_runs({("A", "1"): ["a", "b"], ("B", "1"): ["b", "c"]})
    with pytest.raises(EmptyPoolError, match=r"none of the 2 runs answers any of the 1 qrels"):
        infer_pool(runs, make_qrels({"9": ["a"]}))
    with pytest.raises(EmptyPoolError, match="no ranking of any run starts with a judged"):
        infer_pool(runs, make_qrels({"1": ["zz"]}))
    with pytest.raises(EmptyPoolError, match="no run is pooled at depth d = 5"):
        infer_pool(runs, make_qrels({"1": ["a", "b"]}), depth=5)
    # every run has a zero-prefix topic: the later rule ignores all of them
    runs2 = make_runs({("A", "1"): ["a"], ("A", "2"): ["u"], ("B", "1"): ["a"], ("B", "2"): ["v"]})
    qrels2 = make_qrels({"1": ["a"], "2": ["w"]})
    with pytest.raises(EmptyPoolError, match="ignores such runs"):
        infer_pool(runs2, qrels2, "later")
    assert issubclass(EmptyPoolError, ValueError)


def test_cli_pool_reports_an_empty_pool(tmp_path, capsys):
    from pbtools.cli import main

    (tmp_path / "qrels").write_text("9 0 a 1\n")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "input.A").write_text("1 Q0 a 1 2.0 A\n1 Q0 b 2 1.0 A\n")
    code = main(["pool", str(tmp_path / "qrels"), str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and "no pool" in err and "Traceback" not in err


def test_vectorised_on_many_rankings():
    # 100 runs x 30 topics, 150 000 rows: the vectorised walk agrees with the oracle
    rng = np.random.default_rng(5)
    rankings, judged = {}, {}
    for t in range(30):
        judged[str(t)] = {f"d{i}" for i in range(60) if rng.random() < 0.7}
        for r in range(100):
            rankings[(f"r{r:03d}", str(t))] = [f"d{i}" for i in rng.permutation(80)[:50]]
    for t in range(30):  # make most rankings judged to depth 20
        for r in range(75):
            docs = rankings[(f"r{r:03d}", str(t))]
            judged[str(t)] |= set(docs[:20])
    runs, qrels = make_runs(rankings), make_qrels({q: sorted(d) for q, d in judged.items()})
    for policy in POLICY_NAMES:
        info = infer_pool(runs, qrels, policy)
        assert (info.depth, info.pooled_runs) == oracle(rankings, judged, policy), policy


# --------------------------------------------------------------------------------------------
# TREC-2 ad hoc (../shared)
# --------------------------------------------------------------------------------------------


# trec2_tag, trec2_file: read once per session (conftest.py)


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("policy", ["paper", "later", "counted10", "lipani2015", "per_run"])
def test_trec2_36_pooled_run_files(trec2_tag, trec2_file, policy):
    d = pooling.describe(trec2_tag, policy=policy)
    assert (d["d"], d["|T|"], d["|O|"]) == (100, 50, 22), policy
    assert d["unpooled_runs"] == ["rutfmed", "uicah"]
    # prc1 and prc2 carry one tag: 37 run ids from 38 files; prceo1 (two files) is pooled
    assert (d["|R|"], d["|R_p|"], d["|R| files"], d["|R_p| files"]) == (37, 35, 38, 36)
    assert d["unmapped"] == ["prceo1"] and "prceo1" in d["pooled_runs"]
    f = pooling.describe(trec2_file, policy=policy)
    assert (f["|R|"], f["|O|"], f["|R_p|"], f["d"], f["|T|"]) == (38, 22, 36, 100, 50)
    assert f["unpooled_runs"] == ["rutfmed", "uicah"] and f["unmapped"] == []


@pytest.mark.shared
@pytest.mark.slow
def test_trec2_snapshot2015_pools_32(trec2_tag, trec2_file):
    # one run per file, as the reference reads them: 32 pooled run files
    f = pooling.describe(trec2_file, policy="snapshot2015")
    assert (f["d"], f["|R_p|"], f["|R_p| files"]) == (100, 32, 32)
    assert f["unpooled_runs"] == ["CLARTA", "CnQst1", "UREKA2", "prc2", "rutfmed", "uicah"]
    # by tag, prc1 and prc2 are one merged ranking (prceo1), which is pooled: 32 run ids
    d = pooling.describe(trec2_tag, policy="snapshot2015")
    assert (d["d"], d["|R_p|"], d["|R_p| files"]) == (100, 32, 33)
    assert d["unpooled_runs"] == ["CLARTA", "CnQst1", "UREKA2", "rutfmed", "uicah"]
