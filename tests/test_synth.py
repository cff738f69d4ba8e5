"""Tests for pbtools.synth and the bundled sample collection (pbtools/data/sample)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from pbtools import frames, pooling, synth
from pbtools.experiments import analysis
from pbtools.pooling.inference import infer_pool

SMALL = dict(topics=6, docs=300, runs=8, orgs=3, run_length=40, depth=10, unpooled=2)
SAMPLE = analysis.SAMPLE


def pairs(df: pd.DataFrame) -> set[tuple[str, str]]:
    return set(zip(df["qid"].astype(str), df["docno"].astype(str), strict=True))


def test_same_seed_same_collection():
    a, b = synth.generate(**SMALL, seed=7), synth.generate(**SMALL, seed=7)
    for x, y in ((a.runs, b.runs), (a.qrels, b.qrels), (a.truth, b.truth), (a.orgs, b.orgs)):
        pd.testing.assert_frame_equal(x, y)
    assert a.pooled == b.pooled and a.params == b.params
    c = synth.generate(**SMALL, seed=8)
    assert not a.runs["docno"].equals(c.runs["docno"])


def test_schema_and_shape():
    c = synth.generate(**SMALL, seed=1)
    assert list(c.runs.columns) == list(frames.RUN_COLUMNS)
    assert c.runs["score"].dtype == np.float64 and c.runs["rank"].dtype == np.int32
    assert c.qrels["label"].dtype == np.int16
    assert frames.is_trec_ordered(c.runs)
    assert len(c.runs) == 8 * 6 * 40
    per = c.runs.groupby(["name", "qid"], observed=True)["docno"].agg(["size", "nunique"])
    assert (per["size"] == 40).all() and (per["nunique"] == 40).all()
    assert c.orgs["org"].value_counts().sort_index().tolist() == [3, 2, 3]
    assert len(c.pooled) == 6 and set(c.pooled) < set(c.orgs["name"].astype(str))
    assert c.depth == 10 and c.quality["quality"].min() >= 0


@settings(max_examples=examples(15), deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 5), st.integers(1, 3), st.integers(0, 2))
def test_pool_and_truth_properties(seed, depth, orgs, unpooled):
    c = synth.generate(
        topics=3,
        docs=60,
        runs=4,
        orgs=orgs,
        run_length=12,
        depth=depth,
        unpooled=unpooled,
        seed=seed,
    )
    truth = {
        (q, d): lab
        for q, d, lab in c.truth.astype({"qid": str, "docno": str}).itertuples(index=False)
    }
    # qrels: exactly the true labels of the depth-d pool of the pooled runs
    pooled_runs = c.runs[c.runs["name"].astype(str).isin(c.pooled)]
    assert pairs(c.qrels) == pairs(pooling.pool(pooled_runs, depth))
    for q, d, lab in c.qrels.astype({"qid": str, "docno": str}).itertuples(index=False):
        assert truth[(q, d)] == lab
    # truth covers every retrieved document and every topic has a relevant document
    assert pairs(c.runs) <= set(truth)
    assert c.truth[c.truth["label"] > 0]["qid"].nunique() == 3
    # pooled judgments can only lower a precision: P@k on qrels <= P@k on truth
    judged_q = frames.judge(c.runs, c.qrels)
    judged_t = frames.judge(c.runs, c.truth)
    rel_q = (judged_q["label"].fillna(0) > 0).to_numpy()
    rel_t = (judged_t["label"].fillna(0) > 0).to_numpy()
    assert np.all(rel_q <= rel_t)


def test_quality_drives_true_score():
    c = synth.generate(
        topics=30, docs=500, runs=12, orgs=4, run_length=50, depth=10, quality_spread=0.8, seed=3
    )
    j = frames.judge(c.runs[c.runs["rank"] <= 10], c.truth)
    p10 = (j["label"].fillna(0) > 0).groupby(j["name"].astype(str)).mean()
    q = c.quality.set_index(c.quality["name"].astype(str))["quality"]
    assert p10.corr(q.reindex(p10.index), method="spearman") > 0.8


def test_novel_runs_are_unpooled_and_detectable():
    c = synth.generate(
        topics=10,
        docs=1000,
        runs=10,
        orgs=5,
        run_length=100,
        depth=20,
        unpooled=2,
        novelty=1.0,
        seed=11,
    )
    info = infer_pool(c.runs, c.qrels)
    assert info.depth == 20
    assert info.pooled_runs == sorted(c.pooled)


def test_write_roundtrip(tmp_path):
    io = pytest.importorskip("pbtools.io")
    c = synth.generate(**SMALL, seed=2)
    root = c.write(tmp_path / "track")
    assert sorted(p.name for p in (root / "Runs").iterdir())[0] == "input.o01r1"
    col = io.read_collection(root)
    np.testing.assert_array_equal(col.runs["score"].to_numpy(), c.runs["score"].to_numpy())
    for k in ("name", "qid", "docno"):
        assert (col.runs[k].astype(str).to_numpy() == c.runs[k].astype(str).to_numpy()).all()
    assert pairs(col.qrels) == pairs(c.qrels)
    got = col.orgs.astype(str).sort_values("name").reset_index(drop=True)
    want = c.orgs.astype(str).sort_values("name").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)
    truth = io.read_qrels(root / "truth" / "qrels")
    assert len(truth) == len(c.truth) and pairs(truth) == pairs(c.truth)


def test_bad_parameters():
    with pytest.raises(ValueError):
        synth.generate(docs=10, run_length=20)
    with pytest.raises(ValueError):
        synth.generate(runs=3, orgs=4)
    with pytest.raises(ValueError):
        synth.generate(runs=3, orgs=1, unpooled=3)


def test_bundled_sample():
    if not SAMPLE.is_dir():
        pytest.skip("pbtools/data/sample is absent: run scripts/make_sample.py")
    io = pytest.importorskip("pbtools.io")
    size = sum(p.stat().st_size for p in SAMPLE.rglob("*") if p.is_file())
    assert size < 1_000_000
    col = io.read_collection(SAMPLE)
    d = pooling.describe(col)
    assert (d["|R|"], d["|O|"], d["|R_p|"], d["d"], d["|T|"]) == (12, 6, 10, 20, 20)
    truth = io.read_qrels(SAMPLE / "truth" / "qrels")
    assert pairs(col.qrels) <= pairs(truth) and pairs(col.runs) <= pairs(truth)
    rp = col.runs[col.runs["name"].astype(str).isin(d["pooled_runs"])]
    assert pairs(col.qrels) == pairs(pooling.repool(rp, truth, 20))
