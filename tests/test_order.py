"""pbtools.order: the ranks inside groups."""

from __future__ import annotations

import numpy as np

from pbtools.order import RANK_DTYPE, ranks_from_starts


def test_ranks_from_starts_counts_from_each_start():
    rng = np.random.default_rng(3)
    for n in (0, 1, 2, 7, 50):
        for _ in range(50):
            start = rng.random(n) < rng.random()
            ref, k = [], 0
            for i, s in enumerate(start):
                k = 1 if (s or i == 0) else k + 1  # rows before the first start: one group
                ref.append(k)
            got = ranks_from_starts(start)
            assert got.dtype == RANK_DTYPE and got.tolist() == ref


def test_group_starts_and_ranks_by_blocks(monkeypatch):
    """Blocks of 1, 2, 3 and 7 rows (a group across a block's edge, a block inside one group,
    rows before the first start) give what the whole arrays give."""
    from pbtools import order

    rng = np.random.default_rng(5)
    cases = []
    for n in (1, 2, 5, 17, 60):
        for p in (0.0, 0.1, 0.5, 1.0):
            a, b = np.cumsum(rng.random(n) < p), np.cumsum(rng.random(n) < p)
            cases.append((a, b, rng.random(n) < p))
    whole = [
        (order.group_starts(a, b), order.group_starts(a), ranks_from_starts(s)) for a, b, s in cases
    ]
    for rows in (1, 2, 3, 7):
        monkeypatch.setattr(order, "BLOCK_ROWS", rows)
        for (a, b, s), (gab, ga, rs) in zip(cases, whole, strict=True):
            ref = np.ones(len(a), bool)
            ref[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
            assert order.group_starts(a, b).tolist() == gab.tolist() == ref.tolist()
            assert order.group_starts(a).tolist() == ga.tolist()
            assert ranks_from_starts(s).tolist() == rs.tolist()
