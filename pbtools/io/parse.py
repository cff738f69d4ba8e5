"""Low-level, vectorised parsing of whitespace-separated TREC files (used by :mod:`pbtools.io`).

A file is read in one go (gzip is detected by its magic bytes, not its name), cut into physical
lines by pyarrow's CSV reader (one column per line, no quoting), and split into fields with
Arrow's ASCII whitespace kernels, so runs of spaces and tabs, leading and trailing blanks and CRLF
endings all work. Every check is vectorised; only when a check fails is the *first* offending row
located and turned into an exact 1-based physical line number (blank lines count).

The same module holds the rest of the reading machinery behind :mod:`pbtools.io`: assembling the
files of a run set (run identity, the duplicate rule, float32, trec order), qrels and the
``desc.xml`` parser; the ``repairs`` frame lives in :mod:`pbtools.io.repairs`. Nothing here is
public: :mod:`pbtools.io` holds the API and the documentation of the formats and of the lenient
rule.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from pbtools.frames import (
    LABEL_DTYPE,
    RANK_DTYPE,
    SCORE_DTYPE,
    TrecFormatError,
    categorical_from_arrow,
    composite_key,
    encode,
    trec_order,
)
from pbtools.io.repairs import (
    Repairs,
    sort_repairs,
)

_DELIM = "\x1f"  # the CSV "delimiter": a byte that TREC files do not contain (checked)
_READ = pcsv.ReadOptions(autogenerate_column_names=True, block_size=1 << 24)
_PARSE = pcsv.ParseOptions(
    delimiter=_DELIM, quote_char=False, escape_char=False, ignore_empty_lines=False
)
_CONVERT = pcsv.ConvertOptions(
    column_types={"f0": pa.string()}, strings_can_be_null=False, quoted_strings_can_be_null=False
)


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
    if not data.endswith(b"\n"):
        data += b"\n"  # the CSV reader cannot infer a column from an unterminated lone line
    if _DELIM.encode() in data:
        return _split_lines_numpy(data, path)
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),
            read_options=_READ,
            parse_options=_PARSE,
            convert_options=_CONVERT,
        )
    except pa.ArrowInvalid:
        _check_utf8(data, path)  # raises with the line of the first invalid byte
        return _split_lines_numpy(data, path)  # anything else the CSV reader refuses
    return table.column(0).combine_chunks()


def _split_lines_numpy(data: bytes, path) -> pa.Array:
    """Fallback line splitter (zero-copy): each value keeps its ``\\n``, trimmed later."""
    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    offsets = np.concatenate([[0], nl + 1]).astype(np.int64)
    if offsets[-1] != len(data):
        offsets = np.append(offsets, len(data))
    arr = pa.LargeStringArray.from_buffers(
        len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data)
    )
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        _check_utf8(data, path)
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


def split_fields(path, nfields: int, wanted: Sequence[int], *, lenient: bool, what: str) -> Fields:
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
            problem = (
                f"blank line ({what} lines have {nfields} fields)"
                if nf[i] == 0
                else f"{what} line has {nf[i]} fields, expected {nfields}"
            )
            raise TrecFormatError(problem, path, i + 1)
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
            f"{problem} {arr[i].as_py()!r}", fields.path, int(fields.rows[i]) + 1
        ) from None


def to_float(arr: pa.Array, fields: Fields, what: str) -> np.ndarray:
    """Cast a string column to float64; a non-numeric (or NaN) value raises at its line."""
    out = _cast(arr, fields, pa.float64(), f"non-numeric {what}")
    nan = np.isnan(out)
    if nan.any():
        i = int(np.flatnonzero(nan)[0])
        raise TrecFormatError(
            f"non-numeric {what} {arr[i].as_py()!r} (NaN)", fields.path, int(fields.rows[i]) + 1
        )
    return out


def to_int16(arr: pa.Array, fields: Fields, what: str) -> np.ndarray:
    """Cast a string column to integers that fit int16; anything else raises at its line."""
    out = _cast(arr, fields, pa.int64(), f"non-integer {what}")
    info = np.iinfo(np.int16)
    bad = (out < info.min) | (out > info.max)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise TrecFormatError(
            f"{what} {out[i]} outside the int16 range", fields.path, int(fields.rows[i]) + 1
        )
    return out.astype(np.int16)


def check_numeric(arr: pa.Array, fields: Fields, what: str) -> None:
    """Raise at the first value of ``arr`` that is not a number (used for the rank column)."""
    to_float(arr, fields, what)


# --------------------------------------------------------------------------------------------
# ids
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# runs
# --------------------------------------------------------------------------------------------


def file_run_name(path) -> str:
    """A run's name from its file name: ``input.`` prefix and ``.gz`` suffix removed."""
    name = Path(path).name
    if name.endswith(".gz"):
        name = name[:-3]
    if name.startswith("input."):
        name = name[len("input.") :]
    return name


@dataclass
class RunPart:
    path: str
    name: str
    lines: np.ndarray  # 1-based line of each row
    qid: pa.Array
    docno: pa.Array
    score: np.ndarray
    repairs: Repairs
    tags: list[str] = field(default_factory=list)


def parse_run_file(path: str, lenient: bool, run_id: str) -> RunPart:
    f = split_fields(path, 6, (0, 2, 3, 4, 5), lenient=lenient, what="run")
    qid, docno, rank, score, tag = f.cols
    scores = to_float(score, f, "score")
    check_numeric(rank, f, "rank")
    first = tag[0]
    other = np.asarray(pc.not_equal(tag, first), dtype=bool)
    tags = [first.as_py()]
    if other.any():
        tags = pc.unique(tag).to_pylist()
        i = int(np.flatnonzero(other)[0])
        if not lenient:
            raise TrecFormatError(
                f"run tag {tag[i].as_py()!r} differs from the file's first tag "
                f"{first.as_py()!r} (several run tags in one run file: {tags})",
                path,
                int(f.rows[i]) + 1,
            )
        idx = np.flatnonzero(other)
        action = (
            f"read as tag {first.as_py()!r}"
            if run_id == "tag"
            else f"ignored (run named {file_run_name(path)!r})"
        )
        f.repairs.add(
            path,
            f.rows[idx] + 1,
            [
                f"run tag {t!r} differs from the first tag {first.as_py()!r}"
                for t in tag.take(pa.array(idx)).to_pylist()
            ],
            action,
        )
    name = first.as_py() if run_id == "tag" else file_run_name(path)
    return RunPart(path, name, f.rows + 1, qid, docno, scores, f.repairs, tags)


def parse_many(paths: Sequence[str], fn, *args) -> list:
    """Parse files in a thread pool (gzip and Arrow release the GIL); errors surface in file
    order."""
    if len(paths) <= 1:
        return [fn(p, *args) for p in paths]
    with ThreadPoolExecutor(cpu_workers(len(paths))) as ex:
        futures = [ex.submit(fn, p, *args) for p in paths]
        return [fu.result() for fu in futures]


def check_run_id(run_id: str) -> None:
    if run_id not in ("tag", "file"):
        raise ValueError(f"run_id must be 'tag' or 'file', not {run_id!r}")


def assemble_runs(
    parts: list[RunPart], *, lenient: bool, float32: bool, repairs: Repairs
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Merge parsed files into one run frame (duplicate rule, float32, trec order)."""
    by_name: dict[str, str] = {}
    for p in parts:
        repairs.extend(p.repairs)
        if p.name in by_name and by_name[p.name] != p.path:
            if not lenient:
                raise TrecFormatError(
                    f"run {p.name!r} is also carried by {by_name[p.name]} (two files share one "
                    f"run tag; use run_id='file' or lenient=True to merge)",
                    p.path,
                )
            repairs.add(
                p.path,
                None,
                f"run tag {p.name!r} also carried by {by_name[p.name]}",
                f"merged into run {p.name!r}",
            )
        else:
            by_name.setdefault(p.name, p.path)
    files = pd.DataFrame(
        {
            "file": pd.array([p.path for p in parts], dtype="str"),
            "name": encode(pd.Series([p.name for p in parts], dtype="str")),
        }
    )
    sizes = np.array([len(p.score) for p in parts], dtype=np.int64)
    part_idx = np.repeat(np.arange(len(parts)), sizes)
    names = categorical_from_arrow([pa.array([p.name for p in parts], type=pa.string())])
    name_codes = names.codes[part_idx]
    qid = categorical_from_arrow([p.qid for p in parts])
    docno = categorical_from_arrow([p.docno for p in parts])
    score = np.concatenate([p.score for p in parts]) if parts else np.zeros(0)
    line = np.concatenate([p.lines for p in parts]) if parts else np.zeros(0, np.int64)
    key = composite_key(
        [name_codes, qid.codes, docno.codes],
        [len(names.categories), len(qid.categories), len(docno.categories)],
    )
    rep, first = duplicates(key)
    keep = None
    if len(rep):
        if not lenient:
            i, j = int(rep[0]), int(first[0])
            same = part_idx[i] == part_idx[j]
            where = f"line {line[j]}" if same else f"{parts[part_idx[j]].path}:{line[j]}"
            raise TrecFormatError(
                f"duplicate document {docno[i]!r} for topic {qid[i]!r} in run "
                f"{names.categories[name_codes[i]]!r} (first at {where})",
                parts[part_idx[i]].path,
                int(line[i]),
            )
        keep = dedup(key, score, rep, first, part_idx, line, parts, qid, docno, repairs)
    cat_dtype = pd.CategoricalDtype(names.categories)
    df = pd.DataFrame(
        {
            "name": pd.Categorical.from_codes(name_codes, dtype=cat_dtype),
            "qid": qid,
            "docno": docno,
            "score": score.astype(np.float32).astype(SCORE_DTYPE) if float32 else score,
            "rank": np.zeros(len(score), dtype=RANK_DTYPE),
        }
    )
    if keep is not None:
        df = df.iloc[keep]
    return trec_order(df), files


def dedup(key, score, rep, first, part_idx, line, parts, qid, docno, repairs) -> np.ndarray:
    """Lenient duplicate rule: per key keep the highest score, the first in file order on equal
    scores; record one repair per dropped row. Returns the kept row positions (sorted)."""
    involved = np.unique(np.concatenate([rep, first]))
    o = involved[np.lexsort((involved, -score[involved], key[involved]))]
    ko = key[o]
    head = np.ones(len(o), dtype=bool)
    head[1:] = ko[1:] != ko[:-1]
    winner = o[np.maximum.accumulate(np.where(head, np.arange(len(o)), 0))]
    dropped, kept_by = o[~head], winner[~head]
    drop_mask = np.zeros(len(key), dtype=bool)
    drop_mask[dropped] = True
    srt = np.argsort(dropped, kind="stable")
    dropped, kept_by = dropped[srt], kept_by[srt]
    for pi in np.unique(part_idx[dropped]):
        sel = part_idx[dropped] == pi
        d, k = dropped[sel], kept_by[sel]
        problems = [
            f"duplicate document {doc!r} for topic {q!r} (also at "
            f"{'' if part_idx[kk] == pi else parts[part_idx[kk]].path + ':'}line {line[kk]})"
            for q, doc, kk in zip(np.asarray(qid[d]), np.asarray(docno[d]), k, strict=True)
        ]
        actions = [
            "dropped (lower score)"
            if score[dd] < score[kk]
            else "dropped (equal score, later occurrence)"
            for dd, kk in zip(d, k, strict=True)
        ]
        repairs.add(parts[pi].path, line[d], problems, actions)
    return np.flatnonzero(~drop_mask)


def load_runs(paths, *, lenient, float32, run_id):
    repairs = Repairs()
    parts = []
    for p in parse_many(paths, parse_run_file_safe, lenient, run_id):
        if isinstance(p, Repairs):
            repairs.extend(p)  # an empty file, skipped under lenient
        else:
            parts.append(p)
    df, files = assemble_runs(parts, lenient=lenient, float32=float32, repairs=repairs)
    rep = sort_repairs(repairs.frame(), paths)
    if lenient:
        df.attrs["repairs"] = rep
    return df, files, rep


def parse_run_file_safe(path, lenient, run_id):
    try:
        return parse_run_file(path, lenient, run_id)
    except TrecFormatError as e:
        if lenient and e.problem.startswith("empty file"):
            r = Repairs()
            r.add(path, None, e.problem, "skipped (no run read)")
            return r
        raise


# --------------------------------------------------------------------------------------------
# qrels
# --------------------------------------------------------------------------------------------


def parse_qrels_file(path: str, lenient: bool):
    f = split_fields(path, 4, (0, 2, 3), lenient=lenient, what="qrels")
    qid, docno, label = f.cols
    return f, qid, docno, to_int16(label, f, "relevance label")


def load_qrels(paths: Sequence[str], lenient: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Parse qrels files into one frame (file order) and its sorted repairs frame."""
    parsed = parse_many(paths, parse_qrels_file, lenient)
    repairs = Repairs()
    for f, *_ in parsed:
        repairs.extend(f.repairs)
    qid = categorical_from_arrow([q for _, q, _, _ in parsed])
    docno = categorical_from_arrow([d for _, _, d, _ in parsed])
    label = np.concatenate([lab for *_, lab in parsed])
    line = np.concatenate([f.rows + 1 for f, *_ in parsed])
    part = np.repeat(np.arange(len(parsed)), [len(lab) for *_, lab in parsed])
    key = composite_key([qid.codes, docno.codes], [len(qid.categories), len(docno.categories)])
    rep, first = duplicates(key)
    df = pd.DataFrame({"qid": qid, "docno": docno, "label": label.astype(LABEL_DTYPE)})
    if len(rep):
        fpath = [f.path for f, *_ in parsed]

        def where(j, i):
            return f"line {line[j]}" if part[j] == part[i] else f"{fpath[part[j]]}:{line[j]}"

        if not lenient:
            i, j = int(rep[0]), int(first[0])
            raise TrecFormatError(
                f"duplicate judgment of document {docno[i]!r} for topic {qid[i]!r} "
                f"(first at {where(j, i)})",
                fpath[part[i]],
                int(line[i]),
            )
        for pi in np.unique(part[rep]):
            sel = part[rep] == pi
            repairs.add(
                fpath[pi],
                line[rep[sel]],
                [
                    f"duplicate judgment of document {docno[i]!r} for topic {qid[i]!r} "
                    f"(first at {where(j, i)})"
                    for i, j in zip(rep[sel], first[sel], strict=True)
                ],
                "dropped (kept the first)",
            )
        keep = np.ones(len(df), dtype=bool)
        keep[rep] = False
        df = df[keep].reset_index(drop=True)
    return df, sort_repairs(repairs.frame(), paths)


# --------------------------------------------------------------------------------------------
# desc.xml
# --------------------------------------------------------------------------------------------


def parse_desc(path, lenient: bool) -> tuple[list[str], list[str], pd.DataFrame]:
    """Parse desc.xml into run names, organizations (file order) and a repairs frame."""
    path = str(path)
    data = read_bytes(path)
    parser = expat.ParserCreate()
    stack: list[dict] = []
    entries: list[tuple[str | None, str | None, int]] = []

    def start(tag, attrs):
        stack.append({"tag": tag, "line": parser.CurrentLineNumber, "text": [], "kids": {}})

    def end(tag):
        node = stack.pop()
        text = "".join(node["text"]).strip()
        if stack:
            stack[-1]["kids"].setdefault(tag, text)
        kids = node["kids"]
        if "tag" in kids or "organization" in kids:
            entries.append((kids.get("tag"), kids.get("organization"), node["line"]))

    def chars(text):
        if stack:
            stack[-1]["text"].append(text)

    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        raise TrecFormatError(
            f"malformed XML: {expat.errors.messages[e.code]}", path, e.lineno
        ) from None
    repairs = Repairs()
    seen: dict[str, int] = {}
    names, orgs = [], []
    for tag, org, line in entries:
        if not tag or org is None:
            raise TrecFormatError(
                f"desc.xml entry lacks its {'<tag>' if not tag else '<organization>'}", path, line
            )
        if tag in seen:
            if not lenient:
                raise TrecFormatError(
                    f"run tag {tag!r} listed twice (first at line {seen[tag]})", path, line
                )
            repairs.add(
                path,
                [line],
                f"run tag {tag!r} listed twice (first at line {seen[tag]})",
                "dropped (kept the first)",
            )
            continue
        seen[tag] = line
        names.append(tag)
        orgs.append(org)
    return names, orgs, repairs.frame()
