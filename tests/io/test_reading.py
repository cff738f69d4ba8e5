"""pbtools.io.reading: the one reader, without pandas — the same rows, codes, dictionaries,
repairs and refusals as the frames of read_runs/read_qrels, in a process that never imports
pandas."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from pbtools import io
from pbtools.io.encoded import EncodedQrels, EncodedRuns
from pbtools.io.repairs import Repairs, warn

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "pbtools" / "data" / "sample"

#: reads the cases in a fresh process; "installed": pandas importable (pyarrow would import it
#: unless kept out), "refused": ``import pandas`` fails (a finder refuses it: with
#: ``sys.modules["pandas"] = None`` pyarrow 26 itself fails, its Cython import taking the None
#: for the module — ``pa.array`` raises AttributeError, in any code)
_CHILD = r"""
import pickle, sys, warnings
mode, out, cases = sys.argv[1], sys.argv[2], pickle.loads(bytes.fromhex(sys.argv[3]))
if mode == "refused":
    class Refuse:
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] == "pandas":
                raise ImportError("no pandas here")
    sys.meta_path.insert(0, Refuse())
warnings.simplefilter("ignore")
from pbtools.io import read_qrels_encoded, read_runs_encoded
got = []
for kind, src, lenient, run_id in cases:
    try:
        if kind == "runs":
            got.append(read_runs_encoded(src, lenient=lenient, run_id=run_id))
        else:
            got.append(read_qrels_encoded(src, lenient=lenient))
    except Exception as e:
        got.append((type(e).__name__, str(e), getattr(e, "path", None), getattr(e, "line", None)))
assert sys.modules.get("pandas") is None, "pandas was imported"
with open(out, "wb") as f:
    pickle.dump(got, f)
if mode == "installed":  # pandas imported after all: pyarrow works with it as usual
    import pandas as pd, pyarrow as pa
    assert pa.types.is_dictionary(pa.array(pd.Series(pd.Categorical(["a", "b"]))).type)
"""


def _read_in_child(cases, tmp_path: Path, mode: str) -> list:
    out = tmp_path / f"got-{mode}.pkl"
    subprocess.run(
        [sys.executable, "-c", _CHILD, mode, str(out), pickle.dumps(cases).hex()],
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=tmp_path,
    )
    with open(out, "rb") as f:
        return pickle.load(f)


def _expected(kind, src, lenient, run_id):
    """The same case through the pandas API, as codes (or the refusal)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if kind == "runs":
                return EncodedRuns.from_frame(io.read_runs(src, lenient=lenient, run_id=run_id))
            return EncodedQrels.from_frame(io.read_qrels(src, lenient=lenient))
        except Exception as e:
            return (type(e).__name__, str(e), getattr(e, "path", None), getattr(e, "line", None))


def _same_repairs(a: Repairs | None, b: Repairs | None) -> None:
    assert (a is None) == (b is None)
    if a is not None:
        for c in ("file", "line", "line_na", "problem", "action"):
            assert a.column(c).tolist() == b.column(c).tolist(), c


def _assert_same(got, want) -> None:
    assert type(got) is type(want)
    if isinstance(got, tuple):  # a refusal: type, message, file, line
        assert got == want
        return
    ids = ("names", "qids", "docnos") if isinstance(got, EncodedRuns) else ("qids", "docnos")
    for d in ids:
        assert getattr(got, d).equals(getattr(want, d)), d
    cols = ("name", "qid", "docno", "score", "rank") if isinstance(got, EncodedRuns) else None
    for c in cols or ("qid", "docno", "label"):
        np.testing.assert_array_equal(getattr(got, c), getattr(want, c), err_msg=c)
    _same_repairs(got.repairs, want.repairs)


def _dirty(tmp_path: Path) -> tuple[Path, Path]:
    """A run directory and a qrels file that lenient reading repairs."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "input.x").write_text(
        "1 Q0 d1 1 3.0 x\n\n1 Q0 d2 2 nan x\n1 Q0 d1 3 2.0 x\n2 Q0 d3 1 1.0 x extra\n"
        "2 Q0 d4 1\n2 Q0 d5 2 0.5 y\n"
    )
    (runs / "input.z").write_bytes(b"\xef\xbb\xbf1 Q0 d9 1 1.0 z\r\n1 Q0 d8 2 1.0 z\r\n")
    (runs / "input.empty").write_text("")
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 1\n1 0 d1 0\n\n2 0 d3 2\n2 0 d4\n")
    return runs, qrels


def _cases(tmp_path: Path, toy: Path | None) -> list:
    runs, qrels = _dirty(tmp_path)
    cases = [
        ("runs", str(SAMPLE / "Runs"), False, "tag"),
        ("qrels", str(SAMPLE / "QRels"), False, "tag"),
        ("runs", str(runs), True, "tag"),
        ("runs", str(runs), True, "file"),
        ("qrels", str(qrels), True, "tag"),
        ("runs", str(runs), False, "tag"),  # refused: the same message, file and line
        ("qrels", str(qrels), False, "tag"),
        ("runs", str(tmp_path / "nothing-*"), False, "tag"),
    ]
    if toy is not None:
        cases += [
            ("runs", str(toy / "Runs"), False, "tag"),
            ("qrels", str(toy / "QRels"), False, ""),
        ]
    return cases


def test_the_reader_imports_no_pandas_and_gives_the_frames_codes(tmp_path):
    """In a process where pandas is installed but never imported: the sample, a dirty run
    directory and qrels (lenient and strict), TOY when ../shared is there — each equal to
    the pandas API's frame turned into codes, or refused alike."""
    toy = REPO.parent / "shared" / "data" / "trec" / "TOY"
    cases = _cases(tmp_path, toy if toy.is_dir() else None)
    got = _read_in_child(cases, tmp_path, "installed")
    for case, g in zip(cases, got, strict=True):
        want = _expected(*case)
        _assert_same(g, want)
    assert isinstance(got[2], EncodedRuns) and len(got[2].repairs) >= 6  # the dirty runs
    assert isinstance(got[5], tuple) and got[5][0] == "RepairableError"


@pytest.mark.slow
def test_the_reader_with_pandas_refused_and_trec2_lenient(tmp_path, trec2_dir, trec2_tag):
    """``import pandas`` refused: the same results; TREC-2
    lenient, as codes, equal to read_collection's frames, its repairs the collection's first."""
    cases = _cases(tmp_path, None) + [
        ("runs", str(trec2_dir / "Runs"), True, "tag"),
        ("qrels", str(trec2_dir / "QRels"), True, "tag"),
    ]
    got = _read_in_child(cases, tmp_path, "refused")
    for case, g in zip(cases[:-2], got[:-2], strict=True):
        _assert_same(g, _expected(*case))
    runs, qrels = got[-2:]
    first = Repairs()  # the collection's repairs: the qrels', the runs', then desc.xml's
    first.extend(qrels.repairs)
    first.extend(runs.repairs)
    held = Repairs.from_frame(trec2_tag.repairs)
    assert len(runs.repairs) > 0 and len(held) >= len(first)
    for c in ("file", "line", "line_na", "problem", "action"):
        assert held.column(c)[: len(first)].tolist() == first.column(c).tolist(), c
    want_runs = EncodedRuns.from_frame(trec2_tag.runs)
    want_qrels = EncodedQrels.from_frame(trec2_tag.qrels)
    runs.repairs = qrels.repairs = want_runs.repairs = want_qrels.repairs = None
    _assert_same(runs, want_runs)
    _assert_same(qrels, want_qrels)


def test_repairs_sorted_and_summarised_without_pandas():
    """Repairs: file order as listed (unlisted last), line order with whole-file repairs
    first; one summary a file in first-seen order, kinds in first-seen order; the frame and
    back; warn() of the Repairs and of its frame say the same."""
    r = Repairs()
    r.add("b", [9, 2], ["7 fields, expected 6", "blank line"], "skipped")
    r.add("a", [4], "duplicate document 'd1' for topic '1' (also at line 2)", "dropped")
    r.add("b", None, "empty file", "skipped (no run read)")
    r.add("c", [1], "blank line", "skipped")
    s = r.sorted(["a", "b"])
    assert s.column("file").tolist() == ["a", "b", "b", "b", "c"]
    assert s.column("line").tolist() == [4, 0, 2, 9, 1]
    assert s.column("line_na").tolist() == [False, True, False, False, False]
    assert r.summaries() == [
        "b: 3 repair(s): 1 × wrong field count, 1 × blank line, 1 × empty file "
        "(see the repairs frame)",
        "a: 1 repair(s): 1 × duplicate document (see the repairs frame)",
        "c: 1 repair(s): 1 × blank line (see the repairs frame)",
    ]
    frame = s.frame()
    assert str(frame["line"].dtype) == "Int64" and frame["line"].isna().tolist()[1]
    _same_repairs(Repairs.from_frame(frame), s)
    texts = []
    for rep in (s, frame):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            warn(rep)
        texts.append([str(x.message) for x in w])
    assert texts[0] == texts[1] == s.summaries()
    assert len(Repairs().sorted(["a"])) == 0 and Repairs().frame().shape == (0, 4)
