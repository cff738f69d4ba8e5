"""Estimators for sampled pools (pbtools.measures.sampled): trec_eval's infAP, sample_eval.pl's
xinfAP / infNDCG / inferred precision, statAP; the sampled qrels the strategies write and the
reader; unbiasedness on synthetic collections with complete judgments."""

from __future__ import annotations

import glob
import itertools
import os

import numpy as np
import pandas as pd
import pytest

from pbtools import io, measures, pooling, synth
from pbtools.cli import main
from pbtools.errors import InputError
from pbtools.frames import TrecFormatError
from pbtools.measures.sampled import INFAP_EPSILON, evaluate_sampled, stratum_counts
from pbtools.pooling import Pool, strategies

GOLDEN = {  # sample_eval.pl's names -> pbtools'
    "infAP": "xinfAP",
    "infNDCG": "infNDCG",
    "iP10": "infP@10",
    "iP50": "infP@50",
    "iP1000": "infP@1000",
    "inum_rel_ret": "infNumRelRet",
    "inum_rel": "infNumRel",
}


# --------------------------------------------------------------------------------------------
# infAP: trec_eval's m_infap.c
# --------------------------------------------------------------------------------------------


def _golden(path, measure):
    out = {}
    for line in open(path):
        m, qid, v = line.split()
        if m == measure:
            out[qid] = float(v)
    return out


def test_infap_matches_trec_eval_conformance(shared_dir):
    c = shared_dir / "data" / "trec_eval_conformance"
    q, r = io.read_qrels(c / "qrels.test"), io.read_run(c / "results.test")
    gold = _golden(c / "out.test.aq", "infAP")
    pt = measures.evaluate(r, q, ["infAP"], per_topic=True)
    got = dict(zip(pt["qid"].astype(str), pt["value"], strict=True))
    assert set(got) == set(gold) - {"all"}
    for qid, v in got.items():
        assert abs(v - gold[qid]) < 5.001e-5, qid
    mean = measures.evaluate(r, q, ["infAP"])["value"].iloc[0]
    assert abs(mean - gold["all"]) < 5.001e-5


def _infap_loop(labels, R, rel=1):
    """m_infap.c, transcribed: labels in rank order (None: not in the qrels, -1: pooled)."""
    nonrel = relv = pool = 0
    s = 0.0
    for j, lab in enumerate(labels):
        if lab is None:
            continue
        if lab < 0:
            pool += 1
            continue
        if lab < rel:
            nonrel += 1
            continue
        relv += 1
        if j == 0:
            s += 1.0
        else:
            fj = float(j)
            s += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((relv - 1 + nonrel + pool) / fj) * (
                (relv - 1 + INFAP_EPSILON) / (relv - 1 + nonrel + 2 * INFAP_EPSILON)
            )
    return s / R if R else s


def test_infap_skips_unpooled_and_infers_over_pooled_unjudged():
    """Documents outside the qrels are skipped; pooled but unjudged ones (label -1) enter the
    precision estimate as if judged in the proportion of those judged above (exact floats)."""
    rng = np.random.default_rng(5)
    docs = [f"d{i:02d}" for i in range(30)]
    qrels = pd.DataFrame({"qid": "1", "docno": docs[:24], "label": rng.integers(-1, 3, 24)})
    qrels.loc[0, "label"] = 2
    order = rng.permutation(30)
    run = pd.DataFrame(
        {"name": "r", "qid": "1", "docno": [docs[i] for i in order], "score": -np.arange(30.0)}
    )
    lab = dict(zip(qrels["docno"], qrels["label"], strict=True))
    ranked = [lab.get(docs[i]) for i in order]
    for rel in (1, 2):
        R = int((qrels["label"] >= rel).sum())
        got = measures.evaluate(run, qrels, [f"infAP(rel={rel})"])["value"].iloc[0]
        assert got == _infap_loop(ranked, R, rel)
    # the -1 rows matter: read as outside the pool, infAP changes
    dropped = measures.evaluate(run, qrels[qrels["label"] >= 0], ["infAP"])["value"].iloc[0]
    assert dropped != measures.evaluate(run, qrels, ["infAP"])["value"].iloc[0]
    # and nothing else does (-1 and absent are both unjudged for the other measures)
    both = [
        measures.evaluate(run, q, ["AP", "P@10", "Bpref"])
        for q in (qrels, qrels[lambda d: d["label"] >= 0])
    ]
    pd.testing.assert_frame_equal(*both)


def test_sampled_measure_names_parse_and_need_strata():
    for name in ("infAP", "xinfAP", "infNDCG", "statAP", "infP@10", "infNumRel", "infNumRelRet"):
        assert str(measures.parse(name)) == name
    run = pd.DataFrame({"name": "r", "qid": "1", "docno": ["a"], "score": [1.0]})
    qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "label": [1]})
    with pytest.raises(InputError, match="stratum"):
        measures.evaluate(run, qrels, ["xinfAP"])


# --------------------------------------------------------------------------------------------
# xinfAP, infNDCG, infP: sample_eval.pl's golden values
# --------------------------------------------------------------------------------------------


def _sample_eval(names=None):
    from conftest import SHARED

    d = SHARED / "data" / "sample_eval"
    if not d.is_dir():
        pytest.skip("../shared/data/sample_eval is absent")
    q = io.read_sampled_qrels(d / "qrels.stratified.gz")
    files = sorted(glob.glob(str(d / "runs" / "*.gz")))
    files = [f for f in files if names is None or f.split("input.")[-1][:-3] in names]
    runs = pd.concat([io.read_run(p) for p in files], ignore_index=True)
    rows = []
    for f in sorted(glob.glob(str(d / "expected" / "*"))):
        name = os.path.basename(f).split(".")[0]
        if names is None or name in names:
            for line in open(f):
                m, qid, v = line.split()
                rows.append((name, qid, m, float(v)))
    gold = pd.DataFrame(rows, columns=["name", "qid", "measure", "gold"])
    return q, runs, gold


@pytest.fixture(scope="module")
def sample_eval():
    return _sample_eval(["INQ001", "rutfmed"])


def _check_golden(q, runs, gold):
    pt = evaluate_sampled(runs, q, list(GOLDEN.values()), per_topic=True)
    g = gold[gold["measure"].isin(list(GOLDEN)) & (gold["qid"] != "all")]
    g = g.assign(measure=g["measure"].map(GOLDEN))
    both = g.merge(pt, on=["name", "qid", "measure"], how="left", validate="1:1")
    assert both["value"].notna().all() and len(both) == len(pt)
    assert (both["value"] - both["gold"]).abs().max() < 5.001e-5  # printed to 4 decimals
    # the `all` line: means over the topics answered; the counts summed (but inum_rel, which
    # sample_eval.pl sums over every qrels topic, answered or not)
    avg = measures.aggregate(pt)
    a = gold[gold["measure"].isin([k for k in GOLDEN if k != "inum_rel"]) & (gold["qid"] == "all")]
    a = a.assign(measure=a["measure"].map(GOLDEN)).merge(avg.astype({"name": str, "measure": str}))
    assert len(a) == 6 * runs["name"].nunique()
    assert (a["value"] - a["gold"]).abs().max() < 5.001e-5


def test_xinfap_infndcg_match_sample_eval(sample_eval):
    """INQ001 (50 topics) and rutfmed (24): every per-topic value and the averages."""
    _check_golden(*sample_eval)


@pytest.mark.slow
def test_xinfap_infndcg_match_sample_eval_all_runs():
    _check_golden(*_sample_eval())


def test_interpolated_precisions_match_sample_eval(sample_eval):
    """sample_eval.pl prints its 11 interpolated precisions as averages only: INQ001 and
    rutfmed's, to its 4 decimals."""
    q, runs, gold = sample_eval
    g = gold[gold["measure"].str.startswith("iprec@rec")]
    g = g.assign(measure=[f"infIPrec@{float(m[9:]):g}" for m in g["measure"]])
    avg = evaluate_sampled(runs, q, sorted(set(g["measure"]))).astype({"name": str})
    both = g.merge(avg.astype({"measure": str}), on=["name", "measure"], validate="1:1")
    assert len(both) == 22 and (both["value"] - both["gold"]).abs().max() < 5.001e-5


def _iprec_walk(c, k, R):
    """sample_eval.pl's interpolation loop, transcribed: one ranking's 11 values."""
    cut = [x * R for x in (0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1)]
    out, cur, best = [0.0] * 11, 10, 0.0
    while cur >= 0 and cut[cur] > c[-1]:
        cur -= 1
    for ci, ki in zip(c[::-1], k[::-1], strict=True):
        best = max(best, ci / ki)
        if cur >= 0 and cut[cur] > ci:
            out[cur] += best
            cur -= 1
    while cur >= 0:
        out[cur] += best
        cur -= 1
    return out


def test_interpolation_walks_the_ranks_as_sample_eval_does():
    """Random rankings with a non-monotone Ĉ (and ties of levels within one rank): the
    vectorised walk equals the transcribed loop exactly, ranking by ranking."""
    from pbtools.measures.sampled_iprec import interpolated_precision

    rng = np.random.default_rng(7)
    lengths = rng.integers(1, 30, 40)
    c = np.concatenate([np.cumsum(rng.normal(0.3, 0.6, n)).clip(0) for n in lengths])
    k = np.concatenate([np.arange(1.0, n + 1) for n in lengths])
    g = np.repeat(np.arange(len(lengths)), lengths)
    first = np.r_[0, np.cumsum(lengths)[:-1]]
    R = rng.uniform(0, 12, len(lengths))
    got = interpolated_precision(c, k, g, first, R)
    want = [
        _iprec_walk(c[a : a + n], k[a : a + n], r)
        for a, n, r in zip(first, lengths, R, strict=True)
    ]
    np.testing.assert_array_equal(got, np.array(want))
    assert (np.diff(c)[np.diff(g) == 0] < 0).any()  # Ĉ does fall somewhere
    with pytest.raises(InputError, match="0, 0.1"):
        evaluate_sampled(pd.DataFrame(columns=["qid", "docno", "score"]), _tiny(), "infIPrec@0.25")


def _tiny():
    return pd.DataFrame(
        {
            "qid": "1",
            "docno": list("abcdef"),
            "label": [1, 0, 1, 0, -1, -1],
            "stratum": [1, 1, 2, 2, 2, 2],
        }
    )


def test_statap_estimates_the_same_number_relevant(sample_eval):
    """statAP's R̂ is the Horvitz-Thompson count of the strata (infNumRel); on the fully judged
    top stratum alone it is the count of relevant documents there."""
    q, runs, _ = sample_eval
    c = stratum_counts(q)
    r_hat = (c["r"] / c["prob"]).where(c["n"] > 0, 0).groupby(c["qid"]).sum()
    est = evaluate_sampled(runs[runs["name"] == "INQ001"], q, ["infNumRel"], per_topic=True)
    np.testing.assert_allclose(est.set_index("qid")["value"], r_hat.loc[est["qid"]], rtol=1e-12)
    assert (c.loc[c["stratum"] == "1", "prob"] == 1).all()


def test_horvitz_thompson_count_is_exactly_unbiased():
    """Enumerating every sample of a two-stratum universe, the mean of R̂ is R exactly."""
    lab = {"a": 1, "b": 0, "c": 1, "d": 1, "e": 0, "f": 0, "g": 1}
    stratum = {"a": 1, "b": 1, "c": 2, "d": 2, "e": 2, "f": 2, "g": 2}
    run = pd.DataFrame({"name": "r", "qid": "1", "docno": list(lab), "score": -np.arange(7.0)})
    got = []
    for s2 in itertools.combinations("cdefg", 2):
        sampled = {"a", "b", *s2}
        q = pd.DataFrame(
            {
                "qid": "1",
                "docno": list(lab),
                "label": [lab[d] if d in sampled else -1 for d in lab],
                "stratum": [stratum[d] for d in lab],
            }
        )
        got.append(evaluate_sampled(run, q, ["infNumRel"])["value"].iloc[0])
    assert len(got) == 10 and abs(np.mean(got) - 4) < 1e-12


# --------------------------------------------------------------------------------------------
# sampled qrels: written by the strategies, read by io
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def col():
    return synth.generate(
        topics=8,
        docs=300,
        runs=6,
        orgs=3,
        run_length=100,
        depth=40,
        rel_share=0.1,
        unpooled=1,
        seed=3,
    )


def test_sampled_qrels_list_the_universe_with_strata_and_probabilities(col):
    pooled = sorted(col.pooled)
    pool = Pool.simulate(col.runs, col.qrels, "stratified:10,40:1,0.25", 30, seed=1, pooled=pooled)
    sq = pooling.sampled_qrels(pool)
    # the universe: documents some pooled run ranks in its top 40, stratum 1 = top 10
    top = col.runs[col.runs["name"].astype(str).isin(pooled)]
    best = top.groupby(["qid", "docno"], observed=True)["rank"].min().reset_index()
    best = best[best["rank"] <= 40].astype({"qid": str, "docno": str})
    got = sq.astype({"qid": str, "docno": str}).merge(best, how="outer", indicator=True)
    assert (got["_merge"] == "both").all()
    assert ((got["rank"] <= 10) == (got["stratum"] == 1)).all()
    # the sampled documents are the judged ones, with their labels; prob = n_s / N_s
    judged = sq[sq["label"] >= 0][["qid", "docno", "label"]].astype({"qid": str, "docno": str})
    pd.testing.assert_frame_equal(
        judged.reset_index(drop=True),
        pool.qrels.astype({"qid": str, "docno": str}).reset_index(drop=True),
        check_dtype=False,
    )
    c = stratum_counts(sq).set_index(["qid", "stratum"])["prob"]
    want = c.loc[list(zip(sq["qid"].astype(str), sq["stratum"].astype(str), strict=True))]
    np.testing.assert_allclose(sq["prob"], want.to_numpy())
    assert sq["prob"].lt(1).any()
    with pytest.raises(InputError, match="does not sample"):
        pooling.sampled_qrels(Pool.simulate(col.runs, col.qrels, "take", 5))


def test_sampled_qrels_round_trip_and_refusals(tmp_path, col):
    pool = Pool.simulate(col.runs, col.qrels, "uniform:40", 20, seed=2)
    sq = pooling.sampled_qrels(pool)
    path = tmp_path / "s.qrels.gz"
    io.to_sampled_qrels(sq, path)
    back = io.read_sampled_qrels(path)
    cols = ["qid", "docno", "stratum", "label"]
    pd.testing.assert_frame_equal(
        back[cols].astype(str), sq[cols].astype(str).reset_index(drop=True)
    )
    bad = tmp_path / "bad"
    bad.write_text("1 0 d1 1 1\n1 0 d2 1\n")
    with pytest.raises(TrecFormatError, match="bad:2"):
        io.read_sampled_qrels(bad)
    bad.write_text("1 0 d1 1 1\n1 0 d1 2 0\n")
    with pytest.raises(TrecFormatError, match="listed twice"):
        io.read_sampled_qrels(bad)


def test_cli_pool_writes_sampled_qrels(capsys, tmp_path, col):
    track = tmp_path / "T"
    col.write(track)
    out = tmp_path / "sampled.qrels"
    code = main(
        [
            "pool",
            str(track),
            "--strategy",
            "stratified:10,40:1,0.25",
            "--budget",
            "25",
            "--seed",
            "4",
            "-o",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    back = io.read_sampled_qrels(out)
    assert set(back["stratum"].astype(str)) == {"1", "2"} and (back["label"] == -1).any()
    est = evaluate_sampled(col.runs, back, ["xinfAP", "statAP"])
    assert est["value"].between(0, 1.5).all()


# --------------------------------------------------------------------------------------------
# unbiasedness
# --------------------------------------------------------------------------------------------


def _numerators(pt: pd.DataFrame, sq: pd.DataFrame, R: pd.Series) -> pd.DataFrame:
    """Per run, the mean over topics of infAP's and xinfAP's numerators over the expectation of
    their denominators (infAP · r_s / (R n/N), xinfAP · R̂ / R): the estimators without the
    ratio (docs/measures.md, "Sampled pools")."""
    w = pt.astype({"qid": str, "name": str, "measure": str})
    w = w.pivot_table(index=["name", "qid"], columns="measure", values="value")
    q = w.index.get_level_values("qid")
    r_true = R.reindex(q).to_numpy(dtype=float)
    c = sq.assign(r=sq["label"] >= 1, n=sq["label"] >= 0).astype({"qid": str})
    c = c.groupby("qid")[["r", "n"]].sum().assign(N=c.groupby("qid").size())
    out = {}
    if "infAP" in w:
        share = (c["n"] / c["N"]).reindex(q).to_numpy()
        out["infAP/numerator"] = w["infAP"] * c["r"].reindex(q).to_numpy() / (r_true * share)
    out["xinfAP/numerator"] = w["xinfAP"] * w["infNumRel"] / r_true
    f = pd.DataFrame(out).groupby(level="name").mean()
    return f.reset_index().melt(id_vars="name", var_name="measure", value_name="value")


@pytest.mark.slow
@pytest.mark.parametrize(
    "spec, estimators",
    [
        ("uniform:40", ["infAP", "xinfAP", "statAP", "infNDCG", "infNumRel"]),
        ("stratified:10,20,40:1,0.5,0.25", ["xinfAP", "statAP", "infNDCG", "infNumRel"]),
    ],
)
def test_estimators_are_unbiased_where_the_plain_measures_are_not(col, spec, estimators):
    """50 seeded samples of 40 documents per topic (~45% of the universe): the mean estimate of
    each run's MAP / mean nDCG / total R lies within 3 standard errors of the value on the fully
    judged universe for statAP, infNDCG and R̂ (ratio estimators: unbiased up to O(1/n)); infAP
    and xinfAP, whose ratio to a random count carries a small-sample bias, within 5 SE and 3%,
    their numerators over the expected denominators within 3 SE (what is left is the ratio's:
    docs/measures.md) — while the plain AP and nDCG on the same sampled qrels miss by more than
    10 SE."""
    pooled = sorted(col.pooled)
    pb = strategies.PoolingTask(col.runs, col.qrels, pooled)
    n = 50
    est = []
    for seed in range(n):
        pool = Pool.simulate(col.runs, col.qrels, spec, 40, seed=seed, pooled=pooled, problem=pb)
        sq = pooling.sampled_qrels(pool, pb)
        if seed == 0:  # the universe is every sample's: its relevant documents per topic
            full = (
                sq[["qid", "docno"]]
                .astype(str)
                .merge(col.qrels.astype({"qid": str, "docno": str}), how="left")
                .fillna({"label": 0})
            )
            R = full[full["label"] >= 1].groupby("qid").size()
        pt = evaluate_sampled(col.runs, sq, [*estimators, "AP", "nDCG"], per_topic=True)
        est.append(measures.aggregate(pt).assign(seed=seed))
        est.append(_numerators(pt, sq, R).assign(seed=seed))
    est = pd.concat(est).astype({"name": str, "measure": str})
    truth = measures.evaluate(col.runs, full, ["AP", "nDCG", "NumRel"])
    truth = truth.astype({"name": str, "measure": str}).set_index(["name", "measure"])["value"]
    g = est.groupby(["name", "measure"])["value"].agg(["mean", "std"])
    target = {"infNDCG": "nDCG", "nDCG": "nDCG", "infNumRel": "NumRel"}
    g["true"] = [truth[(name, target.get(m, "AP"))] for name, m in g.index]
    g["z"] = (g["mean"] - g["true"]) / (g["std"] / np.sqrt(n))
    g["rel"] = (g["mean"] - g["true"]) / g["true"]
    z = g["z"].abs().groupby(level="measure").max()
    rel = g["rel"].abs().groupby(level="measure").max()
    for m in ("statAP", "infNDCG", "infNumRel"):
        assert z[m] <= 3, (m, z[m])
    for m in {"infAP", "xinfAP"} & set(estimators):
        assert z[m] <= 5 and rel[m] <= 0.03, (m, z[m], rel[m])
        assert z[f"{m}/numerator"] <= 3, (m, z[f"{m}/numerator"])
    assert z["AP"] > 10 and z["nDCG"] > 10  # the plain measures fail the same test


# --------------------------------------------------------------------------------------------
# benchmarks/pooling_strategies.py: the samplers scored by their estimators
# --------------------------------------------------------------------------------------------


def test_benchmark_verdict_names_the_best_sampler_and_estimator():
    import importlib.util
    import sys
    from pathlib import Path

    # loaded from its path, as tests/pooling/test_strategies.py loads it (importing that test
    # module works only when its folder was collected too: not for this file alone)
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "pooling_strategies.py"
    spec = importlib.util.spec_from_file_location("pooling_strategies", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules["pooling_strategies"] = bench
    spec.loader.exec_module(bench)
    rows = [
        ("take", "plain", "AP", 0.05),
        ("take", "plain", "P@10", 0.1),
        ("take", "plain", "RBP(p=0.8)@10", 0.1),
        ("rbp:0.8", "plain", "AP", 0.04),
        ("rbp:0.8", "plain", "P@10", 0.09),
        ("rbp:0.8", "plain", "RBP(p=0.8)@10", 0.09),
        ("uniform:100", "plain", "AP", 0.2),
        ("uniform:100", "infAP", "AP", 0.03),
        ("uniform:100", "statAP", "AP", 0.06),
        ("stratified", "plain", "AP", 0.15),
        ("stratified", "xinfAP", "AP", 0.02),
    ]
    errors = pd.DataFrame(
        [
            {"track": "T", "strategy": s, "budget": b, "scored_by": by, "measure": m, "mae": v}
            for s, by, m, v in rows
            for b in (10, 20)
        ]
    )
    bias = errors[errors["scored_by"] == "plain"].assign(estimator="reduced", depth=5)
    v = bench.verdict(bias.drop(columns="scored_by"), errors).iloc[0]
    assert v["best_P@10"] == "rbp:0.8" and v["holds"]  # the estimator rows leave it alone
    assert (v["best_sampler_AP"], v["sampler_estimator_AP"]) == ("stratified", "xinfAP")
    assert np.isclose(v["sampler_mae_AP"], 0.02) and np.isclose(v["sampler_plain_mae_AP"], 0.15)
    assert "stratified with xinfAP (MAE 0.0200, against 0.1500" in v["statement"]
    assert "best non-sampling strategy at AP is rbp:0.8 (0.0400)" in v["statement"]
