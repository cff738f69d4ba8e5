"""The δ/Δ/λ indicators of Lipani et al. 2015 (§3.1-3.2, Algorithm 1, Eq. 3).

Per pooled run r_p and unpooled run r_u, with r' = r_p ∘ r_u (:mod:`pbtools.corrections.merge`):
δP@n = P@n(r') − P@n(r_p), δP̄@n = P̄@n(r') − P̄@n(r_p) and δk@n = −δP@n − δP̄@n (Algorithm 1;
the paper's Eq. 1 has a typo). Per unpooled run, the means over R_p: ΔP@n, ΔP̄@n, Δk@n, and
λ = k̄@n·(ΔP@n·P̄@n − ΔP̄@n·P@n) with P@n, P̄@n, k̄@n the unpooled run's own values.

Frames are small (one row per run or pair and measure); the scores in them come from the one
scoring engine (:func:`pbtools.measures.kernels.score`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.errors import InputError

__all__ = [
    "INDICATORS",
    "deltas",
    "delta_values",
    "indicators",
    "indicator_values",
    "fires",
]

INDICATORS = ("lambda", "dP", "dAntiP", "always")


def deltas(merged: pd.DataFrame, pooled: pd.DataFrame, keys: Sequence[str] = ()) -> pd.DataFrame:
    """δP@n, δP̄@n, δk@n of every merged run against its pooled run (Lipani Algorithm 1).

    Parameters
    ----------
    merged : DataFrame
        P@n / P̄@n of r' = r_p ∘ r_u: ``keys`` + ``unpooled``, ``name`` (r_p), ``measure``
        (the P@n name), ``P``, ``AntiP`` (per topic with ``qid``, or run means).
    pooled : DataFrame
        The same values of r_p itself: ``keys`` + ``name``, ``measure`` (+ ``qid``), ``P``,
        ``AntiP``. Keys present in both are joined on (e.g. ``left_out``: each r_u is compared
        with r_p scored on r_u's qrels).

    Returns
    -------
    DataFrame
        The merged keys + ``dP`` = P(r') − P(r_p), ``dAntiP`` = P̄(r') − P̄(r_p),
        ``dk`` = −dP − dAntiP.

    Examples
    --------
    >>> m = pd.DataFrame({"unpooled": "u", "name": "p", "measure": "P@2", "P": [0.5],
    ...                   "AntiP": [0.0]})
    >>> p = pd.DataFrame({"name": "p", "measure": "P@2", "P": [0.5], "AntiP": [0.5]})
    >>> deltas(m, p)[["dP", "dAntiP", "dk"]].to_numpy().tolist()
    [[0.0, -0.5, 0.5]]
    """
    on = [
        c for c in (*keys, "name", "qid", "measure") if c in merged.columns and c in pooled.columns
    ]
    m = merged.merge(pooled[[*on, "P", "AntiP"]], on=on, how="left", suffixes=("", "_p"))
    dP, dA, dk = delta_values(*(m[c].to_numpy() for c in ("P", "AntiP", "P_p", "AntiP_p")))
    m["dP"], m["dAntiP"], m["dk"] = dP, dA, dk
    return m.drop(columns=["P", "AntiP", "P_p", "AntiP_p"] + (["k"] if "k" in m else []))


def indicators(own: pd.DataFrame, d: pd.DataFrame, keys: Sequence[str] = ()) -> pd.DataFrame:
    """ΔP@n, ΔP̄@n, Δk@n (means of δ over R_p) and λ (Lipani Eq. 3) per unpooled run.

    Parameters
    ----------
    own : DataFrame
        The unpooled runs' own values: ``name``, ``measure``, ``P``, ``AntiP`` (+ ``keys``).
    d : DataFrame
        :func:`deltas` restricted to the pairs (r_u, r_p ∈ R_p): ``unpooled``, ``name``,
        ``measure``, ``dP``, ``dAntiP``, ``dk`` (+ ``keys``).

    Returns
    -------
    DataFrame
        ``keys`` + ``name`` (r_u), ``measure``, ``P``, ``AntiP``, ``k`` = 1 − P − P̄, ``dP``,
        ``dAntiP``, ``dk`` (the Δ means), ``n_pooled`` (|R_p|) and ``lam`` = k̄·(ΔP·P̄ − ΔP̄·P).
        Runs without any pooled run in R_p get NaN Δ's and λ.

    Examples
    --------
    >>> own = pd.DataFrame({"name": "u", "measure": "P@2", "P": [0.5], "AntiP": [0.0]})
    >>> d = pd.DataFrame({"unpooled": "u", "name": ["p1", "p2"], "measure": "P@2",
    ...                   "dP": 0.0, "dAntiP": -0.5, "dk": 0.5})
    >>> indicators(own, d)[["k", "dk", "n_pooled", "lam"]].to_numpy().tolist()
    [[0.5, 0.5, 2.0, 0.125]]
    """
    on = [*keys, "name", "measure"]
    o = own.copy()
    o["name"] = o["name"].astype(str)
    o["measure"] = o["measure"].astype(str)
    dd = d[[*keys, "measure"]].astype({"measure": str}).assign(name=d["unpooled"].astype(str))
    # each δ entry's (run, measure) row of ``own``: the Δ's are taken by indicator_values
    group = pd.MultiIndex.from_frame(o[on]).get_indexer(pd.MultiIndex.from_frame(dd[on]))
    ok = group >= 0
    vals = indicator_values(
        o["P"].to_numpy(),
        o["AntiP"].to_numpy(),
        *(d[c].to_numpy()[ok] for c in ("dP", "dAntiP", "dk")),
        group[ok],
    )
    for c in ("dP", "dAntiP", "dk", "n_pooled", "k", "lam"):
        o[c] = vals[c]
    return o


def delta_values(P, AntiP, P_pooled, AntiP_pooled):
    """δP = P(r') − P(r_p), δP̄ = P̄(r') − P̄(r_p) and δk = −δP − δP̄ (Algorithm 1), elementwise.

    Examples
    --------
    >>> [v.tolist() for v in delta_values(np.array([0.5]), np.array([0.0]), np.array([0.5]),
    ...                                   np.array([0.5]))]
    [[0.0], [-0.5], [0.5]]
    """
    dP = np.asarray(P, dtype=np.float64) - P_pooled
    dA = np.asarray(AntiP, dtype=np.float64) - AntiP_pooled
    return dP, dA, -dP - dA


def _lam(P, AntiP, dP, dAntiP):
    """k̄ = 1 − P − P̄ and λ = k̄·(ΔP·P̄ − ΔP̄·P) (Eq. 3), elementwise."""
    k = 1.0 - P - AntiP
    return k, k * (dP * AntiP - dAntiP * P)


def indicator_values(P, AntiP, dP, dAntiP, dk, group) -> dict:
    """:func:`indicators` on arrays: the unpooled runs' own ``P``, ``AntiP`` (one entry per
    (run, measure)) and the δ's of their pairs (:func:`delta_values`), ``group`` giving each δ
    entry's (run, measure) index.

    Returns a dict of arrays aligned with ``P``: ``k``, ``dP``, ``dAntiP``, ``dk`` (the means
    over R_p of the δ's that are not NaN), ``n_pooled`` (δ entries; NaN for a run without
    any, int64 when every run has some) and ``lam``. The means are pandas' group means of the
    entries in order (compensated summation), exactly as :func:`indicators` takes them.

    Examples
    --------
    >>> out = indicator_values(np.array([0.5]), np.array([0.0]), np.array([0.0, 0.0]),
    ...                        np.array([-0.5, -0.5]), np.array([0.5, 0.5]), np.array([0, 0]))
    >>> out["k"].tolist(), out["dk"].tolist(), out["n_pooled"].tolist(), out["lam"].tolist()
    ([0.5], [0.5], [2], [0.125])
    """
    P, AntiP = np.asarray(P, dtype=np.float64), np.asarray(AntiP, dtype=np.float64)
    n, group = len(P), np.asarray(group, dtype=np.int64)
    means = np.full((n, 3), np.nan)
    if len(group):
        d = pd.DataFrame({"dP": dP, "dAntiP": dAntiP, "dk": dk})
        agg = d.groupby(group, sort=True).mean()
        means[agg.index.to_numpy()] = agg.to_numpy()
    count = np.bincount(group, minlength=n)
    n_pooled = count if count.all() else np.where(count > 0, count, np.nan)
    k, lam = _lam(P, AntiP, means[:, 0], means[:, 1])
    return {
        "k": k,
        "dP": means[:, 0],
        "dAntiP": means[:, 1],
        "dk": means[:, 2],
        "n_pooled": n_pooled,
        "lam": lam,
    }


def fires(ind, indicator: str = "lambda") -> np.ndarray:
    """Whether the correction is triggered: λ > 0 (Eq. 3), ΔP > 0, ΔP̄ < 0 or always (§5.1).

    ``ind``: a frame of :func:`indicators` or the dict of :func:`indicator_values`.

    Examples
    --------
    >>> fires(pd.DataFrame({"lam": [0.1, -0.1], "dP": [0.0, 0.2], "dAntiP": [0.0, -0.1]}))
    array([ True, False])
    """
    if indicator == "lambda":
        return np.asarray(ind["lam"]) > 0
    if indicator == "dP":
        return np.asarray(ind["dP"]) > 0
    if indicator == "dAntiP":
        return np.asarray(ind["dAntiP"]) < 0
    if indicator == "always":
        return np.ones(len(ind["lam"]), dtype=bool)
    raise InputError(f"indicator must be one of {INDICATORS}, got {indicator!r}")
