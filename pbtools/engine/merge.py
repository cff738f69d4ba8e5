"""The merge operator r' = r_p ∘ r_u (Lipani et al. 2015 §3, Eq. 2) on the dense layout: the engine
behind :func:`pbtools.corrections.merge.merge`.

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

Implementation (:mod:`pbtools.engine.dense`): runs are encoded once into dense per-topic arrays —
``D[r, t, i]`` (the i-th document) and ``RK[r, t, x]`` (the rank of local document x). At α = 1
the r_p-exclusive documents keep their relative order (key ρ_p) and the shared ones come in r_u
order (key ρ_u), so r' is the merge of two sorted sequences and every element with key ≤ W lies
in the top W of one of the two rankings: laid out two slots per key (the tie rule ordering the
two), the window's elements in slot order are r' restricted to keys ≤ W, and a cumulative count
gives their ranks. A row is done when its window holds at least n elements; the windows grow
1.25·n → 2·n → full length for the rare rows that need it (:func:`windows`). Rows (u, p, t)
and (p, u, t) read the same two windows and membership lookups, so they are computed once for
both. Any other α sorts r_p's documents by the exact integer key b·μ (α = a/b, a rational
approximation with b ≤ 10⁴). All (pair, topic) rows are processed at once in memory-bounded
chunks — no Python loop over runs, topics or documents.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from pbtools.engine.dense import DenseRuns, row_chunks
from pbtools.errors import InputError

__all__ = ["TIES", "weight_fraction", "windows", "merge_rows"]

TIES = ("exclusive_first", "lipani2015")


def weight_fraction(weight: float) -> tuple[int, int]:
    """α as an exact fraction a/b (b ≤ 10⁴), validated to lie in [0, 1]."""
    if not 0.0 <= float(weight) <= 1.0:
        raise InputError(f"weight must lie in [0, 1], got {weight!r}")
    f = Fraction(float(weight)).limit_denominator(10_000)
    return f.numerator, f.denominator


def windows(N: int, L: int) -> list[int]:
    """The growing windows of the α = 1 merge for a top ``N`` out of rankings of length ``L``.

    A row is merged in the first window W whose elements (keys ≤ W) number at least N. The
    first window is N + max(N/4, 8): on TREC-2 (N = 100) 90 % of the rows fill their top N
    within 120, on a synthetic 127-run track all but 0.005 %; the rest are redone in 2·N
    (TREC-2: all but 0.25 %), then at full length.

    Examples
    --------
    >>> windows(100, 1000), windows(5, 1000), windows(100, 150)
    ([125, 200, 1000], [13, 1000], [125, 150])
    """
    out = [min(L, N + max(N // 4, 8)), min(L, 2 * N), L]
    return [w for k, w in enumerate(out) if k == 0 or w > out[k - 1]]


def _compact(p_doc, u_has, u_doc, p_has, p_of_u, N: int, lipani_tie: bool, ranks: bool):
    """Top N of the α = 1 merge of rows given by their window (rows × W): ``p_doc`` p's
    documents at ρ_p = 1..W (−1 padding) and whether u has them (``u_has``), ``u_doc`` u's
    documents at ρ_u = 1..W, whether p has them (``p_has``) and their ρ_p (``p_of_u``).

    r' is the merge of two sorted sequences: p's exclusive documents in p order (key ρ_p) and
    p's shared documents in u order (key ρ_u). Every element with key ≤ W is in the window and
    every other one comes after all of them. The window is laid out by key, two slots per key
    (the exclusive document at ρ_p = k and the shared one at ρ_u = k, in the tie rule's order),
    so r' restricted to the window is its occupied slots in order: the rank of an element is
    the cumulative count of occupied slots. Returns the entries of the top N — row, rank − 1,
    doc and, with ``ranks``, ρ_p and ρ_u — and the number of elements in the window per row.
    """
    n, W = p_doc.shape
    slots = np.empty((n, W, 2), dtype=np.int32)
    ex, sh = slots[:, :, 0], slots[:, :, 1]
    # written in place: d | −1 = −1 (the slot is empty), d | 0 = d (padding −1 stays −1)
    np.bitwise_or(p_doc, -u_has.view(np.int8), out=ex)
    np.bitwise_or(u_doc, p_has.view(np.int8) - np.int8(1), out=sh)
    first = None
    if lipani_tie:  # a shared document that moved up (ρ_u < ρ_p) precedes the exclusive one
        first = p_of_u > np.arange(1, W + 1, dtype=np.int32)[None, :]
        swap = np.bitwise_xor(ex, sh)  # the two slots swapped where ``first``: x ^ (x ^ y) = y
        swap &= -first.view(np.int8)
        ex ^= swap
        sh ^= swap
    slots = slots.reshape(n, 2 * W)
    occupied = slots >= 0
    rank = np.cumsum(occupied, axis=1, dtype=np.int32)
    f = np.flatnonzero(occupied & (rank <= N))
    # a row's entries are its first min(count, N) occupied slots, in rank order
    count = rank[:, -1]
    kept = np.minimum(count, N)
    row = np.repeat(np.arange(n), kept)
    pos = np.arange(len(f)) - np.repeat(np.cumsum(kept) - kept, kept)
    entries = [row, pos, slots.reshape(-1)[f]]
    if ranks:
        col = f - row * (2 * W)
        key = col // 2
        shared = (col % 2).astype(bool)
        if first is not None:
            shared ^= first[row, key]
        pr = np.where(shared, p_of_u[row, key], key + 1)
        entries += [pr, np.where(shared, key + 1, 0)]
    return entries, count


def _merge_pass(enc: DenseRuns, ru, rp, rt, todo, W: int, N: int, lip: bool, ranks: bool, put):
    """α = 1 merge of the rows ``todo`` in window W (:func:`_compact`); returns the rows whose
    top N may extend beyond the window (not written).

    Rows (u, p, t) and (p, u, t) read the same two windows and the same two membership
    lookups — p's documents in u and u's documents in p — so the rows are grouped by unordered
    pair (lo, hi, t) and every lookup is done once for both orientations.
    """
    if not len(todo):
        return todo
    lo, hi = np.minimum(ru[todo], rp[todo]), np.maximum(ru[todo], rp[todo])
    key = (lo * enc.R + hi) * enc.T + rt[todo]
    order = np.argsort(key, kind="stable")
    k = key[order]
    cid = np.cumsum(np.r_[True, k[1:] != k[:-1]]) - 1
    nc = int(cid[-1]) + 1
    srow = todo[order]
    flip = ru[srow] > rp[srow]  # u is the larger slot
    # per unordered pair: its row with u = lo and its row with u = hi (−1: not asked)
    orient = np.full((2, nc), -1, dtype=np.int64)
    orient[flip.astype(np.int64), cid] = srow
    c_row = np.where(orient[0] >= 0, orient[0], orient[1])
    c_lo, c_hi = np.minimum(ru[c_row], rp[c_row]), np.maximum(ru[c_row], rp[c_row])
    c_t = rt[c_row]
    redo = []
    for sl in row_chunks(nc, 8 * W):
        a, b, t = c_lo[sl], c_hi[sl], c_t[sl]
        A, B = enc.D[a, t, :W], enc.D[b, t, :W]
        rA = enc.rank(b[:, None], t[:, None], A)  # lo's documents in hi
        rB = enc.rank(a[:, None], t[:, None], B)  # hi's documents in lo
        inA, inB = rA > 0, rB > 0
        wide = (enc.length[a, t] > W) | (enc.length[b, t] > W)
        # u = lo, p = hi: p's documents B (lo has them: inB), u's documents A (in p: inA, ρ_p
        # rA); the converse for u = hi
        for rows, *args in (
            (orient[0, sl], B, inB, A, inA, rA),
            (orient[1, sl], A, inA, B, inB, rB),
        ):
            m = rows >= 0
            if not m.any():
                continue
            sub = None if m.all() else np.flatnonzero(m)
            if sub is not None:
                rows, args = rows[sub], [x[sub] for x in args]
            entries, count = _compact(*args, N, lip, ranks)
            beyond = (count < N) & (wide if sub is None else wide[sub])
            if W < enc.L and beyond.any():  # redone in a wider window: not written
                keep = ~beyond[entries[0]]
                entries = [e[keep] for e in entries]
                redo.append(rows[beyond])
            put(rows, entries)
    return np.concatenate(redo) if redo else todo[:0]


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

    Returns ``(pair, t, M)`` with one row per (pair, topic): ``M`` (rows × depth, int32,
    column-major) the local docs of r' by rank (−1 padding); with ``ranks=True`` also ``PR``
    and ``UR`` (ρ_p, ρ_u of those docs, 0 padding / absent).
    """
    if tie not in TIES:
        raise InputError(f"tie must be one of {TIES}, got {tie!r}")
    a, b = weight_fraction(weight)
    N = enc.L if depth is None else max(1, min(int(depth), enc.L))
    lip = tie == "lipani2015"
    pair_u, pair_p = np.asarray(pair_u, np.int64), np.asarray(pair_p, np.int64)
    both = (enc.length[pair_u] > 0) & (enc.length[pair_p] > 0)  # pairs × T
    pair, t = np.nonzero(both)
    ru, rp = pair_u[pair], pair_p[pair]
    # column-major (ranks outermost, as the scoring engine reads label matrices): cell
    # (row, rank) is element rank · rows + row of the transposed arrays
    n = len(pair)
    M = np.full((N, n), -1, dtype=np.int32).T
    PR = np.zeros((N, n), dtype=np.int32).T if ranks else None
    UR = np.zeros((N, n), dtype=np.int32).T if ranks else None

    def put(rows, entries):  # flat cell numbers: one index array, not two
        cell = entries[1] * n + rows[entries[0]]
        M.T.reshape(-1)[cell] = entries[2]
        if ranks:
            PR.T.reshape(-1)[cell] = entries[3]
            UR.T.reshape(-1)[cell] = entries[4]

    if a == b:  # α = 1: windowed two-sequence merge, wider only for deficient rows
        rkey = (ru * enc.R + rp) * enc.T + t
        _, todo, inv = np.unique(rkey, return_index=True, return_inverse=True)
        unique = todo
        for W in windows(N, enc.L):
            todo = _merge_pass(enc, ru, rp, t, todo, W, N, lip, ranks, put)
            if not len(todo):
                break
        if len(unique) < len(pair):  # a pair asked twice: its rows copied
            src = unique[inv.ravel()]
            M.T[:] = M.T[:, src]
            if ranks:
                PR.T[:], UR.T[:] = PR.T[:, src], UR.T[:, src]
    else:
        for sl in row_chunks(len(pair), 3 * enc.L):
            rows = np.arange(sl.start, sl.stop)
            put(rows, _merge_general(enc, ru[sl], rp[sl], t[sl], a, b, N, lip))
    return (pair, t, M, PR, UR) if ranks else (pair, t, M)
