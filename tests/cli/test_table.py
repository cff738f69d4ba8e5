"""The command line's vectorised writers: the aligned table (pandas' text byte for byte) and
trec_eval's lines (its order: run, topic, line; then runid, num_q and the averages)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pbtools.cli.table import table_text
from pbtools.cli.trec import trec_report
from pbtools.measures import parse
from pbtools.measures.trec import TrecLine


def _pandas(df: pd.DataFrame) -> str:
    return df.to_string(index=False, float_format=lambda v: f"{v:.4f}") + "\n"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_table_is_pandas_text(seed):
    rng = np.random.default_rng(seed)
    n = 40
    words = np.array(["a", "run-long-name", "MB001", "ünï", "x y"], dtype=object)
    cats = pd.Categorical(rng.choice(words[:4], n), categories=[*words[:4], "unused-and-long"])
    cats[rng.random(n) < 0.2] = np.nan
    value = rng.normal(size=n) * 10.0 ** rng.integers(-3, 6, n)
    value[rng.random(n) < 0.2] = np.nan
    value[:2] = [np.inf, -0.0]
    df = pd.DataFrame(
        {
            "name": cats,
            "qid": pd.array(rng.choice(words, n), dtype="str").astype(object),
            "text": pd.array(rng.choice([*words, None], n), dtype="string"),
            "v": value,
            "a_long_float_header": rng.random(n),
            "n": rng.integers(-50, 5000, n),
            "allnan": np.full(n, np.nan),
        }
    )
    df.loc[3, "qid"] = None
    df["qid"] = df["qid"].astype("str")
    assert table_text(df) == _pandas(df)
    assert table_text(df.iloc[::-1, ::-1]) == _pandas(df.iloc[::-1, ::-1])


@pytest.mark.parametrize(
    "df",
    [
        pd.DataFrame({"name": ["a\tb", "c"], "v": [1.0, 2.0]}),  # pandas escapes the tab
        pd.DataFrame({"flag": [True, False], "v": [1.0, 2.0]}),  # not a column kind of ours
        pd.DataFrame({"name": pd.Series([], dtype="str"), "v": pd.Series([], dtype=float)}),
    ],
)
def test_table_other_frames_are_pandas_text(df):
    assert table_text(df) == _pandas(df)


def test_trec_report_order_and_lines():
    """Runs in the averages' order (a run with per-topic values only last), topics in string
    order ("10" before "9"), each topic's lines in the order asked; num_q counts topics."""
    p5, ap = parse("P@5"), parse("AP")
    lines = [TrecLine("runid", None, "text"), TrecLine("num_q", None, "long")]
    lines += [TrecLine("map", ap, "float"), TrecLine("P_5", p5, "float")]
    per = pd.DataFrame(
        {
            "name": ["b", "b", "a", "a", "a", "a", "c", "c"],
            "qid": ["9", "9", "9", "9", "10", "10", "9", "9"],
            "measure": ["P@5", "AP", "AP", "P@5", "P@5", "AP", "AP", "P@5"],
            "value": [0.2, 0.5, 0.25, 0.4, 0.6, 0.125, 1.0, 0.0],
        }
    )
    avg = pd.DataFrame(
        {
            "name": ["b", "b", "a", "a"],
            "measure": ["AP", "P@5", "AP", "P@5"],
            "value": [0.5, 0.2, 0.1875, 0.5],
        }
    )
    text = trec_report(per, avg, lines, per_topic=True, summary=True, strict=True)
    got = [ln.split("\t") for ln in text.splitlines()]
    assert [[f.strip() for f in ln] for ln in got] == [
        ["map", "9", "0.5000"],
        ["P_5", "9", "0.2000"],
        ["runid", "all", "b"],
        ["num_q", "all", "1"],
        ["map", "all", "0.5000"],
        ["P_5", "all", "0.2000"],
        ["map", "10", "0.1250"],
        ["P_5", "10", "0.6000"],
        ["map", "9", "0.2500"],
        ["P_5", "9", "0.4000"],
        ["runid", "all", "a"],
        ["num_q", "all", "2"],
        ["map", "all", "0.1875"],
        ["P_5", "all", "0.5000"],
        ["map", "9", "1.0000"],
        ["P_5", "9", "0.0000"],
        ["runid", "all", "c"],
        ["num_q", "all", "1"],
    ]
    assert text.endswith("\n") and got[0][0] == f"{'map':<22s}"
