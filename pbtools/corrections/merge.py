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


def windows(N: int, L: int) -> list[int]:
    """The growing windows of the α = 1 merge for a top ``N`` out of rankings of length ``L``.

    A row is merged in the first window W whose elements (keys ≤ W) number at least N; the rows
    of real runs almost always fill their top N within 1.25·N (two rankings of one topic share
    most of their tops), the rest are redone in 2·N, then at full length.
    """
    out = [min(L, N + max(N // 4, 8)), min(L, 2 * N), L]
    return [w for k, w in enumerate(out) if k == 0 or w > out[k - 1]]


def _merge_window(enc: DenseRuns, ru, rp, rt, W: int, N: int, lipani_tie: bool, ranks: bool):
    """α = 1 merge of rows (u, p, t) looking only at the top W of both rankings.

    r' is the merge of two sorted sequences: p's exclusive documents in p order (key ρ_p) and
    p's shared documents in u order (key ρ_u). Every element with key ≤ W is in the window and
    every other one comes after all of them. The window is laid out by key, two slots per key
    (the exclusive document at ρ_p = k and the shared one at ρ_u = k, in the tie rule's order),
    so r' restricted to the window is its occupied slots in order: the rank of an element is
    the cumulative count of occupied slots. Returns the entries of the top N — row, rank − 1,
    doc and, with ``ranks``, ρ_p and ρ_u — and the rows whose top N may extend beyond the
    window.
    """
    n = len(ru)
    Dp = enc.D[rp, rt, :W]
    Du = enc.D[ru, rt, :W]
    ex_doc = np.where(enc.rank(ru[:, None], rt[:, None], Dp) == 0, Dp, -1)  # padding stays −1
    p_of_u = enc.rank(rp[:, None], rt[:, None], Du)
    sh_doc = np.where(p_of_u > 0, Du, -1)
    slots = np.empty((n, W, 2), dtype=np.int32)
    if lipani_tie:  # a shared document that moved up (ρ_u < ρ_p) precedes the exclusive one
        first = p_of_u > np.arange(1, W + 1, dtype=np.int32)[None, :]
        slots[:, :, 0] = np.where(first, sh_doc, ex_doc)
        slots[:, :, 1] = np.where(first, ex_doc, sh_doc)
    else:
        first = None
        slots[:, :, 0] = ex_doc
        slots[:, :, 1] = sh_doc
    slots = slots.reshape(n, 2 * W)
    occupied = slots >= 0
    rank = np.cumsum(occupied, axis=1, dtype=np.int32)
    count = rank[:, -1]
    beyond = (count < N) & ((enc.length[rp, rt] > W) | (enc.length[ru, rt] > W))
    f = np.flatnonzero(occupied & (rank <= N))
    row, col = np.divmod(f, 2 * W)
    entries = [row, rank.reshape(-1)[f] - 1, slots.reshape(-1)[f]]
    if ranks:
        key = col // 2
        shared = (col % 2).astype(bool)
        if first is not None:
            shared ^= first[row, key]
        pr = np.where(shared, p_of_u[row, key], key + 1)
        entries += [pr, np.where(shared, key + 1, 0)]
    return entries, beyond


def _merge_general(enc: DenseRuns, ru, rp, rt, a: int, b: int, N: int, lipani_tie: bool):
    """Any α = a/b: sort p's documents by the exact integer key b·μ (full rankings); the
    entries of the top N as :func:`_merge_window`."""
    L = enc.L
    Dp = enc.D[rp, rt, :]
    ur = enc.rank(ru[:, None], rt[:, None], Dp).astype(np.int64)
    pr = np.broadcast_to(np.arange(1, L + 1, dtype=np.int64)[None, :], Dp.shape)
    shared = ur > 0
    key = np.where(shared, (b - a) * pr + a * ur, b * pr)
    code = np.where(shared, np.where(lipani_tie & (key < b * pr), 1, 3), 2)
    full = (key * 4 + code) * (L + 1) + pr
    full = np.where(Dp >= 0, full, np.iinfo(np.int64).max)
    order = np.argsort(full, axis=1)[:, :N]
    row = np.repeat(np.arange(len(ru)), order.shape[1])
    j = np.tile(np.arange(order.shape[1]), len(ru))
    x = order.reshape(-1)
    doc = Dp[row, x]
    ok = doc >= 0
    row, j, x = row[ok], j[ok], x[ok]
    return [row, j, doc[ok], x + 1, ur[row, x]]


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
    M = np.full((len(pair), N), -1, dtype=np.int32)
    PR = np.zeros((len(pair), N), dtype=np.int32) if ranks else None
    UR = np.zeros((len(pair), N), dtype=np.int32) if ranks else None

    def put(rows, entries):
        i, j = rows[entries[0]], entries[1]
        M[i, j] = entries[2]
        if ranks:
            PR[i, j] = entries[3]
            UR[i, j] = entries[4]

    if a == b:  # α = 1: windowed two-sequence merge, wider only for deficient rows
        todo = np.arange(len(pair))
        for W in windows(N, enc.L):
            redo = []
            for sl in row_chunks(len(todo), 2 * W):
                rows = todo[sl]
                entries, beyond = _merge_window(enc, ru[rows], rp[rows], t[rows], W, N, lip, ranks)
                if W < enc.L and beyond.any():  # redone in the next window: not written
                    keep = ~beyond[entries[0]]
                    entries = [e[keep] for e in entries]
                    redo.append(rows[beyond])
                put(rows, entries)
            todo = np.concatenate(redo) if redo else todo[:0]
            if not len(todo):
                break
    else:
        for sl in row_chunks(len(pair), 3 * enc.L):
            rows = np.arange(sl.start, sl.stop)
            put(rows, _merge_general(enc, ru[sl], rp[sl], t[sl], a, b, N, lip))
    return (pair, t, M, PR, UR) if ranks else (pair, t, M)
