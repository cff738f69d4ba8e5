"""Sums over the segments of rows sorted by group: the per-group reductions under
:mod:`pbtools.measures.kernels`.

Every function here writes as little row-sized memory as it can: on a 10 M-row evaluation
every row-sized temporary is a fresh allocation whose pages the kernel zeroes (the system CPU
of ``pbtools evaluate``, ``benchmarks/evaluate_speed.py``), so integer sums over whole groups
are one reduction (no running sum over the rows) and a gathered array is subtracted a block of
rows at a time.
"""

from __future__ import annotations

import numpy as np

from pbtools.order import BLOCK_ROWS  # the one block size of row-wise passes


def segment_sums(x: np.ndarray, start: np.ndarray, length: np.ndarray, dtype=np.float64):
    """Per segment, ``x[start:start + length].sum()`` (0 for empty segments), vectorised, as
    float64; summed in ``dtype`` (``np.int64``: an integer ``x`` exactly, without a converted
    copy of it).

    Examples
    --------
    >>> segment_sums(np.array([1.0, 2.0, 4.0, 8.0]), np.array([0, 1, 3]), np.array([1, 2, 0]))
    array([1., 6., 0.])
    >>> segment_sums(np.array([True, True, False, True]), np.array([0, 2]), np.array([2, 2]),
    ...              dtype=np.int64)
    array([2., 1.])
    """
    out = np.zeros(len(start), dtype=np.float64)
    ne = length > 0
    if not ne.any():
        return out
    s = start[ne]
    idx = np.empty(2 * len(s), dtype=np.int64)
    idx[0::2] = s
    idx[1::2] = s + length[ne]
    x = np.asarray(x)
    if dtype == np.float64:
        x = np.asarray(x, dtype=np.float64)
    if idx[-1] == len(x):  # only the last segment can end there: reduceat sums it to the end
        idx = idx[:-1]
    out[ne] = np.add.reduceat(x, idx, dtype=dtype)[0::2]
    return out


def subtract_gathered(out: np.ndarray, values: np.ndarray, index: np.ndarray) -> None:
    """``out -= values[index]`` in place, a block of rows at a time: the gathered values never
    exist for every row at once (a row-sized temporary is a fresh allocation whose pages the
    kernel zeroes; the block's is reused).

    Examples
    --------
    >>> out = np.array([5, 6, 7])
    >>> subtract_gathered(out, np.array([1, 10]), np.array([0, 0, 1]))
    >>> out
    array([ 4,  5, -3])
    """
    buf = np.empty(min(len(out), BLOCK_ROWS), dtype=values.dtype)
    for a in range(0, len(out), BLOCK_ROWS):
        part = out[a : a + BLOCK_ROWS]
        got = buf[: len(part)]
        np.take(values, index[a : a + BLOCK_ROWS], out=got)
        part -= got


def take_into(values: np.ndarray, index: np.ndarray, out: np.ndarray) -> None:
    """``out[:] = values[index]``, a block of rows at a time: numpy converts a narrower
    ``index`` (int32 group ids, ranks) to a full-length int64 copy first, the block's only.

    Examples
    --------
    >>> out = np.empty(3)
    >>> take_into(np.array([0.5, 2.0]), np.array([1, 0, 1], np.int32), out)
    >>> out
    array([2. , 0.5, 2. ])
    """
    for a in range(0, len(out), BLOCK_ROWS):
        np.take(values, index[a : a + BLOCK_ROWS], out=out[a : a + BLOCK_ROWS], mode="clip")


def starts_of(g: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """``(start, length)`` of every group 0..n_groups-1 in rows sorted by group id ``g``: a
    binary search of each group's bounds (a ``bincount`` would copy a narrow ``g`` to int64
    for every row first).

    Examples
    --------
    >>> starts_of(np.array([0, 0, 2], np.int32), 4)
    (array([0, 2, 2, 3]), array([2, 0, 1, 0]))
    """
    bounds = np.searchsorted(g, np.arange(n_groups + 1, dtype=g.dtype)).astype(np.int64)
    return bounds[:-1], np.diff(bounds)
