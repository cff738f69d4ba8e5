"""Array ranges and row chunks: the two small tools every engine stage uses to stay vectorised
without materialising (row × window) temporaries larger than :data:`CHUNK` elements.
(Re-exported by :mod:`pbtools.engine.dense`, where they were first defined.)"""

from __future__ import annotations

import numpy as np

__all__ = ["CHUNK", "row_chunks", "expand_ranges"]

#: elements per chunk of (row × window) temporaries
CHUNK = 1 << 22


def row_chunks(n_rows: int, width: int):
    """Slices of ``range(n_rows)`` such that rows × ``width`` stays below :data:`CHUNK`."""
    step = max(1, CHUNK // max(width, 1))
    for i in range(0, n_rows, step):
        yield slice(i, min(n_rows, i + step))


def expand_ranges(start: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ranges ``start[i] … start[i] + n[i] − 1`` concatenated: ``(item, position)``, one
    entry per position, ``item`` the index i of its range.

    >>> item, pos = expand_ranges(np.array([10, 3]), np.array([2, 3]))
    >>> item.tolist(), pos.tolist()
    ([0, 0, 1, 1, 1], [10, 11, 3, 4, 5])
    """
    n = np.asarray(n)
    first = np.cumsum(n) - n
    item = np.repeat(np.arange(len(n)), n)
    return item, np.arange(len(item)) + np.repeat(np.asarray(start) - first, n)
