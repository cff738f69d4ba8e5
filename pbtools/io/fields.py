"""Fields of TREC lines: whitespace splitting, field counts, and the typed columns (scores,
ranks, labels) with their checks (used by :mod:`pbtools.io.parse`).

The lines come from :mod:`pbtools.io.files`; they are split into fields with Arrow's ASCII
whitespace kernels, so runs of spaces and tabs, leading and trailing blanks all work. Every check
is vectorised; only when a check fails are the offending rows located and turned into exact
1-based physical line numbers (blank lines count). Strict mode raises at the first offending
line; ``lenient=True`` repairs what the input contract (``docs/input.md``) says it repairs and
records one repair per line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pbtools.errors import TrecFormatError
from pbtools.io.files import clean_bytes, read_bytes, split_lines
from pbtools.io.mistakes import check_field_counts
from pbtools.io.repairs import RepairableError, Repairs

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

    def line(self, i: int) -> int:
        """1-based physical line of kept row ``i``."""
        return int(self.rows[i]) + 1


def split_fields(
    path,
    nfields: int,
    wanted: Sequence[int],
    *,
    lenient: bool,
    what: str,
    checked: tuple[bytes, Repairs, np.ndarray] | None = None,
) -> Fields:
    """Read ``path`` and return fields ``wanted`` of every line that has ``nfields`` fields.

    Strict: a blank line, or one with another field count, raises :class:`RepairableError` at
    its line. Lenient: blank and short lines are skipped, long lines keep their first
    ``nfields`` fields, and each such line is recorded as a repair. The byte-level rules of
    :func:`pbtools.io.files.clean_bytes` come first. An empty file (no non-blank line) raises in
    both modes, and so does a file none of whose lines can be a ``what`` line
    (:func:`pbtools.io.mistakes.check_field_counts`). ``checked``: the file's bytes already through
    :func:`~pbtools.io.files.clean_bytes` (its result), so that they are not read twice.
    """
    path = str(path)
    if checked is None:
        checked = clean_bytes(read_bytes(path), path, lenient=lenient)
    data, repairs, skip = checked
    lines = split_lines(data, path)
    n = len(lines)
    trimmed = pc.ascii_trim_whitespace(lines)
    parts = pc.ascii_split_whitespace(trimmed)
    nf = np.asarray(pc.list_value_length(parts), dtype=np.int64)
    offsets = np.asarray(parts.offsets)[:-1].astype(np.int64)
    nf[np.asarray(pc.equal(pc.binary_length(trimmed), 0), dtype=bool)] = 0  # blank lines
    nf[skip] = -1  # lines with a control byte (lenient; already recorded)
    if not np.any(nf > 0):
        raise TrecFormatError(f"empty file (no {what} lines)", path)
    check_field_counts(nf, what, path)  # the wrong kind of file: no repair makes it right
    good = nf == nfields
    if not good.all():
        bad = np.flatnonzero(~good)
        if not lenient:
            i = int(bad[0])
            problem = (
                f"blank line ({what} lines have {nfields} fields)"
                if nf[i] == 0
                else f"{what} line has {nf[i]} fields, expected {nfields}"
            )
            raise RepairableError(problem, path, i + 1)
        blank, short, long_ = nf == 0, (nf > 0) & (nf < nfields), nf > nfields
        if blank.any():
            repairs.add(path, np.flatnonzero(blank) + 1, "blank line", "skipped")
        if short.any():
            idx = np.flatnonzero(short)
            repairs.add(
                path, idx + 1, [f"{k} fields, expected {nfields}" for k in nf[idx]], "skipped"
            )
        if long_.any():
            idx = np.flatnonzero(long_)
            repairs.add(
                path,
                idx + 1,
                [f"{k} fields, expected {nfields}" for k in nf[idx]],
                f"kept the first {nfields} fields",
            )
        good = nf >= nfields
        rows = np.flatnonzero(good)
    else:
        rows = None
    values = parts.values
    if rows is None:  # the common case: every line has exactly nfields fields
        cols = [
            values.take(pa.array(np.arange(j, n * nfields, nfields))) if nfields > 1 else values
            for j in wanted
        ]
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


def _cast(arr: pa.Array, fields: Fields, to: pa.DataType, problem: str) -> np.ndarray:
    """Cast a string column with Arrow; the first value that fails raises at its line."""

    def conv(a):
        return pc.cast(a, to)

    try:
        return np.asarray(conv(arr))
    except pa.ArrowInvalid:
        i = first_failure(arr, conv)
        raise TrecFormatError(
            f"{problem} {arr[i].as_py()!r}", fields.path, fields.line(i)
        ) from None


def to_int16(arr: pa.Array, fields: Fields, what: str) -> np.ndarray:
    """Cast a string column to integers that fit int16; anything else raises at its line."""
    out = _cast(arr, fields, pa.int64(), f"non-integer {what}")
    info = np.iinfo(np.int16)
    bad = (out < info.min) | (out > info.max)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise TrecFormatError(
            f"{what} {out[i]} outside the int16 range", fields.path, fields.line(i)
        )
    return out.astype(np.int16)


# --------------------------------------------------------------------------------------------
# scores and ranks
# --------------------------------------------------------------------------------------------

#: a literal whose value is zero (``0``, ``-0.0``, ``0e-5`` …): parsing it to 0 is no underflow
_ZERO = r"^[+-]?(0+\.?0*|\.0+)([eE][+-]?[0-9]+)?$"
#: what Arrow's float parser accepts (the fast path); only used once a cast has failed
_INF = r"^(?i:[+-]?inf(inity)?)$"
_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$|^(?i:[+-]?(inf|infinity|nan))$"


def to_scores(arr: pa.Array, f: Fields, *, lenient: bool, float32: bool) -> np.ndarray:
    """The score column as float64 (the file's double values; ``float32`` rounding is applied
    later, after the duplicate rule).

    A value Arrow cannot parse raises at its line in both modes. A value that is not finite, or
    that a double (or, with ``float32``, a 32-bit float) cannot hold, raises a
    :class:`RepairableError` at the first one (strict), or is kept and recorded, one repair per
    line (lenient): NaN (ordered last in its topic by :func:`pbtools.frames.trec_order`),
    ``inf``/``-inf``, a finite literal that overflows to ±inf, a nonzero literal that underflows
    to 0.
    """
    out = _cast(arr, f, pa.float64(), "non-numeric score")
    with np.errstate(over="ignore"):  # an overflow to inf is reported below
        value = out.astype(np.float32) if float32 else out
    finite = np.isfinite(value)
    zero = value == 0
    if finite.all() and not zero.any():
        return out
    odd = ~finite
    if zero.any():  # a nonzero literal read as 0 is an underflow
        zi = np.flatnonzero(zero)
        literal_zero = np.asarray(pc.match_substring_regex(arr.take(pa.array(zi)), _ZERO), bool)
        odd[zi[~literal_zero]] = True
    if not odd.any():
        return out
    idx = np.flatnonzero(odd)
    lits = arr.take(pa.array(idx)).to_pylist()
    word = np.asarray(pc.match_substring_regex(arr.take(pa.array(idx)), _INF), dtype=bool)
    problems, actions = [], []
    for lit, v64, v, is_word in zip(lits, out[idx], value[idx], word, strict=True):
        width = "a double" if (np.isinf(v64) or v64 == 0) else "a 32-bit float (--float32)"
        if np.isnan(v):
            problems.append(f"score {lit!r} is NaN (not a number)")
            actions.append("kept; ordered last in its topic")
        elif is_word:
            problems.append(f"score {lit!r} is infinite")
            actions.append(f"kept as {v}")
        elif np.isinf(v):
            problems.append(f"score {lit!r} overflows {width}")
            actions.append(f"kept as {v}")
        else:
            problems.append(f"score {lit!r} underflows {width} (a nonzero score read as 0)")
            actions.append("kept as 0")
    if not lenient:
        raise RepairableError(problems[0], f.path, f.line(idx[0]))
    f.repairs.add(f.path, f.rows[idx] + 1, problems, actions)
    return out


def check_ranks(arr: pa.Array, f: Fields, *, lenient: bool) -> None:
    """The rank column must hold numbers (not NaN). It is ignored for ordering (trec_eval and
    the reference ignore it), so lenient reading accepts anything and records one repair per
    line that is not a number."""
    try:
        bad = np.isnan(np.asarray(pc.cast(arr, pa.float64())))
    except pa.ArrowInvalid:
        if not lenient:
            i = first_failure(arr, lambda a: pc.cast(a, pa.float64()))
            raise RepairableError(
                f"non-numeric rank {arr[i].as_py()!r}", f.path, f.line(i)
            ) from None
        number = np.asarray(pc.match_substring_regex(arr, _NUMBER), dtype=bool)
        bad = ~number
        bad[number] = np.isnan(np.asarray(pc.cast(arr.filter(pa.array(number)), pa.float64())))
    if not bad.any():
        return
    idx = np.flatnonzero(bad)
    lits = arr.take(pa.array(idx)).to_pylist()
    problems = [f"non-numeric rank {lit!r}" for lit in lits]
    if not lenient:
        raise RepairableError(problems[0], f.path, f.line(idx[0]))
    f.repairs.add(
        f.path, f.rows[idx] + 1, problems, "ignored (rows are ordered by score, not rank)"
    )
