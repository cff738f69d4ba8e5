"""Estimators fit once and predict many, describe themselves, and ``correct`` has one signature
(issue 29 items 2 and 4)."""

from __future__ import annotations

import contextlib
import inspect
import io
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import pbtools
from pbtools import corrections, synth
from pbtools.cli import build_parser
from pbtools.corrections import (
    Condensed,
    Estimator,
    Lipani,
    ReducedPool,
    TrueScore,
    WebberCommonTopics,
    WebberOnRuns,
)
from pbtools.corrections.registry import ESTIMATORS, SkippedMeasuresWarning, defaults, describe
from pbtools.experiments import figures
from pbtools.experiments.report import ESTIMATOR_HELP, text_report


@pytest.fixture(scope="module")
def col():
    return synth.generate(topics=6, runs=6, orgs=3, docs=120, run_length=30, depth=10, seed=3)


def _split(col):
    """The pool without o03r2, and o03r2 as the new (unpooled) run."""
    new = col.runs["name"] == "o03r2"
    return col.runs[~new], col.runs[new]


def _measures(cls):
    return ["P@5", "P@10"] if cls is Lipani else ["P@10", "AP"]


# ------------------------------------------------------------------ fit once, predict many
@pytest.mark.parametrize("cls", [ReducedPool, TrueScore, Condensed, WebberOnRuns, Lipani])
def test_fit_once_then_predict_many_is_the_verbs_estimate(col, cls, monkeypatch):
    pooled, new = _split(col)
    ms = _measures(cls)
    est = cls(measures=ms).fit(pooled, col.qrels, col.orgs)
    assert est.depth_ == 10 and est.runs_["name"].nunique() == 5
    # predict reuses what fit did: the pool is not inferred again
    from pbtools.pooling import inference

    def boom(*a, **k):
        raise AssertionError("predict inferred the pool again")

    monkeypatch.setattr(inference, "infer_pool", boom)
    got = est.predict(new)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedMeasuresWarning)
        verb = corrections.correct(
            new, (pooled, col.qrels, col.orgs), ms, estimators=[cls.name], depth=10
        )
    assert_frame_equal(got, verb, check_exact=True)
    # pooled runs, one at a time and all at once, as if their organisation had not pooled
    some = pooled[pooled["name"].isin(["o01r1", "o02r2", "o03r1"])]
    batch = est.predict(some, leave_out="org")
    one = pd.concat(
        [
            est.predict(some[some["name"] == n], leave_out="org")
            for n in ("o01r1", "o02r2", "o03r1")
        ],
        ignore_index=True,
    )
    assert len(batch) == 3 * len(ms)
    assert_frame_equal(one, batch, check_exact=True)


def _odd_runs(col, pooled):
    """New runs that the pool's layout does not cover: documents new to the collection and
    documents known on other topics only, a ranking longer than any pooled one, and a topic
    neither the pool nor the qrels have (the pool is then encoded with it)."""
    base = col.runs[col.runs["name"] == "o03r2"][["name", "qid", "docno", "score"]]
    base = base.assign(docno=base["docno"].astype(str), qid=base["qid"].astype(str))
    on_1 = set(base.loc[base["qid"] == "001", "docno"])
    elsewhere = [d for d in pooled["docno"].astype(str).unique() if d not in on_1][:15]
    tail = pd.DataFrame(
        {"qid": "001", "docno": [*elsewhere, "zz1", "zz2"], "score": -1.0 - np.arange(17)}
    )
    a = pd.concat([base, tail.assign(name="a")], ignore_index=True).assign(name="a")
    b = base.assign(name="b", score=-base["score"])  # the same documents, reversed
    c = pd.concat([base, base.head(5).assign(qid="999")], ignore_index=True).assign(name="c")
    return pd.concat([a, b, c], ignore_index=True)


@pytest.mark.parametrize("cls", [ReducedPool, Condensed, WebberOnRuns, Lipani])
def test_fit_encodes_the_pool_once_and_predict_reuses_it(col, cls, monkeypatch):
    # fit encodes the pool (DenseRuns once); each predict adds its runs to that encoding: one
    # run a call, all in one call and the verb give the same frame, bit for bit
    from pbtools.engine import dense

    pooled, _ = _split(col)
    new = _odd_runs(col, pooled)
    ms = _measures(cls)
    calls = []
    real = dense.DenseRuns.__init__

    def counted(self, *a, **k):
        calls.append(k.get("topics") is not None)
        real(self, *a, **k)

    monkeypatch.setattr(dense.DenseRuns, "__init__", counted)
    est = cls(measures=ms, depth=10).fit(pooled, col.qrels, col.orgs)
    pool = est.pool_
    kept = (pool.enc.D.copy(), pool.enc.RK.copy(), pool.truth.copy())
    assert calls == [False]
    one = {n: est.predict(new[new["name"] == n]) for n in ("a", "b")}
    assert calls == [False]  # runs on the pool's topics: the pool is not encoded again
    both = est.predict(new[new["name"].isin(["a", "b"])])
    assert calls == [False]
    assert_frame_equal(pd.concat(one.values(), ignore_index=True), both, check_exact=True)
    # a run reusing stale per-run data (the previous call's runs) would differ: b after a
    assert not one["a"]["value"].equals(one["b"]["value"]) or cls is Condensed
    assert_frame_equal(est.predict(new[new["name"] == "a"]), one["a"], check_exact=True)
    # the pool is read, never written
    assert (pool.enc.D == kept[0]).all() and (pool.enc.RK == kept[1]).all()
    assert (pool.truth == kept[2]).all() and est.pool_ is pool
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedMeasuresWarning)
        verb = corrections.correct(
            new, (pooled, col.qrels, col.orgs), ms, estimators=[cls.name], depth=10
        )
    alone = est.predict(new[new["name"] == "c"])  # topic 999: a pool encoded with it
    assert calls[-1] is True
    assert_frame_equal(pd.concat([both, alone], ignore_index=True), verb, check_exact=True)


def test_a_fitted_pool_scores_as_trec_eval(col):
    # independent of the encoding: the reduced score of the odd runs is evaluate's
    pooled, _ = _split(col)
    new = _odd_runs(col, pooled)
    est = ReducedPool(measures=["P@10", "AP", "nDCG", "R@30"], depth=10)
    est.fit(pooled, col.qrels, col.orgs)
    for n in ("a", "b", "c"):
        got = est.predict(new[new["name"] == n])
        ref = pbtools.evaluate(new[new["name"] == n], col.qrels, ["P@10", "AP", "nDCG", "R@30"])
        ref = ref.set_index("measure")["value"]
        np.testing.assert_allclose(got.set_index("measure")["value"], ref[got["measure"]])


def test_score_is_a_deprecated_alias_of_predict(col):
    pooled, new = _split(col)
    est = WebberOnRuns(measures=["P@10", "AP"], depth=10).fit(pooled, col.qrels, col.orgs)
    with pytest.warns(DeprecationWarning, match=r"WebberOnRuns\.score is deprecated.*predict"):
        old = est.score(new_runs=new)  # the old keyword too
    assert_frame_equal(old, est.predict(new), check_exact=True)
    common = col.qrels[col.qrels["qid"] == col.qrels["qid"].iloc[0]]
    wt = WebberCommonTopics(measures=["P@10"], n_boot=20).fit(pooled, col.qrels)
    with pytest.warns(DeprecationWarning, match="WebberCommonTopics.score is deprecated"):
        old = wt.score(new, common)
    assert_frame_equal(old, wt.predict(new, common), check_exact=True)


# ------------------------------------------------------------------ one correct signature
def test_correct_has_one_signature():
    low = list(inspect.signature(corrections.correct).parameters)
    top = list(inspect.signature(pbtools.correct).parameters)
    assert low[:3] == top[:3] == ["runs", "collection", "measures"]
    shared = [p for p in low if p in top]
    assert shared == [p for p in top if p in low]  # the same order
    assert set(low) - set(top) == {"rp_pairs"}
    assert set(top) - set(low) == {"prediction", "scale", "policy", "jobs"}
    for name in ("leave_out", "topics", "estimators"):
        assert name in shared


def test_the_old_forms_warn_and_give_the_same_frame(col):
    pooled, new = _split(col)
    ms = ["P@10", "AP"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedMeasuresWarning)
        want = corrections.correct(new, (pooled, col.qrels, col.orgs), ms, depth=10)
        with pytest.warns(DeprecationWarning, match=r"correct\(runs, \(pooled_runs, qrels"):
            pos = corrections.correct(new, pooled, col.qrels, col.orgs, ms, depth=10)
        with pytest.warns(DeprecationWarning, match="pass the pool as one argument"):
            kw = corrections.correct(
                new_runs=new, pooled_runs=pooled, qrels=col.qrels, measures=ms, depth=10
            )
        with pytest.warns(DeprecationWarning, match=r"estimate\(.*deprecated.*correct"):
            est = corrections.estimate(pooled, new, col.qrels, measures=ms, depth=10)
        # an io Collection (runs, qrels, orgs) whose runs all built the pool
        pool = SimpleNamespace(runs=pooled, qrels=col.qrels, orgs=col.orgs)
        obj = corrections.correct(new, pool, ms, depth=10)
    for got in (pos, kw, obj):
        assert_frame_equal(got, want, check_exact=True)
    assert_frame_equal(
        est.sort_values(["estimator", "measure"]).reset_index(drop=True),
        want.sort_values(["estimator", "measure"]).reset_index(drop=True),
        check_exact=True,
    )
    with pytest.raises(pbtools.InputError, match="collection must be the pool"):
        corrections.correct(new, "some/track", ms)


def test_front_door_takes_runs_and_the_old_new_run_keyword(col):
    pooled, new = _split(col)
    kw = {"n_boot": 2, "prediction": False, "progress": False, "depth": 10}
    want = pbtools.correct(new, (pooled, col.qrels, col.orgs), ["P@10"], **kw)
    with pytest.warns(DeprecationWarning, match=r"new_run=\.\.\.\) is deprecated"):
        got = pbtools.correct(new_run=new, collection=(pooled, col.qrels, col.orgs), **kw)
    assert_frame_equal(got, want, check_exact=True)
    topics = pbtools.correct(new, (pooled, col.qrels, col.orgs), ["P@10"], topics="all", **kw)
    assert topics["value"].notna().all()


# ------------------------------------------------------------------ a class describes itself
class Toy(Estimator):
    """The reduced score plus one tenth (a test estimator)."""

    name = "toy"
    label = "toy bound"
    colour = "#123456"
    marker = "X"
    description = "the reduced score plus a tenth, for the registry's tests."
    default_for = frozenset({"analyze", "correct", "cli"})

    def estimate(self, problem, measures):
        values = problem.own(measures) + 0.1
        return problem.frame(values, measures, self.name, adjustment=values * 0 + 0.1)


@pytest.fixture
def toy():
    ESTIMATORS[Toy.name] = Toy  # the one registration line
    try:
        yield Toy
    finally:
        del ESTIMATORS[Toy.name]


def _help(*argv: str) -> str:
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), contextlib.suppress(SystemExit):
        build_parser().parse_args([*argv, "--help"])
    return " ".join(shown.getvalue().split())


def test_the_built_in_classes_describe_themselves():
    assert defaults("analyze") == defaults("correct") == ("reduced", "webber", "lipani")
    assert defaults("cli") == ("reduced", "webber", "lipani", "condensed")
    for name, cls in ESTIMATORS.items():
        assert cls.name == name and cls.label and cls.description and cls.colour
        assert figures.estimator_colour(name) == cls.colour
        assert figures.estimator_label(name) == cls.label
        assert figures.estimator_marker(name) == cls.marker
        assert ESTIMATOR_HELP[name] == cls.description
    assert figures.estimator_colour("nobody") in ("#8c564b", "#e377c2", "#17becf", "#bcbd22")
    assert figures.estimator_label("nobody") == "nobody"
    assert figures.estimator_marker("nobody") == "o"
    assert "webber_topics" not in _help("correct").split("ESTIMATORS")[1].split("--protocol")[0]


def test_a_registered_estimator_appears_everywhere(toy, col):
    assert defaults("analyze")[-1] == "toy" and defaults("cli")[-1] == "toy"
    for command in ("correct", "analyze", "report"):
        assert describe("toy") in _help(command), command
    assert figures.estimator_colour("toy") == "#123456"
    assert figures.estimator_label("toy") == "toy bound"
    assert figures.estimator_marker("toy") == "X"
    pooled, new = _split(col)
    res = corrections.correct(new, (pooled, col.qrels, col.orgs), ["P@10"], depth=10)
    assert list(res["estimator"].unique()) == ["reduced", "webber", "lipani", "toy"]
    red, t = (res.loc[res["estimator"] == e, "value"].iloc[0] for e in ("reduced", "toy"))
    assert t == red + 0.1
    from pbtools.experiments.htmlreport import legend_html

    page = legend_html(["reduced", "toy"], 0.05)
    assert "#123456" in page and "toy bound" in page and "plus a tenth" in page


@pytest.mark.slow
def test_analyze_runs_a_registered_estimator_by_default(toy, col):
    a = pbtools.analyze(
        (col.runs, col.qrels, col.orgs),
        measures=["P@10"],
        leave_out=["org"],
        run_sets=["all"],
        progress=False,
    )
    assert a.params["estimators"] == ["reduced", "webber", "lipani", "toy"]
    assert "toy" in set(a.errors["estimator"]) and "toy" in set(a.scores["estimator"])
    assert "the reduced score plus a tenth" in " ".join(text_report(a).split())


def test_an_unregistered_estimator_leaves_no_trace(toy):
    del ESTIMATORS["toy"]
    try:
        assert "toy" not in defaults("analyze") and "toy bound" not in _help("correct")
        assert figures.estimator_label("toy") == "toy"
    finally:
        ESTIMATORS["toy"] = Toy


@pytest.mark.slow
def test_analyze_default_estimators_are_the_old_tuple():
    """The registry's defaults give the tables the old ("reduced", "webber", "lipani") gave."""
    kw = {"measures": ["P@10", "AP"], "leave_out": ["org"], "run_sets": ["all"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = pbtools.analyze(progress=False, **kw)
        b = pbtools.analyze(progress=False, estimators=("reduced", "webber", "lipani"), **kw)
    for table in ("scores", "errors"):
        assert_frame_equal(getattr(a, table), getattr(b, table), check_exact=True)
