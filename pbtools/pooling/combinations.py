"""Combinations of pooling units and the kernel that keeps the documents a combination pooled.

Take-k-teams and run-subset pools (:meth:`pbtools.pooling.Pool.take_teams`,
:meth:`pbtools.pooling.Pool.subset`) choose combinations of units (runs or organisations) and keep,
for each, the judged documents that at least one of its units contributed — read off the one
contributions table (:func:`pbtools.pooling.who_pooled.contrib_table`) as bitsets.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from math import comb

import numpy as np
import pandas as pd

from pbtools.errors import InputError
from pbtools.pooling.who_pooled import Contrib, keyed, locate, unit_column

__all__ = ["SEP", "draw_combinations", "take_rows"]

SEP = "+"  #: joins the units of a ``kept`` combination label, e.g. ``"orgA+orgB+orgC"``


def draw_combinations(n: int, k: int, sample: int | None, seed: int) -> np.ndarray:
    """All C(n, k) index combinations (lexicographic), or ``sample`` distinct ones drawn at random.

    Random draws: each combination is a uniform k-subset (seeded ``numpy.random.default_rng``);
    duplicates are dropped and redrawn, and the result is sorted lexicographically.

    Examples
    --------
    >>> draw_combinations(4, 2, None, 0).tolist()
    [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    """
    if not 0 <= k <= n:
        raise InputError(f"cannot take {k} of {n} units")
    total = comb(n, k)
    if sample is None or sample >= total:
        if total > 5_000_000:
            raise InputError(f"C({n}, {k}) = {total} combinations: pass sample=")
        return np.array(list(combinations(range(n), k)), dtype=np.int64).reshape(total, k)
    rng = np.random.default_rng(seed)
    got = np.zeros((0, k), dtype=np.int64)
    while len(got) < sample:
        draw = np.sort(np.argsort(rng.random((2 * sample, n)), axis=1)[:, :k], axis=1)
        got = np.unique(np.vstack([got, draw]), axis=0)
        if len(got) > sample:  # keep a uniform subset of the distinct draws
            got = got[np.sort(rng.choice(len(got), sample, replace=False))]
    return got


def take_rows(
    qrels: pd.DataFrame, c: Contrib, member: np.ndarray, labels: Sequence[str]
) -> pd.DataFrame:
    """Qrels rows pooled by at least one unit of each combination (``member``: combos x units).

    Each document's contributing units are a bitset (uint64 words), each combination too; a qrels
    row is kept for a combination when the two bitsets intersect. Combinations are processed in
    chunks of ~4M (combination, row) cells.
    """
    n_units = len(c.units)
    words = max((n_units + 63) // 64, 1)
    doc_bits = np.zeros((len(c.keys), words), dtype=np.uint64)
    combo_bits = np.zeros((len(member), words), dtype=np.uint64)
    for w in range(words):  # a handful of 64-unit words
        sel = (c.pair_unit // 64) == w
        np.bitwise_or.at(
            doc_bits[:, w],
            c.pair_doc[sel],
            np.left_shift(np.uint64(1), (c.pair_unit[sel] % 64).astype(np.uint64)),
        )
        cols = np.arange(w * 64, min((w + 1) * 64, n_units))
        shifts = np.left_shift(np.uint64(1), (cols % 64).astype(np.uint64))
        combo_bits[:, w] = np.bitwise_or.reduce(
            np.where(member[:, cols], shifts[None, :], np.uint64(0)), axis=1
        )
    loc = locate(c.keys, c.q_key)
    rows = np.flatnonzero(loc >= 0)  # never-contributed rows are never kept
    qbits = doc_bits[loc[rows]]
    step = max(1, 4_000_000 // max(len(rows), 1))
    parts = []
    for start in range(0, len(member), step):  # chunks of combinations, not a loop per unit
        cb = combo_bits[start : start + step]
        hit = np.zeros((len(cb), len(rows)), dtype=bool)
        for w in range(words):
            hit |= (cb[:, w][:, None] & qbits[None, :, w]) != 0
        b, r = np.nonzero(hit)
        parts.append((b + start, rows[r]))
    block = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    rws = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
    return keyed(qrels, rws, "kept", unit_column(list(labels), block))
