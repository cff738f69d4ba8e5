"""Webber & Park Algorithm 1: the distinct rankings among the (R_p pair, topic) rows re-scored
(:func:`pbtools.corrections.webber_loss.loss_rows`), and the exact row grouping behind them.

Many pairs (u, p) withdraw the same documents from p's ranking on a topic and leave the same
relevance set; the engine scores each such ranking once.
"""

from __future__ import annotations

import numpy as np

from pbtools.corrections.problem import Problem
from pbtools.pooling.dense import row_chunks

__all__ = ["distinct_rows", "group_rows", "dense_unique", "same_labels"]


def distinct_rows(problem: Problem, p, t, var, hist, lost_at, lost_j, width: int):
    """The distinct re-scored rankings among rows.

    Two rows are the same ranking when they rank the same run on the same topic, their labels
    of its top ``width`` agree (the same variant, or both agree with the reference variant
    there), they lose the same ranks and their relevance sets have the same histogram. Exact:
    the rows are compared on those keys (:func:`group_rows`).

    Parameters
    ----------
    problem : Problem
        The estimation problem.
    p, t, var : ndarray
        Per row: the pooled run (slot) re-scored, the topic and the variant of its labels.
    hist : ndarray
        rows × labels: each row's inner relevance set Q_u,p.
    lost_at, lost_j : ndarray
        The lost documents: row and rank − 1.
    width : int
        How much of each ranking is scored.

    Returns
    -------
    rep, grp : ndarray
        One representative row per distinct ranking (its first row), and each row's index
        into ``rep``.

    Examples
    --------
    >>> from pbtools.corrections.problem import from_frames
    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("ab"), "label": [1, 0]})
    >>> p1 = pd.DataFrame({"name": "p1", "qid": "1", "docno": list("ab"), "score": [2, 1]})
    >>> pb = from_frames(p1, p1.assign(name="u"), qrels, depth=2)
    >>> p, t, var = np.array([0, 0, 0]), np.array([0, 0, 0]), np.array([0, 0, 0])
    >>> hist = np.array([[1, 1], [1, 1], [1, 0]])
    >>> rep, grp = distinct_rows(pb, p, t, var, hist, np.array([0, 1, 2]), np.array([1, 1, 0]), 2)
    >>> rep.tolist(), grp.tolist()
    ([0, 2], [0, 0, 1])
    """
    enc = problem.enc
    n = len(p)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # the labels of p's top ``width`` under ``var``: the reference variant's where they agree
    trip = (var.astype(np.int64) * enc.R + p) * enc.T + t
    ut, tinv = dense_unique(trip, len(problem.lab) * enc.R * enc.T)
    labkey = np.where(same_labels(problem, ut, width)[tinv], -1, var.astype(np.int64))
    # the lost ranks as a bitset (distinct bits: their sum is their union)
    n_words = (width + 63) // 64
    words = np.zeros(n * n_words, dtype=np.uint64)
    if len(lost_at):
        f = lost_at * n_words + lost_j // 64
        bit = np.left_shift(np.uint64(1), (lost_j % 64).astype(np.uint64))
        order = np.argsort(f, kind="stable")
        f, bit = f[order], bit[order]
        head = np.flatnonzero(np.r_[True, f[1:] != f[:-1]])
        words[f[head]] = np.add.reduceat(bit, head)
    cols = [
        (p.astype(np.int64) * enc.T + t) * (len(problem.lab) + 1) + labkey + 1,
        *words.reshape(n, n_words).view(np.int64).T,
        *np.asarray(hist, dtype=np.int64).T,
    ]
    return group_rows(cols)


def group_rows(cols) -> tuple[np.ndarray, np.ndarray]:
    """Rows with equal values in every column of ``cols``.

    The rows are grouped by a 64-bit mix of their columns and the groups then checked column by
    column against their first row; should two different rows ever share a mix, the rows are
    sorted on the columns themselves instead: exact either way.

    Parameters
    ----------
    cols : list of ndarray
        int64 columns of one length.

    Returns
    -------
    rep, grp : ndarray
        The first row of each group, in row order, and each row's group (an index into
        ``rep``).

    Examples
    --------
    >>> rep, grp = group_rows([np.array([3, 1, 3, 1]), np.array([0, 5, 0, 6])])
    >>> rep.tolist(), grp.tolist()
    ([0, 1, 3], [0, 1, 0, 2])
    """
    n = len(cols[0])
    h = np.zeros(n, dtype=np.uint64)
    for c in cols:
        h = (h ^ c.view(np.uint64)) * np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(29)
    order = np.argsort(h)
    hs = h[order]
    head = np.flatnonzero(np.r_[True, hs[1:] != hs[:-1]])
    first = np.minimum.reduceat(order, head)  # each group's first row
    inv = np.empty(n, dtype=np.int64)
    inv[order] = np.repeat(np.arange(len(head)), np.diff(np.r_[head, n]))
    if not all((c == c[first][inv]).all() for c in cols):  # a collision of the mix
        order = np.lexsort(cols[::-1])
        head = np.r_[True, np.any([c[order][1:] != c[order][:-1] for c in cols], axis=0)]
        inv = np.empty(n, dtype=np.int64)
        inv[order] = np.cumsum(head) - 1
        first = order[head]
    o = np.argsort(first, kind="stable")  # groups numbered in the order of their first row
    rank = np.empty(len(first), dtype=np.int64)
    rank[o] = np.arange(len(first))
    return first[o], rank[inv]


def dense_unique(key: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for non-negative keys below ``size``.

    A table of ``size`` flags replaces the sort when it is not much larger than ``key``.

    Parameters
    ----------
    key : ndarray
        Non-negative integers below ``size``.
    size : int
        The key space.

    Returns
    -------
    unique, inverse : ndarray
        The sorted distinct keys and each key's index into them.

    Examples
    --------
    >>> u, inv = dense_unique(np.array([5, 2, 5, 7]), 8)
    >>> u.tolist(), inv.tolist()
    ([2, 5, 7], [1, 0, 1, 2])
    """
    if size > 8 * len(key) + (1 << 16):
        u, inv = np.unique(key, return_inverse=True)
        return u, inv.ravel()
    seen = np.zeros(size, dtype=bool)
    seen[key] = True
    u = np.flatnonzero(seen)
    pos = np.cumsum(seen) - 1
    return u, pos[key]


def same_labels(problem: Problem, trips: np.ndarray, width: int) -> np.ndarray:
    """Per (variant, pooled run p, topic) key of ``trips`` (sorted, unique): whether the
    labels of p's top ``width`` under the variant are those of the reference variant (the
    truth, or variant 0). Sparse: only the cells where a variant's labels differ from the
    reference are looked up among the pooled runs' top ``width``."""
    enc = problem.enc
    V, T, U, RT = len(problem.lab), enc.T, enc.U, enc.R * enc.T
    ref = 0 if problem.truth_var is None else int(problem.truth_var)
    same = np.ones(len(trips), dtype=bool)
    # the top ``width`` documents of every (p, t) of the keys, by cell t · U + x
    pt, _ = dense_unique(trips % RT, RT)
    docs = enc.D[pt // T, pt % T, :width]
    i, j = np.nonzero(docs >= 0)
    ecell = (pt[i] % T) * U + docs[i, j]
    ept = pt[i]
    cells, cinv = dense_unique(ecell, T * U)
    lab = problem.lab.reshape(V, T * U)
    changed = np.zeros(len(cells), dtype=bool)  # the cells some variant labels otherwise
    for sl in row_chunks(len(cells), V):
        changed[sl] = (lab[:, cells[sl]] != lab[ref, cells[sl]][None, :]).any(axis=0)
    e = np.flatnonzero(changed[cinv])  # the entries on those cells
    for sl in row_chunks(len(e), V):
        c = cells[cinv[e[sl]]]
        vv, ei = np.nonzero(lab[:, c] != lab[ref, c][None, :])
        key = vv * RT + ept[e[sl][ei]]
        pos = np.minimum(np.searchsorted(trips, key), len(trips) - 1)
        same[pos[trips[pos] == key]] = False
    return same
