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
from pbtools.io.parse import RunPart, duplicates, parse_many, parse_run_file_safe
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
    df, files = assemble_runs(parts, lenient=lenient, float32=float32, repairs=repairs)
    # the file bytes and per-file tables are garbage now: hand their pages back to the system,
    # or the allocator keeps ~2× the frame's size resident through the scoring that follows
    # (127-run track: peak RSS of `pbtools evaluate` 624 → 494 MB; benchmarks/evaluate_speed.py)
    del parts
    pa.default_memory_pool().release_unused()
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
    qid = categorical_from_arrow([p.qid for p in parts])
    docno = categorical_from_arrow([p.docno for p in parts])
    score = np.concatenate([p.score for p in parts]) if parts else np.zeros(0)
    ranked = score  # the values trec order sorts: float32-rounded after the duplicate rule
    if float32:
        with np.errstate(over="ignore"):  # overflows were reported by to_scores
            ranked = score.astype(np.float32).astype(SCORE_DTYPE)
    q, d = qid.codes, docno.codes
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    slow = slow_parts(parts, names.codes)

    def one_file(i: int) -> tuple[np.ndarray | None, np.ndarray]:
        a, b = bounds[i], bounds[i + 1]
        o = file_order(q[a:b], ranked[a:b], d[a:b])
        return o, ranks_from_starts(group_starts(q[a:b] if o is None else q[a:b][o]))

    fast = [i for i in range(len(parts)) if not slow[i]]
    done = dict(zip(fast, parse_many(fast, one_file), strict=True))  # in the thread pool
    slow_rows = slow_rank = None
    if slow.any():
        part_idx = np.repeat(np.arange(len(parts)), sizes)
        slow_rows = sort_slow_rows(
            parts, slow, part_idx, names, qid, docno, score, ranked, lenient, repairs
        )
        slow_names = names.codes[part_idx[slow_rows]]
        slow_rank = ranks_from_starts(group_starts(slow_names, q[slow_rows]))
        name_bounds = np.searchsorted(slow_names, np.arange(len(names.categories) + 1))
    # the runs in name order: each one file (its rows as read or in its order) or the sorted
    # rows of its slow files
    take, rank, run_code, run_size = [], [], [], []
    in_name_order = np.argsort(names.codes, kind="stable")
    for i in in_name_order:
        c = int(names.codes[i])
        if not slow[i]:
            o, r = done[i]
            take.append(np.arange(bounds[i], bounds[i + 1]) if o is None else bounds[i] + o)
        elif c in run_code:
            continue
        else:
            a, b = name_bounds[c], name_bounds[c + 1]
            take.append(slow_rows[a:b])
            r = slow_rank[a:b]
        rank.append(r)
        run_code.append(c)
        run_size.append(len(r))
    as_read = np.array_equal(in_name_order, np.arange(len(parts)))
    if slow_rows is None and as_read and all(done[i][0] is None for i in fast):
        take = None  # every file in trec order, the files in name order: nothing moves
    else:
        take = np.concatenate(take) if take else np.zeros(0, dtype=np.int64)
        q, d, ranked = q[take], d[take], ranked[take]
    name_codes = np.repeat(np.asarray(run_code, dtype=names.codes.dtype), run_size)
    df = pd.DataFrame(
        {
            "name": pd.Categorical.from_codes(
                name_codes, dtype=pd.CategoricalDtype(names.categories), validate=False
            ),
            "qid": pd.Categorical.from_codes(q, dtype=qid.dtype, validate=False),
            "docno": pd.Categorical.from_codes(d, dtype=docno.dtype, validate=False),
            "score": ranked,
            "rank": np.concatenate(rank) if rank else np.zeros(0, dtype=RANK_DTYPE),
        }
    )
    return df, files


def slow_parts(parts, name_of_part) -> np.ndarray:
    """Which files need the general duplicate rule and a sort of their rows together: a file
    whose run is also carried by another file, or that holds a (qid, docno) twice. Every other
    file is one run, put in trec order on its own (:func:`file_order`)."""
    shared = np.bincount(name_of_part, minlength=len(parts))[name_of_part] > 1
    return shared | ~np.array([p.unique for p in parts], dtype=bool)


def sort_slow_rows(parts, slow, part_idx, names, qid, docno, score, ranked, lenient, repairs):
    """The rows of the slow files (:func:`slow_parts`): the duplicate rule (strict: refused at
    the first repeat; lenient: :func:`dedup`), then trec order. Returns their row positions in
    trec order."""
    rows = np.flatnonzero(slow[part_idx])
    name_codes = names.codes[part_idx]
    key = composite_key(
        [name_codes[rows], qid.codes[rows], docno.codes[rows]],
        [len(names.categories), len(qid.categories), len(docno.categories)],
    )
    rep, first = duplicates(key)
    if len(rep):
        line = np.concatenate([p.line_numbers() for p in parts])
        rep, first = rows[rep], rows[first]
        if not lenient:
            i, j = int(rep[0]), int(first[0])
            same = part_idx[i] == part_idx[j]
            where = f"line {line[j]}" if same else f"{parts[part_idx[j]].path}:{line[j]}"
            raise RepairableError(
                f"duplicate document {docno[i]!r} for topic {qid[i]!r} in run "
                f"{names.categories[name_codes[i]]!r} (first at {where})",
                parts[part_idx[i]].path,
                int(line[i]),
            )
        full = np.zeros(len(part_idx), dtype=np.int64)
        full[rows] = key
        kept = dedup(full, score, rep, first, part_idx, line, parts, qid, docno, repairs)
        keep = np.zeros(len(part_idx), dtype=bool)
        keep[kept] = True
        rows = rows[keep[rows]]
    o = trec_sort_order([name_codes[rows], qid.codes[rows]], ranked[rows], docno.codes[rows])
    return rows[o]


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
        actions = [_dedup_action(score[dd], score[kk]) for dd, kk in zip(d, k, strict=True)]
        repairs.add(parts[pi].path, line[d], problems, actions)
    return np.flatnonzero(~drop_mask)


def _dedup_action(dropped: float, kept: float) -> str:
    if dropped < kept or (np.isnan(dropped) and not np.isnan(kept)):
        return "dropped (lower score)"
    if np.isnan(dropped):
        return "dropped (NaN score, later occurrence)"
    return "dropped (equal score, later occurrence)"


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
        return trec_sort_order([q], score, d)
    # only tied scores are out of order (the usual case): sort each group of ties by docno
    # descending, in place; every other row stays where it is
    group = np.concatenate([[0], np.cumsum(~tie)])
    rows = np.flatnonzero(np.concatenate([tie, [False]]) | np.concatenate([[False], tie]))
    dt = d[rows].astype(np.int64)
    nd = int(dt.max()) + 1
    perm = np.arange(len(q))
    perm[rows] = rows[np.argsort(group[rows] * nd + (nd - 1 - dt))]
    return perm
