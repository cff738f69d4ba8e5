"""The ``DataFrame.pb`` accessor: notebook method chains give the functional API's results."""

from __future__ import annotations

import pandas as pd
import pytest

import pbtools  # noqa: F401  (registers .pb)
from pbtools import io, measures

RUNS = pd.DataFrame(
    {
        "name": ["a"] * 4 + ["b"] * 3,
        "qid": ["1", "1", "2", "2", "1", "1", "2"],
        "docno": ["d1", "d2", "d3", "d4", "d2", "d5", "d3"],
        "score": [3.0, 2.0, 1.0, 0.5, 9.0, 1.0, 1.0],
    }
)
QRELS = pd.DataFrame(
    {"qid": ["1", "1", "2", "2"], "docno": ["d1", "d2", "d3", "d9"], "label": [1, 0, 2, 1]}
)


def test_judge_then_measure_chain():
    judged = RUNS.pb.judge(QRELS)
    assert judged["label"].isna().sum() == 2  # d4 and d5 are unjudged
    avg = judged.pb.measure(["P@2", "AP"])
    assert list(avg.columns) == ["name", "measure", "value"]
    got = avg.set_index(["name", "measure"])["value"]
    # run a: topic 1 → d1 rel, d2 non-rel: P@2 = .5, AP = 1; topic 2 → d3 rel, d4 unjudged:
    # P@2 = .5, AP = (1/1)/2 = .5 (two relevant in qrels)
    assert got[("a", "P@2")] == pytest.approx(0.5)
    assert got[("a", "AP")] == pytest.approx(0.75)
    expected = measures.evaluate(
        RUNS.pb.trec_order(), QRELS.astype({"label": "int16"}), ["P@2", "AP"]
    )
    pd.testing.assert_series_equal(
        got.sort_index(),
        expected.set_index(["name", "measure"])["value"]
        .astype(float)
        .rename(index=str)
        .sort_index(),
        check_names=False,
        check_index_type=False,
    )


def test_per_topic_and_wide_layout():
    per = RUNS.pb.judge(QRELS).pb.measure("P@1", per_topic=True)
    assert list(per.columns) == ["name", "qid", "measure", "value"]
    wide = RUNS.pb.evaluate(QRELS, ["P@1", "RR"]).pb.wide()
    assert list(wide.columns) == ["name", "P@1", "RR"]
    assert wide.set_index("name").loc["b", "RR"] == pytest.approx(0.5)  # b: d2 (0), d5 (unj)…


def test_qrels_survive_filtering_and_are_not_copied():
    judged = RUNS.pb.judge(QRELS)
    sub = judged[judged["name"] == "a"]
    assert sub.attrs["pbtools_qrels"] is judged.attrs["pbtools_qrels"]
    assert set(sub.pb.measure("P@1")["name"].astype(str)) == {"a"}


def test_measure_without_judge_is_a_clear_error():
    with pytest.raises(ValueError, match="judge"):
        RUNS.pb.measure("P@10")


def test_top_and_trec_order():
    top = RUNS.pb.top(1)
    assert top.groupby(["name", "qid"], observed=True).size().eq(1).all()
    # ties broken by docno descending: run b, topic 2 has one doc; run a topic 1: d1 (3.0)
    assert set(zip(top["name"].astype(str), top["docno"].astype(str), strict=True)) == {
        ("a", "d1"),
        ("a", "d3"),
        ("b", "d2"),
        ("b", "d3"),
    }


def test_to_parquet_round_trip(tmp_path):
    res = RUNS.pb.evaluate(QRELS, ["P@2"])
    res.pb.to_parquet(tmp_path / "r.parquet", metadata={"note": "x"})
    back = io.read_parquet(tmp_path / "r.parquet")
    pd.testing.assert_frame_equal(back, res, check_like=False)
    assert back.attrs["metadata"] == {"note": "x"}
