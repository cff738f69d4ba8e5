"""The merge operator r' = r_p ∘ r_u and the δ/Δ/λ indicators (Lipani et al. 2015 §3).

Merge (Lipani Eq. 2)
--------------------
Every document d of the pooled run r_p gets the new rank key

    μ(d) = (1 − α)·ρ(d, r_p) + α·ρ(d, r_u)   if d ∈ r_u (a *shared* document)
    μ(d) = ρ(d, r_p)                          otherwise (an *r_p-exclusive* document)

and r' lists r_p's documents by ascending μ; documents of r_u absent from r_p are never added,
and r' exists only on the topics both runs have (PROTOCOL item 11). Ties in μ (a shared and an
exclusive document) follow ``tie``:

* ``"exclusive_first"`` (default, the paper's text): the r_p-exclusive document comes first;
* ``"lipani2015"`` (PROTOCOL item 11, the authors' code): the exclusive document comes first when
  the shared one *moved down* (μ > ρ(d, r_p)), the shared one comes first when it *moved up*.

Two shared documents with equal μ (possible for 0 < α < 1) keep their r_p order.

Implementation (:mod:`pbtools.pooling.dense`): runs are encoded once into dense per-topic arrays —
``D[r, t, i]`` (the i-th document) and ``RK[r, t, x]`` (the rank of local document x). At α = 1
the r_p-exclusive documents keep their relative order (key ρ_p) and the shared ones come in r_u
order (key ρ_u), so r' is the merge of two sorted sequences and the top n of r' holds at most the
first n of each: membership is a gather ``RK[u, t, D[p, t, :W]] > 0`` over a window W = 2n of
both rankings, and the rank of each window element in r' is its index in its own sequence plus
the number of elements of the other sequence before it (two cumulative sums, the tie rule
deciding equal keys). Rows whose top n may reach past the window (rare) are redone at full
length. Any other α sorts r_p's documents by the exact integer key b·μ (α = a/b, a rational
approximation with b ≤ 10⁴). All (pair, topic) rows are processed at once in memory-bounded
chunks — no Python loop over runs, topics or documents.

Indicators (Lipani §3.1-3.2, Algorithm 1, Eq. 3)
------------------------------------------------
Per pooled run and topic / run: δP@n = P@n(r') − P@n(r_p), δP̄@n = P̄@n(r') − P̄@n(r_p) and
δk@n = −δP@n − δP̄@n (Algorithm 1; the paper's Eq. 1 has a typo). Per unpooled run, the means
over R_p: ΔP@n, ΔP̄@n, Δk@n, and λ = k̄@n·(ΔP@n·P̄@n − ΔP̄@n·P@n) with P@n, P̄@n, k̄@n the
unpooled run's own values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.frames import as_run, is_trec_ordered, require_columns
from pbtools.pooling.dense import DenseRuns, alpha_fraction, merge_rows

__all__ = [
    "TIES",
    "INDICATORS",
    "merge",
    "precision_at",
    "run_means",
    "round_half_up",
    "deltas",
    "indicators",
    "fires",
]

TIES = ("exclusive_first", "lipani2015")
INDICATORS = ("lambda", "dP", "dAntiP", "always")

# --------------------------------------------------------------------------------------------
# small numeric helpers
# --------------------------------------------------------------------------------------------


def round_half_up(x, decimals: int = 4):
    """Round half away from zero to ``decimals`` places, robust to binary noise (PROTOCOL 10).

    ``0.00125 → 0.0013`` (numpy's ``round`` gives ``0.0012``). Values are first snapped to 9
    significant decimals so that a mean such as ``0.1235`` stored as ``0.12349999…`` rounds up,
    as it does in decimal arithmetic. Works on scalars, arrays and Series (NaN stays NaN).
    """
    arr = np.asarray(x, dtype=np.float64)
    scale = 10.0**decimals
    snapped = np.round(arr * scale, 9 - decimals if decimals < 9 else 0)
    out = np.sign(snapped) * np.floor(np.abs(snapped) + 0.5) / scale
    if isinstance(x, pd.Series):
        return pd.Series(out, index=x.index, name=x.name)
    return out if out.ndim else float(out)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for every (s, l), vectorised."""
    lengths = lengths.astype(np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offs = np.repeat(starts.astype(np.int64) - np.cumsum(lengths) + lengths, lengths)
    return offs + np.arange(total, dtype=np.int64)


_alpha_fraction = alpha_fraction


# --------------------------------------------------------------------------------------------
# the merge operator
# --------------------------------------------------------------------------------------------


def _sorted_runs(runs: pd.DataFrame) -> pd.DataFrame:
    require_columns(runs, ("name", "qid", "docno", "score"), "run")
    if "rank" in runs.columns and is_trec_ordered(runs):
        return runs
    return as_run(runs)


def merge(
    pooled: pd.DataFrame,
    unpooled: pd.DataFrame,
    *,
    alpha: float = 1.0,
    tie: str = "exclusive_first",
    depth: int | None = None,
    pairs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """r' = r_p ∘ r_u for every (unpooled run, pooled run, topic) at once (Lipani Eq. 2).

    Parameters
    ----------
    pooled, unpooled
        Run frames (``name``, ``qid``, ``docno``, ``score``, ``rank``); ranks are taken from
        trec order (the frames are re-sorted if they are not in it). ``unpooled`` may hold many
        runs (leave-one-out).
    alpha
        Weight of r_u's rank in μ, 0 ≤ α ≤ 1 (α = 0 returns r_p unchanged; the paper uses 1).
    tie
        ``"exclusive_first"`` (default, the paper's text) or ``"lipani2015"`` (PROTOCOL 11).
    depth
        Keep only the top ``depth`` of each r' (the largest cut-off needed); ``None`` keeps all.
    pairs
        Optional frame with columns ``unpooled`` and ``name`` (pooled run) restricting which
        pairs are merged; default: every pair whose names differ.

    Returns
    -------
    DataFrame with ``unpooled`` (id: r_u's name), ``name`` (id: r_p's name), ``qid``, ``docno``,
    ``rank`` (int32, the rank in r'), ``p_rank`` (ρ(d, r_p)), ``u_rank`` (ρ(d, r_u), 0 when d ∉
    r_u), sorted by (unpooled, name, qid, rank). Topics that r_u lacks are absent.

    The work is done by :func:`pbtools.pooling.dense.merge_rows` on the dense per-topic layout.
    """
    if tie not in TIES:
        raise ValueError(f"tie must be one of {TIES}, got {tie!r}")
    _alpha_fraction(alpha)
    P, U = _sorted_runs(pooled), _sorted_runs(unpooled)
    enc = DenseRuns([P, U])
    ps, us = enc.slots(0), enc.slots(1)
    p_names, u_names = enc.names[ps], enc.names[us]
    if pairs is None:
        pu, pp = np.meshgrid(np.arange(len(us)), np.arange(len(ps)), indexing="ij")
        pu, pp = pu.ravel(), pp.ravel()
        keep = u_names.to_numpy()[pu] != p_names.to_numpy()[pp]
        pu, pp = pu[keep], pp[keep]
    else:
        require_columns(pairs, ("unpooled", "name"), "pairs")
        pu = u_names.get_indexer(pd.Index(pairs["unpooled"].astype(str), dtype="str"))
        pp = p_names.get_indexer(pd.Index(pairs["name"].astype(str), dtype="str"))
        ok = (pu >= 0) & (pp >= 0)
        pu, pp = pu[ok].astype(np.int64), pp[ok].astype(np.int64)
    o = np.lexsort((pp, pu))
    pu, pp = pu[o], pp[o]
    pair, t, M, PR, UR = merge_rows(
        enc, us[pu], ps[pp], alpha=alpha, tie=tie, depth=depth, ranks=True
    )
    i, j = np.nonzero(M >= 0)
    row, x = pair[i], M[i, j]
    tt = t[i]
    gdoc = enc.universe[enc._tstart[tt] + x] % enc.NG
    return pd.DataFrame(
        {
            "unpooled": pd.Categorical.from_codes(pu[row], dtype=pd.CategoricalDtype(u_names)),
            "name": pd.Categorical.from_codes(pp[row], dtype=pd.CategoricalDtype(p_names)),
            "qid": pd.Categorical.from_codes(tt, dtype=pd.CategoricalDtype(enc.qids)),
            "docno": pd.Categorical.from_codes(gdoc, dtype=pd.CategoricalDtype(enc.docs)),
            "rank": (j + 1).astype(np.int32),
            "p_rank": PR[i, j].astype(np.int32),
            "u_rank": UR[i, j].astype(np.int32),
        }
    )


# --------------------------------------------------------------------------------------------
# P@n / AntiP@n kernel and run means
# --------------------------------------------------------------------------------------------


def _group_codes(df: pd.DataFrame, cols: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Dense group index of ``df`` over ``cols`` and the frame of unique groups (sorted)."""
    parts, sizes = [], []
    for c in cols:
        s = df[c]
        if isinstance(s.dtype, pd.CategoricalDtype):
            parts.append(s.cat.codes.to_numpy().astype(np.int64))
            sizes.append(len(s.cat.categories))
        else:
            u, inv = np.unique(s.to_numpy(), return_inverse=True)
            parts.append(inv.astype(np.int64).ravel())
            sizes.append(len(u))
    key = np.zeros(len(df), dtype=np.int64)
    for p, n in zip(parts, sizes, strict=True):
        key = key * max(n, 1) + p
    uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
    groups = df.iloc[first][list(cols)].reset_index(drop=True)
    return inv.ravel(), groups


def precision_at(
    judged: pd.DataFrame,
    cutoffs: Sequence[int],
    keys: Sequence[str] = (),
    weights: str = "precision",
    p: float = 0.8,
) -> pd.DataFrame:
    """Per-topic P@n, AntiP@n and k@n for several cut-offs at once (Lipani §3).

    P@n = |{d: label(d) > 0, ρ(d) ≤ n}| / n, AntiP@n (P̄@n) = |{d: label(d) = 0, ρ(d) ≤ n}| / n,
    k@n = 1 − P@n − P̄@n (unjudged or missing ranks; negative labels count as unjudged,
    PROTOCOL item 3). trec_eval semantics: a run with fewer than n documents is divided by n.
    With ``weights="rbp"`` the rank weights are RBP's (1 − p)·p^(ρ−1) instead of 1/n (P is then
    RBP@n's base, AntiP its judged-non-relevant mass and k its residual within the top n).

    ``judged``: ``name``, ``qid``, ``rank``, ``label`` (nullable; NA = unjudged) + ``keys``.
    Returns ``keys`` + ``name``, ``qid``, ``n`` (int), ``P``, ``AntiP``, ``k`` (float64), one row
    per (keys, name, qid, n), sorted by those columns.
    """
    require_columns(judged, ("name", "qid", "rank", "label"), "judged run")
    cutoffs = sorted({int(n) for n in cutoffs})
    cols = [*keys, "name", "qid"]
    g, groups = _group_codes(judged, cols)
    rank = judged["rank"].to_numpy()
    lab = judged["label"]
    known = ~lab.isna().to_numpy()
    labv = lab.to_numpy(dtype=np.float64, na_value=-1.0)
    rel = known & (labv > 0)
    non = known & (labv == 0)
    ng = len(groups)
    out = []
    for n in cutoffs:
        top = rank <= n
        if weights == "rbp":
            w = np.where(top, (1 - p) * np.power(p, rank - 1.0), 0.0)
        else:
            w = top / float(n)
        P = np.bincount(g, weights=w * rel, minlength=ng)
        A = np.bincount(g, weights=w * non, minlength=ng)
        total = 1.0 if weights != "rbp" else 1.0 - p**n
        blk = groups.copy()
        blk["n"] = n
        blk["P"], blk["AntiP"], blk["k"] = P, A, total - P - A
        out.append(blk)
    res = pd.concat(out, ignore_index=True)
    return res.sort_values([*keys, "name", "qid", "n"], kind="stable").reset_index(drop=True)


def run_means(
    per_topic: pd.DataFrame,
    keys: Sequence[str] = (),
    values: Sequence[str] = ("P", "AntiP", "k"),
    topics=None,
    decimals: int | None = None,
    all_topics: bool = False,
) -> pd.DataFrame:
    """Run-level means over topics of per-topic values (trec_eval ``all`` line).

    ``per_topic``: ``keys`` + ``name``, ``qid``, ``n`` + ``values``; ``topics``: optional
    collection of qids to average over (default: the topics present, i.e. those the run
    retrieved for — trec_eval without ``-c``). ``all_topics=True`` divides the sums by the
    number of ``topics`` instead (a topic the run lacks counts 0, trec_eval ``-c``).
    ``decimals``: round every mean half-up (PROTOCOL item 10: 4) — then k is recomputed as
    1 − P − AntiP from the rounded values.
    Returns ``keys`` + ``name``, ``n`` + ``values``.
    """
    df = per_topic
    if topics is not None:
        df = df[df["qid"].astype(str).isin(pd.Index(list(map(str, topics))))]
    by = [*keys, "name", "n"]
    grp = df.groupby(by, observed=True, sort=True)[list(values)]
    if all_topics:
        if topics is None:
            raise ValueError("all_topics=True needs the topics to average over")
        nt = len(set(map(str, topics)))
        out = (grp.sum() / nt).reset_index()
        if "k" in values:
            out["k"] = out["k"] + (1.0 - grp.size().to_numpy() / nt)
    else:
        out = grp.mean().reset_index()
    if decimals is not None:
        for v in values:
            if v != "k":
                out[v] = round_half_up(out[v].to_numpy(), decimals)
        if "k" in values and "P" in values and "AntiP" in values:
            out["k"] = 1.0 - out["P"] - out["AntiP"]
    return out


# --------------------------------------------------------------------------------------------
# indicators
# --------------------------------------------------------------------------------------------


def deltas(merged: pd.DataFrame, pooled: pd.DataFrame, keys: Sequence[str] = ()) -> pd.DataFrame:
    """δP@n, δP̄@n, δk@n of every merged run against its pooled run (Lipani Algorithm 1).

    ``merged``: P/AntiP values of r' = r_p ∘ r_u — ``keys`` + ``unpooled``, ``name`` (r_p), ``n``,
    ``P``, ``AntiP`` (per topic with ``qid``, or run means); ``pooled``: the same values of r_p
    itself — ``keys`` + ``name``, ``n`` (+ ``qid``), ``P``, ``AntiP``. Keys present in both are
    joined on (e.g. ``left_out``: each r_u is compared with r_p scored on r_u's qrels).
    Returns the merged keys + ``dP`` = P(r') − P(r_p), ``dAntiP`` = P̄(r') − P̄(r_p),
    ``dk`` = −dP − dAntiP (the paper's Eq. 1 typo corrected).
    """
    on = [c for c in (*keys, "name", "qid", "n") if c in merged.columns and c in pooled.columns]
    m = merged.merge(pooled[[*on, "P", "AntiP"]], on=on, how="left", suffixes=("", "_p"))
    m["dP"] = m["P"] - m["P_p"]
    m["dAntiP"] = m["AntiP"] - m["AntiP_p"]
    m["dk"] = -m["dP"] - m["dAntiP"]
    return m.drop(columns=["P", "AntiP", "P_p", "AntiP_p"] + (["k"] if "k" in m else []))


def indicators(own: pd.DataFrame, d: pd.DataFrame, keys: Sequence[str] = ()) -> pd.DataFrame:
    """ΔP@n, ΔP̄@n, Δk@n (means of δ over R_p) and λ (Lipani Eq. 3) per unpooled run.

    ``own``: the unpooled runs' own values — ``name``, ``n``, ``P``, ``AntiP`` (+ ``keys``);
    ``d``: :func:`deltas` output restricted to the pairs (r_u, r_p ∈ R_p) — ``unpooled``,
    ``name``, ``n``, ``dP``, ``dAntiP``, ``dk`` (+ ``keys``). λ = k̄·(ΔP·P̄ − ΔP̄·P) with
    k̄ = 1 − P − P̄. Returns ``keys`` + ``name`` (r_u), ``n``, ``P``, ``AntiP``, ``k``, ``dP``,
    ``dAntiP``, ``dk`` (the Δ means), ``n_pooled`` (|R_p|) and ``lam``. Runs without any pooled
    run in R_p get NaN Δ's and λ.
    """
    by = [*keys, "unpooled", "n"]
    agg = d.groupby(by, observed=True)[["dP", "dAntiP", "dk"]].mean()
    agg["n_pooled"] = d.groupby(by, observed=True).size()
    agg = agg.reset_index().rename(columns={"unpooled": "name"})
    agg["name"] = agg["name"].astype(str)
    o = own.copy()
    o["name"] = o["name"].astype(str)
    out = o.merge(agg, on=[*keys, "name", "n"], how="left")
    out["k"] = 1.0 - out["P"] - out["AntiP"]
    out["lam"] = out["k"] * (out["dP"] * out["AntiP"] - out["dAntiP"] * out["P"])
    return out


def fires(ind: pd.DataFrame, indicator: str = "lambda") -> np.ndarray:
    """Whether the correction is triggered: λ > 0 (Eq. 3), ΔP > 0, ΔP̄ < 0 or always (§5.1)."""
    if indicator == "lambda":
        return (ind["lam"] > 0).to_numpy()
    if indicator == "dP":
        return (ind["dP"] > 0).to_numpy()
    if indicator == "dAntiP":
        return (ind["dAntiP"] < 0).to_numpy()
    if indicator == "always":
        return np.ones(len(ind), dtype=bool)
    raise ValueError(f"indicator must be one of {INDICATORS}, got {indicator!r}")
