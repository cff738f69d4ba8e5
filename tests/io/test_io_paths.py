"""The fast paths of ``io.read_runs`` against the general path, on small hostile inputs.

``read_runs`` reads a clean file with one typed CSV read (``pbtools.io.direct``), puts each file
of its own run into trec order on its own and skips the duplicate rule for files without
repeats (``pbtools.io.assemble``). The reference here switches all of that off — every file
through the whitespace split, every row through the global duplicate rule and one sort of the
whole frame — and every seeded hostile track below must give the same frame (values, dtypes,
dictionaries, order, ranks), the same repairs, or the same refusal, in every mode.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pbtools import TrecFormatError, TrecFormatWarning, io
from pbtools.frames import trec_order
from pbtools.io import assemble, direct, parse

SEPARATORS = ["\t", " ", "  ", " \t ", "\t\t"]
QIDS = ["1", "2", "10", "MB001", "001"]
DOCS = ["d1", "d2", "d10", "D2", "é1", "d-3", "x"]
SCORES = ["1.5", "2", "2", "0", "-0", "0.0", "3e2", "-1", "7.25", "1e-400", "nan", "inf", "1e39"]


def hostile_file(rng: np.random.Generator, tag: str, clean: bool) -> str:
    """Text of one run file: clean (one separator, numbers, no repeats) or with any of the
    problems the input contract names."""
    sep = "\t" if clean and rng.random() < 0.5 else (" " if clean else rng.choice(SEPARATORS))
    lines = []
    pairs = [(q, d) for q in QIDS[: rng.integers(1, 5)] for d in DOCS]
    rng.shuffle(pairs)
    for k, (q, d) in enumerate(pairs[: rng.integers(1, len(pairs))]):
        score = rng.choice(SCORES[:9] if clean else SCORES)
        fields = [q, "Q0", d, str(k + 1), score, tag]
        if not clean:
            roll = rng.random()
            if roll < 0.05:
                fields.append("extra")
            elif roll < 0.08:
                fields = fields[:5]
            elif roll < 0.11:
                fields[3] = "r"
            elif roll < 0.14:
                fields[5] = tag + "x"
        line = sep.join(fields)
        if not clean and rng.random() < 0.1:
            line = rng.choice([" ", "\t"]) + line + rng.choice(["", " ", "\t"])
        lines.append(line)
        if not clean and rng.random() < 0.08:
            lines.append(rng.choice(["", "  "]))
        if rng.random() < 0.08:  # a repeated document (with another score)
            lines.append(sep.join([q, "Q0", d, "0", rng.choice(SCORES[:9]), tag]))
    if clean and rng.random() < 0.5:  # a file already in trec order
        lines.sort(key=lambda x: (x.split()[0], -float(x.split()[4]), _rev(x.split()[2])))
    end = "\r\n" if rng.random() < 0.1 else "\n"
    return end.join(lines) + (end if rng.random() < 0.9 else "")


def _rev(s: str) -> tuple:
    return tuple(-b for b in s.encode())


def read(paths, **kw):
    """``(frame, repairs)`` or the refusal's ``(type, message)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrecFormatWarning)
        try:
            df = io.read_runs(paths, **kw)
        except (TrecFormatError, ValueError) as e:
            return type(e), str(e)
    return df, df.attrs.get("repairs")


def same(a, b) -> None:
    if isinstance(a[0], type) or isinstance(b[0], type):
        assert a == b
        return
    (fa, ra), (fb, rb) = a, b
    pd.testing.assert_frame_equal(fa, fb, check_exact=True)
    for c in ("name", "qid", "docno"):
        assert fa[c].cat.codes.dtype == fb[c].cat.codes.dtype
        assert fa[c].cat.categories.equals(fb[c].cat.categories)
    assert (ra is None) == (rb is None)
    if ra is not None:
        pd.testing.assert_frame_equal(pd.DataFrame(ra), pd.DataFrame(rb))
    pd.testing.assert_frame_equal(trec_order(fa), fa)  # trec order, ranks 1..n


@pytest.fixture
def general():
    """Switch the fast paths off: returns a context in which read_runs takes the general path."""

    class Ctx:
        def __enter__(self):
            self.m = pytest.MonkeyPatch()
            self.m.setattr(parse, "read_direct", lambda data, float32: None)
            self.m.setattr(
                assemble, "slow_parts", lambda parts, *_: np.ones(len(parts), dtype=bool)
            )

        def __exit__(self, *exc):
            self.m.undo()

    return Ctx()


@pytest.mark.parametrize("seed", range(40))
def test_fast_paths_agree_with_the_general_path(tmp_path: Path, seed: int, general):
    rng = np.random.default_rng(seed)
    clean = seed % 2 == 0
    paths = []
    n = int(rng.integers(1, 5))
    for i in range(n):  # clean files: tags in name order, or not
        tag = f"r{rng.integers(0, 3)}" if not clean else f"r{i if seed % 4 else n - i}"
        p = tmp_path / f"input.f{i}"
        p.write_bytes(hostile_file(rng, tag, clean).encode())
        paths.append(str(p))
    for kw in (
        {},
        {"lenient": True},
        {"lenient": True, "float32": True},
        {"run_id": "file"},
        {"lenient": True, "run_id": "file"},
    ):
        fast = read(paths, **kw)
        with general:
            ref = read(paths, **kw)
        same(fast, ref)


def test_clean_files_take_the_direct_path(tmp_path: Path):
    """The direct read accepts exactly the clean layouts (so the test above exercises it)."""
    tab = b"1\tQ0\td1\t1\t2.5\tr\n1\tQ0\td2\t2\t0\tr\n"
    aligned = b"  1  Q0 d1\t1   2.5 r  \n1 Q0 d2 2 0.0 r\n"
    assert direct.read_direct(tab, float32=False) is not None
    assert direct.read_direct(aligned, float32=False) is not None
    for bad in (
        b"1\tQ0\td1\t1\t2.5\tr\n\n",  # a blank line
        b"1\tQ0\td1\t1\t2.5\n",  # five fields
        b"1\t\tQ0\td1\t1\t2.5\tr\n",  # an empty field
        b"1\tQ0\td1\t1\t1e-400\tr\n",  # an underflow
        b"1\tQ0\td1\tx\t2\tr\n",  # a non-numeric rank
        b"1\tQ0\td1\t1\t2\tr\n1\tQ0\td2\t1\t2\ts\n",  # two tags
        b"1\tQ0\td\x001\t1\t2\tr\n",  # a control byte
    ):
        assert direct.read_direct(bad, float32=False) is None, bad


@pytest.mark.parametrize("zero_lines", [64, 0])
def test_direct_read_zero_scores_by_their_literals(monkeypatch, zero_lines):
    """A zero score is direct when written as a zero and sends the file to the general path
    when it is an underflow, whether the zeros' literals are cut out of their lines or every
    score is read as text (``ZERO_LINES``); float32 underflows too."""
    monkeypatch.setattr(direct, "ZERO_LINES", zero_lines)
    head = "".join(f"1 Q0 d{i} {i} {9 - i}.5 r\n" for i in range(5))
    for zero in ("0", "-0.0", "0e-7", ".0"):
        got = direct.read_direct(f"{head}2 Q0 z 1 {zero} r".encode(), float32=False)
        assert got is not None and got[2][-1] == 0
    for data, f32 in (
        (f"{head}2 Q0 z 1 0 r\n2 Q0 y 2 1e-400 r\n", False),
        (f"{head}2 Q0 y 2 1e-50 r\n", True),
        (f"{head}2\tQ0\ty\t2\t2.5e-330\tr\n", False),
    ):
        assert direct.read_direct(data.encode(), float32=f32) is None, data
    assert direct.read_direct(f"{head}2 Q0 y 2 1e-50 r\n".encode(), float32=False) is not None


def test_low_bytes_counted_piece_by_piece():
    data = b"1\tQ0\x01d\n2 Q0 d\x1f\n" * 5
    for step in (1, 3, 7, 1 << 16):
        assert direct._low_bytes(data, step=step) == 25  # TAB, \x01, \x1f, two LF
    assert direct._low_bytes(b"") == 0


def test_direct_read_block_by_block(monkeypatch):
    """A file read in several blocks gives the columns of one read, and a problem in a later
    block (a second tag, an empty field, a NaN rank, five fields) still sends it to the
    general path."""
    import pyarrow.csv as pcsv

    monkeypatch.setenv("PBTOOLS_PURE", "1")  # the typed Arrow read's blocks, not the tokenizer
    lines = [f"{q}\tQ0\td{q}x{i}\t{i}\t{10 - i / 7:.6f}\tr\n" for q in (3, 1) for i in range(40)]
    data = "".join(lines).encode()
    whole = direct.read_direct(data, float32=False)
    small = pcsv.ReadOptions(column_names=list(direct.RUN_FIELDS), block_size=256)
    monkeypatch.setattr(direct, "_READ", small)
    parts = direct.read_direct(data, float32=False)
    assert parts[0].num_chunks > 3  # several blocks
    assert parts[0].to_pylist() == whole[0].to_pylist()
    assert parts[1].to_pylist() == whole[1].to_pylist()
    assert parts[2].tolist() == whole[2].tolist() and parts[3] == whole[3] == "r"
    last = lines[-1]
    for bad in (
        last.replace("\tr\n", "\ts\n"),
        last.replace("\tQ0\t", "\t\t"),
        last.replace("\t39\t", "\tnan\t"),
        last.replace("\tQ0", ""),
    ):
        assert (
            direct.read_direct("".join(lines[:-1]).encode() + bad.encode(), float32=False) is None
        )


def test_clean_files_out_of_name_order(tmp_path: Path, general):
    """Runs come out in name order whatever the order of their files."""
    b = tmp_path / "input.b"
    a = tmp_path / "input.a"
    b.write_text("1\tQ0\td1\t1\t2\tb\n2\tQ0\td1\t1\t1\tb\n")
    a.write_text("1\tQ0\td2\t1\t3\ta\n")
    fast = read([str(b), str(a)])
    assert fast[0]["name"].astype(str).tolist() == ["a", "b", "b"]
    with general:
        same(fast, read([str(b), str(a)]))
