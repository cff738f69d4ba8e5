"""Tests of the estimators: toy cases by hand and invariants (Lipani 2015, Webber & Park 2009)."""

import numpy as np
import pandas as pd
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from pbtools import corrections
from pbtools.corrections import (
    PRESETS,
    Condensed,
    Lipani,
    ReducedPool,
    TrueScore,
    WebberCommonTopics,
    WebberOnRuns,
    correct,
    resolve,
)
from pbtools.corrections.webber_topics import webber_common_topics


def run(name, docs, qid="1"):
    return pd.DataFrame(
        {
            "name": name,
            "qid": qid,
            "docno": list(docs),
            "score": np.arange(len(docs), 0, -1, dtype=float),
        }
    )


# pooled runs p1, p2 (depth 2); the new run u finds the unjudged relevant-looking x, y
POOLED = pd.concat([run("p1", "abcd"), run("p2", "bade")])
QRELS = pd.DataFrame({"qid": "1", "docno": list("ab"), "label": [1, 0]})
NEW = run("u", "xayb")


def one(df, est, col="value"):
    return float(df.loc[df["estimator"] == est, col].iloc[0])


def test_reduced_and_lipani_by_hand():
    res = correct(NEW, (POOLED, QRELS), ["P@2", "P@4"], depth=2, estimators=("reduced", "lipani"))
    r2 = res[res["measure"] == "P@2"]
    # u top2 = x a → P .5, P̄ 0, k̄ .5
    assert one(r2, "reduced") == 0.5
    assert one(r2, "lipani", "k") == 0.5
    # u ranks a2 b4. p1 = a b c d → μ a2 b4 c3 d4 → a c d b (b moved down: d first);
    # p2 = b a d e → μ b4 a2 d3 e4 → a d e b. Top 2: a c / a d → P .5, P̄ 0 against
    # a b / b a → P .5, P̄ .5: δP 0, δP̄ −.5, δk .5 for both pooled runs.
    lip = r2[r2["estimator"] == "lipani"].iloc[0]
    assert lip["dP"] == 0.0 and lip["dAntiP"] == -0.5 and lip["dk"] == 0.5
    assert lip["lam"] == pytest.approx(0.5 * (0 * 0 + 0.5 * 0.5))
    assert bool(lip["fired"]) and lip["adjustment"] == pytest.approx(0.5 * 0.5)
    assert one(r2, "lipani") == pytest.approx(0.75)


def test_webber_by_hand_with_and_without_replacement():
    qrels = pd.DataFrame({"qid": "1", "docno": list("abcd"), "label": [1, 1, 1, 0]})
    pooled = pd.concat([run("p1", "abzy"), run("p2", "cdwv")])
    new = run("u", "cqrs")
    # depth 2: p1 contributes a b, p2 contributes c d. Leaving p1 out: a, b unjudged (P@2 1 → 0);
    # leaving p2 out: c unjudged unless u replaces p2 (u has c in its top 2).
    no = correct(new, (pooled, qrels), ["P@2"], depth=2, estimators=("webber",), replace=False)
    assert one(no, "webber", "adjustment") == pytest.approx((1.0 + 0.5) / 2)
    yes = correct(new, (pooled, qrels), ["P@2"], depth=2, estimators=("webber",), replace=True)
    assert one(yes, "webber", "adjustment") == pytest.approx((1.0 + 0.0) / 2)
    assert one(yes, "webber") == pytest.approx(0.5 + 0.5)


def test_webber_rbp():
    qrels = pd.DataFrame({"qid": "1", "docno": list("ab"), "label": [1, 1]})
    pooled = pd.concat([run("p1", "ab"), run("p2", "zz"[:1] + "y")])
    res = correct(
        run("u", "ab"),
        (pooled, qrels),
        ["RBP(p=0.5)@2"],
        depth=2,
        estimators=("reduced", "webber"),
        replace=False,
    )
    assert one(res, "reduced") == pytest.approx(0.5 + 0.25)
    assert one(res, "webber", "adjustment") == pytest.approx((0.75 + 0.0) / 2)


def test_leave_out_reports_true_and_objects():
    orgs = pd.DataFrame({"name": ["p1", "p2"], "org": ["A", "B"]})
    res = correct(
        POOLED[POOLED["name"] == "p1"],
        (POOLED, QRELS, orgs),
        ["P@2"],
        leave_out="org",
        depth=2,
        estimators=("true", "reduced", "lipani", "webber"),
    )
    assert set(res["estimator"]) == {"true", "reduced", "lipani", "webber"}
    assert one(res, "true") == 0.5
    for cls in (ReducedPool, Lipani, WebberOnRuns, Condensed, TrueScore):
        est = cls(measures=["P@2"], depth=2)
        assert "measures" in est.get_params()
        with pytest.raises(RuntimeError):
            est.predict(NEW)
        out = est.fit(POOLED, QRELS).predict(NEW)
        assert {"name", "measure", "estimator", "value"} <= set(out.columns)
    assert (
        float(Condensed(measures=["P@2"], depth=2).fit(POOLED, QRELS).predict(NEW)["value"].iloc[0])
        == 0.5
    )  # condensed u = a b


def test_presets():
    assert resolve("lipani2015")["tie"] == "lipani2015"
    assert resolve(None)["rp"] == "org" and resolve(None)["decimals"] is None
    assert set(PRESETS) >= {"lipani2015", "default"}
    with pytest.raises(ValueError):
        resolve("nope")


def test_webber_common_topics():
    u = pd.DataFrame({"name": "u", "qid": list("abcd"), "value": [0.1, 0.2, 0.3, 0.4]})
    t = pd.DataFrame({"name": "u", "qid": list("ab"), "value": [0.3, 0.3]})
    out = webber_common_topics(u, t, n_boot=200, seed=1).iloc[0]
    assert out["adjustment"] == pytest.approx(0.15)
    assert out["value"] == pytest.approx(0.25 + 0.15)
    s2 = ((0.2 - 0.15) ** 2 + (0.1 - 0.15) ** 2) / 1
    assert out["variance"] == pytest.approx((4 - 2) / (4 * 2) * s2)
    assert out["ci_low"] <= out["value"] <= out["ci_high"]
    again = webber_common_topics(u, t, n_boot=200, seed=1).iloc[0]
    assert again["ci_low"] == out["ci_low"]
    qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "label": [1]})
    full = pd.DataFrame({"qid": "1", "docno": ["a", "x"], "label": [1, 1]})
    w = (
        WebberCommonTopics(measures=["P@2"], n_boot=50)
        .fit(None, qrels)
        .predict(run("u", "xa"), full)
    )
    assert w["value"].iloc[0] == pytest.approx(1.0)


docs = st.lists(st.sampled_from(list("abcdefgh")), min_size=2, max_size=8, unique=True)


@settings(max_examples=examples(15), deadline=None)
@given(docs, docs, docs, st.lists(st.integers(0, 1), min_size=8, max_size=8))
def test_properties(d1, d2, du, labels):
    pooled = pd.concat([run("p1", d1), run("p2", d2)])
    alld = sorted(set(d1) | set(d2) | set(du))
    full = pd.DataFrame(
        {"qid": "1", "docno": alld, "label": labels[: len(alld)] + [0] * (len(alld) - len(labels))}
    )
    # nothing unjudged: every estimator equals the true score
    res = correct(
        run("u", du),
        (pooled, full),
        ["P@2", "P@5"],
        depth=8,
        estimators=("reduced", "lipani"),
    )
    for _, g in res.groupby("measure"):
        red = g.loc[g["estimator"] == "reduced", "value"].iloc[0]
        assert np.allclose(g.loc[g["estimator"] == "lipani", "value"], red)
    # Webber's adjustment is 0 when no pooled run contributes unique documents
    twins = pd.concat([run("p1", d1), run("p2", d1)])
    w = correct(run("u", du), (twins, full), ["P@2"], depth=8, estimators=("reduced", "webber"))
    assert np.allclose(w["value"], w["value"].iloc[0])
    # Lipani's correction stays within [0, k̄] on partial qrels
    part = full[full["docno"].isin(d1[:1] + d2[:1])]
    res = correct(run("u", du), (pooled, part), ["P@2", "P@5"], depth=1, estimators=("lipani",))
    assert (res["adjustment"] >= -1e-12).all()
    assert (res["adjustment"] <= res["k"] + 1e-12).all()


# ---------------------------------------------------------------------------------------------
# the corrections' own P@n / RBP kernels agree with pbtools.measures
# ---------------------------------------------------------------------------------------------

SAMPLE_DIR = __import__("pbtools.experiments.analysis").experiments.analysis.SAMPLE


@pytest.fixture(scope="module")
def sample_pool():
    from pbtools import io
    from pbtools.pooling import inference

    col = io.read_collection(SAMPLE_DIR)
    info = inference.infer_pool(col.runs, col.qrels)
    pooled = col.runs["name"].astype(str).isin(info.pooled_runs)
    return col, info, col.runs[pooled], col.runs[~pooled]


def _by(frame, value="value"):
    return (
        frame.assign(name=frame["name"].astype(str), measure=frame["measure"].astype(str))
        .set_index(["name", "measure"])[value]
        .sort_index()
    )


def test_reduced_and_indicators_agree_with_measures(sample_pool):
    from pbtools import measures

    col, info, S, U = sample_pool
    cut = [5, 10, 20]
    res = corrections.correct(
        U, (S, col.qrels), [f"P@{n}" for n in cut], estimators=("reduced",), depth=info.depth
    )
    ref = measures.evaluate(
        U, col.qrels, [f"{m}@{n}" for n in cut for m in ("P", "AntiP", "Unjudged")]
    )
    ref = _by(ref)
    for col_name, base in (("P", "P"), ("AntiP", "AntiP"), ("k", "Unjudged")):
        got = res.assign(measure=res["measure"].str.replace("P@", f"{base}@"))
        got = _by(got, col_name)
        want = ref[ref.index.get_level_values("measure").str.startswith(f"{base}@")]
        np.testing.assert_allclose(got.to_numpy(), want.reindex(got.index).to_numpy(), atol=1e-12)


def test_reduced_rbp_agrees_with_measures(sample_pool):
    from pbtools import measures

    col, info, S, U = sample_pool
    res = corrections.correct(
        U, (S, col.qrels), ["RBP(p=0.8)@10"], estimators=("reduced",), depth=info.depth
    )
    ref = _by(measures.evaluate(U, col.qrels, ["RBP(p=0.8)@10"]))
    np.testing.assert_allclose(
        _by(res).to_numpy(), ref.reindex(_by(res).index).to_numpy(), atol=1e-12
    )


def test_condensed_agrees_with_judged_only_measures(sample_pool):
    from pbtools import measures

    col, info, S, U = sample_pool
    got = corrections.condensed(U, col.qrels, ["P@5", "P@10"])
    ref = measures.evaluate(U, col.qrels, ["P(judged_only=True)@5", "P(judged_only=True)@10"])
    ref = ref.assign(
        measure=ref["measure"].astype(str).str.replace("(judged_only=True)", "", regex=False)
    )
    np.testing.assert_allclose(
        _by(got).to_numpy(), _by(ref).reindex(_by(got).index).to_numpy(), atol=1e-12
    )
    assert (got["estimator"] == "condensed").all()


def test_true_score_is_p_at_n_on_the_repooled_qrels(sample_pool):
    from pbtools import measures, pooling

    col, info, S, U = sample_pool
    est = corrections.TrueScore(measures=["P@10"]).fit(S, col.qrels, col.orgs)
    got = est.predict(S)
    ref = measures.evaluate(S, pooling.repool(S, col.qrels, info.depth), ["P@10"])
    np.testing.assert_allclose(
        _by(got).to_numpy(), _by(ref).reindex(_by(got).index).to_numpy(), atol=1e-12
    )
    assert (got["estimator"] == "true").all()
