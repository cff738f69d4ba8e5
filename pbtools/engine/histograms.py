"""Label histograms: the relevance sets of qrels variants on the dense layout
(:mod:`pbtools.engine.dense`), per variant and topic the number of judged documents with each
label (what :class:`pbtools.measures.kernels.Topics` reads)."""

from __future__ import annotations

import numpy as np

__all__ = ["label_histograms", "variant_histograms"]


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
