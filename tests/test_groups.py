"""pbtools.groups: rows with equal keys, numbered in the order of their first row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pbtools import groups


def reference(cols):
    """Groups by tuples of the columns, numbered by first appearance (a dict, row by row)."""
    seen: dict[tuple, int] = {}
    rep, grp = [], []
    for i, key in enumerate(zip(*(c.tolist() for c in cols), strict=True)):
        if key not in seen:
            seen[key] = len(seen)
            rep.append(i)
        grp.append(seen[key])
    return rep, grp


@pytest.mark.parametrize("mixed", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_group_rows_is_the_reference(seed, mixed):
    rng = np.random.default_rng(seed)
    n = 300
    cols = [rng.integers(0, 3, n), rng.integers(-2, 2, n), rng.integers(0, 10**12, n) % 4]
    rep, grp = groups.group_rows(cols, mixed=mixed)
    assert (rep.tolist(), grp.tolist()) == reference(cols)
    one = [rng.integers(0, 50, n)]  # one small non-negative column: the table path
    assert tuple(x.tolist() for x in groups.group_rows(one, mixed=mixed)) == reference(one)
    big = [rng.integers(0, 5, n) * 10**15]  # one column too sparse for a table
    assert tuple(x.tolist() for x in groups.group_rows(big)) == reference(big)


def test_group_rows_of_nothing():
    rep, grp = groups.group_rows([np.array([], dtype=np.int64)])
    assert len(rep) == 0 and len(grp) == 0


def test_group_frame_rows_is_groupby_ngroup():
    f = pd.DataFrame(
        {
            "a": ["x", "y", "x", None, "y", "x"],
            "b": [1.0, 1.0, 1.0, 2.0, np.nan, 1.0],
            "c": pd.Categorical(["p", "q", "p", "p", "q", "q"]),
        }
    )
    for by in ("a", ["a", "b"], ["c", "a"], ["b"]):
        for dropna in (True, False):
            codes, first = groups.group_frame_rows(f, by, dropna=dropna)
            want = f.groupby(by, sort=False, observed=True, dropna=dropna).ngroup()
            assert codes.tolist() == want.fillna(-1).astype(int).tolist(), (by, dropna)
            assert first.tolist() == [int(np.flatnonzero(codes == g)[0]) for g in range(len(first))]
    codes, first = groups.group_frame_rows(f, [])
    assert codes.tolist() == [0] * len(f) and first.tolist() == [0]


@pytest.mark.parametrize("size", [10, 10**7])  # a table of flags, then np.unique
def test_dense_unique_is_np_unique(size):
    key = np.random.default_rng(2).integers(0, 10, 40) * (size // 10)
    u, inv = groups.dense_unique(key, size)
    want_u, want_inv = np.unique(key, return_inverse=True)
    assert u.tolist() == want_u.tolist() and inv.tolist() == want_inv.ravel().tolist()
