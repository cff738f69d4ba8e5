"""Unit tests of pbtools.measures: parser, hand-computed cases, properties, pytrec_eval."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from pbtools import frames
from pbtools import measures as M

# --------------------------------------------------------------------------------------------
# parser
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("P@10", "P@10"),
        ("P_10", "P@10"),
        ("p@10", "P@10"),
        ("map", "AP"),
        ("MAP", "AP"),
        ("AP@100", "AP@100"),
        ("map_cut_100", "AP@100"),
        ("ndcg", "nDCG"),
        ("NDCG@10", "nDCG@10"),
        ("ndcg_cut_10", "nDCG@10"),
        ("recall_100", "R@100"),
        ("recip_rank", "RR"),
        ("MRR", "RR"),
        ("bpref", "Bpref"),
        ("Rprec", "Rprec"),
        ("num_ret", "NumRet"),
        ("num_rel", "NumRel"),
        ("num_rel_ret", "NumRelRet"),
        ("success_5", "Success@5"),
        ("rbp", "RBP(p=0.9)"),
        ("RBP", "RBP(p=0.8)"),
        ("RBP(p=0.8)@10", "RBP(p=0.8)@10"),
        ("Q", "Q"),
        ("Q(beta=1)", "Q"),
        ("Q(beta=0.5)", "Q(beta=0.5)"),
        ("AP(rel=2)@100", "AP(rel=2)@100"),
        ("AP(judged_only=True)", "AP(judged_only=True)"),
        ("AP'", "AP(judged_only=True)"),
        ("AP(condensed=True)", "AP(judged_only=True)"),
        ("nDCG'@10", "nDCG(judged_only=True)@10"),
        ("AntiP@10", "AntiP@10"),
        ("Unjudged@10", "Unjudged@10"),
        ("Judged@10", "Judged@10"),
        ("P(cutoff=5)", "P@5"),
        ("AP(judged_only=False)", "AP"),
    ],
)
def test_parse_names_and_aliases(name, canonical):
    m = M.parse(name)
    assert str(m) == canonical
    assert M.parse(str(m)) == m  # canonical names round-trip


def test_parse_fields():
    m = M.parse("RBP(p=0.5, rel=2, judged_only=True)@20")
    assert (m.base, m.p, m.rel, m.judged_only, m.cutoff) == ("RBP", 0.5, 2, True, 20)
    assert M.parse("Q").beta == 1.0 and M.parse("NumRet").summed and not M.parse("AP").summed


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("Foo@10", "unknown measure 'Foo@10'"),
        ("P", "needs a cut-off"),
        ("Bpref@10", "no cut-off"),
        ("RBP(p=2)", "0 < p < 1"),
        ("AP(x=1)", "unknown parameter"),
        ("P@0", "≥ 1"),
        ("AP(rel=0)", "rel must be"),
        ("Judged(rel=2)@10", "unknown parameter"),
        ("AP(judged_only=maybe)", "boolean"),
        ("Q(beta=-1)", "beta"),
        ("AP(rel)", "key=value"),
    ],
)
def test_parse_errors(name, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(")):
        M.parse(name)


def test_unknown_measure_lists_valid_ones():
    with pytest.raises(ValueError) as err:
        M.parse("MAPP")
    assert "MAPP" in str(err.value)
    for valid in ("nDCG", "AntiP", "Bpref", "RBP", "ndcg_cut_n"):
        assert valid in str(err.value)


# --------------------------------------------------------------------------------------------
# hand-computed cases
# --------------------------------------------------------------------------------------------
# Run "a", topic q1, in trec order: d1 (label 1), d2 (not in qrels), d3 (0), d4 (2), d5 (-1).
# qrels q1: d1:1 d3:0 d4:2 d5:-1 d6:1 d7:0 → R = 3 (d1, d4, d6), N = 2 (d3, d7).
# Topic q2 is only in the qrels; topic q3 only in the run.


@pytest.fixture
def toy():
    run = frames.as_run(
        pd.DataFrame(
            {
                "name": "a",
                "qid": ["q1"] * 5 + ["q3"],
                "docno": ["d1", "d2", "d3", "d4", "d5", "d1"],
                "score": [5.0, 4.0, 3.0, 2.0, 1.0, 1.0],
            }
        )
    )
    qrels = frames.as_qrels(
        pd.DataFrame(
            {
                "qid": ["q1"] * 6 + ["q2"],
                "docno": ["d1", "d3", "d4", "d5", "d6", "d7", "d1"],
                "label": [1, 0, 2, -1, 1, 0, 1],
            }
        )
    )
    return run, qrels


L2 = math.log2
IDCG = 2 + 1 / L2(3) + 1 / L2(4)  # ideal gains 2, 1, 1
EXPECTED = {
    "P@5": 2 / 5,
    "P@10": 2 / 10,
    "P@1": 1.0,
    "R@5": 2 / 3,
    "R@1": 1 / 3,
    "AP": (1 + 2 / 4) / 3,
    "AP@3": 1 / 3,
    "RR": 1.0,
    "RR@1": 1.0,
    "Success@1": 1.0,
    "Rprec": 1 / 3,
    "Bpref": (1 + (1 - 1 / 2)) / 3,
    "nDCG": (1 + 2 / L2(5)) / IDCG,
    "nDCG@2": 1 / (2 + 1 / L2(3)),
    "NumRet": 5,
    "NumRet@3": 3,
    "NumRel": 3,
    "NumRelRet": 2,
    "NumRelRet@3": 1,
    "AntiP@5": 1 / 5,
    "AntiP@10": 1 / 10,
    "Unjudged@5": 2 / 5,
    "Unjudged@10": 7 / 10,
    "Unjudged@2": 1 / 2,
    "Judged@10": 3 / 5,
    "Judged@2": 1 / 2,
    "RBP(p=0.5)": 0.5 * (1 + 0.5**3),
    "RBP(p=0.5)@2": 0.5,
    "Q": ((1 + 1) / (2 + 1) + (3 + 2) / (4 + 4)) / 3,
    "Q(beta=0)": (1 / 1 + 2 / 4) / 3,  # β = 0 gives AP
    # condensed list: d1 (1), d3 (0), d4 (2)
    "AP'": (1 + 2 / 3) / 3,
    "P'@2": 1 / 2,
    "nDCG'": (1 + 2 / L2(4)) / IDCG,
    "RBP'(p=0.5)": 0.5 * (1 + 0.5**2),
    "Q'": ((1 + 1) / (2 + 1) + (3 + 2) / (4 + 3)) / 3,
    "NumRet'": 3,
    "RR'": 1.0,
    "Bpref'": (1 + (1 - 1 / 2)) / 3,
    # rel=2: only d4 is relevant, d1 becomes judged non-relevant
    "P(rel=2)@5": 1 / 5,
    "AntiP(rel=2)@5": 2 / 5,
    "AP(rel=2)": 1 / 4,
    "NumRel(rel=2)": 1,
    "RR(rel=2)": 1 / 4,
    "RR(rel=2)@3": 0.0,
    "nDCG(rel=2)": (2 / L2(5)) / 2,
    "Bpref(rel=2)": (1 - min(2, 1) / min(3, 1)) / 1,
    "Rprec(rel=2)": 0.0,
    "Q(rel=2)": ((2 + 1) / (2 + 4)) / 1,
}


def test_hand_computed_values(toy):
    run, qrels = toy
    pt = M.evaluate(run, qrels, list(EXPECTED), per_topic=True)
    assert list(pt["qid"].astype(str).unique()) == ["q1"]  # q2: no results; q3: no qrels
    got = dict(zip(pt["measure"].astype(str), pt["value"], strict=True))
    for name, value in EXPECTED.items():
        assert got[str(M.parse(name))] == pytest.approx(value, abs=1e-12), name


def test_rbp_residual_hand_computed(toy):
    run, qrels = toy
    pt = M.evaluate(
        run,
        qrels,
        ["RBP(p=0.5)", "RBP(p=0.5)@2", "RBP(p=0.5)@8", "RBP'(p=0.5)", "P@5"],
        per_topic=True,
    )
    res = dict(zip(pt["measure"].astype(str), pt["residual"], strict=True))
    # unjudged at ranks 2 and 5, plus the tail p^5 past the end of the run
    assert res["RBP(p=0.5)"] == pytest.approx(0.5 * (0.5 + 0.5**4) + 0.5**5)
    assert res["RBP(p=0.5)@2"] == pytest.approx(0.5 * 0.5)
    assert res["RBP(p=0.5)@8"] == pytest.approx(0.5 * (0.5 + 0.5**4) + 0.5**5 - 0.5**8)
    assert res["RBP(p=0.5,judged_only=True)"] == pytest.approx(0.5**3)
    assert math.isnan(res["P@5"])
    # value + residual + weight of the judged non-relevant = 1 - p^n
    val = dict(zip(pt["measure"].astype(str), pt["value"], strict=True))
    assert val["RBP(p=0.5)@8"] + res["RBP(p=0.5)@8"] + 0.5 * 0.25 == pytest.approx(1 - 0.5**8)
    assert "residual" not in M.evaluate(run, qrels, ["AP"], per_topic=True).columns


def test_aggregate_and_all_topics(toy):
    run, qrels = toy
    ms = ["P@5", "AP", "NumRel", "NumRet", "Unjudged@5", "RBP(p=0.5)"]
    avg = M.evaluate(run, qrels, ms)
    assert list(avg.columns) == ["name", "measure", "value", "residual"]
    assert list(avg["measure"].astype(str)) == [str(M.parse(m)) for m in ms]
    assert avg["value"].tolist()[:4] == pytest.approx([0.4, 0.5, 3, 5])
    pt = M.evaluate(run, qrels, ms, per_topic=True, topics="all")
    q2 = pt[pt["qid"] == "q2"]
    assert q2["value"].tolist() == pytest.approx([0, 0, 1, 0, 1, 0])
    assert q2["residual"].iloc[-1] == pytest.approx(1.0)  # empty run: all weight unjudged
    c = M.evaluate(run, qrels, ms, topics="all")
    assert c["value"].tolist()[:5] == pytest.approx([0.2, 0.25, 4, 5, (2 / 5 + 1) / 2])
    # aggregate(topics="all") from the plain per-topic frame gives the same averages
    c2 = M.aggregate(M.evaluate(run, qrels, ms, per_topic=True), qrels=qrels, topics="all")
    assert c2["value"].tolist() == pytest.approx(c["value"].tolist())
    with pytest.raises(ValueError, match="qrels"):
        M.aggregate(pt, topics="all")
    # the old spelling all_topics=True still works, with a DeprecationWarning
    with pytest.warns(DeprecationWarning, match=r'all_topics=True is deprecated: use topics="all"'):
        old = M.evaluate(run, qrels, ms, all_topics=True)
    assert old["value"].tolist() == pytest.approx(c["value"].tolist())
    with pytest.warns(DeprecationWarning, match="all_topics"):
        old = M.aggregate(M.evaluate(run, qrels, ms, per_topic=True), qrels=qrels, all_topics=True)
    assert old["value"].tolist() == pytest.approx(c["value"].tolist())


def test_output_schema_and_order(toy):
    run, qrels = toy
    run2 = run.assign(name="b", score=-run["score"])
    both = pd.concat([run2, run], ignore_index=True)
    pt = M.evaluate(both, qrels, ["nDCG@2", "P@5"], per_topic=True, topics="all")
    assert list(pt.columns) == ["name", "qid", "measure", "value"]
    for c in ("name", "qid", "measure"):
        assert isinstance(pt[c].dtype, pd.CategoricalDtype)
    assert list(
        zip(pt["name"].astype(str), pt["qid"].astype(str), pt["measure"].astype(str), strict=True)
    ) == [
        ("a", "q1", "nDCG@2"),
        ("a", "q1", "P@5"),
        ("a", "q2", "nDCG@2"),
        ("a", "q2", "P@5"),
        ("b", "q1", "nDCG@2"),
        ("b", "q1", "P@5"),
        ("b", "q2", "nDCG@2"),
        ("b", "q2", "P@5"),
    ]
    assert pt["value"].dtype == np.float64


def test_unsorted_input_is_put_in_trec_order(toy):
    run, qrels = toy
    shuffled = run.sample(frac=1.0, random_state=3).reset_index(drop=True)
    shuffled["label"] = frames.judge(shuffled, qrels)["label"]
    a = M.compute(shuffled, qrels, ["AP", "RR", "nDCG"])
    b = M.compute(frames.judge(run, qrels), qrels, ["AP", "RR", "nDCG"])
    assert a["value"].tolist() == b["value"].tolist()


def test_ties_broken_by_docno_descending():
    run = frames.as_run(pd.DataFrame({"qid": "q", "docno": ["a", "b"], "score": [1.0, 1.0]}))
    qrels = frames.as_qrels(pd.DataFrame({"qid": "q", "docno": ["a", "b"], "label": [1, 0]}))
    assert M.evaluate(run, qrels, ["RR"])["value"].item() == 0.5  # "b" ranks first


def test_keys_one_relevance_set_per_key(toy):
    run, qrels = toy
    reduced = qrels[qrels["docno"] != "d4"]
    multi = pd.concat(
        [qrels.assign(left_out="none"), reduced.assign(left_out="d4")], ignore_index=True
    )
    ms = ["AP", "P@5", "Unjudged@5", "nDCG", "Bpref", "RBP(p=0.5)"]
    pt = M.evaluate(run, multi, ms, keys=["left_out"], per_topic=True)
    assert list(pt.columns) == ["left_out", "name", "qid", "measure", "value", "residual"]
    for key, q in (("none", qrels), ("d4", reduced)):
        alone = M.evaluate(run, q, ms, per_topic=True)
        got = pt[pt["left_out"] == key]
        assert got["value"].tolist() == alone["value"].tolist()
        assert got["residual"].tolist() == pytest.approx(alone["residual"].tolist(), nan_ok=True)
    avg = M.evaluate(run, multi, ms, keys=["left_out"])
    assert list(avg.columns) == ["left_out", "name", "measure", "value", "residual"]
    assert len(avg) == 2 * len(ms)


def test_graded_gains_and_threshold_in_ndcg():
    run = frames.as_run(
        pd.DataFrame({"qid": "q", "docno": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    )
    qrels = frames.as_qrels(
        pd.DataFrame({"qid": "q", "docno": ["a", "b", "c"], "label": [1, 3, 0]})
    )
    v = M.evaluate(run, qrels, ["nDCG", "nDCG(rel=2)", "nDCG@1"])["value"].tolist()
    assert v[0] == pytest.approx((1 + 3 / L2(3)) / (3 + 1 / L2(3)))
    assert v[1] == pytest.approx((3 / L2(3)) / 3)
    assert v[2] == pytest.approx(1 / 3)


# --------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------

labels = st.sampled_from([None, -1, 0, 0, 1, 2])


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(labels, min_size=0, max_size=30),
    st.integers(1, 40),
    st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=5),
    st.integers(1, 2),
)
def test_p_antip_unjudged_sum_to_one(labs, n, extra, rel):
    docs = [f"d{i}" for i in range(len(labs))]
    run = frames.as_run(
        pd.DataFrame(
            {
                "qid": "q",
                "docno": ["x", *docs],
                "score": np.arange(len(docs) + 1, 0, -1, dtype=float),
            }
        )
    )
    judged = [(d, lab) for d, lab in zip(docs, labs, strict=True) if lab is not None]
    judged += [(f"e{i}", lab) for i, lab in enumerate(extra)]
    qrels = frames.as_qrels(pd.DataFrame(judged, columns=["docno", "label"]).assign(qid="q"))
    ms = [f"P(rel={rel})@{n}", f"AntiP(rel={rel})@{n}", f"Unjudged@{n}"]
    p, anti, unj = M.evaluate(run, qrels, ms, per_topic=True)["value"].tolist()
    assert p + anti + unj == pytest.approx(1.0, abs=1e-12)
    assert min(p, anti, unj) >= 0


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=30),
    st.lists(st.sampled_from([0, 1, 2]), max_size=5),
)
def test_condensed_equals_full_when_all_judged(labs, extra):
    docs = [f"d{i}" for i in range(len(labs))]
    run = frames.as_run(
        pd.DataFrame({"qid": "q", "docno": docs, "score": np.arange(len(docs), 0, -1, dtype=float)})
    )
    rows = list(zip(docs, labs, strict=True)) + [(f"e{i}", x) for i, x in enumerate(extra)]
    qrels = frames.as_qrels(pd.DataFrame(rows, columns=["docno", "label"]).assign(qid="q"))
    ms = ["AP", "AP'", "nDCG@5", "nDCG'@5", "Q", "Q'", "RBP", "RBP'"]
    v = M.evaluate(run, qrels, ms, per_topic=True)["value"].to_numpy()
    np.testing.assert_allclose(v[0::2], v[1::2], rtol=0, atol=1e-15)


# --------------------------------------------------------------------------------------------
# pytrec_eval cross-check (float32 scores there: use well-separated scores)
# --------------------------------------------------------------------------------------------


def test_against_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(7)
    rows, qrows = [], []
    for q in ("q1", "q2", "q3", "q4"):
        n = int(rng.integers(5, 60))
        for i in range(n):
            rows.append((q, f"D{i:03d}", float(rng.permutation(1000)[0] + i * 1000)))
        for i in rng.choice(80, size=40, replace=False):
            qrows.append((q, f"D{i:03d}", int(rng.choice([0, 0, 1, 2]))))
    run = frames.as_run(pd.DataFrame(rows, columns=["qid", "docno", "score"]))
    qrels = frames.as_qrels(pd.DataFrame(qrows, columns=["qid", "docno", "label"]))
    trec = [
        "P_5",
        "P_10",
        "P_100",
        "map",
        "ndcg",
        "ndcg_cut_10",
        "bpref",
        "Rprec",
        "recip_rank",
        "recall_10",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map_cut_10",
    ]
    pq = {
        q: dict(zip(g["docno"].astype(str), g["label"].astype(int), strict=True))
        for q, g in qrels.groupby(qrels["qid"].astype(str), observed=True)
    }
    pr = {
        q: dict(zip(g["docno"].astype(str), g["score"], strict=True))
        for q, g in run.groupby(run["qid"].astype(str), observed=True)
    }
    ref = pytrec_eval.RelevanceEvaluator(pq, set(trec)).evaluate(pr)
    pt = M.evaluate(run, qrels, trec, per_topic=True)
    names = {str(M.parse(t)): t for t in trec}
    n = 0
    for qid, meas, value in zip(
        pt["qid"].astype(str), pt["measure"].astype(str), pt["value"], strict=True
    ):
        assert value == pytest.approx(ref[qid][names[meas]], abs=1e-12), (qid, meas)
        n += 1
    assert n == 4 * len(trec)


def test_topic_coverage_is_reported_not_silent():
    """A run that lacks a judged topic, or answers an unjudged one, is named in a warning."""
    from pbtools.measures import CoverageWarning, topic_coverage

    runs = pd.DataFrame(
        {
            "name": ["a", "a", "b"],
            "qid": ["1", "3", "1"],
            "docno": ["d1", "d2", "d1"],
            "score": [1.0, 1.0, 1.0],
        }
    )
    qrels = pd.DataFrame({"qid": ["1", "2"], "docno": ["d1", "d2"], "label": [1, 1]})
    cov = topic_coverage(runs, qrels).set_index("name")
    assert cov.loc["a", "missing"] == ["2"] and cov.loc["a", "unjudged"] == ["3"]
    assert cov.loc["b", "n_missing"] == 1 and cov.loc["b", "n_unjudged"] == 0
    with pytest.warns(CoverageWarning, match=r"a lacks 1 \(2\)"):
        avg = M.evaluate(runs, qrels, ["P@1"])
    assert avg["value"].tolist() == [1.0, 1.0]  # over the answered topics (trec_eval 9)
    with pytest.warns(CoverageWarning, match="not evaluated"):
        avg = M.evaluate(runs, qrels, ["P@1"], topics="all")
    assert avg["value"].tolist() == [0.5, 0.5]  # -c: the missing topic scores 0
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", CoverageWarning)
        M.evaluate(runs, qrels, ["P@1"], warn=False)
    both = pd.DataFrame(
        {"name": ["a", "a"], "qid": ["1", "2"], "docno": ["d1", "d2"], "score": [1.0, 1.0]}
    )
    assert topic_coverage(both, qrels).empty
