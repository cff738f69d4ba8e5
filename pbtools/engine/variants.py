"""The leave-out variants of the qrels in compact form (issue 25 item 4, issue 30 item 4).

Variant v of a leave-out experiment is the truth (the qrels re-pooled from every run of the
run set, PROTOCOL-lipani2015 item 7) with the documents that only unit v pooled unjudged (item
8). A document has at most one such unit, so all the variants together differ from the truth
in at most T × U cells: :class:`LeaveOutLabels` keeps the truth once and each variant's removed
cells, and writes the dense labels (variants × T × U, what
:class:`~pbtools.engine.problem.Problem` reads) of a few variants at a time
(:meth:`LeaveOutLabels.dense`) — a chunk of runs to score needs only its own runs' variants
(:func:`pbtools.engine.chunks.sub_problem`). Its memory is T × U labels and 8 bytes a removed
cell, whatever the number of units; the dense array of every variant was units × T × U.
"""

from __future__ import annotations

import numpy as np

from pbtools.engine.dense import DenseRuns, expand_ranges
from pbtools.engine.histograms import variant_histograms

__all__ = ["LeaveOutLabels", "leave_out_variants"]


class LeaveOutLabels:
    """The truth and, per variant, the cells it leaves unjudged.

    Parameters
    ----------
    truth : ndarray
        T × U labels (−1 unjudged): the last variant.
    var, cells : ndarray
        Variant ``var[i]`` has flat cell ``cells[i]`` (t · U + x) unjudged; each (variant,
        cell) once.
    n_units : int
        The number of leave-out variants (the truth is variant ``n_units``).

    Attributes
    ----------
    hist : ndarray
        (n_units + 1) × T × labels: every variant's label histograms, the truth last
        (:func:`~pbtools.engine.histograms.variant_histograms`).

    Examples
    --------
    >>> v = LeaveOutLabels(np.array([[1, 0, 1]], np.int8), np.array([1, 0]),
    ...                    np.array([0, 2]), 2)
    >>> v.dense()[:, 0].tolist()
    [[1, 0, -1], [-1, 0, 1], [1, 0, 1]]
    >>> v.dense(np.array([1]))[:, 0].tolist(), v.hist[[1, 2], 0].tolist()
    ([[-1, 0, 1], [1, 0, 1]], [[1, 1], [1, 2]])
    """

    def __init__(self, truth: np.ndarray, var: np.ndarray, cells: np.ndarray, n_units: int):
        var = np.asarray(var, np.int64)
        order = np.argsort(var, kind="stable")
        self.truth, self.n_units = truth, int(n_units)
        narrow = np.int32 if truth.size < 2**31 else np.int64
        self.cells = np.asarray(cells)[order].astype(narrow)
        self.start = np.searchsorted(var[order], np.arange(self.n_units + 2))
        self.hist = variant_histograms(truth, var, cells, self.n_units + 1)

    @property
    def nbytes(self) -> int:
        """Bytes held (the truth, the removed cells and the histograms)."""
        return self.truth.nbytes + self.cells.nbytes + self.start.nbytes + self.hist.nbytes

    def dense(self, variants: np.ndarray | None = None) -> np.ndarray:
        """The labels of ``variants`` (ascending or not; default every unit's) and then of the
        truth: (len(variants) + 1) × T × U, the truth's dtype."""
        if variants is None:
            variants = np.arange(self.n_units)
        variants = np.asarray(variants, np.int64)
        lab = np.empty((len(variants) + 1, *self.truth.shape), dtype=self.truth.dtype)
        lab[:] = self.truth
        lens = self.start[variants + 1] - self.start[variants]
        item, pos = expand_ranges(self.start[variants], lens)
        lab.reshape(len(lab), -1)[item, self.cells[pos]] = -1
        return lab

    def histograms(self, variants: np.ndarray) -> np.ndarray:
        """:attr:`hist` of ``variants`` and then of the truth (the rows of :meth:`dense`)."""
        return self.hist[np.r_[np.asarray(variants, np.int64), self.n_units]]


def leave_out_variants(
    enc: DenseRuns,
    slots: np.ndarray,
    depth: int,
    labels: np.ndarray,
    unit: np.ndarray | None,
    n_units: int,
    left_out: np.ndarray,
    owners: tuple[np.ndarray, np.ndarray] | None = None,
) -> LeaveOutLabels:
    """The leave-out variants of the qrels in compact form: for each unit of ``left_out``, the
    re-pool of the runs ``slots`` without that unit's runs (PROTOCOL item 8), then the truth,
    the re-pool of them all (item 7). Arguments as
    :func:`pbtools.engine.build.leave_out_labels`, which is ``.dense()`` and ``.hist`` of this.

    Examples
    --------
    >>> import pandas as pd
    >>> run = pd.DataFrame({"name": ["a", "a", "b", "b"], "qid": "1",
    ...                     "docno": ["x", "y", "z", "x"], "rank": [1, 2, 1, 2]})
    >>> enc = DenseRuns([run])
    >>> v = leave_out_variants(enc, enc.slots(0), 1, np.array([[1, 1, 0]], np.int16),
    ...                        np.array([0, 1]), 2, np.array([1]))
    >>> v.dense()[:, 0].tolist()
    [[1, -1, -1], [1, -1, 0]]
    """
    # who pooled what: per document the number of units and the only one, if one
    count, owner = enc.top_owners(slots, depth, unit, n_units) if owners is None else owners
    truth = np.where(count > 0, labels, -1).astype(labels.dtype)
    left_out = np.asarray(left_out, np.int64)
    # every variant is the truth but the documents only its unit pooled
    variant_of = np.full(n_units + 1, -1, dtype=np.int64)
    variant_of[left_out] = np.arange(len(left_out))
    only = variant_of[owner.ravel()]  # owner −1 (none or several units) reads the spare −1
    cells = np.flatnonzero(only >= 0)
    return LeaveOutLabels(truth, only[cells], cells, len(left_out))
