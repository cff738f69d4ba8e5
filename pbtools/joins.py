"""The run ⋈ qrels join on integer codes: numpy arrays in, labels out (no pandas call).

:func:`pbtools.frames.judge` is its pandas adapter (the frames' id columns as codes over one
dictionary per column, the label column built from what :func:`judged_labels` returns);
:func:`composite_key` packs several code columns into one integer key, for the join and for
every grouping of pbtools (re-exported by :mod:`pbtools.frames`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pbtools.order import BLOCK_ROWS  # the one block size of row-wise passes

__all__ = ["LABEL_DTYPE", "composite_key", "judged_labels"]

#: the dtype of labels (the qrels' ``label`` column; ``pbtools.frames.LABEL_DTYPE``)
LABEL_DTYPE = np.int16


def composite_key(parts: Sequence[np.ndarray], sizes: Sequence[int], dtype=np.int64) -> np.ndarray:
    """One key from several integer code arrays (mixed radix: ``sizes`` are the ranges)."""
    key = np.zeros(len(parts[0]), dtype=dtype)  # int64, or narrower when the key space fits
    for p, size in zip(parts, sizes, strict=True):  # in place: one array of the rows' length
        key *= key.dtype.type(max(size, 1))
        np.add(key, p, out=key, casting="unsafe")  # (a narrower p cast a buffer at a time)
    return key


def judged_labels(
    run: Sequence[np.ndarray], qrels: Sequence[np.ndarray], labels, sizes, missing=None
):
    """The label of every run row: ``(label, judged, repeated)``.

    ``run`` and ``qrels``: the code arrays of the key columns, then ``qid``, then ``docno`` of
    the run rows and of the qrels rows, each column over one dictionary shared by both sides
    (``sizes``: the dictionaries' sizes; -1 for a qrels id the runs never use). ``labels``: the
    qrels rows' labels. Returns the labels of the run rows (int16, 0 where not judged), whether
    each row is judged, and the position of a qrels row that judges a (keys, qid, docno) the
    runs retrieve a second time (None when none does). With ``missing`` (a label), the labels
    are those of ``labels``' dtype, ``missing`` where not judged, and ``judged`` is None: the
    kernels' labels in one array (:func:`pbtools.measures.arrays.kernel_labels` of the qrels'
    labels), with no row-sized mask or copy beside it.

    The run rows are looked up a block of :data:`BLOCK_ROWS` at a time, and only those of a
    document some qrels row judges (a key for those alone): no row-sized key or mask.

    Examples
    --------
    >>> import numpy as np
    >>> run = [np.array([0, 0]), np.array([0, 1])]  # topic 0: documents 0, 1
    >>> qrels = [np.array([0]), np.array([1])]  # topic 0, document 1: label 2
    >>> label, judged, repeated = judged_labels(run, qrels, np.array([2]), [1, 2])
    >>> label.tolist(), judged.tolist(), repeated
    ([0, 2], [False, True], None)
    >>> judged_labels(run, qrels, np.array([2], np.int32), [1, 2], missing=-1)[0].tolist()
    [-1, 2]
    """
    *kr, rqc, rdc = run
    *kq, qqc, qdc = qrels
    *key_sizes, nq, nd = sizes
    # judgments of ids the runs never use cannot match: leave them out of the lookup table
    usable = np.ones(len(qdc), dtype=bool)
    for c in (*kq, qqc, qdc):
        usable &= c >= 0
    rows = np.flatnonzero(usable)
    # the documents judged: a small key space, 0..nj-1; every other document is column nj
    dt = np.int32 if nd < 2**31 - 1 else np.int64
    dmap = np.zeros(nd + 1, dtype=dt)
    dmap[qdc[rows]] = 1
    nj = int(dmap.sum())
    np.cumsum(dmap, out=dmap)
    dmap -= 1
    dmap[dmap == np.r_[dt(-1), dmap[:-1]]] = nj  # (not judged: the running count did not grow)
    space = [*key_sizes, nq, nj + 1]
    qkey = composite_key([*(c[rows] for c in (*kq, qqc)), dmap[qdc[rows]]], space)
    o = np.argsort(qkey, kind="stable")
    order, sq = rows[o], qkey[o]
    if len(sq) > 1 and np.any(sq[1:] == sq[:-1]):
        return None, None, int(order[1:][sq[1:] == sq[:-1]][0])  # a position in qrels
    if missing is None:  # positions in the sorted qrels, then their labels and the mask
        values, default = np.arange(len(sq), dtype=np.int32 if len(sq) < 2**31 else np.int64), -1
    else:
        values, default = np.asarray(labels)[order], missing
    out = _lookup(sq, [*kr, rqc, rdc], dmap, space, values, default)
    if missing is not None:
        return out, None, None
    hit = out >= 0
    lab = np.zeros(len(out), dtype=LABEL_DTYPE)
    if len(sq):
        lab[hit] = np.asarray(labels)[order][out[hit]]
    return lab, hit, None


def _lookup(sorted_keys, parts, dmap, space, values, default) -> np.ndarray:
    """``values`` at the position of each run row's key in ``sorted_keys`` (``default`` where
    absent): the key of ``parts`` (the last one, documents, through ``dmap``; ``space[-1] -
    1``: a document no qrels row judges), one block of rows at a time; only the rows of a
    judged document are looked up (by one direct table when the key space is small,
    :func:`positions_in`'s rule, else by binary search), the others are ``default`` at once.
    """
    n = len(parts[0])
    out = np.full(n, default, dtype=values.dtype)
    if len(sorted_keys) == 0:
        return out
    size = int(np.prod(space, dtype=np.float64))
    direct = size <= 2 * n + (1 << 22)
    if direct:
        table = np.full(size, default, dtype=values.dtype)
        table[sorted_keys] = values
    judged = dmap < space[-1] - 1  # (a byte a document: the first test of every row)
    for a in range(0, n, BLOCK_ROWS):
        docs = parts[-1][a : a + BLOCK_ROWS]
        at = np.flatnonzero(judged[docs])
        if len(at) == 0:
            continue
        key = composite_key(
            [*(p[a : a + BLOCK_ROWS][at] for p in parts[:-1]), dmap[docs[at]]], space
        )
        if direct:
            got = table[key]
        else:
            pos = np.minimum(np.searchsorted(sorted_keys, key), len(sorted_keys) - 1)
            got = np.where(sorted_keys[pos] == key, values[pos], default)
        out[a + at] = got
    return out


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
