"""The array core of the evaluation (pbtools.measures.arrays.Grouping): grouping, trec order
and trec_eval -c's empty rankings on integer codes, and the pandas adapter (compute) on it."""

import numpy as np
import pandas as pd
import pytest

from pbtools import measures as M
from pbtools.frames import judge
from pbtools.measures.arrays import Grouping
from pbtools.measures.kernels import UNJUDGED
from pbtools.measures.names import parse_all


def _grouping(topics="judged", keys=False):
    """Two runs (codes 0, 1) on topics 0..2; the qrels judge topics 0 and 1 (under key 0) and
    topic 2 (under key 1) when ``keys``, else topics 0 and 1."""
    name = np.array([0, 0, 0, 1, 1])
    qid = np.array([0, 0, 2, 1, 1])
    score = np.array([1.0, 1.0, 5.0, 2.0, 3.0])  # run 0 topic 0: a tie, broken by doc desc
    doc = np.array([3, 7, 1, 2, 4])
    label = np.array([1, UNJUDGED, 0, 1, 0], dtype=np.int32)
    qq = np.array([0, 0, 1, 2])
    qlab = np.array([1, 0, 1, 1])
    if keys:  # one key column: run rows under key 0; qrels topics 0, 1 under 0, topic 2 under 1
        rk, qk, sizes = [np.zeros(5, np.int64)], [np.array([0, 0, 0, 1])], [2]
    else:
        rk, qk, sizes = [], [], []
        qq, qlab = qq[:3], qlab[:3]
    return Grouping(rk, name, qid, score, doc, label, qk, qq, qlab, sizes, 2, 3, topics)


def test_grouping_orders_ties_by_docno_and_drops_unjudged_topics():
    g = _grouping()
    grp = g.groups
    # run 0 topic 2 has no qrels topic: not evaluated; run 1 topic 1 is, with the qrels' 2nd set
    assert grp["name"].tolist() == [0, 1] and grp["qid"].tolist() == [0, 1]
    gid, rank, label = g.rows
    assert gid.tolist() == [0, 0, 1, 1] and rank.tolist() == [1, 2, 1, 2]
    # equal scores: doc 7 (unjudged) before doc 3 (relevant); run 1: score 3 (doc 4, label 0) first
    assert label.tolist() == [UNJUDGED, 1, 0, 1]
    values, _ = g.scores(parse_all(["P@1", "RR"]))
    assert values.tolist() == [[0.0, 0.5], [0.0, 0.5]]


def test_answered_mode_scores_the_unjudged_topic_against_an_empty_set():
    g = _grouping("answered")
    assert sorted(zip(g.groups["name"].tolist(), g.groups["qid"].tolist(), strict=True)) == [
        (0, 0),
        (0, 2),
        (1, 1),
    ]
    values, _ = g.scores(parse_all(["NumRel"]))
    order = np.lexsort([g.groups["qid"], g.groups["name"]])
    assert values[order, 0].tolist() == [1.0, 0.0, 1.0]


@pytest.mark.parametrize("keys", [False, True])
def test_add_missing_topics_only_the_topics_of_the_runs_key(keys):
    g = _grouping("all", keys=keys)
    g.add_missing_topics()
    pairs = sorted(zip(g.groups["name"].tolist(), g.groups["qid"].tolist(), strict=True))
    # without keys every run gets every qrels topic (0, 1); with keys the runs (key 0) get the
    # topics of key 0 only (0, 1), never topic 2, which the qrels judge under key 1
    assert pairs == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert all(k.dtype.kind == "i" for k in g.groups["keys"])


def test_compute_all_topics_through_the_core_matches_trec_eval_c():
    """The pandas adapter: -c rows for a missing topic are an empty ranking's (0, NumRel kept)."""
    runs = pd.DataFrame(
        {"name": ["a", "a", "b"], "qid": ["1", "1", "2"], "docno": ["d1", "d2", "d3"]}
    ).assign(score=[2.0, 1.0, 1.0])
    qrels = pd.DataFrame({"qid": ["1", "2", "2"], "docno": ["d1", "d3", "d4"], "label": [1, 1, 1]})
    pt = M.compute(judge(runs, qrels), qrels, ["AP", "NumRel"], topics="all")
    got = {(r.name, r.qid, r.measure): r.value for r in pt.astype(str).itertuples()}
    assert got[("a", "2", "AP")] == "0.0" and got[("a", "2", "NumRel")] == "2.0"
    assert got[("b", "1", "AP")] == "0.0" and got[("b", "2", "AP")] == "0.5"
    assert pt[["name", "qid"]].astype(str).drop_duplicates().shape[0] == 4


def test_judge_large_run_dictionary_against_small_qrels():
    """Judging looks the run's documents up among the qrels' when the run dictionary is the
    larger (> 4×): the labels are the qrels', ids on one side only match nothing."""
    docs = [f"d{i:02d}" for i in range(40)]
    runs = pd.DataFrame({"name": "a", "qid": "1", "docno": docs, "score": np.arange(40.0)})
    qrels = pd.DataFrame(
        {"qid": ["1", "1", "1", "2"], "docno": ["d05", "d33", "zz", "d05"], "label": [2, 0, 1, 1]}
    )
    label = judge(runs, qrels)["label"]
    assert label.notna().sum() == 2
    assert label[runs["docno"] == "d05"].tolist() == [2]
    assert label[runs["docno"] == "d33"].tolist() == [0]
    with pytest.raises(ValueError, match="qid=1, docno=d05"):
        judge(runs, pd.concat([qrels, qrels.iloc[:1]], ignore_index=True))
