"""Label histograms: the relevance sets of qrels variants on the dense layout
(:mod:`pbtools.engine.dense`), per variant and topic the number of judged documents with each
label (what :class:`pbtools.measures.kernels.Topics` reads); and per topic and document, how
many groups of runs have it (:func:`group_owners`)."""

from __future__ import annotations

import numpy as np

__all__ = ["group_owners", "label_histograms", "variant_histograms"]

#: :func:`group_owners` counts in a groups × T × U presence table while it has at most this
#: many cells beyond 4 per ranked document (else it sorts the (cell, group) keys)
PRESENCE_CELLS = 1 << 22


def label_histograms(lab: np.ndarray) -> np.ndarray:
    """Per variant and topic, the number of judged documents with each label: V × T × (max+1).

    The relevance sets of :class:`pbtools.measures.kernels.Topics` (``Topics.from_hist``). One
    comparison pass per label value (labels are small integers), no index arrays.
    """
    top = int(lab.max()) if lab.size else -1
    width = max(top, 0) + 1
    acc = np.int32 if lab.shape[-1] < 2**31 else np.int64  # narrow accumulator: faster, exact
    hist = [(lab == v).sum(axis=-1, dtype=acc) for v in range(width)]
    return np.stack(hist, axis=-1).astype(np.int64)


def variant_histograms(base: np.ndarray, var: np.ndarray, cells: np.ndarray, n_variants: int):
    """:func:`label_histograms` of ``n_variants`` variants of the labels ``base`` (T × U) that
    each leave some documents unjudged: variant ``var[i]`` has cell ``cells[i]`` (flat
    ``t · U + x``; each (variant, cell) once) unjudged, every other cell as in ``base``.
    V × T × (max label of ``base`` + 1), from ``base``'s histogram and the removed cells alone
    (no pass over V × T × U labels).

    Examples
    --------
    >>> base = np.array([[1, 0, -1, 1]])
    >>> h = variant_histograms(base, np.array([0, 0, 1]), np.array([0, 2, 1]), 3)
    >>> lab = np.repeat(base[None], 3, axis=0)
    >>> lab[0, 0, [0, 2]] = -1
    >>> lab[1, 0, 1] = -1
    >>> h.tolist() == label_histograms(lab).tolist(), h[:, 0].tolist()
    (True, [[1, 1], [0, 2], [1, 2]])
    """
    T = base.shape[0]
    h0 = label_histograms(base[None])[0]  # T × labels
    width = h0.shape[1]
    gone = base.reshape(-1)[cells].astype(np.int64)  # a cell unjudged already changes nothing
    k = np.flatnonzero(gone >= 0)
    key = np.asarray(var, np.int64)[k] * T + np.asarray(cells, np.int64)[k] // base.shape[1]
    drop = np.bincount(key * width + gone[k], minlength=n_variants * T * width)
    return h0[None] - drop.reshape(n_variants, T, width)


def group_owners(docs: np.ndarray, groups, n_groups: int, U: int):
    """Per (topic, local doc), how many groups have it among the rankings ``docs`` (runs × T ×
    depth local docs, −1 padding; ``groups``: each run's group) and the only such group where
    there is one (−1 elsewhere): two T × U arrays. Counted in a groups × T × U presence table
    when it is small (:data:`PRESENCE_CELLS`), else over the sorted distinct (cell, group)
    keys of the ranked documents.

    Examples
    --------
    >>> docs = np.array([[[0, 1]], [[1, -1]], [[2, 1]]])  # 3 runs, 1 topic, depth 2
    >>> count, owner = group_owners(docs, [0, 1, 1], 2, 4)
    >>> count.tolist(), owner.tolist()
    ([[1, 2, 1, 0]], [[0, -1, 1, -1]])
    """
    T, G = docs.shape[1], max(n_groups, 1)
    gs = np.asarray(groups, np.int64)[:, None, None]
    if G * T * U <= 4 * docs.size + PRESENCE_CELLS:  # a presence table: no sort
        seen = np.zeros((G, T, U + 1), dtype=bool)  # column 0: the padding −1
        seen.reshape(-1)[((gs * T + np.arange(T)[:, None]) * (U + 1)) + 1 + docs] = True
        count = np.count_nonzero(seen, axis=0)[:, 1:]
        owner = np.where(count == 1, np.argmax(seen, axis=0)[:, 1:], -1)
        return count.astype(np.int64), owner.astype(np.int64)
    ok = docs >= 0
    cell = (np.arange(T)[None, :, None] * U + docs)[ok]
    key = np.sort(cell * G + np.broadcast_to(gs, docs.shape)[ok])  # distinct (cell, group)
    key = key[np.r_[True, key[1:] != key[:-1]]] if len(key) else key
    cells, g = key // G, key % G
    count = np.bincount(cells, minlength=T * U)
    owner = np.full(T * U, -1, dtype=np.int64)
    one = count[cells] == 1
    owner[cells[one]] = g[one]
    return count.reshape(T, U), owner.reshape(T, U)
