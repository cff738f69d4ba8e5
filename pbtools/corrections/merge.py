"""The merge operator r' = r_p ∘ r_u (Lipani et al. 2015 §3, Eq. 2).

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
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd

from pbtools.frames import ranked, require_columns
from pbtools.pooling.dense import DenseRuns, row_chunks

__all__ = ["TIES", "weight_fraction", "merge", "merge_rows"]

TIES = ("exclusive_first", "lipani2015")


def weight_fraction(weight: float) -> tuple[int, int]:
    """α as an exact fraction a/b (b ≤ 10⁴), validated to lie in [0, 1]."""
    if not 0.0 <= float(weight) <= 1.0:
        raise ValueError(f"weight must lie in [0, 1], got {weight!r}")
    f = Fraction(float(weight)).limit_denominator(10_000)
    return f.numerator, f.denominator


def merge(
    pooled: pd.DataFrame,
    unpooled: pd.DataFrame,
    *,
    weight: float = 1.0,
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
    weight
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
    weight_fraction(weight)
    P, U = ranked(pooled), ranked(unpooled)
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
        enc, us[pu], ps[pp], weight=weight, tie=tie, depth=depth, ranks=True
    )
    i, j = np.nonzero(M >= 0)
    row, x = pair[i], M[i, j]
    tt = t[i]
    gdoc = enc.universe[enc.tstart[tt] + x] % enc.NG
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


def _merge_window(enc: DenseRuns, ru, rp, rt, W: int, N: int, lipani_tie: bool):
    """α = 1 merge of rows (u, p, t) looking only at the top W of both rankings.

    r' is the merge of two sorted sequences: p's exclusive documents in p order (key ρ_p) and
    p's shared documents in u order (key ρ_u). Every element with key ≤ W is in the window and
    every other one comes after all of them, so the rank of a window element is 1 + the number
    of window elements before it — counted with two cumulative sums, the tie rule deciding
    equal keys. Returns new ranks / docs / ρ_p / ρ_u of both sequences and the rows whose top N
    may extend beyond the window.
    """
    Dp = enc.D[rp, rt, :W]
    Du = enc.D[ru, rt, :W]
    u_of_p = enc.rank(ru[:, None], rt[:, None], Dp)
    ex = (Dp >= 0) & (u_of_p == 0)
    p_of_u = enc.rank(rp[:, None], rt[:, None], Du)
    sh = p_of_u > 0
    cex = np.cumsum(ex, axis=1, dtype=np.int32)
    csh = np.cumsum(sh, axis=1, dtype=np.int32)
    pos = np.arange(1, W + 1, dtype=np.int32)[None, :]
    # a shared document that moved up (ρ_u < ρ_p) precedes the exclusive one at its key
    shfirst = sh & (pos < p_of_u) if lipani_tie else np.zeros_like(sh)
    rank_ex = cex + (csh - sh) + shfirst
    rank_sh = csh + (cex - ex) + (ex & ~shfirst)
    count = cex[:, -1] + csh[:, -1]
    beyond = (count < N) & ((enc.length[rp, rt] > W) | (enc.length[ru, rt] > W))
    return (ex, rank_ex, Dp, pos, sh, rank_sh, Du, p_of_u), beyond


def _merge_general(enc: DenseRuns, ru, rp, rt, a: int, b: int, lipani_tie: bool):
    """Any α = a/b: sort p's documents by the exact integer key b·μ (full rankings)."""
    L = enc.L
    Dp = enc.D[rp, rt, :]
    ur = enc.rank(ru[:, None], rt[:, None], Dp).astype(np.int64)
    pr = np.broadcast_to(np.arange(1, L + 1, dtype=np.int64)[None, :], Dp.shape)
    shared = ur > 0
    key = np.where(shared, (b - a) * pr + a * ur, b * pr)
    code = np.where(shared, np.where(lipani_tie & (key < b * pr), 1, 3), 2)
    full = (key * 4 + code) * (L + 1) + pr
    full = np.where(Dp >= 0, full, np.iinfo(np.int64).max)
    order = np.argsort(full, axis=1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(1, L + 1)[None, :], axis=1)
    return rank, Dp, pr, ur


def merge_rows(
    enc: DenseRuns,
    pair_u: np.ndarray,
    pair_p: np.ndarray,
    *,
    weight: float = 1.0,
    tie: str = "exclusive_first",
    depth: int | None = None,
    ranks: bool = False,
):
    """Top ``depth`` of r' = r_p ∘ r_u for every pair (slot arrays) and topic both runs have.

    Returns ``(pair, t, M)`` with one row per (pair, topic): ``M`` (rows × depth, int32) the
    local docs of r' by rank (−1 padding); with ``ranks=True`` also ``PR`` and ``UR`` (ρ_p,
    ρ_u of those docs, 0 padding / absent).
    """
    if tie not in TIES:
        raise ValueError(f"tie must be one of {TIES}, got {tie!r}")
    a, b = weight_fraction(weight)
    N = enc.L if depth is None else max(1, min(int(depth), enc.L))
    lip = tie == "lipani2015"
    pair_u, pair_p = np.asarray(pair_u, np.int64), np.asarray(pair_p, np.int64)
    both = (enc.length[pair_u] > 0) & (enc.length[pair_p] > 0)  # pairs × T
    pair, t = np.nonzero(both)
    ru, rp = pair_u[pair], pair_p[pair]
    # one spare column N receives every element outside the top N (scatter without nonzero)
    M = np.full((len(pair), N + 1), -1, dtype=np.int32)
    PR = np.zeros((len(pair), N + 1), dtype=np.int32) if ranks else None
    UR = np.zeros((len(pair), N + 1), dtype=np.int32) if ranks else None

    def put(rows, sel, rk, docs, prv, urv):
        if isinstance(rows, slice):
            rows = np.arange(rows.start, rows.stop)
        cell = (rows * (N + 1))[:, None] + np.where(sel & (rk <= N), rk - 1, N)
        M.reshape(-1)[cell] = docs
        if ranks:
            PR.reshape(-1)[cell] = np.broadcast_to(prv, sel.shape)
            UR.reshape(-1)[cell] = np.broadcast_to(urv, sel.shape)

    if a == b:  # α = 1: windowed two-sequence merge, full width only for deficient rows
        W = min(enc.L, 2 * N)
        redo = []
        for sl in row_chunks(len(pair), W):
            (ex, rex, Dp, pos, sh, rsh, Du, pou), beyond = _merge_window(
                enc, ru[sl], rp[sl], t[sl], W, N, lip
            )
            put(sl, ex, rex, Dp, pos, 0)
            put(sl, sh, rsh, Du, pou, pos)
            redo.append(sl.start + np.flatnonzero(beyond))
        redo = np.concatenate(redo) if redo else np.zeros(0, np.int64)
        if len(redo) and W < enc.L:
            M[redo] = -1
            if ranks:
                PR[redo] = 0
                UR[redo] = 0
            for sl in row_chunks(len(redo), enc.L):
                rows = redo[sl]
                (ex, rex, Dp, pos, sh, rsh, Du, pou), _ = _merge_window(
                    enc, ru[rows], rp[rows], t[rows], enc.L, N, lip
                )
                put(rows, ex, rex, Dp, pos, 0)
                put(rows, sh, rsh, Du, pou, pos)
    else:
        for sl in row_chunks(len(pair), 3 * enc.L):
            rank, Dp, pr, ur = _merge_general(enc, ru[sl], rp[sl], t[sl], a, b, lip)
            put(sl, Dp >= 0, rank, Dp, pr, ur)
    M = M[:, :N]
    return (pair, t, M, PR[:, :N], UR[:, :N]) if ranks else (pair, t, M)
