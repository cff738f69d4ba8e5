"""The pairwise stages on threads: ordered, bounded, and the same results whatever the count."""

import threading

import numpy as np
import pandas as pd
import pytest

from pbtools import synth
from pbtools.engine import shared_merges
from pbtools.engine.build import from_frames
from pbtools.engine.parallel import ordered_map, resolve_threads
from pbtools.engine.problem import precision_parts
from pbtools.measures.names import parse_all


@pytest.mark.parametrize("ahead", [1, 0])
def test_ordered_map_keeps_order_and_bounds_the_chunks_in_flight(ahead):
    lock, state = threading.Lock(), {"started": 0, "handed": 0, "most": 0}

    def work(i):
        with lock:
            state["started"] += 1
            state["most"] = max(state["most"], state["started"] - state["handed"])
        return i * i

    out = []
    for v in ordered_map(work, range(40), threads=3, ahead=ahead):
        state["handed"] += 1
        out.append(v)
    assert out == [i * i for i in range(40)]
    assert state["most"] <= 3 + ahead


def test_ordered_map_raises_the_workers_error():
    def work(i):
        if i == 3:
            raise KeyError("chunk 3")
        return i

    with pytest.raises(KeyError, match="chunk 3"):
        list(ordered_map(work, range(6), threads=2))


def test_default_threads_follow_the_thread_cap(monkeypatch):
    from pbtools.engine.parallel import default_threads
    from pbtools.threads import ENV, limited_threads

    with limited_threads(1):
        assert default_threads() == 1 and resolve_threads(None) == 1
    monkeypatch.setenv(ENV, "1")
    assert default_threads() == 1


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_resolve_threads_refuses_non_counts(bad):
    with pytest.raises((ValueError, TypeError)):
        resolve_threads(bad)


def _problem():
    c = synth.generate(topics=5, docs=150, runs=10, orgs=4, run_length=60, depth=8, seed=3)
    pooled = c.runs[c.runs["name"].isin(c.pooled)]
    return from_frames(
        pooled, pooled, c.qrels, orgs=c.orgs, depth=c.depth, leave_out="org", rp="run"
    )


def test_shared_merges_identical_whatever_the_thread_count(monkeypatch):
    # tiny chunks: many chunks per pass, so that threads really interleave
    monkeypatch.setattr(shared_merges, "CHUNK_ELEMENTS", 400)
    pa = [m for p in precision_parts(parse_all(["P@5", "P@20"])) for m in p[:2]]
    got = []
    for threads in (1, 2, 3):
        pb = _problem()
        got.append(shared_merges.SharedMerges(threads=threads)(pb, pa, 20))
    for other in got[1:]:
        assert got[0].dtype == other.dtype and np.array_equal(got[0], other, equal_nan=True)
    assert np.isfinite(got[0]).any()


@pytest.mark.parametrize("measures", [["P@5", "P@10"], ["AP", "nDCG@10", "P@5"]])
def test_per_topic_distinct_rankings_score_as_every_row(measures):
    # pooled runs under every left-out unit's variant: scored once per distinct ranking
    pb = _problem()
    ms = parse_all(measures)
    V = len(pb.lab)
    slots = np.repeat(pb.pooled, V)
    var = np.tile(np.arange(V), len(pb.pooled))
    item, t, vals = pb.per_topic(slots, var, ms)
    docs = pb.enc.D[slots[item], t, :]
    direct = pb.score_docs(docs, var[item], t, ms)
    assert V >= 2  # each (run, topic) under several variants: the grouped path
    assert np.array_equal(vals, direct)


def test_experiment_blocks_identical_whatever_the_thread_count(monkeypatch):
    # the blocks of the four configurations finished on threads: the same tables as serially
    from pbtools.engine import parallel
    from pbtools.experiments.leaveout import experiment_tables

    c = synth.generate(topics=6, docs=120, runs=9, orgs=4, run_length=40, depth=10, seed=5)
    configs = [{"leave_out": lo, "runs": r} for r in ("all", "top75") for lo in ("org", "run")]
    got = []
    for n, threads in ((1, None), (3, None), (2, 1)):
        monkeypatch.setattr(parallel, "default_threads", lambda n=n: n)
        tables = experiment_tables(
            (c.runs, c.qrels, c.orgs),
            configs,
            ["P@5", "P@10"],
            pooled=c.pooled,
            depth=10,
            threads=threads,
        )
        got.append(tables)
    assert len(got[0]) == len(configs)
    for other in got[1:]:
        for (s1, t1), (s2, t2) in zip(got[0], other, strict=True):
            assert len(s1) and len(t1)
            pd.testing.assert_frame_equal(s1, s2)
            pd.testing.assert_frame_equal(t1, t2)


def test_pooled_runs_scored_once_for_lipani_and_webber(monkeypatch):
    # both estimators on one problem (as analyze runs them): every (rows, measure) is scored
    # once even when Lipani, asking for fewer measures, runs first, and each estimate equals
    # the estimator's on a problem of its own
    from pbtools.corrections.correct import run_estimators
    from pbtools.engine.problem import Problem
    from pbtools.presets import resolve

    opts, ms, order = resolve(None), parse_all(["P@5", "AP"]), ("lipani", "webber")
    alone = {e: run_estimators(_problem(), ms, [e], opts) for e in order}
    scored, score_runs = [], Problem.score_runs

    def counted(self, slots, var, t, width, measures):
        key = (np.asarray(slots).tobytes(), np.asarray(var).tobytes(), np.asarray(t).tobytes())
        scored.extend((key, str(m)) for m in measures)
        return score_runs(self, slots, var, t, width, measures)

    monkeypatch.setattr(Problem, "score_runs", counted)
    both = run_estimators(_problem(), ms, list(order), opts)
    assert len(scored) > 4 and len(set(scored)) == len(scored)
    want = pd.concat([alone[e] for e in order], ignore_index=True)
    pd.testing.assert_frame_equal(both, want, check_exact=True)
