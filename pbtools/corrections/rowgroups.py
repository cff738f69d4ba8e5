"""Exact grouping of rows that the scoring engine would score identically.

Estimators re-score many rankings that repeat: the same run on the same topic, labelled the
same way (relevance-set variants agree on most documents) and with the same relevance set.
:func:`same_rankings` finds them so that :func:`pbtools.measures.kernels.score` runs once per
distinct ranking; the grouping is exact (:func:`group_rows` compares the keys themselves).
"""

from __future__ import annotations

import numpy as np

from pbtools.pooling.dense import row_chunks

__all__ = ["same_rankings", "group_rows", "dense_unique", "same_labels"]


def same_rankings(D, lab, ref: int, slots, var, t, width: int, extra=()):
    """Groups of rows that are the same labelled ranking: run ``slots`` on topic ``t`` cut at
    ``width`` (``D[slots, t, :width]``), labelled by variant ``var`` (``lab[var, t]``), with
    equal ``extra`` columns (e.g. the relevance set's label histogram).

    Parameters
    ----------
    D : ndarray
        runs × topics × L local documents by rank (:class:`~pbtools.pooling.dense.DenseRuns`).
    lab : ndarray
        variants × topics × U labels (−1 unjudged).
    ref : int
        The reference variant: rows whose labels agree with it share a key whatever their
        variant.
    slots, var, t : ndarray
        Per row: run slot, variant and topic.
    width : int
        How much of each ranking counts.
    extra : sequence of ndarray
        int64 columns that must agree too.

    Returns
    -------
    rep, grp : ndarray
        The first row of each group, in row order, and each row's group.

    Examples
    --------
    >>> D = np.array([[[0, 1]]])  # one run, one topic: documents 0, 1
    >>> lab = np.array([[[1, 0, 1]], [[1, 0, -1]], [[0, 0, 0]]])  # three variants
    >>> rep, grp = same_rankings(D, lab, 0, np.zeros(3, int), np.arange(3), np.zeros(3, int), 2)
    >>> rep.tolist(), grp.tolist()  # variants 0 and 1 agree on the ranked documents
    ([0, 2], [0, 0, 1])
    """
    V, T = lab.shape[:2]
    R = D.shape[0]
    slots, var = np.asarray(slots, np.int64), np.asarray(var, np.int64)
    t = np.asarray(t, np.int64)
    if not len(slots):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    trip = (var * R + slots) * T + t
    ut, tinv = dense_unique(trip, V * R * T)
    labkey = np.where(same_labels(D, lab, ref, ut, width)[tinv], -1, var)
    return group_rows([(slots * T + t) * (V + 1) + labkey + 1, *extra])


def group_rows(cols, mixed: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Rows with equal values in every column of ``cols``.

    One small non-negative column is grouped through a table of its values; otherwise the rows
    are grouped by a 64-bit mix of their columns and the groups then checked column by
    column against their first row; should two different rows ever share a mix, the rows are
    sorted on the columns themselves instead: exact either way.

    Parameters
    ----------
    cols : list of ndarray
        Integer columns of one length.
    mixed : bool, optional
        Group by the mix first (default); False: sort on the columns directly.

    Returns
    -------
    rep, grp : ndarray
        The first row of each group, in row order, and each row's group (an index into
        ``rep``).

    Examples
    --------
    >>> rep, grp = group_rows([np.array([3, 1, 3, 1]), np.array([0, 5, 0, 6])])
    >>> rep.tolist(), grp.tolist()
    ([0, 1, 3], [0, 1, 0, 2])
    """
    cols = [np.asarray(c, dtype=np.int64) for c in cols]
    n = len(cols[0])
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ok = False
    if len(cols) == 1 and cols[0].min() >= 0 and cols[0].max() < 8 * n + (1 << 16):
        # one small non-negative key: a table of flags (dense_unique), no mix, no sort of rows
        keys, inv = dense_unique(cols[0], int(cols[0].max()) + 1)
        first = np.full(len(keys), n, dtype=np.int64)
        np.minimum.at(first, inv, np.arange(n))  # each group's first row
        ok, mixed = True, False
    if mixed:
        h = np.zeros(n, dtype=np.uint64)
        for c in cols:
            h = (h ^ c.view(np.uint64)) * np.uint64(0x9E3779B97F4A7C15)
            h ^= h >> np.uint64(29)
        order = np.argsort(h)
        hs = h[order]
        head = np.flatnonzero(np.r_[True, hs[1:] != hs[:-1]])
        first = np.minimum.reduceat(order, head)  # each group's first row
        inv = np.empty(n, dtype=np.int64)
        inv[order] = np.repeat(np.arange(len(head)), np.diff(np.r_[head, n]))
        ok = all((c == c[first][inv]).all() for c in cols)  # no two keys share a mix
    if not ok:
        order = np.lexsort(cols[::-1])
        head = np.r_[True, np.any([c[order][1:] != c[order][:-1] for c in cols], axis=0)]
        inv = np.empty(n, dtype=np.int64)
        inv[order] = np.cumsum(head) - 1
        first = order[head]
    o = np.argsort(first, kind="stable")  # groups numbered in the order of their first row
    rank = np.empty(len(first), dtype=np.int64)
    rank[o] = np.arange(len(first))
    return first[o], rank[inv]


def dense_unique(key: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for non-negative keys below ``size``.

    A table of ``size`` flags replaces the sort when it is not much larger than ``key``.

    Parameters
    ----------
    key : ndarray
        Non-negative integers below ``size``.
    size : int
        The key space.

    Returns
    -------
    unique, inverse : ndarray
        The sorted distinct keys and each key's index into them.

    Examples
    --------
    >>> u, inv = dense_unique(np.array([5, 2, 5, 7]), 8)
    >>> u.tolist(), inv.tolist()
    ([2, 5, 7], [1, 0, 1, 2])
    """
    if size > 8 * len(key) + (1 << 16):
        u, inv = np.unique(key, return_inverse=True)
        return u, inv.ravel()
    seen = np.zeros(size, dtype=bool)
    seen[key] = True
    u = np.flatnonzero(seen)
    pos = np.cumsum(seen) - 1
    return u, pos[key]


def same_labels(D, lab, ref: int, trips: np.ndarray, width: int) -> np.ndarray:
    """Per key ``(variant · R + run) · T + topic`` of ``trips`` (sorted, unique): whether the
    labels of the run's top ``width`` under the variant are those of variant ``ref``.

    Sparse: only the cells where a variant's labels differ from the reference are looked up
    among the runs' top ``width``.

    Examples
    --------
    >>> D = np.array([[[0, 1]]])
    >>> lab = np.array([[[1, 0, 1]], [[1, 0, -1]], [[0, 0, 0]]])
    >>> same_labels(D, lab, 0, np.array([0, 1, 2]), 2).tolist()
    [True, True, False]
    """
    V, T, U = lab.shape
    RT = D.shape[0] * T
    same = np.ones(len(trips), dtype=bool)
    # the top ``width`` documents of every (run, topic) of the keys, by cell t · U + x
    pt, _ = dense_unique(trips % RT, RT)
    docs = D[pt // T, pt % T, :width]
    i, j = np.nonzero(docs >= 0)
    ecell = (pt[i] % T) * U + docs[i, j]
    ept = pt[i]
    cells, cinv = dense_unique(ecell, T * U)
    lab = lab.reshape(V, T * U)
    changed = np.zeros(len(cells), dtype=bool)  # the cells some variant labels otherwise
    for sl in row_chunks(len(cells), V):
        changed[sl] = (lab[:, cells[sl]] != lab[ref, cells[sl]][None, :]).any(axis=0)
    e = np.flatnonzero(changed[cinv])  # the entries on those cells
    table = V * RT <= 8 * len(trips) + (1 << 20)  # flag the keys in a table, or look them up
    flags = np.ones(V * RT if table else 0, dtype=bool)
    for sl in row_chunks(len(e), V):
        c = cells[cinv[e[sl]]]
        vv, ei = np.nonzero(lab[:, c] != lab[ref, c][None, :])
        key = vv * RT + ept[e[sl][ei]]
        if table:
            flags[key] = False
            continue
        pos = np.minimum(np.searchsorted(trips, key), len(trips) - 1)
        same[pos[trips[pos] == key]] = False
    return flags[trips] if table else same
