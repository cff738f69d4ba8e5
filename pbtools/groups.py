"""Rows with equal keys: one grouping for every layer.

:func:`group_rows` groups rows of integer key columns exactly (the scoring engine's distinct
rankings, :mod:`pbtools.engine.rowgroups`); :func:`group_frame_rows` groups the rows of a
frame by key columns of any type (the statistics' groups, :mod:`pbtools.stats`) through it.
Both number the groups in the order of their first row. :func:`dense_unique` is
``np.unique`` for small non-negative keys.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["group_rows", "group_frame_rows", "dense_unique"]


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


def group_frame_rows(frame: pd.DataFrame, by, dropna: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Group of every row of ``frame`` by the key columns ``by`` and the first row of each
    group: ``frame.groupby(by, sort=False, observed=True, dropna=dropna).ngroup()`` (groups in
    order of first appearance; −1 for a row with a missing key when ``dropna``), from one
    factorisation per column, grouped by :func:`group_rows`, instead of a hash of the tuples of
    keys.

    Examples
    --------
    >>> f = pd.DataFrame({"a": ["x", "y", "x", None], "b": [1, 1, 1, 2]})
    >>> codes, first = group_frame_rows(f, ["a", "b"])
    >>> codes.tolist(), first.tolist()
    ([0, 1, 0, -1], [0, 1])
    """
    n = len(frame)
    cols, missing = [], np.zeros(n, dtype=bool)
    for c in [by] if isinstance(by, str) else list(by):
        k = np.asarray(pd.factorize(frame[c], use_na_sentinel=dropna)[0], dtype=np.int64)
        missing |= k < 0
        cols.append(k)
    codes = np.full(n, -1, dtype=np.int64)
    keep = np.flatnonzero(~missing)
    if not cols or len(keep) == 0:  # no key columns: one group of every row
        codes[keep] = 0
        return codes, keep[:1]
    first, codes[keep] = group_rows([k[keep] for k in cols])
    return codes, keep[first]


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
