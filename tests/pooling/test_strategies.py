"""Pooling strategies (pbtools.pooling.strategies): hand-checked choice orders, independent
re-implementations of each definition on random runs, budgets, the assessor, the registry."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pbtools import pooling, synth
from pbtools.frames import as_qrels
from pbtools.pooling import Pool
from pbtools.pooling import strategies as S
from pbtools.pooling.strategies import from_rankings
from pbtools.pooling.strategies.sampling import stratum_sizes

# --------------------------------------------------------------------------------------------
# a hand-made collection: two topics
#
#   topic 1   A: a b c d      B: b e a f      C: g b h
#   topic 2   A: p q          B: q r          C: s
# --------------------------------------------------------------------------------------------

RUNS = from_rankings(
    {
        ("A", "1"): ["a", "b", "c", "d"],
        ("B", "1"): ["b", "e", "a", "f"],
        ("C", "1"): ["g", "b", "h"],
        ("A", "2"): ["p", "q"],
        ("B", "2"): ["q", "r"],
        ("C", "2"): ["s"],
    }
)


def qrels_of(labels: dict) -> pd.DataFrame:
    rows = [(q, d, lab) for (q, d), lab in labels.items()]
    return as_qrels(pd.DataFrame(rows, columns=["qid", "docno", "label"]))


LABELS = {("1", "a"): 0, ("1", "b"): 1, ("1", "e"): 1, ("1", "g"): 0, ("2", "q"): 1}
QRELS = qrels_of(LABELS)


def order(strategy, budget=None, runs=RUNS, qrels=QRELS, **kw) -> dict[str, list[str]]:
    """The judging order per topic."""
    o = Pool.simulate(runs, qrels, strategy, budget, **kw).order
    return {q: g["docno"].astype(str).tolist() for q, g in o.groupby("qid", observed=True)}


# --------------------------------------------------------------------------------------------
# hand-checked orders
# --------------------------------------------------------------------------------------------


def test_take_n_order_best_rank_then_runs_then_docno():
    # topic 1: rank 1 = a, b, g (b ranked by 3 runs, a by 2, g by 1); rank 2: e only new... c? A's
    # rank 3 is c, B's rank 2 e, C's rank 2 b (taken): e, then rank 3 c, h (a taken) → c, h
    assert order("take", 6) == {"1": ["b", "a", "g", "e", "c", "h"], "2": ["q", "p", "s", "r"]}


def test_depth_equals_the_existing_pool_exactly():
    for d in (1, 2, 3, 4):
        got = Pool.simulate(RUNS, QRELS, S.Depth(d)).qrels
        want = pooling.pool(RUNS, d)
        pd.testing.assert_frame_equal(
            got[["qid", "docno"]].astype(str), want.astype(str), check_dtype=False
        )


def test_depth_with_a_budget_is_cut_in_take_n_order():
    assert order(S.Depth(2), 3) == {"1": ["b", "a", "g"], "2": ["q", "p", "s"]}


def test_rbp_a_orders_by_summed_weight():
    # p = 0.5: b = .25 + .5 + .25 = 1.0, a = .5 + .125, g = .5, e = .25, c = .125, h = .125 ...
    assert order(S.RBPA(0.5), 4)["1"] == ["b", "a", "g", "e"]


def test_mtf_stays_on_a_run_while_it_pays():
    # seed 0 draws A on topic 1: a is non-relevant → A drops to -1; B and C tie, B is drawn: b and
    # e are relevant, a was judged (skipped, free), f was never judged (-1 = non-relevant) → B
    # drops; C is the only run left at 0: g. Topic 2: C (s, unjudged), then A (p), then B: q, r.
    p = Pool.simulate(RUNS, QRELS, "mtf", 5, seed=0)
    got = {q: g["docno"].astype(str).tolist() for q, g in p.order.groupby("qid", observed=True)}
    assert got == {"1": ["a", "b", "e", "f", "g"], "2": ["s", "p", "q", "r"]}
    assert p.order["run"].astype(str).tolist() == list("ABBBC") + list("CABB")


def test_maxmean_prefers_the_run_with_relevant_documents():
    runs = from_rankings(
        {("A", "1"): ["a1", "a2", "a3", "a4"], ("B", "1"): ["b1", "b2", "b3", "b4"]}
    )
    qrels = qrels_of({("1", "b1"): 1, ("1", "b2"): 1, ("1", "b3"): 1, ("1", "a1"): 0})
    for seed in range(5):
        # A first: a1 (non-relevant, 1/3) → B (1/2) wins every later choice; B first: b1..b4
        # (B stays above 1/2), then a1
        o = order("maxmean", 5, runs=runs, qrels=qrels, seed=seed)["1"]
        assert [d for d in o if d.startswith("b")] == ["b1", "b2", "b3", "b4"]
        assert set(o) == {"a1", "b1", "b2", "b3", "b4"}


# --------------------------------------------------------------------------------------------
# independent re-implementations on random runs (pandas / pure Python, reference-tool style)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def col():
    c = synth.generate(topics=4, docs=60, runs=6, orgs=3, run_length=25, depth=10, seed=5)
    return c.runs, c.truth


def _by_score(runs: pd.DataFrame, score: pd.Series, budget: int) -> dict[str, list[str]]:
    """Top ``budget`` documents per topic by descending score, ties by docno."""
    df = score.rename("s").reset_index()
    df = df.sort_values(["qid", "s", "docno"], ascending=[True, False, True])
    return {q: g["docno"].head(budget).tolist() for q, g in df.groupby("qid")}


def _long(runs):
    return runs.assign(name=runs["name"].astype(str), qid=runs["qid"].astype(str)).assign(
        docno=runs["docno"].astype(str)
    )


@pytest.mark.parametrize("budget", [1, 7, 30])
def test_fusion_strategies_match_pandas_definitions(col, budget):
    runs, truth = col
    r = _long(runs)
    g = ["qid", "docno"]
    rbp = r.assign(w=0.2 * 0.8 ** (r["rank"] - 1)).groupby(g)["w"].sum()
    rrf = r.assign(w=1 / (60 + r["rank"])).groupby(g)["w"].sum()
    span = r.groupby(["name", "qid"])["score"].transform(lambda s: s.max() - s.min())
    low = r.groupby(["name", "qid"])["score"].transform("min")
    comb = r.assign(w=np.where(span > 0, (r["score"] - low) / span.where(span > 0, 1), 1.0))
    comb = comb.groupby(g)["w"].sum()
    n_docs = r.groupby("qid")["docno"].nunique()
    length = r.groupby(["name", "qid"])["docno"].transform("size")
    nd = r["qid"].map(n_docs)
    share = (nd - length + 1) / 2
    borda = r.assign(w=nd - r["rank"] + 1 - share).groupby(g)["w"].sum()
    for spec, score in [("rbp:0.8", rbp), ("rrf:60", rrf), ("combsum", comb), ("borda", borda)]:
        got = order(spec, budget, runs=runs, qrels=truth)
        want = _by_score(r, score.round(12), budget)
        assert got == want, spec


def _reference_rbp_bc(runs, qrels, p, cubic, budget):
    """Moffat et al. methods B/C, one topic at a time, as PoolBiasEstimators' RBPBasedPool."""
    r = _long(runs)
    rel = {
        (str(q), str(d))
        for q, d, lab in qrels[["qid", "docno", "label"]].itertuples(index=False)
        if lab > 0
    }
    out = {}
    for q, g in r.groupby("qid"):
        w = {(row.name, row.docno): (1 - p) * p ** (row.rank - 1) for row in g.itertuples()}
        docs = sorted(set(g["docno"]))
        names = sorted(set(g["name"]))
        acc = []
        while len(acc) < min(budget, len(docs)):
            coef = {}
            for n in names:
                res = 1 - sum(w.get((n, d), 0) for d in acc)
                score = sum(w.get((n, d), 0) for d in acc if (q, d) in rel)
                coef[n] = res * (score + res / 2) ** 3 if cubic else res
            best = max(
                (d for d in docs if d not in acc),
                key=lambda d: (
                    round(sum(w.get((n, d), 0) * coef[n] for n in names), 12),
                    -docs.index(d),
                ),
            )
            acc.append(best)
        out[q] = acc
    return out


@pytest.mark.parametrize("cubic", [False, True])
def test_rbp_b_and_c_match_the_reference_definition(col, cubic):
    runs, truth = col
    got = order(S.RBPC(0.8) if cubic else S.RBPB(0.8), 12, runs=runs, qrels=truth)
    assert got == _reference_rbp_bc(runs, truth, 0.8, cubic, 12)


def _reference_hedge(runs, qrels, beta, budget):
    """Hedge as PoolBiasEstimators' HedgeBasedPool (one topic at a time, plain Python)."""
    r = _long(runs)
    rel = {
        (str(q), str(d))
        for q, d, lab in qrels[["qid", "docno", "label"]].itertuples(index=False)
        if lab > 0
    }
    out = {}
    for q, g in r.groupby("qid"):
        docs = sorted(set(g["docno"]))
        n = len(docs)
        rank = {(row.name, row.docno): row.rank for row in g.itertuples()}
        names = sorted(set(g["name"]))
        size = {m: int((g["name"] == m).sum()) for m in names}
        rloss = {
            m: math.log(n) / 2 - sum(math.log(i) for i in range(size[m], n)) / (n - size[m]) / 2
            if n > size[m]
            else 0.0
            for m in names
        }

        def loss(m, d, n=n, rank=rank, rloss=rloss):
            return 0.5 * (math.log(n) - math.log(rank[m, d])) if (m, d) in rank else rloss[m]

        w = {m: 1.0 for m in names}
        acc = []
        while len(acc) < min(budget, n):
            tot = sum(w.values())
            best = max(
                (d for d in docs if d not in acc),
                key=lambda d: (
                    round(sum(w[m] / tot * loss(m, d) for m in names), 12),
                    -docs.index(d),
                ),
            )
            acc.append(best)
            sign = -1 if (q, best) in rel else 1
            w = {m: w[m] * beta ** (sign * loss(m, best)) for m in names}
            top = max(w.values())
            w = {m: v / top for m, v in w.items()}
        out[q] = acc
    return out


def test_hedge_matches_the_reference_definition(col):
    runs, truth = col
    assert order(S.Hedge(0.1), 12, runs=runs, qrels=truth) == _reference_hedge(runs, truth, 0.1, 12)


@pytest.mark.parametrize("seed", [0, 3, 11])
def test_mtf_follows_its_definition(col, seed):
    """Replay the judging order with the run each document came from: a run is left only after
    a non-relevant document (or when it has nothing new left), and the run taken next has the
    highest priority among the runs with unjudged documents."""
    runs, truth = col
    one = runs[runs["qid"].astype(str) == "001"]
    o = Pool.simulate(one, truth, "mtf", 30, seed=seed).order
    r = _long(one)
    lists = {n: g.sort_values("rank")["docno"].tolist() for n, g in r.groupby("name")}
    lab = truth[truth["qid"].astype(str) == "001"]
    rel = set(lab.loc[lab["label"] > 0, "docno"].astype(str))
    prio = dict.fromkeys(lists, 0)
    acc, cur = set(), None
    for d, rho in zip(o["docno"].astype(str), o["run"].astype(str), strict=True):
        if cur is not None and rho != cur:
            assert all(x in acc for x in lists[cur])  # cur ran out of new documents
            cur = None
        if cur is None:
            useful = [n for n in lists if any(x not in acc for x in lists[n])]
            assert prio[rho] == max(prio[n] for n in useful)
            cur = rho
        while lists[cur][0] in acc:  # judged documents are skipped at no cost
            lists[cur].pop(0)
        assert lists[cur].pop(0) == d
        acc.add(d)
        if d not in rel:
            prio[cur] -= 1
            cur = None
        elif not lists[cur]:
            cur = None
    assert len(acc) == 30


# --------------------------------------------------------------------------------------------
# properties every strategy has
# --------------------------------------------------------------------------------------------

ALL = [
    "depth:5",
    "take",
    "rbp:0.8",
    "rbpb:0.8",
    "rbpc:0.8",
    "mtf",
    "hedge:0.1",
    "maxmean",
    "rrf:60",
    "borda",
    "combsum",
    "uniform:10",
    "stratified:3,10:1,0.5",
]


@pytest.mark.parametrize("spec", ALL)
def test_budget_cost_and_labels(col, spec):
    runs, truth = col
    qrels = truth.iloc[::2]  # half the documents were never judged in the source
    p = Pool.simulate(runs, qrels, spec, 9, seed=1)
    assert (p.budget["cost"] <= 9).all() and (p.budget["cost"] == p.budget["budget"]).all()
    assert p.cost == int(p.budget["cost"].sum()) == len(p.order)
    assert not p.qrels.duplicated(["qid", "docno"]).any()
    src = qrels.set_index(["qid", "docno"])["label"]
    key = pd.MultiIndex.from_arrays([p.qrels["qid"].astype(str), p.qrels["docno"].astype(str)])
    src.index = pd.MultiIndex.from_arrays(
        [src.index.get_level_values(i).astype(str) for i in (0, 1)]
    )
    want = src.reindex(key).fillna(-1).astype(int).to_numpy()
    assert (p.qrels["label"].to_numpy() == want).all()
    retrieved = set(zip(runs["qid"].astype(str), runs["docno"].astype(str), strict=True))
    assert set(zip(*(key.get_level_values(i) for i in (0, 1)), strict=True)) <= retrieved
    # every judged document is ranked within the contribution depth by some run
    assert p.depth >= 1
    assert len(p.shallow([p.depth])) == len(p.qrels)


@pytest.mark.parametrize("spec", ALL)
def test_strategies_never_see_labels_they_did_not_pay_for(col, spec):
    runs, truth = col
    p = Pool.simulate(runs, truth, spec, 8, seed=2)
    asked = set(zip(p.qrels["qid"].astype(str), p.qrels["docno"].astype(str), strict=True))
    flipped = truth.copy()
    hidden = ~pd.Series(
        [
            (q, d) in asked
            for q, d in zip(truth["qid"].astype(str), truth["docno"].astype(str), strict=True)
        ]
    ).to_numpy()
    flipped.loc[hidden, "label"] = (1 - flipped.loc[hidden, "label"].clip(0, 1)).astype("int16")
    again = Pool.simulate(runs, flipped, spec, 8, seed=2)
    pd.testing.assert_frame_equal(
        p.order[["qid", "docno", "step"]], again.order[["qid", "docno", "step"]]
    )


@pytest.mark.parametrize("spec", ["uniform:10", "stratified", "mtf", "maxmean"])
def test_random_strategies_are_seeded(col, spec):
    runs, truth = col
    a = Pool.simulate(runs, truth, spec, 6, seed=7).order
    b = Pool.simulate(runs, truth, spec, 6, seed=7).order
    pd.testing.assert_frame_equal(a, b)
    others = [Pool.simulate(runs, truth, spec, 6, seed=s).order for s in range(8, 12)]
    assert any(not o["docno"].equals(a["docno"]) for o in others)


def test_total_budget_is_spread_over_topics(col):
    runs, truth = col
    p = Pool.simulate(runs, truth, "rbp", total=30)
    assert p.cost == 30 and sorted(p.budget["budget"].tolist()) == [7, 7, 8, 8]
    assert p.budget["budget"].tolist() == [8, 8, 7, 7]


def test_allocate_water_fills():
    cap = np.array([2, 50, 9, 0, 30])
    for total in (0, 1, 10, 37, 60, 91, 200):
        b = S.allocate(cap, total=total)
        assert b.sum() == min(total, cap.sum()) and (b <= cap).all()
        # no topic below the level while another topic with room is two above it
        room = b < cap
        assert (
            not room.any()
            or b.max(initial=0) <= b[room].min() + 1
            or (b[~room] == cap[~room]).all()
        )
    with pytest.raises(ValueError, match="not both"):
        S.allocate(cap, budget=3, total=4)


def test_uniform_and_stratified_samples(col):
    runs, truth = col
    p = Pool.simulate(runs, truth, S.UniformSample(5), 4, seed=0)
    pool5 = set(map(tuple, pooling.pool(runs, 5).astype(str).to_numpy()))
    got = set(zip(p.qrels["qid"].astype(str), p.qrels["docno"].astype(str), strict=True))
    assert got <= pool5
    n5 = pooling.pool(runs, 5).groupby("qid", observed=True).size().to_numpy()
    np.testing.assert_allclose(p.order.groupby("qid", observed=True)["prob"].first(), 4 / n5)
    # stratified: the top stratum is taken whole when its weight dwarfs the others
    s = Pool.simulate(runs, truth, S.Stratified((2, 10), (1.0, 0.01)), 8, seed=0)
    top = pooling.pool(runs, 2)
    for q, g in s.order.groupby("qid", observed=True):
        first = set(top[top["qid"] == q]["docno"].astype(str))
        assert set(g["docno"].astype(str).head(len(first))) == first
        assert (g["prob"].head(len(first)) == 1).all()
    # rates ∝ (1, .5, .1) with 3·c + 10·c/2 + 100·c/10 = 12: c = 2/3, sizes 2, 3.3, 6.7 → 2, 3, 7
    sizes = stratum_sizes(np.array([[3, 10, 100]]), np.array([1, 0.5, 0.1]), np.array([12]))
    assert sizes.tolist() == [[2, 3, 7]]


def test_assessor_refuses_unpaid_labels():
    pb = S.PoolingTask(RUNS, QRELS)
    a = S.Assessor(pb)
    a.judge(np.array([0]), np.array([0]))
    with pytest.raises(RuntimeError, match="not judged"):
        a.known(np.array([0]), np.array([1]))


# --------------------------------------------------------------------------------------------
# registry and specs
# --------------------------------------------------------------------------------------------


def test_every_registered_strategy_round_trips_its_spec():
    for name, cls in S.REGISTRY.items():
        s = cls()
        assert s.name == name and S.parse(s.spec) == s
        assert cls.__doc__ and "References" in cls.__doc__ and "Examples" in cls.__doc__


@pytest.mark.parametrize(
    "spec, msg",
    [
        ("nope", "unknown pooling strategy"),
        ("depth:0", "depth must be a positive integer"),
        ("depth:x", "is not an integer"),
        ("rbp:1.5", r"p must lie in \(0, 1\]"),
        ("hedge:beta=2", r"beta must lie in \(0, 1\)"),
        ("take:3", "takes 0 parameter"),
        ("rrf:q=3", "unknown parameter"),
        ("stratified:10,5:1,1", "must increase"),
        ("stratified:10:1,2", "one weight per stratum"),
    ],
)
def test_bad_specs_are_refused(spec, msg):
    with pytest.raises(ValueError, match=msg):
        S.parse(spec)


def test_a_budget_is_required_unless_the_strategy_has_a_size():
    with pytest.raises(ValueError, match="needs a budget"):
        Pool.simulate(RUNS, QRELS, "rbp")
    assert Pool.simulate(RUNS, QRELS, "depth:1").cost == 6  # a, b, g and p, q, s


# --------------------------------------------------------------------------------------------
# benchmarks/pooling_strategies.py (docs/pooling.md: tests/test_docs.py)
# --------------------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location(
        "pooling_strategies", REPO / "benchmarks" / "pooling_strategies.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["pooling_strategies"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_with_measure_accepts_both_experiment_layouts():
    bench = _bench()
    old = pd.DataFrame({"name": ["a"], "n": [10], "estimator": ["reduced"]})
    new = pd.DataFrame({"name": ["a"], "measure": ["P@10"], "estimator": ["reduced"]})
    for frame in (old, new):
        out = bench.with_measure(frame)
        assert out["measure"].tolist() == ["P@10"] and "n" not in out.columns


def test_verdict_follows_the_error_tables():
    bench = _bench()

    def frame(maes: dict, measures: tuple) -> pd.DataFrame:
        rows = [
            {
                "track": "T",
                "strategy": s,
                "budget": b,
                "measure": m,
                "estimator": "reduced",
                "mae": v,
                "depth": 5,
            }
            for s, vs in maes.items()
            for b, v in zip((10, 20), vs, strict=True)
            for m in measures
        ]
        return pd.DataFrame(rows)

    bias = frame({"take": (0.01, 0.01), "rbp:0.8": (0.03, 0.03)}, ("P@10",))
    errors = frame(
        {"take": (0.2, 0.2), "rbpb:0.8": (0.1, 0.2), "uniform:100": (0.0, 0.0)},
        ("P@10", "RBP(p=0.8)@10"),
    )
    v = bench.verdict(bias, errors).iloc[0]
    assert v["holds"] and v["best_P@10"] == v["best_RBP@10"] == "rbpb:0.8"  # samplers left out
    assert np.isclose(v["mae_P@10"], 0.15) and v["best_bias"] == "take"
    assert v["best_rbp_bias"] == "rbp:0.8" and "HOLDS" in v["statement"]
    errors.loc[(errors["strategy"] == "take") & (errors["measure"] == "P@10"), "mae"] = 0.05
    v = bench.verdict(bias, errors).iloc[0]
    assert not v["holds"] and v["best_P@10"] == "take" and "DOES NOT HOLD" in v["statement"]
    with pytest.raises(ValueError, match="same budgets"):
        bench.verdict(bias, errors.drop(index=0))


@pytest.mark.shared
@pytest.mark.slow
def test_pooling_strategies_benchmark_small_scale_on_trec2(trec2_dir, tmp_path):
    """The benchmark at a small scale (6 topics, budgets 10 and 20, every strategy) on TREC-2:
    every output, and a verdict that is the one its bias table implies."""
    bench = _bench()
    res = bench.run(trec2_dir, tmp_path, jobs=1, progress=False, topics=6, budgets=(10, 20))
    for f in (
        "errors.parquet",
        "bias.parquet",
        "timings.parquet",
        "verdict.parquet",
        "pooling_strategies.md",
        "error_vs_budget.png",
        "error_vs_budget.svg",
    ):
        assert (tmp_path / f).is_file(), f
    errors, bias, v = res["errors"], res["bias"], res["verdict"]
    assert set(errors["strategy"]) == {S.parse(s).spec for s in bench.STRATEGIES}
    assert set(errors["measure"]) == set(bench.MEASURES)
    assert set(bias["estimator"]) == {"reduced", "webber", "lipani"}
    assert (errors["cost"] <= errors["budget"] * 6).all()
    assert errors["mae"].between(0, 1).all() and errors["tau"].between(-1, 1).all()
    direct = errors[~errors["strategy"].str.split(":").str[0].isin(bench.SAMPLERS)]
    row = v.iloc[0]
    for m, col in (("P@10", "P@10"), ("RBP(p=0.8)@10", "RBP@10")):
        mean = direct[direct["measure"] == m].groupby("strategy")["mae"].mean()
        assert row[f"best_{col}"] == mean.idxmin() and np.isclose(row[f"mae_{col}"], mean.min())
    red = bias[(bias["estimator"] == "reduced") & (bias["measure"] == "P@10")]
    assert row["best_bias"] in set(red["strategy"])
    rbp = {row["best_P@10"].split(":")[0], row["best_RBP@10"].split(":")[0]}
    assert row["holds"] == (rbp <= set(bench.RBP_BASED))
    assert ("HOLDS" if row["holds"] else "DOES NOT HOLD") in row["statement"]
    assert row["statement"] in (tmp_path / "pooling_strategies.md").read_text()


def test_the_old_name_problem_still_works_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="PoolingTask"):
        cls = S.Problem
    assert cls is S.PoolingTask
