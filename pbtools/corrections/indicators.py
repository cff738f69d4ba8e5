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

__all__ = ["INDICATORS", "deltas", "indicators", "fires"]

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
    m["dP"] = m["P"] - m["P_p"]
    m["dAntiP"] = m["AntiP"] - m["AntiP_p"]
    m["dk"] = -m["dP"] - m["dAntiP"]
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
    by = [*keys, "unpooled", "measure"]
    grouped = d.groupby(by, observed=True)
    agg = grouped[["dP", "dAntiP", "dk"]].mean()
    agg["n_pooled"] = grouped.size()
    agg = agg.reset_index().rename(columns={"unpooled": "name"})
    agg["name"] = agg["name"].astype(str)
    agg["measure"] = agg["measure"].astype(str)
    o = own.copy()
    o["name"] = o["name"].astype(str)
    o["measure"] = o["measure"].astype(str)
    out = o.merge(agg, on=[*keys, "name", "measure"], how="left")
    out["k"] = 1.0 - out["P"] - out["AntiP"]
    out["lam"] = out["k"] * (out["dP"] * out["AntiP"] - out["dAntiP"] * out["P"])
    return out


def fires(ind: pd.DataFrame, indicator: str = "lambda") -> np.ndarray:
    """Whether the correction is triggered: λ > 0 (Eq. 3), ΔP > 0, ΔP̄ < 0 or always (§5.1).

    Examples
    --------
    >>> fires(pd.DataFrame({"lam": [0.1, -0.1], "dP": [0.0, 0.2], "dAntiP": [0.0, -0.1]}))
    array([ True, False])
    """
    if indicator == "lambda":
        return (ind["lam"] > 0).to_numpy()
    if indicator == "dP":
        return (ind["dP"] > 0).to_numpy()
    if indicator == "dAntiP":
        return (ind["dAntiP"] < 0).to_numpy()
    if indicator == "always":
        return np.ones(len(ind), dtype=bool)
    raise ValueError(f"indicator must be one of {INDICATORS}, got {indicator!r}")
