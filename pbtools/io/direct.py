"""The direct path of run files: one typed CSV read for files that need no repair (used by
:mod:`pbtools.io.parse`).

Most run files are clean: six fields on every line, one separator, numbers everywhere a number
belongs. Such a file is read with pyarrow's CSV reader straight into typed columns (``qid``,
``docno``, ``tag`` as strings, ``rank`` and ``score`` as float64), which is much cheaper than
splitting every line on whitespace (:mod:`pbtools.io.fields`). Blanks are first made uniform:

* a file separated by single TABs, or by single spaces, with no leading or trailing blank, is
  read as it is;
* any other file (runs of blanks, spaces and TABs mixed, leading or trailing blanks: TREC-2's
  aligned columns) has every run of blanks turned into one space and leading and trailing
  blanks removed (:func:`uniform_blanks`, a few vectorised passes over the bytes), which is
  exactly what whitespace splitting does to the fields.

The direct path then *checks* the file instead of trusting it: it gives up (returns None) on
anything that is not the common case — a line with another field count, a blank line, a value
that does not parse, a score that is not finite or is zero (the zero/underflow rule needs the
literal), a NaN rank, a second run tag — and the caller reads the file again with the general
path, which finds the exact line and problem, raises it (strict) or repairs it (lenient). So
the direct path only ever accepts what the general path would accept without a repair, and it
yields the same values (Arrow's CSV reader and Arrow's cast share one number parser).

When pbtools was built with its C extension (:mod:`pbtools.native`), a file is first offered
to its tokenizer (``pbtools/_tokens.c``, :func:`read_tokens`): one pass over the bytes that
accepts a strict subset of what the typed read accepts (six fields on every line, printable
ASCII, plain decimal ranks and scores, finite scores, zeros only as zero literals, one tag)
and yields the same
columns, several times cheaper than Arrow's general CSV reader; anything else it leaves to the
typed read as above.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from pbtools import native
from pbtools.errors import TrecFormatError
from pbtools.io.fields import Fields, to_scores
from pbtools.io.repairs import Repairs

#: the six fields of a run line
RUN_FIELDS = ("qid", "q0", "docno", "rank", "score", "tag")
_TYPES = {
    "qid": pa.string(),
    "q0": pa.string(),
    "docno": pa.string(),
    "rank": pa.float64(),
    "score": pa.float64(),
    "tag": pa.string(),
}
#: bytes of a run file parsed at a time by the direct read (:func:`_columns`)
BLOCK_BYTES = 1 << 24
_READ = pcsv.ReadOptions(column_names=list(RUN_FIELDS), block_size=BLOCK_BYTES, use_threads=False)
_PARSE = {  # a blank line is kept as a row of empty fields (and so refused)
    d: pcsv.ParseOptions(delimiter=d, quote_char=False, escape_char=False, ignore_empty_lines=False)
    for d in ("\t", " ")
}
_CONVERT = {
    ascii_only: pcsv.ConvertOptions(
        column_types=_TYPES,
        include_columns=list(RUN_FIELDS),  # q0 is not used, but must not be empty
        null_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
        check_utf8=not ascii_only,
    )
    for ascii_only in (True, False)
}
_SCORE_TEXT = pcsv.ConvertOptions(
    column_types={"score": pa.string()}, include_columns=["score"], check_utf8=False
)


def uniform_blanks(data: bytes) -> bytes:
    """``data`` with every run of spaces and TABs made one space and the blanks at the start
    and end of every line removed (line ends are kept, so line numbers do not move).

    One compaction keeps the first blank of every run that does not start a line; a second,
    only when some line ends in blanks, drops the blank left before its line end; TABs become
    spaces last (``bytes.translate``). About 0.6× the time of masking every step (TREC-2's 79
    MB of aligned columns: 0.20 → 0.12 s).

    Examples
    --------
    >>> uniform_blanks(b"  1 \\t Q0\\td1   1 2.5 r \\n\\t2 Q0 d2 1 1 r")
    b'1 Q0 d1 1 2.5 r\\n2 Q0 d2 1 1 r'
    """
    b = np.frombuffer(data, dtype=np.uint8)
    n = len(b)
    if n == 0:
        return data
    has_tab = b"\t" in data
    nl = b == 10
    blank = b == 32
    if has_tab:
        blank |= b == 9
    drop = np.empty(n, dtype=bool)  # a blank after a blank, a line end or the start
    drop[0] = True
    np.logical_or(blank[:-1], nl[:-1], out=drop[1:])
    trailing = bool(blank[-1])  # some blank right before a line end or the end of the data
    if not trailing:
        np.logical_and(blank[:-1], nl[1:], out=nl[:-1])
        trailing = bool(nl[:-1].any())
    drop &= blank
    np.logical_not(drop, out=drop)
    out = b[drop]
    if trailing and len(out):  # runs are single blanks now: drop the one before a line end
        blank = (out == 32) | (out == 9)
        before = np.empty_like(blank)
        before[-1] = True
        before[:-1] = out[1:] == 10
        out = out[~(blank & before)]
    text = out.tobytes()
    return text.translate(_TAB_TO_SPACE) if has_tab else text


_TAB_TO_SPACE = bytes.maketrans(b"\t", b" ")


def read_direct(
    data: bytes, *, float32: bool
) -> tuple[pa.ChunkedArray, pa.ChunkedArray, np.ndarray, str] | None:
    """``(qid, docno, score, tag)`` of a run file that needs no repair, or None.

    ``data``: the file's bytes (gunzipped; CRLF line ends already made LF). ``qid`` and
    ``docno`` are chunked Arrow string arrays, ``score`` float64 (the file's values; with
    ``float32`` they must also be finite and nonzero as 32-bit floats), one row per physical
    line. None when the file is anything but six blank-separated non-empty fields on every
    line, with numeric ranks (not NaN), finite nonzero scores, one run tag, and no control
    byte.
    """
    if not data:
        return None
    tokens = read_tokens(data, float32=float32)
    if tokens is not None:
        return tokens
    tab, space = b"\t" in data, b" " in data
    if tab and space or (space and _ragged(data)):
        data, sep = uniform_blanks(data), " "
    else:
        sep = "\t" if tab else " "
    cols = _columns(data, sep)
    if cols is None and sep == " " and not tab:  # ragged beyond the sample
        data = uniform_blanks(data)
        cols = _columns(data, sep)
    if cols is None:
        return None
    qid, docno, score, tag = cols
    n = len(score)
    # every byte below 0x20 must be a line end or (tab-separated) one of the 5n separators
    low = n - (not data.endswith(b"\n")) + (5 * n if sep == "\t" else 0)
    if _low_bytes(data) != low or b"\x7f" in data:
        return None
    return (qid, docno, score, tag) if _scores_ok(data, sep, score, float32) else None


def _scores_ok(data: bytes, sep: str, score: np.ndarray, float32: bool) -> bool:
    """True when every score is finite and nonzero as it will be kept (float64, or float32),
    or zero only where its literal is a zero (:func:`pbtools.io.fields.to_scores`' rule): an
    underflow, NaN, inf or an overflow is the general path's to name. ``sep``: the file's one
    separator (the tokenizer's scores: :func:`_tokenized_scores_ok`)."""
    value = _values(score, float32)
    if np.isfinite(value).all() and value.all():
        return True
    if not np.isfinite(value).all():
        return False
    literal = _zero_literals(data, sep, np.flatnonzero(value == 0))
    if literal is None:
        return False
    fields = Fields("", len(literal), np.arange(len(literal)), [], Repairs())
    try:
        to_scores(literal, fields, lenient=False, float32=float32)
    except TrecFormatError:
        return False
    return True


def read_tokens(
    data: bytes, *, float32: bool
) -> tuple[pa.ChunkedArray, pa.ChunkedArray, np.ndarray, str] | None:
    """:func:`read_direct`'s result by the compiled tokenizer (``pbtools._tokens``), or None
    when it is not built (or ``PBTOOLS_PURE`` is set) or leaves the file to the typed read: it
    accepts only files the typed read accepts, with identical values (``tests/io/test_tokens.py``).

    Examples
    --------
    >>> got = read_tokens(b"1 Q0 d1 1 2.5 r\\n1\\tQ0 d2  2 -1e-3 r\\n", float32=False)
    >>> got is None or (got[1].to_pylist(), got[2].tolist()) == (["d1", "d2"], [2.5, -0.001])
    True
    """
    module = native.tokens()
    got = None if module is None else module.run_columns(data)
    if got is None:
        return None
    rows, qoff, qdata, doff, ddata, score, tag = got
    score = np.frombuffer(score, dtype=np.float64)
    if not _tokenized_scores_ok(score, float32):
        return None  # the typed read decides (a float32 overflow or underflow)
    qid, docno = (
        pa.chunked_array(
            [pa.Array.from_buffers(pa.string(), rows, [None, pa.py_buffer(o), pa.py_buffer(d)])]
        )
        for o, d in ((qoff, qdata), (doff, ddata))
    )
    return qid, docno, score, tag


def _tokenized_scores_ok(score: np.ndarray, float32: bool) -> bool:
    """:func:`_scores_ok` for the tokenizer's scores, whose zeros need no second look at their
    literals: the tokenizer yields ±0.0 only for a literal whose every digit is 0 (an
    underflow it leaves to the typed read), and every such literal is a zero of
    :func:`pbtools.io.fields.to_scores`' rule (``fields._ZERO``; ``tests/io/test_tokens.py``
    checks both). So a file keeps the compiled path whatever its number of zeros (TREC-2's
    gecrd2: 1,957); what remains is the kept value's rule: finite, and with ``float32`` no
    nonzero double that becomes 0 (an underflow of the 32-bit float).

    Examples
    --------
    >>> _tokenized_scores_ok(np.array([0.0, -0.0, 2.5]), float32=False)
    True
    >>> _tokenized_scores_ok(np.array([1e-50, 2.5]), float32=True)
    False
    """
    value = _values(score, float32)
    if not np.isfinite(value).all():
        return False
    return not (float32 and bool(np.any((value == 0) & (score != 0))))


def _values(score: np.ndarray, float32: bool) -> np.ndarray:
    """The scores as they will be kept: ``score``, or with ``float32`` as 32-bit floats."""
    with np.errstate(over="ignore"):
        return score.astype(np.float32) if float32 else score


def _columns(
    data: bytes, sep: str
) -> tuple[pa.ChunkedArray, pa.ChunkedArray, np.ndarray, str] | None:
    """``(qid, docno, score, tag)`` of the typed CSV read, or None unless every line has six
    fields, none of them empty, a rank that is a number (not NaN) and the first line's tag.

    A file above :data:`BLOCK_BYTES` is read block by block (``pyarrow.csv.open_csv``), each
    block checked and only the columns kept that the run needs: the others (``q0``, ``rank``,
    ``tag``: 23 bytes a row of an MS MARCO-like file) never exist for the whole file at once
    (peak RSS of read_runs on the MS MARCO-like shape, 34.9 M rows, two files in flight:
    see benchmarks/README.md)."""
    qid, docno, score, tag = [], [], [], None
    how = {
        "read_options": _READ,
        "parse_options": _PARSE[sep],
        "convert_options": _CONVERT[data.isascii()],
    }
    try:
        if len(data) > _READ.block_size:
            batches = pcsv.open_csv(pa.BufferReader(data), **how)
        else:  # one block: one read, as before (nothing to gain from streaming it)
            batches = pcsv.read_csv(pa.BufferReader(data), **how).to_batches()
        for batch in batches:
            if batch.num_rows == 0:
                continue
            for c in ("qid", "q0", "docno", "tag"):  # an empty field: two blanks, a blank line
                if _min_length(batch.column(c)) == 0:
                    return None
            if np.isnan(batch.column("rank").to_numpy()).any():
                return None
            tags = batch.column("tag")
            tag = tags[0].as_py() if tag is None else tag
            if not one_value(tags, tag):
                return None
            qid.append(batch.column("qid"))
            docno.append(batch.column("docno"))
            score.append(batch.column("score").to_numpy())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # a field count, a number or a byte the general path will name
    if tag is None:
        return None
    scores = score[0] if len(score) == 1 else np.concatenate(score)
    return pa.chunked_array(qid), pa.chunked_array(docno), scores, tag


def _low_bytes(data: bytes, step: int = 1 << 16) -> int:
    """How many bytes of ``data`` are below 0x20, counted 64 KiB at a time into one small
    buffer: no temporary the size of the file or of a 4 MiB step (an MS MARCO-sized run is 130
    MB; synth127's files of 1 MB each made a 1 MB mask of fresh pages)."""
    b = np.frombuffer(data, dtype=np.uint8)
    low = np.empty(min(step, len(b)), dtype=bool)
    count = 0
    for i in range(0, len(b), step):
        part = b[i : i + step]
        mask = low[: len(part)]
        np.less(part, 32, out=mask)
        count += int(np.count_nonzero(mask))
    return count


def _ragged(data: bytes) -> bool:
    """True when the first 64 KiB of a space-separated file show blanks in a run or at a line
    end (TREC-2's aligned columns): such a file is made uniform before the read, not after."""
    head = data[: 1 << 16]
    return b"  " in head or b"\n " in head or b" \n" in head or head.startswith(b" ")


#: zero scores up to which :func:`_zero_literals` cuts their literals out of the lines
ZERO_LINES = 64


def _zero_literals(data: bytes, sep: str, rows: np.ndarray) -> pa.Array | None:
    """The score literals of lines ``rows`` (0-based; a file read by :func:`_columns`: six
    fields, single separators), or None when the read fails. A few lines of a file of one
    block are cut out of the bytes (synth129: 21 of 129 files hold one to three zero scores;
    a second CSV read of the file took 5 ms a file); else every score is read as text
    (:func:`_score_literals`).

    Examples
    --------
    >>> _zero_literals(b"1 Q0 a 1 0.0 r\\n1 Q0 b 2 -0 r", " ", np.array([0, 1])).to_pylist()
    ['0.0', '-0']
    """
    if len(rows) > ZERO_LINES or len(data) > BLOCK_BYTES:
        literal = _score_literals(data, sep)
        return None if literal is None else literal.take(pa.array(rows))
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    ends = np.append(ends, len(data))
    starts = np.concatenate([[0], ends[:-1] + 1])
    s = sep.encode()
    lines = [data[starts[r] : ends[r]].split(s) for r in rows.tolist()]
    if any(len(f) != 6 for f in lines):
        return None
    return pa.array([f[4].decode("ascii", "replace") for f in lines], type=pa.string())


def _score_literals(data: bytes, sep: str) -> pa.Array | None:
    """The score field of every line as text (the zero/underflow rule needs the literals), or
    None when the read fails."""
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),
            read_options=_READ,
            parse_options=_PARSE[sep],
            convert_options=_SCORE_TEXT,
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return table.column("score").combine_chunks()


def _offsets(arr: pa.Array) -> np.ndarray:
    """The int32 offsets of a string array (a view, no copy)."""
    return np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset : arr.offset + len(arr) + 1]


def _min_length(arr: pa.Array) -> int:
    return int(np.diff(_offsets(arr)).min())


def one_value(arr: pa.Array, value: str) -> bool:
    """True when every string of ``arr`` (no nulls) equals ``value``: its offsets step by the
    value's length and its data bytes are the value repeated (two memory passes)."""
    v = value.encode()
    offsets = _offsets(arr)
    if offsets[-1] - offsets[0] != len(v) * len(arr):
        return False
    if not np.all(np.diff(offsets) == len(v)):
        return False
    body = arr.buffers()[2].slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    return body.equals(pa.py_buffer(v * len(arr)))
