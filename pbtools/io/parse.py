"""Reading run and qrels files (used by :mod:`pbtools.io`): one run file into a
:class:`RunPart` (run identity, ids dictionary-encoded, repeats detected), qrels files into an
:class:`~pbtools.io.encoded.EncodedQrels` (their duplicate rule), files read in a thread pool;
no pandas.

A run file that needs no repair is read with one typed CSV read (:mod:`pbtools.io.direct`);
any other goes through the stages of the general path: :mod:`pbtools.io.files` (paths, bytes,
byte-level checks, physical lines) and :mod:`pbtools.io.fields` (fields and typed columns, with
their checks), which name the exact line and problem. :mod:`pbtools.io.assemble` merges the
parts into one run frame; ``desc.xml`` is :mod:`pbtools.io.desc`, the ``repairs`` frame
:mod:`pbtools.io.repairs`. Nothing here is public: :mod:`pbtools.io` holds the API and
:mod:`pbtools.io.readers` the input contract.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pbtools import native, packed
from pbtools.errors import InputError, TrecFormatError
from pbtools.idarrays import encode_strings
from pbtools.io.direct import read_direct, read_tokens
from pbtools.io.encoded import EncodedQrels
from pbtools.io.fields import check_ranks, split_fields, to_int16, to_scores
from pbtools.io.files import BOM, clean_bytes, read_bytes
from pbtools.io.mapping import mapped
from pbtools.io.memory import release_memory
from pbtools.io.repairs import RepairableError, Repairs
from pbtools.joins import LABEL_DTYPE, composite_key
from pbtools.threads import threads_for

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


def keep_best(key: np.ndarray, score: np.ndarray, rows: np.ndarray):
    """The lenient duplicate rule of runs: among ``rows`` (the positions whose key repeats, in
    row order), per key the highest score is kept, the first row on equal scores, a NaN losing
    to any number. Returns ``(dropped, kept_by)``: the other rows, sorted, and for each the row
    kept in its place."""
    o = rows[np.lexsort((rows, -score[rows], key[rows]))]
    ko = key[o]
    head = np.ones(len(o), dtype=bool)
    head[1:] = ko[1:] != ko[:-1]
    winner = o[np.maximum.accumulate(np.where(head, np.arange(len(o)), 0))]
    dropped, kept_by = o[~head], winner[~head]
    srt = np.argsort(dropped, kind="stable")
    return dropped[srt], kept_by[srt]


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
    lines: np.ndarray | None  # 1-based line of each row (None: the lines 1..n, nothing skipped)
    qid: pa.Array  # dictionary-encoded once parsed (parse_run_file)
    docno: pa.Array
    score: np.ndarray
    repairs: Repairs
    tags: list[str] = field(default_factory=list)
    unique: bool | None = None  # no (qid, docno) twice in the file (set by assemble_runs)

    def line_numbers(self) -> np.ndarray:
        return np.arange(1, len(self.score) + 1) if self.lines is None else self.lines


#: file size from which the memory of a file's read is handed back as soon as it is parsed
RELEASE_BYTES = 1 << 25


def parse_run_file(path: str, lenient: bool, run_id: str, float32: bool = False) -> RunPart:
    """One run file: the direct typed read when the file needs no repair
    (:func:`pbtools.io.direct.read_direct`), else the general whitespace split with its exact
    refusals and repairs; the qids dictionary-encoded and the docnos packed (or encoded) here,
    in the worker thread."""
    path = str(path)
    direct = _mapped_tokens(path, float32) if native.tokens() is not None else None
    if direct is not None:  # a big plain file the tokenizer took: its bytes were never copied
        raw = data = checked = None
        big = os.path.getsize(path) >= RELEASE_BYTES
    else:
        raw = read_bytes(path)
        checked = None
        data = raw
        if raw.startswith(BOM) or b"\r" in raw:  # the byte-level rules first (CRLF is fine)
            checked = clean_bytes(raw, path, lenient=lenient)
            data = None if len(checked[1]) or len(checked[2]) else checked[0]
        direct = None if data is None else read_direct(data, float32=float32)
        big = len(raw) >= RELEASE_BYTES
    if direct is None:
        if checked is None:
            checked = clean_bytes(raw, path, lenient=lenient)
        part = parse_general(path, lenient, run_id, float32, checked)
    else:
        qid, docno, score, tag = direct
        name = tag if run_id == "tag" else file_run_name(path)
        part = RunPart(path, name, None, qid, docno, score, Repairs(), [tag])
    # the file's bytes and table are garbage from here: they go before the ids are encoded,
    # not after (the encoding's temporaries would come on top of a file's bytes per thread)
    del raw, data, direct, checked
    if big:
        # Arrow's allocator would keep their pages for the next file, and the resident set
        # grow by a file's worth per thread (MS MARCO-like, 10 files of 130 MB: peak RSS of
        # read_runs 1,896 → 1,606 MiB)
        release_memory()
    part.qid = encode_topics(part.qid)
    part.docno = encode_ids(part.docno)
    return part


def _mapped_tokens(path: str, float32: bool):
    """The tokenizer's columns of a big plain file read through a mapping
    (:func:`pbtools.io.mapping.mapped`: no copy of its bytes), or None (a small, gzipped or
    unmappable file, or one the tokenizer leaves to the typed read: a byte-order mark or a
    CR is outside what it takes, so the byte-level rules never apply to the files it takes)."""
    with mapped(path) as view:
        return None if view is None else read_tokens(view, float32=float32)


def one_array(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``arr`` as one array (a chunked array's chunks joined; one chunk: no copy)."""
    if isinstance(arr, pa.ChunkedArray):
        return arr.chunk(0) if arr.num_chunks == 1 else arr.combine_chunks()
    return arr


def encode_topics(qid: pa.Array | pa.ChunkedArray) -> pa.DictionaryArray:
    """A file's qids dictionary-encoded (first-seen order), as ``pc.dictionary_encode`` does
    it; a file whose topics come in blocks of rows (any ranked run: MS MARCO-like, 500 rows a
    topic) by encoding only the first row of each block (1 M rows: 11 ms CPU against 26 ms),
    with 16-bit indices when there are fewer than 32,768 topics (the codes stay in memory until
    the frame is made: 2 bytes a row less).

    Examples
    --------
    >>> encode_topics(pa.array(["2", "2", "10", "2"])).indices.to_pylist()
    [0, 0, 1, 0]
    """
    n = len(qid)
    if n < 2:
        return pc.dictionary_encode(one_array(qid))
    head = np.empty(n, dtype=bool)
    head[0] = True
    one = qid.chunk(0) if isinstance(qid, pa.ChunkedArray) and qid.num_chunks == 1 else qid
    same = packed.words(one, max_words=1, uniform=True) if n >= WORD_HASH_ROWS else None
    if same is not None:  # qids of one length (``001``): neighbours compared as integers
        np.not_equal(same[0][1:], same[0][:-1], out=head[1:])
    else:
        head[1:] = pc.not_equal(qid[1:], qid[:-1]).to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(head)
    if len(starts) > n // 4:
        return pc.dictionary_encode(one_array(qid))
    heads = pc.dictionary_encode(one_array(qid.take(pa.array(starts))))
    small = len(heads.dictionary) < (1 << 15)
    first = np.asarray(heads.indices).astype(np.int16 if small else np.int32)
    indices = np.repeat(first, np.diff(np.append(starts, n)))
    return pa.DictionaryArray.from_arrays(pa.array(indices), heads.dictionary)


#: rows from which a file's docnos may be kept as packed words (:class:`PackedIds`), encoded
#: with every other file's at once (:func:`pbtools.io.assemble.docno_codes`)
PACKED_ROWS = 1 << 14

#: a file's first rows, whose share of distinct docnos decides how its docnos are encoded
SAMPLE_ROWS = 1 << 13


@dataclass
class PackedIds:
    """A file's ids as packed words (:func:`pbtools.packed.words`, one or two 64-bit words a
    row): not encoded here, but together with the other files' in one integer sort
    (:func:`pbtools.io.assemble.docno_codes`)."""

    words: list[np.ndarray]

    def __len__(self) -> int:
        return len(self.words[0])


def encode_ids(ids: pa.Array | pa.ChunkedArray):
    """A file's docnos, ready for :func:`pbtools.io.assemble.docno_codes`: as packed words
    (:class:`PackedIds`) when they are up to 16 bytes long, the file has :data:`PACKED_ROWS`
    rows or more and most of its first :data:`SAMPLE_ROWS` docnos are distinct (an MS
    MARCO-sized run: 2.9 M distinct passage ids in 3.5 M rows, where Arrow's hash table misses
    the cache, 1.3 s CPU); else dictionary-encoded by ``pyarrow.compute.dictionary_encode``,
    whose table of a few thousand docnos stays in the cache (a file of 34,000 rows over 2,000
    documents), and only the dictionary is encoded with the other files'. Docnos of one length
    up to 8 bytes (``d0815``) are hashed as their packed words (:func:`_hashed_words`)."""
    ids = one_array(ids)
    n = len(ids)
    same = packed.words(ids, max_words=1, uniform=True) if n >= WORD_HASH_ROWS else None
    if same is not None:  # one length, up to 8 bytes: the words are the ids, hashed cheaply
        if n >= PACKED_ROWS and _distinct(pa.array(same[0][:SAMPLE_ROWS])) * 2 > min(
            n, SAMPLE_ROWS
        ):
            return PackedIds(same)
        return _hashed_words(same[0], len(ids[0].as_py().encode()))
    if n >= PACKED_ROWS and _distinct(ids.slice(0, SAMPLE_ROWS)) * 2 > min(n, SAMPLE_ROWS):
        words = packed.words(ids, max_words=packed.KEY_WORDS)
        if words is not None:
            return PackedIds(words)
    return pc.dictionary_encode(ids)


#: rows from which :func:`encode_ids` packs ids of one length up to 8 bytes to hash them
WORD_HASH_ROWS = 1 << 10


def _distinct(values: pa.Array) -> int:
    """How many distinct values (``pc.unique``'s hash: ``count_distinct``'s aggregation cost
    ~5× more on 8,192 docnos)."""
    return len(pc.unique(values))


def _hashed_words(word: np.ndarray, length: int) -> pa.DictionaryArray:
    """``pyarrow.compute.dictionary_encode`` of ids of ``length`` bytes each (up to 8), from
    their packed words (:func:`pbtools.packed.words`): the same indices and dictionary (first
    seen order), by hashing integers (synth129's files, 50,000 docnos ``d0815``: ~11 against
    ~22 ns a row)."""
    enc = pc.dictionary_encode(pa.array(word))
    keys = np.asarray(enc.dictionary)
    return pa.DictionaryArray.from_arrays(enc.indices, packed.unpack(keys, length=length))


def no_repeats(qid: np.ndarray, nq: int, docno: np.ndarray, nd: int) -> bool:
    """True when no (qid, docno) pair occurs twice, from codes below ``nq`` and ``nd``: a
    bitmap of the pairs when it is small, else a sort of the pair keys (``np.sort``,
    vectorised: 10× cheaper than ``np.unique``'s hash table on 3.5 M keys of an MS MARCO-sized
    run)."""
    n = len(qid)
    key = qid.astype(np.int64) * nd + docno
    if nq * nd <= 64 * n + (1 << 20):
        seen = np.zeros(nq * nd, dtype=bool)
        seen[key] = True
        return int(np.count_nonzero(seen)) == n
    key.sort()
    return not bool(np.any(key[1:] == key[:-1]))


def parse_general(path: str, lenient: bool, run_id: str, float32: bool, checked) -> RunPart:
    f = split_fields(path, 6, (0, 2, 3, 4, 5), lenient=lenient, what="run", checked=checked)
    qid, docno, rank, score, tag = f.cols
    scores = to_scores(score, f, lenient=lenient, float32=float32)
    check_ranks(rank, f, lenient=lenient)
    first = tag[0]
    other = np.asarray(pc.not_equal(tag, first), dtype=bool)
    tags = [first.as_py()]
    if other.any():
        tags = pc.unique(tag).to_pylist()
        i = int(np.flatnonzero(other)[0])
        if not lenient:
            raise RepairableError(
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
    with ThreadPoolExecutor(threads_for(len(paths))) as ex:
        futures = [ex.submit(fn, p, *args) for p in paths]
        return [fu.result() for fu in futures]


def check_run_id(run_id: str) -> None:
    if run_id not in ("tag", "file"):
        raise InputError(f"run_id must be 'tag' or 'file', not {run_id!r}")


def parse_run_file_safe(path, lenient, run_id, float32=False):
    """:func:`parse_run_file`; an empty run file is skipped and recorded (lenient)."""
    try:
        return parse_run_file(path, lenient, run_id, float32)
    except TrecFormatError as e:
        if not e.problem.startswith("empty file"):
            raise
        if not lenient:
            raise RepairableError(e.problem, path) from None
        r = Repairs()
        r.add(path, None, e.problem, "skipped (no run read)")
        return r


# --------------------------------------------------------------------------------------------
# qrels
# --------------------------------------------------------------------------------------------


def parse_qrels_file(path: str, lenient: bool):
    f = split_fields(path, 4, (0, 2, 3), lenient=lenient, what="qrels")
    qid, docno, label = f.cols
    return f, qid, docno, to_int16(label, f, "relevance label")


def load_qrels(paths: Sequence[str], lenient: bool) -> EncodedQrels:
    """Parse qrels files into one :class:`~pbtools.io.encoded.EncodedQrels` (file order), its
    ``repairs`` sorted (file, then line; strict: none)."""
    parsed = parse_many(paths, parse_qrels_file, lenient)
    repairs = Repairs()
    for f, *_ in parsed:
        repairs.extend(f.repairs)
    qid = encode_strings([q for _, q, _, _ in parsed])
    docno = encode_strings([d for _, _, d, _ in parsed])
    label = np.concatenate([lab for *_, lab in parsed]).astype(LABEL_DTYPE)
    line = np.concatenate([f.rows + 1 for f, *_ in parsed])
    part = np.repeat(np.arange(len(parsed)), [len(lab) for *_, lab in parsed])
    key = composite_key([qid.codes, docno.codes], [len(qid.categories), len(docno.categories)])
    rep, first = duplicates(key)
    qid_codes, docno_codes = qid.codes, docno.codes
    if len(rep):
        fpath = [f.path for f, *_ in parsed]

        def where(j, i):
            return f"line {line[j]}" if part[j] == part[i] else f"{fpath[part[j]]}:{line[j]}"

        if not lenient:
            i, j = int(rep[0]), int(first[0])
            raise RepairableError(
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
        keep = np.ones(len(label), dtype=bool)
        keep[rep] = False
        qid_codes, docno_codes, label = qid_codes[keep], docno_codes[keep], label[keep]
    return EncodedQrels(
        qid.categories.strings,
        docno.categories.strings,
        qid_codes,
        docno_codes,
        label,
        repairs.sorted(paths),
    )
