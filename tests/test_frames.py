"""pbtools.frames: the schema coercions, trec_eval order and the run ⋈ qrels join."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pbtools import frames


def test_as_run_fills_the_schema_and_keeps_extra_columns():
    df = pd.DataFrame(
        {"qid": [2, 1, 1], "docno": ["d1", "d1", "d2"], "score": [1, 1, 5], "extra": [7, 8, 9]}
    )
    run = frames.as_run(df)
    assert list(run.columns) == [*frames.RUN_COLUMNS, "extra"]
    assert set(run["name"].astype(str)) == {"run"}
    assert run["score"].dtype == np.float64 and run["rank"].dtype == np.int32
    for c in ("name", "qid", "docno"):
        assert isinstance(run[c].dtype, pd.CategoricalDtype)
    # topic 1 first (ids as strings), its higher score first; extra values follow their rows
    assert run[["qid", "docno", "rank", "extra"]].astype(str).values.tolist() == [
        ["1", "d2", "1", "9"],
        ["1", "d1", "2", "8"],
        ["2", "d1", "1", "7"],
    ]
    unordered = frames.as_run(df, order=False)
    assert unordered["docno"].astype(str).tolist() == ["d1", "d1", "d2"]
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['score'\]"):
        frames.as_run(df.drop(columns="score"))


def test_as_qrels_takes_ir_measures_names():
    q = frames.as_qrels(
        pd.DataFrame({"query_id": [1], "doc_id": ["d"], "relevance": [2], "left_out": ["x"]})
    )
    assert list(q.columns) == ["qid", "docno", "label", "left_out"]
    assert q["label"].dtype == np.int16 and q["qid"].astype(str).tolist() == ["1"]
    with pytest.raises(ValueError, match="label"):
        frames.as_qrels(pd.DataFrame({"qid": [1], "docno": ["d"]}))


def test_trec_order_breaks_ties_by_docno_descending_and_puts_nan_last():
    runs = pd.DataFrame(
        {
            "name": ["b", "a", "a", "a", "a"],
            "qid": "1",
            "docno": ["x", "d1", "d2", "d3", "d4"],
            "score": [1.0, 2.0, np.nan, 2.0, 3.0],
        }
    )
    out = frames.trec_order(runs)
    assert out["name"].tolist() == ["a", "a", "a", "a", "b"]
    assert out["docno"].tolist()[:4] == ["d4", "d3", "d1", "d2"]  # 3, 2 (d3 > d1), NaN
    assert out["rank"].tolist() == [1, 2, 3, 4, 1]
    assert frames.is_trec_ordered(frames.as_run(runs))
    assert not frames.is_trec_ordered(frames.as_run(runs, order=False).assign(rank=1))
    assert runs["docno"].tolist()[0] == "x"  # the input is not modified


def test_trec_sort_order_is_a_lexsort_on_random_keys():
    rng = np.random.default_rng(0)
    n = 500
    k1, k2 = rng.integers(0, 4, n), rng.integers(0, 3, n)
    score = rng.integers(0, 5, n).astype(float)
    doc = rng.integers(0, 50, n)
    got = frames.trec_sort_order([k1, k2], score, doc)
    want = np.lexsort((-doc, -score, k2, k1))
    cols = np.stack([k1, k2, -score, -doc])
    assert np.array_equal(cols[:, got], cols[:, want])


def test_ranked_returns_ordered_runs_as_they_are():
    run = frames.as_run(pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 2.0]}))
    assert frames.ranked(run) is run
    shuffled = run.iloc[::-1].reset_index(drop=True)
    assert frames.ranked(shuffled)["docno"].tolist() == run["docno"].tolist()


def test_group_starts_ranks_and_composite_key():
    a, b = np.array([0, 0, 1, 1, 1]), np.array([5, 5, 5, 6, 6])
    start = frames.group_starts(a, b)
    assert start.tolist() == [True, False, True, True, False]
    assert frames.ranks_from_starts(start).tolist() == [1, 2, 1, 1, 2]
    assert frames.group_starts().tolist() == []
    key = frames.composite_key([a, b - 5], [2, 2])
    assert key.tolist() == [0, 0, 2, 3, 3]


def test_judge_labels_unjudged_and_negative_labels():
    runs = pd.DataFrame(
        {"name": "a", "qid": ["1", "1", "1", "2"], "docno": ["d1", "d2", "d3", "d1"]}
    )
    qrels = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["d1", "d3", "d9"], "label": [2, -1, 1]})
    judged = frames.judge(runs, qrels)
    assert judged["label"].tolist() == [2, pd.NA, -1, pd.NA]  # -1 kept as it is
    assert judged["docno"].astype(str).tolist() == ["d1", "d2", "d3", "d1"]  # run order


def test_judge_multiplies_runs_by_a_key_only_the_qrels_have():
    runs = pd.DataFrame({"name": "a", "qid": "1", "docno": ["d1", "d2"]})
    qrels = pd.DataFrame(
        {"qid": "1", "docno": ["d1", "d2", "d1"], "label": [1, 1, 0], "left_out": ["x", "x", "y"]}
    )
    judged = frames.judge(runs, qrels)
    assert judged["left_out"].astype(str).tolist() == ["x", "x", "y", "y"]
    assert judged["label"].tolist() == [1, 1, 0, pd.NA]
    # a key both have is joined on, not multiplied
    runs_x = runs.assign(left_out="y")
    assert frames.judge(runs_x, qrels)["label"].tolist() == [0, pd.NA]


def test_judge_refuses_a_judgment_given_twice():
    runs = pd.DataFrame({"qid": "1", "docno": ["d1"]})
    qrels = pd.DataFrame({"qid": "1", "docno": ["d1", "d1"], "label": [1, 0]})
    with pytest.raises(ValueError, match="qid=1, docno=d1.*more than once"):
        frames.judge(runs, qrels)
