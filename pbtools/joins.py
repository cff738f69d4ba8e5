"""The run ⋈ qrels join on integer codes: numpy arrays in, labels out (no pandas call).

:func:`pbtools.frames.judge` is its pandas adapter (the frames' id columns as codes over one
dictionary per column, the label column built from what :func:`judged_labels` returns);
:func:`composite_key` packs several code columns into one integer key, for the join and for
every grouping of pbtools (re-exported by :mod:`pbtools.frames`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["LABEL_DTYPE", "composite_key", "judged_labels"]

#: the dtype of labels (the qrels' ``label`` column; ``pbtools.frames.LABEL_DTYPE``)
LABEL_DTYPE = np.int16


def composite_key(parts: Sequence[np.ndarray], sizes: Sequence[int], dtype=np.int64) -> np.ndarray:
    """One key from several integer code arrays (mixed radix: ``sizes`` are the ranges)."""
    key = np.zeros(len(parts[0]), dtype=dtype)  # int64, or narrower when the key space fits
    for p, size in zip(parts, sizes, strict=True):  # in place: one array of the rows' length
        key *= key.dtype.type(max(size, 1))
        np.add(key, p if key.dtype == np.int64 else p.astype(key.dtype), out=key, casting="unsafe")
    return key


def judged_labels(run: Sequence[np.ndarray], qrels: Sequence[np.ndarray], labels, sizes):
    """The label of every run row: ``(label, judged, repeated)``.

    ``run`` and ``qrels``: the code arrays of the key columns, then ``qid``, then ``docno`` of
    the run rows and of the qrels rows, each column over one dictionary shared by both sides
    (``sizes``: the dictionaries' sizes; -1 for a qrels id the runs never use). ``labels``: the
    qrels rows' labels. Returns the labels of the run rows (int16, 0 where not judged), whether
    each row is judged, and the position of a qrels row that judges a (keys, qid, docno) the
    runs retrieve a second time (None when none does).

    Examples
    --------
    >>> import numpy as np
    >>> run = [np.array([0, 0]), np.array([0, 1])]  # topic 0: documents 0, 1
    >>> qrels = [np.array([0]), np.array([1])]  # topic 0, document 1: label 2
    >>> label, judged, repeated = judged_labels(run, qrels, np.array([2]), [1, 2])
    >>> label.tolist(), judged.tolist(), repeated
    ([0, 2], [False, True], None)
    """
    *kr, rqc, rdc = run
    *kq, qqc, qdc = qrels
    *key_sizes, nq, nd = sizes
    # judgments of ids the runs never use cannot match: leave them out of the lookup table
    usable = np.ones(len(qdc), dtype=bool)
    for c in (*kq, qqc, qdc):
        usable &= c >= 0
    rows = np.flatnonzero(usable)
    dmap = np.zeros(nd + 1, dtype=np.int64)  # documents judged: a small key space (-1: never)
    dmap[qdc[rows]] = 1
    dmap = np.where(dmap > 0, np.cumsum(dmap) - 1, -1).astype(np.int32)
    qdc, rdc, nd = dmap[qdc], dmap[rdc], max(int(dmap.max()) + 1, 1)
    qkey = composite_key([c[rows] for c in (*kq, qqc, qdc)], [*key_sizes, nq, nd])
    order = rows[np.argsort(qkey, kind="stable")]
    sq = composite_key([c[order] for c in (*kq, qqc, qdc)], [*key_sizes, nq, nd])
    if len(sq) > 1 and np.any(sq[1:] == sq[:-1]):
        return None, None, int(order[1:][sq[1:] == sq[:-1]][0])  # a position in qrels
    rkey = composite_key([*kr, rqc, np.maximum(rdc, 0)], [*key_sizes, nq, nd])
    pos_c = positions_in(sq, rkey, int(np.prod([*key_sizes, nq, nd], dtype=np.float64)))
    hit = (pos_c >= 0) & (rdc >= 0)
    lab = np.zeros(len(rkey), dtype=LABEL_DTYPE)
    if len(sq):
        lab[hit] = np.asarray(labels)[order][pos_c[hit]]
    return lab, hit, None


def positions_in(sorted_keys: np.ndarray, keys: np.ndarray, space: int) -> np.ndarray:
    """Position of each of ``keys`` in the sorted, distinct ``sorted_keys`` (-1 where absent),
    every key in ``[0, space)``: one direct table when ``space`` is small against the number
    of keys (no search), else a binary search.

    Examples
    --------
    >>> import numpy as np
    >>> positions_in(np.array([2, 5, 7]), np.array([5, 3, 7, 2]), 8).tolist()
    [1, -1, 2, 0]
    """
    keys = np.asarray(keys)
    if len(sorted_keys) == 0:
        return np.full(len(keys), -1, dtype=np.int64)
    if space <= 2 * len(keys) + (1 << 22):
        table = np.full(space, -1, dtype=np.int32 if len(sorted_keys) < 2**31 else np.int64)
        table[sorted_keys] = np.arange(len(sorted_keys))
        return table[keys]
    pos = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return np.where(sorted_keys[pos] == keys, pos, -1)
