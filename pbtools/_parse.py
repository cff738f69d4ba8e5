"""Low-level, vectorised parsing of whitespace-separated TREC files (used by :mod:`pbtools.io`).

A file is read in one go (gzip is detected by its magic bytes, not its name), cut into physical
lines by pyarrow's CSV reader (one column per line, no quoting), and split into fields with
Arrow's ASCII whitespace kernels, so runs of spaces and tabs, leading and trailing blanks and CRLF
endings all work. Every check is vectorised; only when a check fails is the *first* offending row
located and turned into an exact 1-based physical line number (blank lines count).

Nothing here is public: :mod:`pbtools.io` holds the API and the documentation of the formats.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from pbtools.frames import TrecFormatError

REPAIR_COLUMNS: tuple[str, ...] = ("file", "line", "problem", "action")

_DELIM = "\x1f"  # the CSV "delimiter": a byte that TREC files do not contain (checked)
_READ = pcsv.ReadOptions(autogenerate_column_names=True, block_size=1 << 24)
_PARSE = pcsv.ParseOptions(delimiter=_DELIM, quote_char=False, escape_char=False,
                           ignore_empty_lines=False)
_CONVERT = pcsv.ConvertOptions(column_types={"f0": pa.string()}, strings_can_be_null=False,
                               quoted_strings_can_be_null=False)


# --------------------------------------------------------------------------------------------
# repairs
# --------------------------------------------------------------------------------------------


@dataclass
class Repairs:
    """Collects lenient repairs as column chunks; :meth:`frame` gives the ``repairs`` frame."""

    parts: list[pd.DataFrame] = field(default_factory=list)

    def add(self, file, lines, problem, action) -> None:
        """Record repairs: ``lines`` an int array (or None for a file-level repair);
        ``problem`` and ``action`` a string or one string per line."""
        n = 1 if lines is None else len(lines)
        if n == 0:
            return
        line = pd.array([pd.NA] if lines is None else np.asarray(lines, dtype=np.int64),
                        dtype="Int64")
        self.parts.append(pd.DataFrame({
            "file": pd.array([str(file)] * n, dtype="str"),
            "line": line,
            "problem": pd.array(_broadcast(problem, n), dtype="str"),
            "action": pd.array(_broadcast(action, n), dtype="str"),
        }))

    def extend(self, other: Repairs) -> None:
        self.parts.extend(other.parts)

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def frame(self) -> pd.DataFrame:
        """The repairs as one frame: ``file`` (str), ``line`` (Int64, NA for a whole file),
        ``problem`` (str), ``action`` (str), in the order they were made."""
        if not self.parts:
            return empty_repairs()
        return pd.concat(self.parts, ignore_index=True)


def empty_repairs() -> pd.DataFrame:
    return pd.DataFrame({
        "file": pd.array([], dtype="str"), "line": pd.array([], dtype="Int64"),
        "problem": pd.array([], dtype="str"), "action": pd.array([], dtype="str"),
    })


def _broadcast(v, n: int) -> list[str]:
    if isinstance(v, str):
        return [v] * n
    v = list(v)
    if len(v) != n:
        raise ValueError("repair problem/action length mismatch")
    return v


# --------------------------------------------------------------------------------------------
# bytes and lines
# --------------------------------------------------------------------------------------------


def read_bytes(path) -> bytes:
    """The file's bytes, gunzipped when they start with the gzip magic number."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise TrecFormatError(f"cannot read file ({e.strerror or e})", path) from e
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise TrecFormatError(f"corrupt gzip data ({e})", path) from e
    return raw


def split_lines(data: bytes, path) -> pa.Array:
    """One string per physical line (``\\n``-terminated; a lone ``\\r`` is whitespace)."""
    if not data:
        return pa.array([], type=pa.string())
    if b"\r" in data:
        data = data.replace(b"\r", b" ")
    if _DELIM.encode() in data:
        arr = _split_lines_numpy(data)
    else:
        try:
            table = pcsv.read_csv(pa.BufferReader(data), read_options=_READ,
                                  parse_options=_PARSE, convert_options=_CONVERT)
        except pa.ArrowInvalid:
            _check_utf8(data, path)
            raise
        arr = table.column(0).combine_chunks()
    return arr


def _split_lines_numpy(data: bytes) -> pa.Array:
    """Fallback line splitter (zero-copy): each value keeps its ``\\n``, trimmed later."""
    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    offsets = np.concatenate([[0], nl + 1]).astype(np.int64)
    if offsets[-1] != len(data):
        offsets = np.append(offsets, len(data))
    arr = pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets),
                                           pa.py_buffer(data))
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        _check_utf8(data, None)
        raise
    return arr.cast(pa.string())


def _check_utf8(data: bytes, path) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise TrecFormatError(f"invalid UTF-8 (byte {e.start})", path, line) from None


# --------------------------------------------------------------------------------------------
# fields
# --------------------------------------------------------------------------------------------


@dataclass
class Fields:
    """The whitespace-split lines of one file, restricted to the rows that are kept."""

    path: str
    n_lines: int
    rows: np.ndarray  # 0-based physical line index of each kept row
    cols: list[pa.Array]  # the wanted fields of the kept rows (strings)
    repairs: Repairs


def split_fields(path, nfields: int, wanted: Sequence[int], *, lenient: bool,
                 what: str) -> Fields:
    """Read ``path`` and return fields ``wanted`` of every line that has ``nfields`` fields.

    Strict: a blank line, or one with another field count, raises :class:`TrecFormatError` at
    its line. Lenient: blank and short lines are skipped, long lines keep their first
    ``nfields`` fields, and each such line is recorded as a repair. An empty file (no non-blank
    line) raises in both modes.
    """
    path = str(path)
    lines = split_lines(read_bytes(path), path)
    n = len(lines)
    trimmed = pc.ascii_trim_whitespace(lines)
    parts = pc.ascii_split_whitespace(trimmed)
    nf = np.asarray(pc.list_value_length(parts), dtype=np.int64)
    offsets = np.asarray(parts.offsets)[:-1].astype(np.int64)
    nf[np.asarray(pc.equal(pc.binary_length(trimmed), 0), dtype=bool)] = 0  # blank lines
    repairs = Repairs()
    if not np.any(nf > 0):
        raise TrecFormatError(f"empty file (no {what} lines)", path)
    good = nf == nfields
    if not good.all():
        bad = np.flatnonzero(~good)
        if not lenient:
            i = int(bad[0])
            problem = "blank line" if nf[i] == 0 else (
                f"expected {nfields} fields, found {nf[i]}")
            raise TrecFormatError(problem + f" in {what} line", path, i + 1)
        blank, short, long_ = nf == 0, (nf > 0) & (nf < nfields), nf > nfields
        if blank.any():
            repairs.add(path, np.flatnonzero(blank) + 1, "blank line", "skipped")
        if short.any():
            idx = np.flatnonzero(short)
            repairs.add(path, idx + 1, [f"{k} fields, expected {nfields}" for k in nf[idx]],
                        "skipped")
        if long_.any():
            idx = np.flatnonzero(long_)
            repairs.add(path, idx + 1, [f"{k} fields, expected {nfields}" for k in nf[idx]],
                        f"kept the first {nfields} fields")
        good = nf >= nfields
        rows = np.flatnonzero(good)
    else:
        rows = None
    values = parts.values
    if rows is None:  # the common case: every line has exactly nfields fields
        cols = [values.take(pa.array(np.arange(j, n * nfields, nfields))) if nfields > 1
                else values for j in wanted]
        rows = np.arange(n)
    else:
        base = offsets[rows]
        cols = [values.take(pa.array(base + j)) for j in wanted]
    return Fields(path, n, rows, cols, repairs)


def first_failure(arr: pa.Array, convert) -> int:
    """Index of the first element of ``arr`` for which ``convert`` raises (bisection; each
    element is converted O(log n) times at most, with the same parser as the fast path)."""
    lo, hi = 0, len(arr)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            convert(arr.slice(lo, mid - lo))
        except (pa.ArrowInvalid, ValueError):
            hi = mid
        else:
            lo = mid
    return lo


def to_float(arr: pa.Array, fields: Fields, what: str) -> np.ndarray:
    """Cast a string column to float64; a non-numeric (or NaN) value raises at its line."""
    def conv(a):
        return pc.cast(a, pa.float64())
    try:
        out = np.asarray(conv(arr))
    except pa.ArrowInvalid:
        i = first_failure(arr, conv)
        raise TrecFormatError(f"non-numeric {what} {arr[i].as_py()!r}", fields.path,
                              int(fields.rows[i]) + 1) from None
    nan = np.isnan(out)
    if nan.any():
        i = int(np.flatnonzero(nan)[0])
        raise TrecFormatError(f"non-numeric {what} {arr[i].as_py()!r} (NaN)", fields.path,
                              int(fields.rows[i]) + 1)
    return out


def to_int16(arr: pa.Array, fields: Fields, what: str) -> np.ndarray:
    """Cast a string column to integers that fit int16; anything else raises at its line."""
    def conv(a):
        return pc.cast(a, pa.int64())
    try:
        out = np.asarray(conv(arr))
    except pa.ArrowInvalid:
        i = first_failure(arr, conv)
        raise TrecFormatError(f"non-integer {what} {arr[i].as_py()!r}", fields.path,
                              int(fields.rows[i]) + 1) from None
    info = np.iinfo(np.int16)
    bad = (out < info.min) | (out > info.max)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise TrecFormatError(f"{what} {out[i]} outside the int16 range", fields.path,
                              int(fields.rows[i]) + 1)
    return out.astype(np.int16)


def check_numeric(arr: pa.Array, fields: Fields, what: str) -> None:
    """Raise at the first value of ``arr`` that is not a number (used for the rank column)."""
    to_float(arr, fields, what)


# --------------------------------------------------------------------------------------------
# ids
# --------------------------------------------------------------------------------------------


def categorical(arrays: Sequence[pa.Array] | pa.ChunkedArray) -> pd.Categorical:
    """Dictionary-encode string arrays into one pandas Categorical with a sorted (``strcmp``)
    dictionary of Arrow-backed ``str`` categories, without going through Python objects."""
    chunked = arrays if isinstance(arrays, pa.ChunkedArray) else pa.chunked_array(
        list(arrays), type=pa.string())
    if chunked.num_chunks == 0:
        chunked = pa.chunked_array([pa.array([], type=pa.string())])
    enc = pc.dictionary_encode(chunked).unify_dictionaries()
    dic = enc.chunk(0).dictionary if enc.num_chunks else pa.array([], type=pa.string())
    idx = np.concatenate([np.asarray(c.indices) for c in enc.chunks]) if enc.num_chunks else \
        np.zeros(0, dtype=np.int32)
    order = np.asarray(pc.array_sort_indices(dic))
    remap = np.empty(len(dic), dtype=np.int32)
    remap[order] = np.arange(len(dic), dtype=np.int32)
    cats = pd.Index(pd.array(dic.take(pa.array(order)), dtype="str"))
    return pd.Categorical.from_codes(remap[idx.astype(np.int64)] if len(idx) else
                                     idx.astype(np.int32), dtype=pd.CategoricalDtype(cats))


def composite(parts: Sequence[np.ndarray], sizes: Sequence[int]) -> np.ndarray:
    """One int64 key from several code arrays (mixed radix)."""
    key = np.zeros(len(parts[0]), dtype=np.int64)
    for p, size in zip(parts, sizes, strict=True):
        key = key * np.int64(max(size, 1)) + p.astype(np.int64)
    return key


def duplicates(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose key occurred earlier (in row order), and for each the row of the first
    occurrence. Both are sorted by the repeated row's position."""
    order = np.argsort(key, kind="stable")
    sk = key[order]
    same = np.zeros(len(key), dtype=bool)
    same[1:] = sk[1:] == sk[:-1]
    if not same.any():
        e = np.zeros(0, dtype=np.int64)
        return e, e
    start = np.maximum.accumulate(np.where(~same, np.arange(len(key)), 0))
    rep, first = order[same], order[start[same]]
    o = np.argsort(rep, kind="stable")
    return rep[o], first[o]


def cpu_workers(n_items: int) -> int:
    return max(1, min(n_items, os.cpu_count() or 1))
