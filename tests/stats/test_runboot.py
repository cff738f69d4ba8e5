"""stats.runboot (issue 30 item 5): the group matrices read without ``pivot_table`` and the
intervals from one quantile call per group give what the per-pair pandas path gave."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pbtools.stats import error_intervals
from pbtools.stats.runboot import _percentiles, _wide


def _pivoted(grp: pd.DataFrame, ests: list[str]):
    """The matrices as the pivot_table path built them (runs with every value, in order)."""
    wt = grp.pivot_table(index="name", columns="estimator", values="true", sort=False)
    we = grp.pivot_table(index="name", columns="estimator", values="estimate", sort=False)
    wt = wt.reindex(columns=ests).dropna()
    we = we.reindex(columns=ests).reindex(wt.index).dropna()
    wt = wt.loc[we.index]
    return wt.to_numpy(np.float64).T, we.to_numpy(np.float64).T


@pytest.mark.parametrize("seed", range(6))
def test_wide_is_the_pivot_of_the_complete_runs_in_first_appearance_order(seed):
    rng = np.random.default_rng(seed)
    rows = [
        (f"e{e}", f"r{r}", rng.integers(0, 5) / 4, rng.integers(0, 5) / 4)
        for e in range(3)
        for r in rng.permutation(9)
        if rng.random() > 0.15  # some runs lack an estimator: dropped
    ]
    f = pd.DataFrame(rows, columns=["estimator", "name", "true", "estimate"])
    f = f.sample(frac=1, random_state=seed).reset_index(drop=True)  # appearance order matters
    f.loc[f.index[:2], "estimate"] = np.nan  # a missing estimate drops its run too
    if seed % 2:
        f = pd.concat([f, f.iloc[:3].assign(estimate=0.5)], ignore_index=True)  # twice: mean
    ests = list(dict.fromkeys(f["estimator"].astype(str)))
    (t, e), (pt, pe) = _wide(f, ests), _pivoted(f, ests)
    np.testing.assert_array_equal(t, pt)
    np.testing.assert_array_equal(e, pe)


def test_percentiles_of_columns_with_and_without_missing_replicates():
    rng = np.random.default_rng(1)
    reps = rng.random((200, 5))
    reps[:50, 1] = np.nan  # some replicates undefined (a cut where b errs nowhere)
    reps[:, 2] = np.inf  # none defined
    reps[::3, 3] = -np.inf
    lo, hi = _percentiles(reps, 0.9)
    q = [(1 - 0.9) / 2, 1 - (1 - 0.9) / 2]
    for j in range(5):  # each column alone
        col = np.where(np.isfinite(reps[:, j]), reps[:, j], np.nan)
        want = [np.nan, np.nan] if np.isnan(col).all() else np.nanquantile(col, q)
        np.testing.assert_array_equal([lo[j], hi[j]], want)
    assert _percentiles(reps[:, 0], 0.9) == (lo[0], hi[0])


def test_groups_of_one_size_share_the_seed_draws_and_other_sizes_do_not_change():
    base = pd.DataFrame(
        {
            "name": list("abcdabcd"),
            "estimator": list("xxxxyyyy"),
            "true": [0.5, 0.4, 0.3, 0.2] * 2,
            "estimate": [0.4, 0.45, 0.1, 0.3, 0.3, 0.2, 0.35, 0.0],
        }
    )
    two = pd.concat([base.assign(g="u"), base.assign(g="v")], ignore_index=True)
    three = pd.concat([two, base.iloc[[0, 1, 2, 4, 5, 6]].assign(g="w")], ignore_index=True)
    err2, _ = error_intervals(two, ["g"], n_boot=200, seed=5)
    err3, _ = error_intervals(three, ["g"], n_boot=200, seed=5)
    alone, _ = error_intervals(base.iloc[[0, 1, 2, 4, 5, 6]], [], n_boot=200, seed=5)
    cols = ["mae_low", "mae_high", "sre_low", "sre_high"]
    u, v = err2[err2["g"] == "u"], err2[err2["g"] == "v"]
    np.testing.assert_array_equal(u[cols].to_numpy(), v[cols].to_numpy())
    np.testing.assert_array_equal(err3[cols].to_numpy()[:4], err2[cols].to_numpy())
    np.testing.assert_array_equal(err3[cols].to_numpy()[4:], alone[cols].to_numpy())
