"""``pbtools evaluate``'s two layouts (``-q``'s rows with each run's ``all`` rows, the wide
table) are one function each on :class:`~pbtools.cli.table.Columns`; frames go through
``Columns.from_frame`` / ``.frame()`` (the sampled qrels' path, Parquet)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import pbtools.accessor  # noqa: F401 (DataFrame.pb)
from pbtools.cli.evaluate import _wide, with_all_rows
from pbtools.cli.table import Coded, Columns
from pbtools.ids import encode


def _frames(text: bool):
    ms = ["P@5", "AP", "Relstring@3"] if text else ["P@5", "AP"]
    rows = [(n, q, m) for n in ("r2", "r1") for q in ("10", "9") for m in ms]
    per = pd.DataFrame(rows, columns=["name", "qid", "measure"])
    per["value"] = np.arange(len(per), dtype=float) / 8
    if text:
        per["text"] = pd.array(
            [("RN" if m.startswith("Rel") else None) for *_, m in rows], dtype="string"
        )
    for c in ("name", "qid", "measure"):
        per[c] = encode(per[c])
    per["qid"] = per["qid"].cat.set_categories(["10", "11", "9"])  # "11": unused
    avg = (
        per[per["measure"].astype(str) != "Relstring@3"]
        .groupby(["name", "measure"], observed=True, sort=False, as_index=False)["value"]
        .mean()
    )
    avg["measure"] = encode(avg["measure"].astype(str))
    return per, avg


def test_frames_all_rows_come_from_the_columns_layout():
    for text in (False, True):
        per, avg = _frames(text)
        out = with_all_rows(per, avg)
        # each run's topics then its averages; runs in order of first appearance
        assert out["name"].astype(str).tolist()[:2] == ["r2", "r2"]
        assert out["qid"].astype(str).tolist()[: 2 * (3 if text else 2) + 2][-2:] == [
            "all",
            "all",
        ]
        assert out["qid"].cat.categories.tolist() == ["10", "9", "all"]  # used ids and "all"
        assert out["name"].dtype == per["name"].dtype
        # an id column whose dictionaries differ (the text measure has no average): strings
        assert (out["measure"].dtype == "str") == text
        assert out["value"].tolist()[-2:] == avg["value"].tolist()[-2:]
        if text:
            assert out["text"].dtype == "string" and out["text"].isna().sum() == len(out) - 4
        back = Columns.from_frame(out).frame()
        pd.testing.assert_frame_equal(back, out.astype({"measure": per["measure"].dtype}))


def test_wide_frame_is_the_pivot():
    _, avg = _frames(False)
    wide = _wide(Columns.from_frame(avg)).frame()
    pd.testing.assert_frame_equal(wide, avg.pb.wide(), check_exact=True)
    assert wide.columns.tolist() == ["name", "P@5", "AP"]  # first appearance


def test_stacked_columns_over_different_dictionaries():
    per = Columns(name=Coded([0, 1], ["a", "c"]), qid=Coded([0, 0], ["1"]), value=np.ones(2))
    avg = Columns(name=Coded([0, 1], ["b", "c"]), value=np.zeros(2))
    from pbtools.cli.evaluate import _with_all_rows

    out = _with_all_rows(per, avg)
    assert out["name"].values().tolist() == ["a", "c", "c", "b"]
    assert out["qid"].values().tolist() == ["1", "1", "all", "all"]
