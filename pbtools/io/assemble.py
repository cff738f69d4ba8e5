"""Parsed run files into one run frame (used by :mod:`pbtools.io.readers`): the ids merged into
one dictionary, the duplicate rule, trec order and ranks.

A file that is the only file of its run and holds no (qid, docno) twice is put into trec order
on its own, in the thread pool (:func:`file_order`: nothing moves when it already is in order,
only the tied scores are sorted when the rest is); the runs are then laid end to end in name
order. The rows of every other file (a run carried by several files, a file with repeats) go
through the general rule: the repeats refused (strict) or resolved (lenient, :func:`dedup`),
then one trec sort of those rows (:func:`pbtools.frames.trec_sort_order`). Both give the frame
that one global sort of all rows would give.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from pbtools import packed
from pbtools.frames import (
    RANK_DTYPE,
    SCORE_DTYPE,
    categorical_from_arrow,
    composite_key,
    encode,
    group_starts,
    ranks_from_starts,
    trec_sort_order,
)
from pbtools.ids import sorted_dtype, sorted_union
from pbtools.io.files import release_memory
from pbtools.io.parse import (
    PackedIds,
    RunPart,
    duplicates,
    keep_best,
    parse_many,
    parse_run_file_safe,
)
from pbtools.io.repairs import RepairableError, Repairs, sort_repairs


def load_runs(paths, *, lenient, float32, run_id, repairs: Repairs | None = None):
    """``(runs, files, repairs)`` of run files; ``repairs`` may hold the repairs of the source
    expansion (:func:`pbtools.io.files.expand`), reported first."""
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
    df, files = assemble_runs(parts, lenient=lenient, float32=float32, repairs=repairs)
    # the file bytes and per-file tables are garbage now: hand their pages back to the system,
    # or the allocator keeps ~2× the frame's size resident through the scoring that follows
    # (127-run track: peak RSS of `pbtools evaluate` 624 → 494 MB; benchmarks/evaluate_speed.py)
    del parts
    release_memory()
    rep = sort_repairs(repairs.frame(), paths)
    if lenient:
        df.attrs["repairs"] = rep
    return df, files, rep


def assemble_runs(
    parts: list[RunPart], *, lenient: bool, float32: bool, repairs: Repairs
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Merge parsed files into one run frame (duplicate rule, float32, trec order)."""
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
    files = pd.DataFrame(
        {
            "file": pd.array([p.path for p in parts], dtype="str"),
            "name": encode(pd.Series([p.name for p in parts], dtype="str")),
            "tag": pd.array([p.tags[0] for p in parts], dtype="str"),
        }
    )
    sizes = np.array([len(p.score) for p in parts], dtype=np.int64)
    names = categorical_from_arrow([pa.array([p.name for p in parts], type=pa.string())])
    n_names = len(names.categories)
    # the files' id dictionaries merged (one hash pass over the dictionaries, not the rows);
    # q_of[i] / d_of[i]: the merged code of each entry of file i's own dictionary
    qid_dtype, q_of = sorted_union([p.qid.dictionary for p in parts])
    doc_dtype, d_of = docno_union(parts)
    slow = slow_parts(parts, names.codes)
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
        qo, do = q[a:b], d[a:b]
        np.take(q_of[i], np.asarray(parts[i].qid.indices), out=qo)
        np.take(d_of[i], np.asarray(parts[i].docno.indices), out=do)
        ranked = ranked_scores(parts[i].score, float32)
        o = file_order(qo, ranked, do)
        if o is None:
            score[a:b] = ranked
        else:
            qo[:] = qo[o]
            do[:] = do[o]
            np.take(ranked, o, out=score[a:b])
        rank[a:b] = ranks_from_starts(group_starts(qo))
        # the file's columns are in the frame now: its own go, so that the frame's pages
        # (np.empty: resident once written) replace them instead of adding to them (MS MARCO
        # shape, first 10 M rows: peak RSS of read_runs 708 → 682 MiB)
        parts[i].qid = parts[i].docno = parts[i].score = None

    parse_many(list(fast), fill)  # in the thread pool
    if sorted_slow is not None:
        s_name, s_q, s_d, s_score = sorted_slow
        first = np.searchsorted(s_name, s_name)  # each row's position inside its run
        pos = start[s_name] + (np.arange(len(s_name)) - first)
        q[pos], d[pos], score[pos] = s_q, s_d, s_score
        rank[pos] = ranks_from_starts(group_starts(s_name, s_q))
    name_codes = np.repeat(np.arange(n_names, dtype=names.codes.dtype), run_size)
    df = pd.DataFrame(
        {
            "name": pd.Categorical.from_codes(
                name_codes, dtype=pd.CategoricalDtype(names.categories), validate=False
            ),
            "qid": pd.Categorical.from_codes(q, dtype=qid_dtype, validate=False),
            "docno": pd.Categorical.from_codes(d, dtype=doc_dtype, validate=False),
            "score": score,
            "rank": rank,
        },
        copy=False,  # the columns were made for this frame
    )
    return df, files


def docno_union(parts: list[RunPart]) -> tuple[pd.CategoricalDtype, list[np.ndarray]]:
    """:func:`pbtools.ids.sorted_union` of the files' docno dictionaries; by one integer sort
    of their packed keys (:func:`pbtools.packed.union`) when most rows were packed (the
    dictionaries of the other files packed here: small files, a few short ones of TREC-2) and
    every file's ids pack."""
    rows = sum(len(p.docno) for p in parts)
    if not parts or sum(len(p.docno) for p in parts if isinstance(p.docno, PackedIds)) < rows / 2:
        return sorted_union([p.docno.dictionary for p in parts])
    keys, inner = [], []
    for p in parts:
        if isinstance(p.docno, PackedIds):
            keys.append(p.docno.keys)
            inner.append(None)
            continue
        enc = packed.encode(p.docno.dictionary)
        if enc is None:
            return sorted_union([p.docno.dictionary for p in parts])
        keys.append(enc[0])
        inner.append(enc[1])
    merged = packed.union(keys)
    if merged is None:
        return sorted_union([p.docno.dictionary for p in parts])
    union, lookups = merged
    lookups = [lk if i is None else lk[i] for lk, i in zip(lookups, inner, strict=True)]
    return sorted_dtype(packed.unpack(union), np.arange(len(union))), lookups


def ranked_scores(score: np.ndarray, float32: bool) -> np.ndarray:
    """The values trec order sorts: the file's doubles, or (``float32``) their nearest 32-bit
    floats as float64 (after the duplicate rule, which compares the doubles)."""
    if not float32:
        return score
    with np.errstate(over="ignore"):  # overflows were reported by to_scores
        return score.astype(np.float32).astype(SCORE_DTYPE)


def slow_parts(parts, name_of_part) -> np.ndarray:
    """Which files need the general duplicate rule and a sort of their rows together: a file
    whose run is also carried by another file, or that holds a (qid, docno) twice. Every other
    file is one run, put in trec order on its own (:func:`file_order`)."""
    shared = np.bincount(name_of_part, minlength=len(parts))[name_of_part] > 1
    return shared | ~np.array([p.unique for p in parts], dtype=bool)


def sort_slow_rows(parts, slow, names, qids, docnos, float32, lenient, repairs):
    """The rows of the slow files (:func:`slow_parts`) alone: the duplicate rule (strict:
    refused at the first repeat; lenient: :func:`dedup`), then trec order. Returns their
    ``(name, qid, docno, ranked score)`` codes and values in trec order, or None when no file
    is slow. ``qids``, ``docnos``: ``(per-file lookups, dtype)`` of :func:`sorted_union`."""
    idx = np.flatnonzero(slow)
    if len(idx) == 0:
        return None
    (q_of, qid_dtype), (d_of, doc_dtype) = qids, docnos
    qcats, dcats = qid_dtype.categories, doc_dtype.categories
    part = np.repeat(idx, [len(parts[i].score) for i in idx])
    name = names.codes[part]
    q = np.concatenate([q_of[i][np.asarray(parts[i].qid.indices)] for i in idx])
    d = np.concatenate([d_of[i][np.asarray(parts[i].docno.indices)] for i in idx])
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
    o = trec_sort_order([name, q], ranked, d)
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
    doc_r, q_r = _reprs(dcats, dc[dropped]), _reprs(qcats, q[dropped])
    kept_part = part_idx[kept_by]
    for pi in np.unique(part_idx[dropped]):
        sel = np.flatnonzero(part_idx[dropped] == pi)
        where = ["" if kp == pi else parts[kp].path + ":" for kp in kept_part[sel].tolist()]
        problems = [
            f"duplicate document {doc} for topic {qq} (also at {w}line {ln})"
            for doc, qq, w, ln in zip(
                doc_r[sel].tolist(),
                q_r[sel].tolist(),
                where,
                line[kept_by[sel]].tolist(),
                strict=True,
            )
        ]
        repairs.add(parts[pi].path, line[dropped[sel]], problems, action[sel].tolist())
    return np.flatnonzero(~drop_mask)


def _reprs(cats: pd.Index, codes: np.ndarray) -> np.ndarray:
    """``repr`` of the id of every code (each distinct id formatted once)."""
    u, inv = np.unique(codes, return_inverse=True)
    text = np.array([repr(x) for x in cats.take(u).tolist()], dtype=object)
    return text[inv.ravel()]


def file_order(q: np.ndarray, score: np.ndarray, d: np.ndarray) -> np.ndarray | None:
    """The permutation that puts one run file's rows (merged-dictionary codes) into trec order
    (:func:`pbtools.frames.trec_sort_order`), or None when they already are in it (qid, score
    descending, docno descending; a NaN score is never taken to be in order)."""
    if len(q) < 2:
        return None
    same_q = q[1:] == q[:-1]
    ok = (q[1:] > q[:-1]) | (
        same_q & ((score[1:] < score[:-1]) | ((score[1:] == score[:-1]) & (d[1:] < d[:-1])))
    )
    if ok.all():
        return None
    step = (q[1:] > q[:-1]) | (same_q & (score[1:] < score[:-1]))
    tie = same_q & (score[1:] == score[:-1])
    if not np.all(step | tie):
        blocks = topic_blocks(q, same_q, score)
        if blocks is None:
            return trec_sort_order([q], score, d)
        inner = file_order(q[blocks], score[blocks], d[blocks])
        return blocks if inner is None else blocks[inner]
    # only tied scores are out of order (the usual case): sort each group of ties by docno
    # descending, in place; every other row stays where it is
    group = np.concatenate([[0], np.cumsum(~tie)])
    rows = np.flatnonzero(np.concatenate([tie, [False]]) | np.concatenate([[False], tie]))
    dt = d[rows].astype(np.int64)
    nd = int(dt.max()) + 1
    perm = np.arange(len(q))
    perm[rows] = rows[np.argsort(group[rows] * nd + (nd - 1 - dt))]
    return perm


def topic_blocks(q: np.ndarray, same_q: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """The permutation that puts a run file's topics in order when each topic is one block of
    rows already ranked (scores not increasing) and only the blocks are out of order (a file
    written in numeric topic order, ``2 < 10``, where ids sort as strings, ``"10" < "2"``);
    None when the rows need a full sort. Moves whole blocks: no sort of the rows."""
    if not np.all(~same_q | (score[1:] <= score[:-1])):
        return None
    starts = np.flatnonzero(np.concatenate([[True], ~same_q]))
    bq = q[starts]
    bo = np.argsort(bq, kind="stable")
    if np.any(bq[bo][1:] == bq[bo][:-1]):  # a topic in two blocks
        return None
    lengths = np.diff(np.append(starts, len(q)))[bo]
    shift = starts[bo] - np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return np.arange(len(q)) + np.repeat(shift, lengths)
