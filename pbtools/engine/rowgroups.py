"""Exact grouping of rows that the scoring engine would score identically.

Estimators re-score many rankings that repeat: the same run on the same topic, labelled the
same way (relevance-set variants agree on most documents) and with the same relevance set.
:func:`same_rankings` finds them so that :func:`pbtools.measures.kernels.score` runs once per
distinct ranking; the grouping is exact (:func:`group_rows` compares the keys themselves).
"""

from __future__ import annotations

import numpy as np

from pbtools.engine.dense import row_chunks
from pbtools.groups import dense_unique, group_rows

#: ``group_rows`` and ``dense_unique`` (:mod:`pbtools.groups`) are re-exported here
__all__ = ["same_rankings", "group_rows", "dense_unique", "same_labels"]


def same_rankings(D, lab, ref: int, slots, var, t, width: int, extra=()):
    """Groups of rows that are the same labelled ranking: run ``slots`` on topic ``t`` cut at
    ``width`` (``D[slots, t, :width]``), labelled by variant ``var`` (``lab[var, t]``), with
    equal ``extra`` columns (e.g. the relevance set's label histogram).

    Parameters
    ----------
    D : ndarray
        runs × topics × L local documents by rank (:class:`~pbtools.engine.dense.DenseRuns`).
    lab : ndarray
        variants × topics × U labels (−1 unjudged).
    ref : int
        The reference variant: rows whose labels agree with it share a key whatever their
        variant.
    slots, var, t : ndarray
        Per row: run slot, variant and topic.
    width : int
        How much of each ranking counts.
    extra : sequence of ndarray
        int64 columns that must agree too.

    Returns
    -------
    rep, grp : ndarray
        The first row of each group, in row order, and each row's group.

    Examples
    --------
    >>> D = np.array([[[0, 1]]])  # one run, one topic: documents 0, 1
    >>> lab = np.array([[[1, 0, 1]], [[1, 0, -1]], [[0, 0, 0]]])  # three variants
    >>> rep, grp = same_rankings(D, lab, 0, np.zeros(3, int), np.arange(3), np.zeros(3, int), 2)
    >>> rep.tolist(), grp.tolist()  # variants 0 and 1 agree on the ranked documents
    ([0, 2], [0, 0, 1])
    """
    V, T = lab.shape[:2]
    R = D.shape[0]
    slots, var = np.asarray(slots, np.int64), np.asarray(var, np.int64)
    t = np.asarray(t, np.int64)
    if not len(slots):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    trip = (var * R + slots) * T + t
    ut, tinv = dense_unique(trip, V * R * T)
    labkey = np.where(same_labels(D, lab, ref, ut, width)[tinv], -1, var)
    return group_rows([(slots * T + t) * (V + 1) + labkey + 1, *extra])


def same_labels(D, lab, ref: int, trips: np.ndarray, width: int) -> np.ndarray:
    """Per key ``(variant · R + run) · T + topic`` of ``trips`` (sorted, unique): whether the
    labels of the run's top ``width`` under the variant are those of variant ``ref``.

    Sparse: only the cells where a variant's labels differ from the reference are looked up
    among the runs' top ``width``.

    Examples
    --------
    >>> D = np.array([[[0, 1]]])
    >>> lab = np.array([[[1, 0, 1]], [[1, 0, -1]], [[0, 0, 0]]])
    >>> same_labels(D, lab, 0, np.array([0, 1, 2]), 2).tolist()
    [True, True, False]
    """
    V, T, U = lab.shape
    RT = D.shape[0] * T
    same = np.ones(len(trips), dtype=bool)
    # the top ``width`` documents of every (run, topic) of the keys, by cell t · U + x
    pt, _ = dense_unique(trips % RT, RT)
    docs = D[pt // T, pt % T, :width]
    i, j = np.nonzero(docs >= 0)
    ecell = (pt[i] % T) * U + docs[i, j]
    ept = pt[i]
    cells, cinv = dense_unique(ecell, T * U)
    lab = lab.reshape(V, T * U)
    changed = np.zeros(len(cells), dtype=bool)  # the cells some variant labels otherwise
    for sl in row_chunks(len(cells), V):
        changed[sl] = (lab[:, cells[sl]] != lab[ref, cells[sl]][None, :]).any(axis=0)
    e = np.flatnonzero(changed[cinv])  # the entries on those cells
    table = V * RT <= 8 * len(trips) + (1 << 20)  # flag the keys in a table, or look them up
    flags = np.ones(V * RT if table else 0, dtype=bool)
    for sl in row_chunks(len(e), V):
        c = cells[cinv[e[sl]]]
        vv, ei = np.nonzero(lab[:, c] != lab[ref, c][None, :])
        key = vv * RT + ept[e[sl][ei]]
        if table:
            flags[key] = False
            continue
        pos = np.minimum(np.searchsorted(trips, key), len(trips) - 1)
        same[pos[trips[pos] == key]] = False
    return flags[trips] if table else same
