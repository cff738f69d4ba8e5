"""analyze's memory linear in runs (issue 25 item 4): the runs to score estimated a chunk at a
time (pbtools.engine.chunks), SRE*'s join a chunk of the significance table at a time
(pbtools.stats.pairjoin) and the compact significance table give the results of the whole."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from pbtools import stats, synth
from pbtools.engine import chunks
from pbtools.experiments.leaveout import experiment_tables
from pbtools.pooling import TopTieWarning
from pbtools.stats import pairjoin

CONFIGS = [
    {"leave_out": "org", "runs": "all"},
    {"leave_out": "run", "runs": "top75"},
]


@pytest.fixture(scope="module")
def coll():
    return synth.generate(topics=3, docs=60, runs=7, orgs=3, run_length=10, depth=5, seed=3)


def tables(coll, **kw):
    frames = (coll.runs, coll.qrels, coll.orgs)
    with warnings.catch_warnings():  # a tie at the top-75 % cut: warned, broken by order
        warnings.simplefilter("ignore", TopTieWarning)
        return experiment_tables(frames, CONFIGS, ["P@5", "AP"], threads=1, **kw)


def test_chunked_leave_outs_equal_the_whole(coll, monkeypatch):
    whole = tables(coll, pooled=coll.pooled, depth=5)
    seen = []
    real = chunks.sub_problem

    def spy(problem, spec, lo, hi, merges=None, variants=None):
        seen.append(hi - lo)
        return real(problem, spec, lo, hi, merges, variants)

    monkeypatch.setattr(chunks, "sub_problem", spy)
    monkeypatch.setattr(chunks, "PAIR_ROWS", 1)  # one run to score a chunk
    monkeypatch.setattr(chunks, "LABEL_BYTES", 1)  # one block a wave
    parts = tables(coll, pooled=coll.pooled, depth=5)
    assert seen and max(seen) == 1 and len(seen) > len(CONFIGS)
    for (s1, t1), (s2, t2) in zip(whole, parts, strict=True):
        pd.testing.assert_frame_equal(s1, s2, check_exact=True)
        pd.testing.assert_frame_equal(t1, t2, check_exact=True)


def test_pairs_of_a_chunk_are_the_whole_problems_rows():
    spec = chunks.PairSpec(np.array([0, 1, 1, 2]), np.array([0, 1, 2]), np.array([7, 8, 9]))
    pu, pp = spec.pairs(0, 4)
    a = [spec.pairs(i, i + 1) for i in range(4)]
    np.testing.assert_array_equal(pu, np.concatenate([x[0] for x in a]))
    np.testing.assert_array_equal(pp, np.concatenate([x[1] for x in a]))
    assert pu.tolist() == [0, 0, 1, 1, 2, 2, 3, 3] and pp.tolist() == [8, 9, 7, 9, 7, 9, 7, 8]
    assert chunks.chunk_bounds(np.array([4, 1, 9]), 2, 3, rows=6).tolist() == [1, 4, 9, 10]


@pytest.fixture(scope="module")
def truth_and_scores():
    rng = np.random.default_rng(5)
    names = [f"r{i:02d}" for i in range(12)]
    truth = pd.DataFrame(
        {
            "measure": "P@10",
            "runs": "all",
            "name": np.repeat(names, 6),
            "qid": np.tile([str(q) for q in range(6)], 12),
            "value": rng.random(72).round(2),
        }
    )
    true = truth.groupby("name")["value"].mean()
    scores = pd.DataFrame(
        {
            "measure": "P@10",
            "runs": "all",
            "estimator": np.repeat(["a", "b"], 12),
            "name": names * 2,
            "true": np.tile(true.to_numpy(), 2),
            "estimate": np.tile(true.to_numpy(), 2) + rng.normal(0, 0.05, 24),
        }
    )
    return truth, scores


@pytest.mark.parametrize("test", ["hsd", "t"])
def test_compact_significance_has_the_same_pairs_and_sre_star(truth_and_scores, test):
    truth, scores = truth_and_scores
    full = stats.pair_significance(truth, test, ["runs", "measure"])
    small = stats.pair_significance(truth, test, ["runs", "measure"], compact=True)
    assert list(small.columns) == ["runs", "measure", "name_a", "name_b", "diff", "p_value"] + [
        "reject"
    ]
    assert all(isinstance(small[c].dtype, pd.CategoricalDtype) for c in ("runs", "name_a"))
    same = small.astype({c: "str" for c in ("runs", "measure", "name_a", "name_b")})
    pd.testing.assert_frame_equal(same, full[list(small.columns)], check_exact=True)
    keys = ["runs", "measure", "estimator"]
    want = stats.error_table(scores, full, by=keys)
    got = stats.error_table(scores, small, by=keys)
    pd.testing.assert_frame_equal(got, want)
    assert (want["sre"] > 0).any()


def test_sre_star_join_read_in_chunks(truth_and_scores, monkeypatch):
    truth, scores = truth_and_scores
    sig = stats.pair_significance(truth, "hsd", ["runs", "measure"], compact=True)
    keys = ["runs", "measure", "estimator"]
    want = stats.error_table(scores, sig, by=keys)
    monkeypatch.setattr(pairjoin, "SIG_ROWS", 7)  # 66 pairs: ten chunks
    got = stats.error_table(scores, sig, by=keys)
    pd.testing.assert_frame_equal(got, want)
    # a crossed pair twice (in two chunks) is refused, as in one table
    with pytest.raises(ValueError, match="duplicate pairs"):
        stats.error_table(scores, pd.concat([sig, sig.iloc[::-1]]), by=keys)


def test_bootstrap_sre_without_the_crossed_matrix():
    from pbtools.stats import runboot

    # the whole matrix at once: Σ_i Σ_j w_bi C_kij w_bj (ties in the truth and estimates)
    t = np.array([0.5, 0.1, 0.3, 0.3])
    e = np.array([[0.2, 0.4, 0.3, 0.35], [0.5, 0.1, 0.6, 0.0]])
    w = np.random.default_rng(2).multinomial(4, [0.25] * 4, 20).astype(float)
    lo, hi = np.minimum(t, e), np.maximum(t, e)
    c = (lo[:, :, None] < t[None, None, :]) & (t[None, None, :] <= hi[:, :, None])
    c[:, np.arange(4), np.arange(4)] = False
    dense = np.einsum("bi,kij,bj->bk", w, c.astype(float), w)
    np.testing.assert_array_equal(runboot._replicate_sre(t, e, w), dense)
    assert dense.any()
