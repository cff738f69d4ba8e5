"""trec_eval's ``all`` line on arrays: the averages of per-topic values, equal in the last bit
to :func:`pbtools.measures.aggregate` (pandas' ``groupby(sort=False).mean()``), without pandas.

pandas 3.1 reduces a float column of a grouped frame in one of two ways (``pandas/core/groupby/
ops.py``, ``BaseGrouper._cython_operation``): when the group ids are monotonic in row order
(every group's rows contiguous, groups numbered by first appearance) and the column's block
holds no NaN, by ``np.add.reduceat`` over the block's 2-D values (then ÷ the group's size for a
mean); otherwise by the Cython kernels ``group_mean``/``group_sum`` (``pandas/_libs/
groupby.pyx``): Kahan summation in row order, NaN skipped and not counted, a compensation that
turns NaN (an infinite value) reset to 0, the mean ``sum / count`` (NaN for no value), the sum 0
for no value. :func:`group_reduce` is that rule; the "block" is what the caller passes (one
column, or the columns pandas holds in one block: :func:`aggregate`'s frames from
:func:`~pbtools.measures.compute` keep ``value`` and ``residual`` in blocks of their own).

The Kahan kernel runs a vectorised step per position inside the groups (the i-th value of every
group at once): as many steps as the largest group has rows (a run's topics), not rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pbtools.measures.names import MIN_GEO_MEAN, Measure

__all__ = ["group_reduce", "first_appearance", "trec_means", "trec_averages"]


def group_reduce(values: np.ndarray, group: np.ndarray, ngroups: int, how: str = "mean"):
    """pandas' grouped ``mean`` or ``sum`` of one block of float columns, to the last bit.

    Parameters
    ----------
    values : ndarray of float64, shape (n,) or (k, n)
        One column, or the k columns of one pandas block (their NaNs decide together).
    group : ndarray of int, shape (n,)
        Each row's group, ``0 … ngroups − 1``, numbered by first appearance (``sort=False``).
    ngroups : int
    how : {"mean", "sum"}

    Returns
    -------
    ndarray of float64, shape (ngroups,) or (k, ngroups)

    Examples
    --------
    >>> import numpy as np
    >>> v = np.array([0.1, 0.2, 0.3, np.nan])
    >>> group_reduce(v, np.array([0, 1, 0, 1]), 2).tolist()  # Kahan, NaN skipped
    [0.2, 0.2]
    >>> group_reduce(v[:3], np.array([0, 0, 1]), 2, "sum").tolist()  # np.add.reduceat
    [0.30000000000000004, 0.3]
    """
    flat = np.ndim(values) == 1
    block = np.atleast_2d(np.asarray(values, dtype=np.float64))
    group = np.asarray(group)
    n = block.shape[1]
    if n and np.all(group[1:] >= group[:-1]) and not np.isnan(block).any():
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        seg = np.add.reduceat(block, starts, axis=1)
        if how == "mean":
            seg = seg / np.diff(starts, append=n).astype(np.float64)
        out = np.full((block.shape[0], ngroups), np.nan if how == "mean" else 0.0)
        out[:, group[starts]] = seg
    else:
        out = np.stack([_kahan(col, group, ngroups, how) for col in block])
    return out[0] if flat else out


def _kahan(col: np.ndarray, group: np.ndarray, ngroups: int, how: str) -> np.ndarray:
    """``group_mean``/``group_sum`` of pandas' Cython kernels: Kahan sums in row order."""
    rows = np.flatnonzero(~np.isnan(col))
    g, x = group[rows], col[rows]
    count = np.bincount(g, minlength=ngroups)
    by_group = np.argsort(g, kind="stable")  # each group's values in row order
    gs = g[by_group]
    start = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]]) if len(gs) else np.zeros(0, np.int64)
    pos = np.arange(len(gs)) - np.repeat(start, np.diff(np.r_[start, len(gs)]))
    step = np.argsort(pos, kind="stable")  # position-major: the i-th value of every group
    gg, xx = gs[step], x[by_group][step]
    bounds = np.searchsorted(pos[step], np.arange(int(pos.max(initial=-1)) + 2))
    total = np.zeros(ngroups)
    comp = np.zeros(ngroups)
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):  # one step per position
        k = gg[a:b]
        y = xx[a:b] - comp[k]
        t = total[k] + y
        c = t - total[k] - y
        c[c != c] = 0.0  # an infinite value: pandas resets the compensation
        comp[k] = c
        total[k] = t
    if how == "sum":
        return total
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def first_appearance(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group ids numbered by first appearance (pandas' ``sort=False``) and each group's first
    row: ``(group of each row, first row of each group)``.

    Examples
    --------
    >>> import numpy as np
    >>> g, first = first_appearance(np.array([7, 3, 7, 5]))
    >>> g.tolist(), first.tolist()
    ([0, 1, 0, 2], [0, 1, 3])
    """
    uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq))
    return rank[inv.ravel()], first[order]


def trec_averages(
    run: np.ndarray,
    measure: np.ndarray,
    value: np.ndarray,
    residual: np.ndarray | None,
    measures: Sequence[Measure],
    joint: bool = False,
):
    """trec_eval's averages (``meas_avg.c``) of per-topic rows, as :func:`~.aggregate` gives
    them: the mean of each (run, measure) over its rows, ``NumRet``/``NumRel``/``NumRelRet``
    summed, ``GMAP``/``GMBpref`` by the geometric mean ``exp(mean(log(max(v, MIN_GEO_MEAN))))``,
    string measures left out.

    Parameters
    ----------
    run : ndarray of int
        Each row's run (any integer codes).
    measure : ndarray of int
        Each row's measure, an index into ``measures``.
    value, residual : ndarray of float64
        The per-topic values (``residual``: RBP's, or None).
    measures : sequence of Measure
    joint : bool
        As in :func:`trec_means` (the command line's: False, each column a block of its own).

    Returns
    -------
    tuple
        ``(run, measure, value, residual)`` of the averages, one per (run, measure) in order of
        first appearance among the rows (``residual`` None when not given).

    Examples
    --------
    >>> import numpy as np
    >>> from pbtools.measures.names import parse_all
    >>> r, m, v, _ = trec_averages(np.array([0, 0, 0, 0]), np.array([0, 1, 0, 1]),
    ...                            np.array([0.5, 3.0, 0.0, 2.0]), None,
    ...                            parse_all(["P@2", "NumRet"]))
    >>> m.tolist(), v.tolist()  # P@2 averaged, NumRet summed
    ([0, 1], [0.25, 5.0])
    """
    text = np.array([m.text for m in measures] or [False], dtype=bool)
    if text.any():  # string measures have no average (trec_eval)
        keep = ~text[measure]
        run, measure, value = run[keep], measure[keep], value[keep]
        residual = None if residual is None else residual[keep]
    key = run.astype(np.int64) * max(len(measures), 1) + measure
    group, first = first_appearance(key)
    g_measure = measure[first]
    geo = np.array([m.geometric for m in measures] or [False], dtype=bool)
    summed = np.array([m.summed for m in measures] or [False], dtype=bool)
    out, res = trec_means(group, value, residual, summed[g_measure], geo[g_measure], joint)
    return run[first], g_measure, out, res


def trec_means(
    group: np.ndarray,
    value: np.ndarray,
    residual: np.ndarray | None,
    summed: np.ndarray,
    geometric: np.ndarray,
    joint: bool = False,
):
    """The averages of :func:`trec_averages` (and :func:`~pbtools.measures.aggregate`) by group:
    ``(value, residual)`` of each group, ``value`` the mean, the sum where ``summed``, the
    geometric mean where ``geometric``; ``residual`` (or None) the mean.

    Parameters
    ----------
    group : ndarray of int
        Each row's group, numbered by first appearance (:func:`first_appearance`).
    value, residual : ndarray of float64
        The rows' values (``residual``: RBP's, or None).
    summed, geometric : ndarray of bool
        Per group: its measure is summed (``NumRet``…), averaged geometrically (``GMAP``…).
    joint : bool
        ``value`` and ``residual`` are one pandas block (their NaNs decide together, see the
        module; :func:`~.scoring.compute`'s frames hold them apart); not with a geometric
        measure, whose transform of ``value`` splits the block in :func:`~.aggregate`.

    Returns
    -------
    tuple of ndarray

    Examples
    --------
    >>> import numpy as np
    >>> v, _ = trec_means(np.array([0, 0, 1, 1]), np.array([0.01, 0.04, 3.0, 2.0]), None,
    ...                   np.array([False, True]), np.array([True, False]))
    >>> np.round(v, 6).tolist()  # exp(mean(log v)), then a sum
    [0.02, 5.0]
    """
    n = int(group.max(initial=-1)) + 1
    is_geo = geometric[group] if len(group) else np.zeros(0, bool)
    if is_geo.any():  # exp(mean(log(max(v, MIN_GEO_MEAN)))): trec_eval's geometric mean
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log(np.clip(value, MIN_GEO_MEAN, None))
        value = np.where(is_geo, logs, value)
    joint = joint and residual is not None and not geometric.any()  # pandas splits the block
    block = np.vstack([value, residual]) if joint else value  # the values pandas reduces at once
    mean = group_reduce(block, group, n)
    mean, res = (mean[0], mean[1]) if joint else (mean, None)
    if residual is not None and not joint:
        res = group_reduce(residual, group, n)
    out = mean.copy()
    if summed.any():
        total = group_reduce(block, group, n, "sum")
        out[summed] = (total[0] if joint else total)[summed]
    if geometric.any():
        out[geometric] = np.exp(mean[geometric])
    return out, res
