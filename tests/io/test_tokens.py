"""The compiled tokenizer of clean run files (``pbtools/_tokens.c``) against the typed Arrow read
it stands in for (:func:`pbtools.io.direct.read_direct`): whenever it accepts a file, the Arrow
path accepts it with identical qids, docnos, scores (bit for bit) and tag; the pure path
(``PBTOOLS_PURE=1``) gives the same frames on real data."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from pbtools import native
from pbtools.io import direct, fields
from pbtools.io.direct import read_direct, read_tokens

TOKENS = native.tokens()
needs_tokens = pytest.mark.skipif(
    TOKENS is None, reason="pbtools._tokens is not built (no C compiler at install): pure path"
)
SAMPLE = Path(__file__).resolve().parents[2] / "pbtools" / "data" / "sample"


def arrow_direct(data: bytes, monkeypatch, float32: bool = False):
    """read_direct by the typed Arrow read alone (the pure path)."""
    with monkeypatch.context() as m:
        m.setenv(native.PURE_ENV, "1")
        return read_direct(data, float32=float32)


def same(c, a) -> None:
    """c (the tokenizer's result) equals a (the Arrow path's) exactly."""
    assert a is not None, "the tokenizer accepted a file the Arrow path refuses"
    for x, y in zip(c[:2], a[:2], strict=True):
        assert x.type == y.type == pa.string()
        assert x.combine_chunks().equals(y.combine_chunks())
    assert c[2].dtype == a[2].dtype == np.float64
    assert np.array_equal(c[2].view(np.int64), a[2].view(np.int64))  # bit for bit
    assert c[3] == a[3]


# ------------------------------------------------------------------ the fuzz's run files

NUMBERS = [
    "1", "2.5", "-3.25", "+1", "-0", "0", "0.0", "00", "1.", ".5", "1e", "1e5", "1E-5", "1e+5",
    "-1e-3", "inf", "-inf", "nan", "NaN", "0x1A", "007.50", "1e400", "-1e400", "1e-400",
    "4.9e-324", "2.4703282292062328e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
    "1.7976931348623159e308", "12345678901234567", "0.12345678901234567", "9007199254740993",
    "123456789012345678901234567890", "1e22", "1e23", "3.0e-22", "1_0", "1,5", "--1", "1e--1",
    "0." + "0" * 60 + "1", "1" + "0" * 130, " ",
]  # fmt: skip
BYTES = [b"\x00", b"\x01", b"\x0b", b"\x0c", b"\r", b"\x7f", b"\x80", b"\xc3\xa9", b"\xff", b'"']


def literal(rng: random.Random) -> str:
    """A number: a hard case, or a random decimal (17-digit mantissas, exponents up to ±400)."""
    if rng.random() < 0.3:
        return rng.choice(NUMBERS)
    digits = str(rng.randrange(1, 10 ** rng.randint(1, 20)))
    if rng.random() < 0.5:
        cut = rng.randint(1, len(digits))
        digits = digits[:cut] + "." + (digits[cut:] or "0")
    sign = rng.choice(["", "", "-", "+"])
    if rng.random() < 0.5:
        digits += rng.choice("eE") + rng.choice(["", "-", "+"]) + str(rng.randint(0, 400))
    return sign + digits


def run_file(rng: random.Random) -> tuple[bytes, bool]:
    """A generated run file mixing the hard cases, and whether to read it with float32."""
    n = rng.choice([0, 1, 2, 3, 5, 8, 20])
    style = rng.choice(["tab", "space", "runs", "mixed", "aligned"])
    tag = rng.choice(["r", "run1", "tagX" * rng.randint(1, 30)])
    lines = []
    for i in range(n):
        score = literal(rng) if rng.random() < 0.3 else f"{rng.uniform(-50, 50):.6f}"
        rank = literal(rng) if rng.random() < 0.1 else str(i + 1)
        docno = "D" + str(rng.randrange(10**6)) * rng.choice([1, 1, 1, 40])
        fields = [str(rng.randint(1, 5)), "Q0", docno, rank, score, tag]
        if rng.random() < 0.04:
            fields = fields[: rng.choice([4, 5])] if rng.random() < 0.5 else fields + ["x"]
        if rng.random() < 0.03:
            fields[-1] = "other"
        if rng.random() < 0.05:  # a byte that is not printable ASCII, inside a field
            k = rng.randrange(len(fields))
            fields[k] = fields[k] + rng.choice(BYTES).decode("latin-1")
        seps = {
            "tab": ["\t"],
            "space": [" "],
            "runs": [" ", "  ", "   "],
            "mixed": [" ", "\t", " \t", "\t\t"],
            "aligned": [" " * k for k in range(1, 6)],
        }[style]
        line = "".join(f + rng.choice(seps) for f in fields[:-1]) + fields[-1]
        if rng.random() < 0.05:
            line = rng.choice([" ", "\t", "  "]) + line
        if rng.random() < 0.05:
            line += rng.choice([" ", "\t", "  "])
        lines.append(line)
    if lines and rng.random() < 0.03:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(["", " ", "\t"]))
    text = "\n".join(lines) + ("\n" if lines and rng.random() < 0.8 else "")
    return text.encode("latin-1"), rng.random() < 0.2


@needs_tokens
def test_tokenizer_accepts_only_what_the_arrow_path_accepts_with_identical_values(monkeypatch):
    rng = random.Random(30)
    files = [run_file(rng) for _ in range(700)]
    compiled = [read_tokens(data, float32=float32) for data, float32 in files]
    monkeypatch.setenv(native.PURE_ENV, "1")
    taken = refused = 0
    for (data, float32), c in zip(files, compiled, strict=True):
        a = read_direct(data, float32=float32)
        if c is None:
            refused += a is not None
        else:
            taken += 1
            same(c, a)
    # not vacuous: the tokenizer takes most clean files and leaves some the Arrow path takes
    assert taken > 200 and refused > 5, (taken, refused)


@needs_tokens
def test_scores_are_arrows_correctly_rounded_doubles():
    """20,000 random decimals (1–20 digits, exponents to ±330): every finite nonzero one the
    same double as Arrow's parse, bit for bit; the underflows and overflows refused."""
    rng = np.random.default_rng(7)
    n = 20_000
    mant = [str(int(x)) for x in rng.integers(1, 10**18, n) // 10 ** rng.integers(0, 18, n)]
    mant = [m + ("7" * int(k)) for m, k in zip(mant, rng.integers(0, 3, n), strict=True)]
    point = rng.integers(0, 20, n)
    exp = rng.integers(-330, 330, n)
    lits = [
        (m[:p] + "." + m[p:] if 0 < p < len(m) else m) + (f"e{e}" if e % 3 else "")
        for m, p, e in zip(mant, point, exp, strict=True)
    ]
    lits += ["9007199254740993", "9007199254740995", "1e23", "8.98846567431158e307"]
    lits += ["2.4703282292062328e-324", "2.4703282292062327e-324", "1.00000000000000011102"]
    arrow = pa.array(lits).cast(pa.float64()).to_numpy()
    ok = np.isfinite(arrow) & (arrow != 0)
    kept = [s for s, k in zip(lits, ok, strict=True) if k]
    data = "".join(f"1 Q0 d{i} {i + 1} {s} r\n" for i, s in enumerate(kept)).encode()
    got = TOKENS.run_columns(data)
    assert got is not None
    score = np.frombuffer(got[5], dtype=np.float64)
    bad = np.flatnonzero(score.view(np.int64) != arrow[ok].view(np.int64))
    assert len(bad) == 0, [kept[i] for i in bad[:5]]
    for s in [s for s, k in zip(lits, ok, strict=True) if not k][:50] + ["1e-400", "-9e999"]:
        assert TOKENS.run_columns(f"1 Q0 d 1 {s} r\n".encode()) is None, s  # under/overflows


@needs_tokens
def test_zero_literals_are_signed_zeros_checked_by_pythons_rule(monkeypatch):
    """A score written as zero is ±0.0 from the tokenizer, as from Arrow; the file is then
    accepted by the zero-literal rule (pbtools.io.fields.to_scores), the same as the typed
    read: a zero literal passes, an underflow does not."""
    for z, bits in (("0", 0.0), ("-0.000", -0.0), ("+00e7", 0.0)):
        got = TOKENS.run_columns(f"1 Q0 d 1 {z} r\n1  Q0 e 2 1 r\n".encode())
        score = np.frombuffer(got[5], dtype=np.float64)
        assert score[0] == 0 and np.signbit(score[0]) == np.signbit(bits), z
    data = b"1  Q0 a 1 2 r\n1 Q0 b 2 -0.0 r\n"
    same(read_tokens(data, float32=False), arrow_direct(data, monkeypatch))
    assert read_tokens(b"1 Q0 a 1 2 r\n1 Q0 b 2 1e-50 r\n", float32=True) is None
    # more zeros than the typed read cuts out of the lines (TREC-2's gecrd2: 1,957) stay here
    many = b"".join(b"1  Q0 d%d %d 0 r\n" % (i, i + 1) for i in range(direct.ZERO_LINES + 1))
    for f32 in (False, True):
        same(read_tokens(many, float32=f32), arrow_direct(many, monkeypatch, float32=f32))


@needs_tokens
def test_every_zero_the_tokenizer_yields_is_a_zero_literal_of_the_rule():
    """read_tokens skips the literals' second look (direct._tokenized_scores_ok) because the
    tokenizer yields a zero only for a literal the zero rule (fields._ZERO) accepts: checked
    on every short literal over the plain-decimal alphabet and seeded longer ones."""
    import itertools
    import re

    rng = np.random.default_rng(7)
    alphabet = "0+-.e1"
    lits = ["".join(t) for n in range(1, 6) for t in itertools.product(alphabet, repeat=n)]
    lits += ["".join(rng.choice(list("00000.e-+9"), size=rng.integers(6, 14))) for _ in range(3000)]
    zeros = 0
    for lit in lits:
        got = TOKENS.run_columns(f"1 Q0 d 1 {lit} r\n".encode())
        if got is not None and np.frombuffer(got[5], dtype=np.float64)[0] == 0:
            zeros += 1
            assert re.fullmatch(fields._ZERO, lit), lit
    assert zeros > 50


@needs_tokens
@pytest.mark.parametrize(
    "data",
    [
        b"\t1\tQ0\td\t1\t2\tr\n",  # a TAB-only file is read as it is: a leading TAB is a field
        b"1\tQ0\td\t1\t2\tr\t\n",
        b"1\tQ0\t\td\t1\t2\tr\n",
        b"1 Q0 d 1 2 r\n\n",  # a blank line at the end
        b"1 Q0 d 1 2 r\n \n2 Q0 d 1 2 r\n",
        b"1 Q0 d 1 2 r\n1 Q0 e 2 3 s\n",  # a second tag
        b"1 Q0 d 1 2 r x\n",
        b"1 Q0 d 1 2\n",
        b"1 Q0 d\x00 1 2 r\n",
        b"1 Q0 d 1. 2 r\n",
        b"1 Q0 d 1 1e-400 r\n",  # an underflow
        b"1 Q0 d 1 2 r\r\n",
        b"",
        b"\n" * 100,  # more lines than a clean file of this size can hold: nothing allocated
    ],
)
def test_tokenizer_leaves_these_to_python(data):
    assert TOKENS.run_columns(data) is None


@needs_tokens
def test_tokenizer_reads_blanks_as_whitespace_splitting_does(monkeypatch):
    data = b"  1 \t Q0\td1   1 2.5 r \n\t2 Q0 d2 2 -1.5e-2 r\t\n3 Q0 d3 3 7 r"
    got = read_tokens(data, float32=False)
    assert got[1].to_pylist() == ["d1", "d2", "d3"] and got[0].to_pylist() == ["1", "2", "3"]
    assert got[2].tolist() == [2.5, -0.015, 7.0] and got[3] == "r"
    assert got[2].flags.writeable
    same(got, arrow_direct(data, monkeypatch))


@needs_tokens
def test_float32_underflow_is_left_to_the_arrow_path(monkeypatch):
    data = b"1 Q0 a 1 1e-50 r\n1 Q0 b 2 1 r\n"
    assert TOKENS.run_columns(data) is not None
    assert read_tokens(data, float32=True) is None
    assert read_tokens(data, float32=False) is not None
    assert read_direct(data, float32=True) == arrow_direct(data, monkeypatch, float32=True)


@needs_tokens
def test_the_compiled_path_is_taken_by_read_runs(monkeypatch):
    """Reading the bundled sample goes through the tokenizer for every clean file."""
    from pbtools import io

    calls = []

    class Spy:
        @staticmethod
        def run_columns(data):
            got = TOKENS.run_columns(data)
            calls.append(got is not None)
            return got

    monkeypatch.setattr(direct.native, "tokens", lambda: Spy)
    io.read_runs(SAMPLE / "Runs")
    assert len(calls) == len(list((SAMPLE / "Runs").iterdir())) and all(calls)


def test_pure_env_forces_the_pure_path(monkeypatch):
    monkeypatch.setenv(native.PURE_ENV, "1")
    assert native.tokens() is None and read_tokens(b"1 Q0 d 1 2 r\n", float32=False) is None
    monkeypatch.setenv(native.PURE_ENV, "0")
    assert native.pure() is False


def frames(source, monkeypatch, pure: bool, **kw):
    from pbtools import io

    with monkeypatch.context() as m, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if pure:
            m.setenv(native.PURE_ENV, "1")
        else:
            m.delenv(native.PURE_ENV, raising=False)
        return io.read_runs(source, **kw)


def same_frames(a, b) -> None:
    import pandas as pd

    pd.testing.assert_frame_equal(a, b, check_exact=True)
    for c in ("qid", "docno"):
        assert a[c].cat.categories.equals(b[c].cat.categories)
        assert np.array_equal(a[c].cat.codes, b[c].cat.codes)


@pytest.mark.parametrize("float32", [False, True])
def test_sample_same_with_and_without_pure(monkeypatch, float32):
    same_frames(
        frames(SAMPLE / "Runs", monkeypatch, False, float32=float32),
        frames(SAMPLE / "Runs", monkeypatch, True, float32=float32),
    )


def test_toy_same_with_and_without_pure(monkeypatch, toy_dir):
    same_frames(
        frames(toy_dir / "Runs", monkeypatch, False, lenient=True),
        frames(toy_dir / "Runs", monkeypatch, True, lenient=True),
    )


@pytest.mark.slow
def test_trec2_same_with_and_without_pure(monkeypatch, trec2_dir):
    runs = trec2_dir / "Runs"
    pure = frames(runs, monkeypatch, True, lenient=True)
    same_frames(frames(runs, monkeypatch, False, lenient=True), pure)
