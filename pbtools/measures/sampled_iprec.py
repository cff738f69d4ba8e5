"""sample_eval.pl's inferred interpolated precisions at the 11 recall levels (``infIPrec@x``).

NIST's ``sample_eval.pl`` (the version with its 7 Aug 2010 change) prints, beside xinfAP and
infNDCG, an interpolated precision-recall curve estimated from the sample: with Ĉ(k) the estimated
relevant documents in a ranking's top k (``infNumRelRet`` at rank k, :mod:`~.sampled`) and R̂ the
estimated relevant documents of the topic (``infNumRel``), the estimated precision at rank k is
Ĉ(k) / k, and the level x·R̂ (x = 0, 0.1, …, 1) is read off the curve as trec_eval 8 read the
exact one: walking the ranks from the last up, keeping the running maximum of the precision, a
level is served when Ĉ(k) first falls below it. The script's own walk is kept, because the
values depend on it:

- levels above Ĉ at the last rank get 0;
- at most one level is served per rank (a rank where Ĉ falls below two levels serves the higher
  one, the next rank up the lower one);
- levels still unserved after rank 1 get the maximum precision of the ranking.

Ĉ is not monotone in k (a sampled non-relevant document lowers its stratum's ratio), so "first
falls below" is not a search in a sorted array. The walk is vectorised over rankings, one pass
per level (11 passes).
"""

from __future__ import annotations

import numpy as np

from pbtools.errors import InputError

__all__ = ["LEVELS", "level_index", "interpolated_precision"]

#: sample_eval.pl's recall levels (its cut-off array "0", ".1", …, "1")
LEVELS = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])


def level_index(recall, name: str) -> int:
    """The column of :data:`LEVELS` for ``recall`` (one of the 11 levels, else InputError).

    >>> level_index(0.3, "infIPrec@0.3")
    3
    """
    if recall is None:
        raise InputError(f"measure {name!r}: infIPrec needs a recall level, e.g. infIPrec@0.1")
    hit = np.flatnonzero(np.isclose(LEVELS, float(recall), rtol=0, atol=1e-9))
    if not len(hit):
        raise InputError(
            f"measure {name!r}: sample_eval.pl interpolates at the recall levels 0, 0.1, …, 1 "
            "only (its levels are served jointly, one per rank, so another level would change "
            "the others)"
        )
    return int(hit[0])


def _suffix_max(x: np.ndarray, g: np.ndarray, G: int) -> np.ndarray:
    """max(x[j] for j ≥ i in i's group), exactly (groups contiguous, ``g`` their codes)."""
    if not len(x):
        return x.copy()
    u, inv = np.unique(x, return_inverse=True)
    off = (G - 1 - g.astype(np.int64)) * len(u)  # later groups first in reverse: larger keys
    acc = np.maximum.accumulate((inv.ravel() + off)[::-1])[::-1]
    return u[acc - off]


def interpolated_precision(
    c: np.ndarray, k: np.ndarray, g: np.ndarray, first: np.ndarray, R: np.ndarray
) -> np.ndarray:
    """Per ranking, the interpolated precision at the 11 :data:`LEVELS` of sample_eval.pl.

    Parameters
    ----------
    c : ndarray
        Ĉ(k) per row (estimated relevant documents up to and including the row).
    k : ndarray
        The row's rank (1-based).
    g : ndarray
        The row's ranking (0..G−1, rankings contiguous, ranks increasing inside).
    first : ndarray
        The first row of each ranking.
    R : ndarray
        R̂ per ranking.

    Returns
    -------
    ndarray
        (G, 11).

    Examples
    --------
    One ranking, R̂ = 2, Ĉ = 1, 1, 2 at ranks 1-3: precisions 1, 0.5, 0.667. Level 1 (2
    documents) is served at rank 2, the last rank where Ĉ < 2, with max(0.5, 0.667); level 0.9
    (1.8) at rank 1, the next one up, with 1; the levels below wait for a rank that is left:
    there is none, they get the maximum, 1.

    >>> interpolated_precision(np.array([1.0, 1, 2]), np.array([1.0, 2, 3]),
    ...                        np.zeros(3, int), np.array([0]), np.array([2.0])).round(3)
    array([[1.   , 1.   , 1.   , 1.   , 1.   , 1.   , 1.   , 1.   , 1.   ,
            1.   , 0.667]])
    """
    G = len(first)
    out = np.zeros((G, len(LEVELS)))
    if not G:
        return out
    prec = c / k
    smax = _suffix_max(prec, g, G)
    row = np.arange(len(c))
    last = np.r_[first[1:], len(c)] - 1
    cut = LEVELS[None, :] * R[:, None]  # the levels in estimated relevant documents
    bound = last + 1  # the next level is served strictly above this row
    for j in range(len(LEVELS) - 1, -1, -1):
        active = cut[:, j] <= c[last]  # the script skips the levels above Ĉ at the last rank
        cond = (c < cut[g, j]) & (row < bound[g])
        pos = np.maximum.reduceat(np.where(cond, row, -1), first)
        found = pos >= first
        out[:, j] = np.where(active, smax[np.where(found, pos, first)], 0.0)
        bound = np.where(active, np.where(found, pos, first), bound)
    return out
