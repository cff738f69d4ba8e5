"""analyze's memory linear in runs, the significance stage (issue 25 item 4): the tests of every
pair written a block of pairs at a time (pbtools.stats.matrix.pair_table), the unbalanced HSD
without a cells × runs design matrix, and Parquet written a row group at a time give the
results of the whole, to the bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pbtools import stats
from pbtools.io import parquet
from pbtools.stats import hsd, matrix, significance


def test_a_slice_of_pairs_is_that_slice_of_every_pair():
    for k in (2, 3, 7, 40):
        a, b = matrix.pair_indices(k)
        n = len(a)
        for lo, hi in ((0, n), (0, 1), (n - 1, n), (n // 3, 2 * n // 3 + 1)):
            sa, sb = matrix.pair_slice(k, lo, hi)
            np.testing.assert_array_equal(sa, a[lo:hi])
            np.testing.assert_array_equal(sb, b[lo:hi])


@pytest.fixture(scope="module")
def truth():
    """Two groups of per-topic scores; run r05 lacks two topics in one of them."""
    rng = np.random.default_rng(11)
    names = [f"r{i:02d}" for i in range(9)]
    parts = []
    for runs, drop in (("all", True), ("top75", False)):
        part = pd.DataFrame(
            {
                "runs": runs,
                "measure": "P@10",
                "name": np.repeat(names, 7),
                "qid": np.tile([f"q{j}" for j in range(7)], 9),
                "value": rng.integers(0, 11, 63) / 10,
            }
        )
        if drop:
            part = part[~((part["name"] == "r05") & part["qid"].isin(["q1", "q4"]))]
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("test", ["hsd", "t"])
@pytest.mark.parametrize("compact", [True, False])
def test_blocks_of_pairs_give_the_whole_table(truth, test, compact, monkeypatch):
    by = ["runs", "measure"]
    whole = stats.pair_significance(truth, test, by, compact=compact)
    assert len(whole) == 2 * 36
    monkeypatch.setattr(hsd, "PAIR_BLOCK", 1)  # one sf chunk of pairs a block
    monkeypatch.setattr(hsd, "SF_CELLS", 1)  # 256 q a chunk of the studentized range
    monkeypatch.setattr(significance, "PAIR_BLOCK", 1)  # the t-test: one pair a block
    blocks = stats.pair_significance(truth, test, by, compact=compact)
    pd.testing.assert_frame_equal(blocks, whole, check_exact=True)


def test_hsd_in_blocks_of_pairs_is_the_whole(monkeypatch):
    rng = np.random.default_rng(4)
    k, t = 60, 3  # 1,770 pairs: seven blocks of 256
    res = pd.DataFrame(
        {
            "name": np.repeat([f"r{i:02d}" for i in range(k)], t),
            "qid": np.tile(["1", "2", "3"], k),
            "value": rng.integers(0, 6, k * t) / 5,
        }
    )
    whole = stats.tukey_hsd(res)
    monkeypatch.setattr(hsd, "PAIR_BLOCK", 1)
    monkeypatch.setattr(hsd, "SF_CELLS", 1)
    assert hsd.hsd_fit(res).block == 256
    pd.testing.assert_frame_equal(stats.tukey_hsd(res), whole, check_exact=True)
    grouped = stats.tukey_hsd(res.assign(m="x"), by=["m"], categorical=True)
    assert str(grouped["name_a"].cat.codes.dtype) == "int8"
    same = grouped.drop(columns="m").astype({"name_a": "str", "name_b": "str"})
    pd.testing.assert_frame_equal(same, whole, check_exact=True)


def test_unbalanced_hsd_on_disconnected_runs_and_topics():
    """Two blocks of runs that share no topic: the additive model's rank is k + t − 2 (one
    topic held at 0 in each connected part), as least squares on the full design finds."""
    rng = np.random.default_rng(8)
    rows = [(f"a{i}", f"q{j}") for i in range(4) for j in range(3)]
    rows += [(f"b{i}", f"p{j}") for i in range(3) for j in range(4)]
    rows.remove(("a1", "q2"))
    res = pd.DataFrame(rows, columns=["name", "qid"]).assign(value=rng.random(len(rows)))
    fit = hsd.hsd_fit(res, unbalanced=True)
    names = sorted(res["name"].unique())
    qids = sorted(res["qid"].unique())
    design = np.zeros((len(res), len(names) + len(qids)))
    design[np.arange(len(res)), res["name"].map(names.index)] = 1
    design[np.arange(len(res)), len(names) + res["qid"].map(qids.index)] = 1
    coef, _, rank, _ = np.linalg.lstsq(design, res["value"].to_numpy(), rcond=None)
    rss = float(np.square(res["value"].to_numpy() - design @ coef).sum())
    assert rank == len(names) + len(qids) - 2
    assert fit.df_resid == len(res) - rank
    assert fit.mse == pytest.approx(rss / fit.df_resid, rel=1e-12)


def test_parquet_written_a_row_group_at_a_time(tmp_path, monkeypatch):
    n = 23
    rng = np.random.default_rng(0)
    frames = {
        "table": pd.DataFrame(
            {
                "k": pd.Categorical(rng.choice(["a", "b", "c"], n)),
                "some": pd.Categorical(["a"] * n, categories=["a", "z"]),
                "x": rng.random(n),
                "s": pd.array([f"s{i}" for i in range(n)], dtype="str"),
                "i": pd.array(rng.integers(0, 5, n), dtype="Int16"),
            }
        ),
        "range": pd.DataFrame({"x": range(n)}, index=pd.RangeIndex(5, 5 + 2 * n, 2)),
        "named": pd.DataFrame({"x": range(n)}, index=pd.Index([f"q{i}" for i in range(n)])),
    }
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.setattr(parquet, "ROWS", 5)
    for name, df in frames.items():
        parquet.write_parquet(df, tmp_path / f"{name}.parquet")
        assert pq.ParquetFile(tmp_path / f"{name}.parquet").num_row_groups == 5
        pd.testing.assert_frame_equal(parquet.read_parquet(tmp_path / f"{name}.parquet"), df)


@pytest.mark.parametrize("test", ["hsd", "t"])
def test_the_significance_streamed_is_the_whole_table(truth, test, tmp_path, monkeypatch):
    """issue 30 item 4: the compact table as blocks of pairs (computed as they are read) gives,
    through SRE*'s join and a block-by-block Parquet writer, the SRE* and the file of the whole
    table, and the writer sees every block even when the join has nothing to look up."""
    by = ["runs", "measure"]
    run = truth["name"].str[1:].astype(int)
    truth = truth.assign(value=truth["value"] / 10 + run / 9)  # runs far apart: some reject
    whole = stats.pair_significance(truth, test, by, compact=True)
    monkeypatch.setattr(hsd, "PAIR_BLOCK", 1)  # HSD: blocks of one chunk of the studentized range
    monkeypatch.setattr(hsd, "SF_CELLS", 1)
    monkeypatch.setattr(significance, "PAIR_BLOCK", 35)  # the t-test: 5 pairs a block (7 topics)
    monkeypatch.setattr(parquet, "ROWS", 5)  # row groups of 5 rows, across blocks
    names = truth["name"].unique()
    scores = pd.DataFrame(
        {
            "runs": np.repeat(["all", "top75"], len(names)),
            "measure": "P@10",
            "name": np.tile(names, 2),
            "true": np.tile(np.linspace(0.9, 0.1, len(names)), 2),
            "estimate": np.tile(np.linspace(0.1, 0.9, len(names)), 2),  # every pair crossed
        }
    )
    expected = stats.error_table(scores, whole, by=by)
    assert expected["sre_star"].sum() > 0
    for frame, name in ((scores, "crossed"), (scores.assign(estimate=scores["true"]), "none")):
        blocks = stats.sre_significance(truth, test, by, compact=True, blocks=True)
        assert len(blocks) == len(whole) and list(blocks.columns) == list(whole.columns)
        writer = parquet.ParquetBlocks(tmp_path / f"{name}.parquet")
        blocks.sink = writer.write
        got = stats.error_table(frame, blocks, by=by)
        blocks.drain()
        assert writer.close(metadata={"m": 1}) == len(whole)
        back = parquet.read_parquet(tmp_path / f"{name}.parquet")
        pd.testing.assert_frame_equal(back, whole, check_exact=True)
        assert back.attrs["metadata"] == {"m": 1}
        pd.testing.assert_frame_equal(got, stats.error_table(frame, whole, by=by))
    with pytest.raises(RuntimeError, match="read once"):
        iter(blocks)


def test_p_values_files_streamed_are_the_whole_table(tmp_path):
    """``sre_significance(path, blocks=True)``: the table of the reference tool's files in
    blocks, strings as they are, looked up as the whole table is."""
    (tmp_path / "pValues.P_10.csv").write_text("a,b,0.01\na,c,0.2\nb,c,0.04\n")
    truth = pd.DataFrame({"name": list("abc"), "qid": "1", "value": 0.0, "measure": "P@10"})
    whole = stats.sre_significance(truth, tmp_path, ["measure"])
    blocks = stats.sre_significance(truth, tmp_path, ["measure"], blocks=True)
    seen = []
    blocks.sink = seen.append
    frame = pd.DataFrame(
        {
            "measure": "P@10",
            "name": list("abc"),
            "true": [0.3, 0.2, 0.1],
            "estimate": [0.1, 0.2, 0.3],
        }
    )
    got = stats.error_table(frame, blocks, by=["measure"])
    pd.testing.assert_frame_equal(got, stats.error_table(frame, whole, by=["measure"]))
    assert got["sre_star"].tolist() == [2]  # (a, b) and (b, c) significant, (a, c) not
    pd.testing.assert_frame_equal(pd.concat(seen), whole)
