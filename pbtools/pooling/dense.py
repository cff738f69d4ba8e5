"""Dense, integer, per-topic-local layout of runs and qrels variants (private; the hot path).

Every correction only needs the top max(n) (or top d) documents of each ranking plus membership
tests against whole runs, so runs are encoded once into dense arrays over a *per-topic local*
document universe (the documents that any encoded run retrieved for that topic):

``D[r, t, i]``    local doc id of run slot r's (i+1)-th document on topic t (−1 padding),
                  shape runs × topics × L (L = longest ranking);
``RK[r, t, x]``   1-based rank of local doc x in run r on topic t (0 when absent), shape runs ×
                  topics × U (U = largest per-topic universe; int16 when L < 2¹⁵). When that table
                  would exceed :data:`RANK_TABLE_BYTES` a sorted-key lookup replaces it;
``LAB[v, t, x]``  label class of x under qrels variant v: 1 relevant (label > 0), 0 judged
                  non-relevant (label = 0), −1 unjudged (absent or negative label, PROTOCOL 3).

On that layout the merge r' = r_p ∘ r_u at α = 1 is a few gathers and cumulative sums per
(pair, topic) row (:func:`merge_top`); P@n, P̄@n at every cut-off are cumulative counts of
gathered label classes (:func:`topic_scores`). Work is chunked by rows so that temporaries stay
below ~:data:`CHUNK` elements; there is no Python loop over topics, documents or runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

#: elements per chunk of (row × window) temporaries
CHUNK = 1 << 22
#: above this many bytes the dense rank table is replaced by a sorted-key lookup
RANK_TABLE_BYTES = 1_500_000_000

TIES = ("exclusive_first", "lipani2015")


def alpha_fraction(alpha: float) -> tuple[int, int]:
    """α as an exact fraction a/b (b ≤ 10⁴), validated to lie in [0, 1]."""
    if not 0.0 <= float(alpha) <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1], got {alpha!r}")
    f = Fraction(float(alpha)).limit_denominator(10_000)
    return f.numerator, f.denominator


def _codes_onto(s: pd.Series, cats: pd.Index) -> np.ndarray:
    """Codes of an encoded id column re-expressed in the dictionary ``cats`` (−1 if absent)."""
    own = s.cat.categories
    c = s.cat.codes.to_numpy().astype(np.int64)
    if own is cats or own.equals(cats):
        return c
    return cats.get_indexer(own).astype(np.int64)[c]


def _union(indexes: Sequence[pd.Index], sort: bool) -> pd.Index:
    first = indexes[0]
    if all(ix is first or ix.equals(first) for ix in indexes[1:]):
        return first
    out = first.append(list(indexes[1:])).unique()
    return out.sort_values() if sort else out


class DenseRuns:
    """Runs encoded into the dense per-topic layout (see the module docstring).

    ``frames``: run frames in trec order (``name``, ``qid``, ``docno``, ``rank``; ids
    dictionary-encoded). Each frame's runs get their own *slots* (a name occurring in two frames
    has two slots); ``slots(i)`` gives frame i's slot numbers and ``names`` their run names.
    """

    def __init__(self, frames: Sequence[pd.DataFrame]):
        frames = list(frames)
        from pbtools.frames import encode

        cols = {c: [encode(f[c]) for f in frames] for c in ("name", "qid", "docno")}
        self.qids = _union([s.cat.categories for s in cols["qid"]], sort=True)
        self.docs = _union([s.cat.categories for s in cols["docno"]], sort=False)
        T, NG = len(self.qids), max(len(self.docs), 1)
        slot_names, slot_of_row, self._slots = [], [], []
        for s in cols["name"]:
            c = s.cat.codes.to_numpy().astype(np.int64)
            used = np.flatnonzero(np.bincount(c, minlength=len(s.cat.categories)))
            loc = np.full(len(s.cat.categories), -1, dtype=np.int64)
            loc[used] = len(slot_names) + np.arange(len(used))
            self._slots.append(loc[used])
            slot_names.extend(np.asarray(s.cat.categories)[used].tolist())
            slot_of_row.append(loc[c])
        self.names = pd.Index(slot_names, dtype="str")
        r = np.concatenate(slot_of_row) if slot_of_row else np.zeros(0, np.int64)
        t = np.concatenate([_codes_onto(s, self.qids) for s in cols["qid"]])
        g = np.concatenate([_codes_onto(s, self.docs) for s in cols["docno"]])
        rank = np.concatenate([f["rank"].to_numpy().astype(np.int64) for f in frames])
        key = t * NG + g
        self.universe, inv = np.unique(key, return_inverse=True)
        self._tstart = np.searchsorted(self.universe, np.arange(T + 1) * NG)
        local = inv.ravel() - self._tstart[t]
        R = len(self.names)
        self.T, self.R, self.NG = T, R, NG
        self.U = max(int(np.diff(self._tstart).max()) if T else 0, 1)
        self.L = max(int(rank.max()) if len(rank) else 0, 1)
        self.D = np.full((R, T, self.L), -1, dtype=np.int32)
        self.D[r, t, rank - 1] = local
        self.length = np.zeros((R, T), dtype=np.int32)
        np.maximum.at(self.length, (r, t), rank.astype(np.int32))
        rdt = np.int16 if self.L < 2**15 else np.int32
        if R * T * self.U * np.dtype(rdt).itemsize <= RANK_TABLE_BYTES:
            self.RK = np.zeros((R, T, self.U), dtype=rdt)
            self.RK[r, t, local] = rank
            self._keys = None
        else:  # sorted (r, t, x) keys → rank
            self.RK = None
            k = (r * T + t) * self.U + local
            o = np.argsort(k)
            self._keys, self._vals = k[o], rank[o].astype(np.int32)

    def slots(self, frame: int = 0) -> np.ndarray:
        """Slot numbers of frame ``frame``'s runs (in sorted name order)."""
        return self._slots[frame]

    def rank(self, r, t, x) -> np.ndarray:
        """ρ(x, r) on topic t (0 when absent or x < 0); arguments broadcast."""
        x = np.asarray(x)
        if self.RK is not None:
            base = (np.asarray(r, np.int64) * self.T + t) * self.U
            out = np.take(self.RK.reshape(-1), base + np.maximum(x, 0)).astype(np.int32)
            out[x < 0] = 0
            return out
        r, t, x = np.broadcast_arrays(r, t, x)
        k = (r.astype(np.int64) * self.T + t) * self.U + x
        pos = np.searchsorted(self._keys, k)
        pc = np.minimum(pos, len(self._keys) - 1)
        hit = (self._keys[pc] == k) & (x >= 0)
        return np.where(hit, self._vals[pc], 0).astype(np.int32)

    def locate(self, qid: pd.Series, docno: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """(topic, local doc) of qrels rows; local doc −1 when no encoded run retrieved it."""
        from pbtools.frames import encode

        t = _codes_onto(encode(qid), self.qids)
        g = _codes_onto(encode(docno), self.docs)
        ok = (t >= 0) & (g >= 0)
        key = np.where(ok, t * self.NG + g, -1)
        pos = np.searchsorted(self.universe, key)
        pc = np.minimum(pos, max(len(self.universe) - 1, 0))
        hit = ok & (self.universe[pc] == key) if len(self.universe) else ok & False
        x = np.where(hit, pc - self._tstart[np.maximum(t, 0)], -1)
        return np.maximum(t, 0), x

    def label_classes(
        self, qrels: pd.DataFrame, key: str | None = None
    ) -> tuple[np.ndarray, pd.Index]:
        """``LAB`` (variants × topics × U, int8) from qrels, one variant per ``key`` value."""
        from pbtools.frames import encode

        if key is None or key not in qrels.columns:
            v, names = np.zeros(len(qrels), dtype=np.int64), pd.Index([""], dtype="str")
        else:
            k = encode(qrels[key])
            v, names = k.cat.codes.to_numpy().astype(np.int64), k.cat.categories
        lab = np.full((len(names), self.T, self.U), -1, dtype=np.int8)
        t, x = self.locate(qrels["qid"], qrels["docno"])
        lv = qrels["label"].to_numpy().astype(np.int64)
        cls = np.where(lv > 0, 1, np.where(lv == 0, 0, -1)).astype(np.int8)
        m = x >= 0
        lab[v[m], t[m], x[m]] = cls[m]
        return lab, names

    def top_counts(
        self, slots: np.ndarray, depth: int, groups: np.ndarray | None = None, n_groups: int = 1
    ) -> np.ndarray:
        """How many of the runs ``slots`` have x in their top ``depth``: (groups ×) T × U.

        ``groups`` (one group id per slot) makes one count table per group.
        """
        dd = min(int(depth), self.L)
        docs = self.D[slots, :, :dd]  # slots × T × d
        gid = np.zeros(len(slots), np.int64) if groups is None else np.asarray(groups, np.int64)
        ok = docs >= 0
        flat = ((gid[:, None, None] * self.T + np.arange(self.T)[None, :, None]) * self.U + docs)[
            ok
        ]
        dt = np.uint8 if len(np.unique(slots)) < 255 else np.int32
        out = np.zeros(n_groups * self.T * self.U, dtype=dt)
        cells, counts = np.unique(flat, return_counts=True)  # faster than np.add.at
        out[cells] = counts.astype(dt)
        out = out.reshape(n_groups, self.T, self.U)
        return out[0] if groups is None else out


# --------------------------------------------------------------------------------------------
# the merge r' = r_p ∘ r_u
# --------------------------------------------------------------------------------------------


def _row_chunks(n_rows: int, width: int):
    step = max(1, CHUNK // max(width, 1))
    for i in range(0, n_rows, step):
        yield slice(i, min(n_rows, i + step))


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
    alpha: float = 1.0,
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
    a, b = alpha_fraction(alpha)
    N = enc.L if depth is None else max(1, min(int(depth), enc.L))
    lip = tie == "lipani2015"
    pair_u, pair_p = np.asarray(pair_u, np.int64), np.asarray(pair_p, np.int64)
    both = (enc.length[pair_u] > 0) & (enc.length[pair_p] > 0)  # pairs × T
    pair, t = np.nonzero(both)
    ru, rp = pair_u[pair], pair_p[pair]
    M = np.full((len(pair), N), -1, dtype=np.int32)
    PR = np.zeros((len(pair), N), dtype=np.int32) if ranks else None
    UR = np.zeros((len(pair), N), dtype=np.int32) if ranks else None

    def put(rows, sel, rk, docs, prv, urv):
        i, j = np.nonzero(sel & (rk <= N))
        M[rows[i], rk[i, j] - 1] = docs[i, j]
        if ranks:
            PR[rows[i], rk[i, j] - 1] = np.broadcast_to(prv, sel.shape)[i, j]
            UR[rows[i], rk[i, j] - 1] = np.broadcast_to(urv, sel.shape)[i, j]

    if a == b:  # α = 1: windowed two-sequence merge, full width only for deficient rows
        W = min(enc.L, 2 * N)
        redo = []
        for sl in _row_chunks(len(pair), W):
            rows = np.arange(sl.start, sl.stop)
            (ex, rex, Dp, pos, sh, rsh, Du, pou), beyond = _merge_window(
                enc, ru[sl], rp[sl], t[sl], W, N, lip
            )
            put(rows, ex, rex, Dp, pos, 0)
            put(rows, sh, rsh, Du, pou, pos)
            redo.append(rows[beyond])
        redo = np.concatenate(redo) if redo else np.zeros(0, np.int64)
        if len(redo) and W < enc.L:
            M[redo] = -1
            if ranks:
                PR[redo] = 0
                UR[redo] = 0
            for sl in _row_chunks(len(redo), enc.L):
                rows = redo[sl]
                (ex, rex, Dp, pos, sh, rsh, Du, pou), _ = _merge_window(
                    enc, ru[rows], rp[rows], t[rows], enc.L, N, lip
                )
                put(rows, ex, rex, Dp, pos, 0)
                put(rows, sh, rsh, Du, pou, pos)
    else:
        for sl in _row_chunks(len(pair), 3 * enc.L):
            rows = np.arange(sl.start, sl.stop)
            rank, Dp, pr, ur = _merge_general(enc, ru[sl], rp[sl], t[sl], a, b, lip)
            put(rows, Dp >= 0, rank, Dp, pr, ur)
    return (pair, t, M, PR, UR) if ranks else (pair, t, M)


# --------------------------------------------------------------------------------------------
# P@n / P̄@n at every cut-off
# --------------------------------------------------------------------------------------------


def topic_scores(
    lab: np.ndarray,
    var: np.ndarray,
    t: np.ndarray,
    docs: np.ndarray,
    cutoffs: Sequence[int],
    kind: str = "P",
    p: float = 0.8,
    gone: np.ndarray | None = None,
):
    """Per row (variant, topic, ranked docs): relevant and judged non-relevant mass at cut-offs.

    ``docs``: rows × N local docs by rank (−1 padding); ``var``/``t``: the row's qrels variant
    and topic. Returns ``(P, A)`` (rows × cut-offs, float64): for ``kind="P"`` counts / n, for
    ``"RBP"`` sums of (1 − p)·p^(ρ−1). ``gone`` (rows × N bool) restricts both to those docs.
    """
    cut = np.asarray(cutoffs, dtype=np.int64)
    P = np.zeros((len(docs), len(cut)))
    A = np.zeros((len(docs), len(cut)))
    width = docs.shape[1] if docs.ndim == 2 else 0
    if width == 0 or len(docs) == 0:
        return P, A
    w = None if kind == "P" else (1 - p) * np.power(p, np.arange(width, dtype=np.float64))
    idx = np.minimum(cut, width) - 1
    for sl in _row_chunks(len(docs), width):
        x = docs[sl]
        c = lab[var[sl, None], t[sl, None], np.maximum(x, 0)]
        c = np.where(x >= 0, c, -1)
        rel, non = c == 1, c == 0
        if gone is not None:
            rel &= gone[sl]
            non &= gone[sl]
        if w is None:
            P[sl] = np.cumsum(rel, axis=1, dtype=np.int32)[:, idx] / cut
            A[sl] = np.cumsum(non, axis=1, dtype=np.int32)[:, idx] / cut
        else:
            P[sl] = np.cumsum(rel * w, axis=1)[:, idx]
            A[sl] = np.cumsum(non * w, axis=1)[:, idx]
    return P, A


def item_means(item: np.ndarray, vals: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Means over rows of each item (rows × cut-offs → items × cut-offs) and row counts."""
    cnt = np.bincount(item, minlength=n_items).astype(np.float64)
    out = np.zeros((n_items, vals.shape[1]))
    for j in range(vals.shape[1]):  # over the ≤ 5 cut-offs
        out[:, j] = np.bincount(item, weights=vals[:, j], minlength=n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        return out / cnt[:, None], cnt


def run_rows(
    enc: DenseRuns, slots: np.ndarray, N: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(item, topic) of every topic each run of ``slots`` has, and its top-N docs (rows × N)."""
    item, t = np.nonzero(enc.length[slots] > 0)
    return item, t, enc.D[slots[item], t, : min(N, enc.L)]
