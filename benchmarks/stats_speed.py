"""Speed of pbtools.stats on a TREC-sized design: 38 runs × 50 topics, all 703 pairs.

Times the vectorised paired bootstrap (B = 1000) against a naive per-pair, per-sample Python loop
measured in the same process on a subset of pairs and extrapolated to all pairs, and times
Tukey's HSD against a per-pair ``scipy.stats.studentized_range.sf`` baseline (also a subset,
extrapolated). Run: ``python benchmarks/stats_speed.py``.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

try:
    from pbtools.stats import discriminative_power, tukey_hsd
except ImportError:  # run from a checkout without installing: python benchmarks/stats_speed.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from pbtools.stats import discriminative_power, tukey_hsd

K, T, B, SEED = 38, 50, 1000, 0
SUBSET = 20  # pairs timed for the naive baselines


def synthetic() -> tuple[np.ndarray, pd.DataFrame]:
    rng = np.random.default_rng(SEED)
    x = rng.uniform(0.1, 0.5, K)[:, None] + rng.normal(0, 0.15, T)[None, :]
    x = np.clip(x + rng.normal(0, 0.1, (K, T)), 0, 1)
    frame = pd.DataFrame(
        {
            "name": np.repeat([f"run{i:02d}" for i in range(K)], T),
            "qid": np.tile([f"{q:03d}" for q in range(T)], K),
            "measure": "P@10",
            "value": x.ravel(),
        }
    )
    return x, frame


def naive_bootstrap(x: np.ndarray, pairs) -> list[float]:
    """Sakai's test as usually written: per pair, per bootstrap sample."""
    n = x.shape[1]
    idx = np.random.default_rng(SEED).integers(0, n, size=(B, n))
    out = []
    for a, b in pairs:
        z = x[a] - x[b]
        t = abs(z.mean() / (z.std(ddof=1) / np.sqrt(n)))
        w = z - z.mean()
        count = 0
        for row in idx:
            s = w[row]
            count += abs(s.mean() / (s.std(ddof=1) / np.sqrt(n))) >= t - 1e-9
        out.append(count / B)
    return out


def best_of(fn, repeat=3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    x, frame = synthetic()
    pairs = list(itertools.combinations(range(K), 2))
    n_pairs = len(pairs)
    print(f"design: {K} runs x {T} topics, {n_pairs} pairs, B = {B}")

    fast = best_of(lambda: discriminative_power(frame, B=B, seed=SEED))
    naive_sub = best_of(lambda: naive_bootstrap(x, pairs[:SUBSET]), repeat=1)
    naive = naive_sub / SUBSET * n_pairs
    d = discriminative_power(frame, B=B, seed=SEED)
    check = np.allclose(d["asl"].to_numpy()[:SUBSET], naive_bootstrap(x, pairs[:SUBSET]))
    print(f"bootstrap, vectorised : {fast:8.3f} s (all {n_pairs} pairs)")
    print(
        f"bootstrap, naive loop : {naive:8.3f} s (extrapolated from {SUBSET} pairs: "
        f"{naive_sub:.3f} s)"
    )
    print(f"speed-up              : {naive / fast:8.1f}x   (same ASLs on the subset: {check})")
    print(
        f"share significant     : {d.attrs['share_significant']:.3f}, required difference "
        f"{d.attrs['required_difference']:.4f}"
    )

    hsd = best_of(lambda: tukey_hsd(frame))
    h = tukey_hsd(frame)
    q = h["q"].to_numpy()
    t0 = time.perf_counter()
    ref = stats.studentized_range.sf(q[:SUBSET], K, h.attrs["df_resid"])
    scipy_sub = time.perf_counter() - t0
    scipy_all = scipy_sub / SUBSET * n_pairs
    err = np.max(np.abs(ref - h["p_value"].to_numpy()[:SUBSET]))
    print(f"tukey_hsd (two-way)   : {hsd:8.3f} s (all {n_pairs} pairs)")
    print(f"scipy sf per pair     : {scipy_all:8.3f} s (extrapolated from {SUBSET} pairs)")
    print(f"speed-up              : {scipy_all / hsd:8.1f}x   (max |p - scipy p| = {err:.1e})")


if __name__ == "__main__":
    main()
