"""Parsed run files into one run frame (used by :mod:`pbtools.io.readers`): the ids merged into
one dictionary, the duplicate rule, trec order and ranks.

A file that is the only file of its run and holds no (qid, docno) twice is put into trec order
on its own, in the thread pool (:func:`file_order`: nothing moves when it already is in order,
only the tied scores are sorted when the rest is); the runs are then laid end to end in name
order. The rows of every other file (a run carried by several files, a file with repeats) go
through the general rule: the repeats refused (strict) or resolved (lenient, :func:`dedup`),
then those rows in trec order (:func:`file_order` with (run, qid) as the topic: a sort only
when they are not in it already). Both give the frame that one global sort of all rows would
give.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pbtools import packed
from pbtools.idarrays import (
    Dictionary,
    code_dtype,
    encode_strings,
    sorted_dictionary,
    union_dictionary,
)
from pbtools.io.encoded import EncodedRuns
from pbtools.io.memory import release_memory
from pbtools.io.parse import (
    PackedIds,
    RunPart,
    duplicates,
    keep_best,
    no_repeats,
    parse_many,
    parse_run_file_safe,
)
from pbtools.io.repairs import RepairableError, Repairs
from pbtools.joins import composite_key
from pbtools.order import (
    RANK_DTYPE,
    SCORE_DTYPE,
    file_order,
    group_starts,
    ranks_from_starts,
)


def load_runs(
    paths, *, lenient, float32, run_id, repairs: Repairs | None = None
) -> tuple[EncodedRuns, dict[str, list[str]], Repairs]:
    """``(runs, files, repairs)`` of run files: the runs as an
    :class:`~pbtools.io.encoded.EncodedRuns` (its ``repairs`` those sorted repairs under
    ``lenient``, else None), which file gave which run (:func:`assemble_runs`) and the repairs
    in file then line order. ``repairs`` may hold the repairs of the source expansion
    (:func:`pbtools.io.files.expand`), reported first."""
    repairs = Repairs() if repairs is None else repairs
    parts = []
    for p in parse_many(paths, parse_run_file_safe, lenient, run_id, float32):
        if isinstance(p, Repairs):
            repairs.extend(p)  # an empty file, skipped under lenient
        else:
            parts.append(p)
    # the files' bytes and temporaries are garbage now; what the allocators kept of them goes
    # back before the frame is built (with the system allocator, as the command line uses:
    # TREC-2's peak RSS 306 → 268 MB)
    release_memory()
    runs, files = assemble_runs(parts, lenient=lenient, float32=float32, repairs=repairs)
    # the file bytes and per-file tables are garbage now: hand their pages back to the system,
    # or the allocator keeps ~2× the frame's size resident through the scoring that follows
    # (127-run track: peak RSS of `pbtools evaluate` 624 → 494 MB; benchmarks/evaluate_speed.py)
    del parts
    release_memory()
    rep = repairs.sorted(paths)
    if lenient:
        runs.repairs = rep
    return runs, files, rep


#: rows of a file from which its memory is handed back as soon as its rows are in the frame
RELEASE_ROWS = 1 << 20


def assemble_runs(
    parts: list[RunPart], *, lenient: bool, float32: bool, repairs: Repairs
) -> tuple[EncodedRuns, dict[str, list[str]]]:
    """Merge parsed files into runs (duplicate rule, float32, trec order), and which file gave
    which run: ``files`` holds the columns ``file``, ``name``, ``tag`` (a list each, one entry a
    file; :func:`pbtools.io.readers.files_frame` makes the frame)."""
    by_name: dict[str, str] = {}
    for p in parts:
        repairs.extend(p.repairs)
        if p.name in by_name and by_name[p.name] != p.path:
            if not lenient:
                raise RepairableError(
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
    files = {
        "file": [p.path for p in parts],
        "name": [p.name for p in parts],
        "tag": [p.tags[0] for p in parts],
    }
    sizes = np.array([len(p.score) for p in parts], dtype=np.int64)
    names = encode_strings([pa.array(files["name"], type=pa.string())])
    n_names = len(names.categories)
    # the files' qid dictionaries merged (q_of[i]: the merged code of each entry of file i's
    # own dictionary); the docnos of all files encoded together (d_of[i]: file i's row codes)
    qid_dtype, q_of = union_dictionary([p.qid.dictionary for p in parts])
    doc_dtype, d_of = docno_codes(parts)
    slow = slow_parts(parts, names.codes, d_of, len(doc_dtype.categories))
    sorted_slow = sort_slow_rows(
        parts, slow, names, (q_of, qid_dtype), (d_of, doc_dtype), float32, lenient, repairs
    )
    release_memory()  # its temporaries, before the columns are made
    # the runs in name order, each one fast file (its rows in its own trec order) or the
    # sorted rows of its slow files, written straight into the columns of the frame
    fast = np.flatnonzero(~slow)
    run_size = np.zeros(n_names, dtype=np.int64)
    run_size[names.codes[fast]] = sizes[fast]
    if sorted_slow is not None:
        run_size += np.bincount(sorted_slow[0], minlength=n_names)
    start = np.concatenate([[0], np.cumsum(run_size)])
    n = int(start[-1])
    q = np.empty(n, dtype=np.int32)
    d = np.empty(n, dtype=np.int32)
    score = np.empty(n, dtype=SCORE_DTYPE)
    rank = np.empty(n, dtype=RANK_DTYPE)

    def fill(i: int) -> None:
        a = start[names.codes[i]]
        b = a + sizes[i]
        qo, dc = q[a:b], d_of[i]
        np.take(q_of[i], np.asarray(parts[i].qid.indices), out=qo)
        ranked = ranked_scores(parts[i].score, float32)
        o = file_order(qo, ranked, dc)
        if o is None:
            d[a:b] = dc
            score[a:b] = ranked
        else:
            qo[:] = qo[o]
            np.take(dc, o, out=d[a:b])
            np.take(ranked, o, out=score[a:b])
        rank[a:b] = ranks_from_starts(group_starts(qo))
        # the file's columns are in the frame now: its own go, so that the frame's pages
        # (np.empty: resident once written) replace them instead of adding to them (MS MARCO
        # shape, first 10 M rows: peak RSS of read_runs 708 → 682 MiB)
        parts[i].qid = parts[i].score = d_of[i] = None
        if b - a >= RELEASE_ROWS:  # Arrow's allocator would keep their pages
            release_memory()

    parse_many(list(fast), fill)  # in the thread pool
    if sorted_slow is not None:
        s_name, s_q, s_d, s_score = sorted_slow
        first = np.searchsorted(s_name, s_name)  # each row's position inside its run
        pos = start[s_name] + (np.arange(len(s_name)) - first)
        q[pos], d[pos], score[pos] = s_q, s_d, s_score
        rank[pos] = ranks_from_starts(group_starts(s_name, s_q))
    name_codes = np.repeat(np.arange(n_names, dtype=code_dtype(n_names)), run_size)
    runs = EncodedRuns(
        names.categories.strings,
        qid_dtype.categories.strings,
        doc_dtype.categories.strings,
        name_codes,
        q,
        d,
        score,
        rank,
    )
    return runs, files


def docno_codes(parts: list[RunPart]) -> tuple[Dictionary, list[np.ndarray]]:
    """The docnos of all files encoded together: their sorted dtype and, for each file, the
    code of every row (int32). By one integer sort (:func:`packed_codes`) when some file's
    docnos were packed (:class:`pbtools.io.parse.PackedIds`) and every file's pack; else by
    :func:`pbtools.idarrays.union_dictionary` of the files' dictionaries. Each file's ``docno`` is
    dropped once encoded."""
    if any(isinstance(p.docno, PackedIds) for p in parts):
        done = packed_codes(parts)
        if done is not None:
            return done
    dicts = [
        pc.dictionary_encode(packed.unpack(np.stack(p.docno.words, axis=1)))
        if isinstance(p.docno, PackedIds)
        else p.docno
        for p in parts
    ]
    dtype, d_of = union_dictionary([d.dictionary for d in dicts])
    codes = [lk[np.asarray(d.indices)] for lk, d in zip(d_of, dicts, strict=True)]
    for p in parts:
        p.docno = None
    return dtype, codes


def packed_codes(parts: list[RunPart]) -> tuple[Dictionary, list[np.ndarray]] | None:
    """:func:`docno_codes` by :func:`pbtools.packed.encode` of every packed file's rows and
    every other file's dictionary (codes through its indices), its per-file steps in the
    thread pool; None when some file's docnos do not pack or need more than 64 bits with the
    row numbers. One integer sort of the rows, where a dictionary per file and a merge of the
    dictionaries took two sorts and a lookup per row."""
    done = parse_many(parts, _words)
    if any(w is None for w, _ in done):
        return None
    ws, blocks = [w for w, _ in done], [b for _, b in done]
    near = max((int(np.diff(b).max()) for b in blocks if b is not None), default=0)
    close: list[np.ndarray] = []
    done = packed.encode(ws, lambda fn, items: parse_many(list(items), fn), near, close)
    if done is None:
        return None
    keys, codes = done
    _repeats_from_close(parts, ws, blocks, close)
    codes = [
        c if isinstance(p.docno, PackedIds) else c[np.asarray(p.docno.indices)]
        for c, p in zip(codes, parts, strict=True)
    ]
    for p in parts:
        p.docno = None
    return sorted_dictionary(packed.unpack(keys), np.arange(len(keys))), codes


def _words(p: RunPart) -> tuple[list[np.ndarray] | None, np.ndarray | None]:
    """A file's packed docno words (of every row, or of its dictionary's entries) and, for a
    file of packed rows whose every topic is one block of rows, the blocks' bounds (row
    positions, from 0 to the file's length; else None)."""
    if not isinstance(p.docno, PackedIds):
        return packed.words(p.docno.dictionary, max_words=packed.KEY_WORDS), None
    q = np.asarray(p.qid.indices)
    heads = np.flatnonzero(q[1:] != q[:-1])
    if len(heads) + 1 != len(p.qid.dictionary):  # a topic in two blocks
        return p.docno.words, None
    return p.docno.words, np.concatenate([[0], heads + 1, [len(q)]])


def _repeats_from_close(parts, ws, blocks, close) -> None:
    """Set ``unique`` of every file with block bounds (:func:`_words`) from the close pairs of
    equal docnos that :func:`pbtools.packed.encode` collected (``near``: the longest block):
    a (qid, docno) twice in such a file is two rows of one block, joined by a pair of rows
    inside that block (:func:`pbtools.packed.rank_rows`). Saves :func:`no_repeats`' sort of
    the file's pairs (MS MARCO-like, 10 M rows: 0.15 s CPU)."""
    start = np.concatenate([[0], np.cumsum([len(w[0]) for w in ws])])
    bounds = np.unique(
        np.concatenate([start] + [start[i] + b for i, b in enumerate(blocks) if b is not None])
    )
    repeated = np.zeros(len(parts), dtype=bool)
    if close:
        pair = np.concatenate(close)
        same = np.searchsorted(bounds, pair[:, 0], "right") == np.searchsorted(
            bounds, pair[:, 1], "right"
        )
        repeated[np.searchsorted(start, pair[same, 0], "right") - 1] = True
    for i, b in enumerate(blocks):
        if b is not None:
            parts[i].unique = not repeated[i]


def ranked_scores(score: np.ndarray, float32: bool) -> np.ndarray:
    """The values trec order sorts: the file's doubles, or (``float32``) their nearest 32-bit
    floats as float64 (after the duplicate rule, which compares the doubles)."""
    if not float32:
        return score
    with np.errstate(over="ignore"):  # overflows were reported by to_scores
        return score.astype(np.float32).astype(SCORE_DTYPE)


def slow_parts(parts, name_of_part, d_of, nd: int) -> np.ndarray:
    """Which files need the general duplicate rule and a sort of their rows together: a file
    whose run is also carried by another file, or that holds a (qid, docno) twice
    (:func:`pbtools.io.parse.no_repeats`, in the thread pool; ``d_of``: each file's docno
    codes, below ``nd``). Every other file is one run, put in trec order on its own
    (:func:`file_order`)."""
    shared = np.bincount(name_of_part, minlength=len(parts))[name_of_part] > 1

    def check(i: int) -> None:
        q = parts[i].qid
        parts[i].unique = no_repeats(np.asarray(q.indices), len(q.dictionary), d_of[i], nd)

    # the files of packed docnos were checked by their encoding (:func:`_repeats_from_close`)
    parse_many([i for i in np.flatnonzero(~shared) if parts[i].unique is None], check)
    return shared | ~np.array([bool(p.unique) for p in parts], dtype=bool)


def sort_slow_rows(parts, slow, names, qids, docnos, float32, lenient, repairs):
    """The rows of the slow files (:func:`slow_parts`) alone: the duplicate rule (strict:
    refused at the first repeat; lenient: :func:`dedup`), then trec order. Returns their
    ``(name, qid, docno, ranked score)`` codes and values in trec order, or None when no file
    is slow. ``qids``: ``(per-file lookups, dtype)`` of :func:`union_dictionary`;
    ``docnos``:
    ``(per-file row codes, dtype)`` of :func:`docno_codes`."""
    idx = np.flatnonzero(slow)
    if len(idx) == 0:
        return None
    (q_of, qid_dtype), (d_of, doc_dtype) = qids, docnos
    qcats, dcats = qid_dtype.categories, doc_dtype.categories
    part = np.repeat(idx, [len(parts[i].score) for i in idx])
    name = names.codes[part]
    q = np.concatenate([q_of[i][np.asarray(parts[i].qid.indices)] for i in idx])
    d = np.concatenate([d_of[i] for i in idx])
    score = np.concatenate([parts[i].score for i in idx])
    key = composite_key([name, q, d], [len(names.categories), len(qcats), len(dcats)])
    rep, first = duplicates(key)
    if len(rep):
        line = np.concatenate([parts[i].line_numbers() for i in idx])
        if not lenient:
            i, j = int(rep[0]), int(first[0])
            same = part[i] == part[j]
            where = f"line {line[j]}" if same else f"{parts[part[j]].path}:{line[j]}"
            raise RepairableError(
                f"duplicate document {dcats[d[i]]!r} for topic {qcats[q[i]]!r} in run "
                f"{names.categories[name[i]]!r} (first at {where})",
                parts[part[i]].path,
                int(line[i]),
            )
        kept = dedup(key, score, rep, first, part, line, parts, (q, qcats), (d, dcats), repairs)
        name, q, d, score = name[kept], q[kept], d[kept], score[kept]
    ranked = ranked_scores(score, float32)
    # no (name, qid, docno) twice now: the order of one file's rows (:func:`file_order`) with
    # (name, qid) as its topic; most slow rows already are in it (TREC-2 lenient: 0.04 s of a
    # trec sort of 0.9 M rows saved)
    o = file_order(composite_key([name, q], [len(names.categories), len(qcats)]), ranked, d)
    if o is None:
        return name, q, d, ranked
    return name[o], q[o], d[o], ranked[o]


def dedup(key, score, rep, first, part_idx, line, parts, qids, docnos, repairs) -> np.ndarray:
    """Lenient duplicate rule: per key keep the highest score, the first in file order on equal
    scores; record one repair per dropped row. Returns the kept row positions (sorted).
    ``qids``, ``docnos``: ``(codes of the rows, categories)``."""
    dropped, kept_by = keep_best(key, score, np.unique(np.concatenate([rep, first])))
    drop_mask = np.zeros(len(key), dtype=bool)
    drop_mask[dropped] = True
    (q, qcats), (dc, dcats) = qids, docnos
    ds, ks = score[dropped], score[kept_by]
    lower = (ds < ks) | (np.isnan(ds) & ~np.isnan(ks))
    action = np.where(
        lower,
        "dropped (lower score)",
        np.where(
            np.isnan(ds),
            "dropped (NaN score, later occurrence)",
            "dropped (equal score, later occurrence)",
        ),
    )
    problems = _duplicate_problems(
        _reprs(dcats, dc[dropped]),
        _reprs(qcats, q[dropped]),
        part_idx[dropped],
        part_idx[kept_by],
        line[kept_by],
        [p.path for p in parts],
    )
    drop_part = part_idx[dropped]
    for pi in np.unique(drop_part):
        sel = np.flatnonzero(drop_part == pi)
        repairs.add(
            parts[pi].path, line[dropped[sel]], problems[sel].tolist(), action[sel].tolist()
        )
    return np.flatnonzero(~drop_mask)


def _duplicate_problems(doc_r, q_r, drop_part, kept_part, kept_line, paths) -> np.ndarray:
    """The problem of every dropped duplicate, ``duplicate document 'D' for topic 'Q' (also at
    [FILE:]line N)``, built column-wise by Arrow (TREC-2 lenient, 30,000 repairs: one Python
    f-string each took ~0.03 s): ``doc_r``, ``q_r`` the ``repr`` of the ids (:func:`_reprs`),
    the file of the kept row named when it is another file."""
    other = np.array([path + ":" for path in paths], dtype=object)[kept_part]
    other[kept_part == drop_part] = ""
    text = pc.binary_join_element_wise(
        "duplicate document ",
        doc_r,
        " for topic ",
        q_r,
        " (also at ",
        pa.array(other, type=pa.string()),
        "line ",
        pc.cast(pa.array(kept_line, type=pa.int64()), pa.string()),
        ")",
        "",
    )
    return text.to_numpy(zero_copy_only=False)


#: printable ASCII but the quote and the backslash: the ids whose ``repr`` is ``'id'``
_PLAIN = r"^[ -&(-\[\]-~]*$"


def _reprs(cats, codes: np.ndarray) -> pa.Array:
    """``repr`` of the id of every code, as an Arrow string array: each distinct id formatted
    once, by Arrow (``'`` + id + ``'``) when every id is printable ASCII without a quote or a
    backslash, else by Python's ``repr``. ``cats``: the categories (a pandas index, an Arrow
    array of strings, or a dictionary whose ``take`` gives one with its ``strings``).

    Examples
    --------
    >>> print(*_reprs(pa.array(["d1", "it's"]), np.array([1, 0, 1])).to_pylist())
    "it's" 'd1' "it's"
    """
    u, inv = np.unique(codes, return_inverse=True)
    ids = cats.take(u)
    ids = getattr(ids, "strings", ids)
    if not isinstance(ids, (pa.Array, pa.ChunkedArray)):
        ids = pa.array(ids, type=pa.string())
    ids = ids.cast(pa.string())
    if pc.all(pc.match_substring_regex(ids, _PLAIN)).as_py() is not False:
        text = pc.binary_join_element_wise("'", ids, "'", "")
    else:
        text = pa.array([repr(x) for x in ids.to_pylist()], type=pa.string())
    return text.take(pa.array(inv.ravel()))
