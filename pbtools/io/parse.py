"""Reading run and qrels files into frames (used by :mod:`pbtools.io`): run identity, the
duplicate rules, float32, trec order, files read in a thread pool.

The stages before: :mod:`pbtools.io.files` (paths, bytes, byte-level checks, physical lines) and
:mod:`pbtools.io.fields` (fields and typed columns, with their checks); ``desc.xml`` is
:mod:`pbtools.io.desc`, the ``repairs`` frame :mod:`pbtools.io.repairs`. Nothing here is
public: :mod:`pbtools.io` holds the API and :mod:`pbtools.io.readers` the input contract.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pbtools.frames import (
    LABEL_DTYPE,
    RANK_DTYPE,
    SCORE_DTYPE,
    TrecFormatError,
    categorical_from_arrow,
    composite_key,
    encode,
    group_starts,
    ranks_from_starts,
    trec_sort_order,
)
from pbtools.io.direct import read_direct
from pbtools.io.fields import check_ranks, split_fields, to_int16, to_scores
from pbtools.io.files import BOM, clean_bytes, read_bytes
from pbtools.io.repairs import RepairableError, Repairs, sort_repairs

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
    lines: np.ndarray | None  # 1-based line of each row (None: the lines 1..n, nothing skipped)
    qid: pa.Array  # dictionary-encoded once parsed (parse_run_file)
    docno: pa.Array
    score: np.ndarray
    repairs: Repairs
    tags: list[str] = field(default_factory=list)
    unique: bool = False  # no (qid, docno) twice in the file

    def line_numbers(self) -> np.ndarray:
        return np.arange(1, len(self.score) + 1) if self.lines is None else self.lines


def parse_run_file(path: str, lenient: bool, run_id: str, float32: bool = False) -> RunPart:
    """One run file: the direct typed read when the file needs no repair
    (:func:`pbtools.io.direct.read_direct`), else the general whitespace split with its exact
    refusals and repairs; the ids dictionary-encoded and the file's repeats detected here, in
    the worker thread."""
    path = str(path)
    raw = read_bytes(path)
    checked = None
    data = raw
    if raw.startswith(BOM) or b"\r" in raw:  # the byte-level rules first (CRLF is fine)
        checked = clean_bytes(raw, path, lenient=lenient)
        data = None if len(checked[1]) or len(checked[2]) else checked[0]
    direct = None if data is None else read_direct(data, float32=float32)
    if direct is None:
        if checked is None:
            checked = clean_bytes(raw, path, lenient=lenient)
        part = parse_general(path, lenient, run_id, float32, checked)
    else:
        qid, docno, score, tag = direct
        name = tag if run_id == "tag" else file_run_name(path)
        part = RunPart(path, name, None, qid, docno, score, Repairs(), [tag])
    part.qid = pc.dictionary_encode(part.qid)
    part.docno = pc.dictionary_encode(part.docno)
    part.unique = no_repeats(part.qid, part.docno)
    return part


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


def no_repeats(qid: pa.DictionaryArray, docno: pa.DictionaryArray) -> bool:
    """True when no (qid, docno) pair occurs twice: a bitmap over the file's own dictionaries
    when it is small (the usual case), else a sort."""
    n, nd = len(qid), len(docno.dictionary)
    key = np.asarray(qid.indices).astype(np.int64) * nd + np.asarray(docno.indices)
    space = len(qid.dictionary) * nd
    if space <= 64 * n + (1 << 20):
        seen = np.zeros(space, dtype=bool)
        seen[key] = True
        return int(np.count_nonzero(seen)) == n
    return len(np.unique(key)) == n


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
    for i in np.argsort(names.codes, kind="stable"):
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
    if slow_rows is None and all(done[i][0] is None for i in fast) and run_code == sorted(run_code):
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
    rep = sort_repairs(repairs.frame(), paths)
    if lenient:
        df.attrs["repairs"] = rep
    return df, files, rep


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
        keep = np.ones(len(df), dtype=bool)
        keep[rep] = False
        df = df[keep].reset_index(drop=True)
    return df, sort_repairs(repairs.frame(), paths)
