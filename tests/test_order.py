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
