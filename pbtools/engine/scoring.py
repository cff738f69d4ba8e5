"""The scoring half of :class:`pbtools.engine.problem.Problem`: rankings of local documents
scored under the problem's relevance-set variants (one engine), and the averages over topics.

:class:`Scoring` is the base class of ``Problem``; it reads ``enc``, ``lab``, ``present``,
``hist``, ``weights``, ``topics`` and the ``_cache`` of the problem. Every score is computed by
:func:`pbtools.measures.kernels.score` through :meth:`Scoring.score_cells`.
"""

from __future__ import annotations

from dataclasses import replace as _replace

import numpy as np

from pbtools.engine.dense import row_chunks
from pbtools.engine.rowgroups import dense_unique, group_rows, same_rankings
from pbtools.measures import kernels as K
from pbtools.measures.names import Measure, parse_all

__all__ = ["Scoring", "condensed_measures", "precision_parts"]


def condensed_measures(measures) -> list[Measure]:
    """The condensed-list versions (``judged_only=True``) of ``measures`` (Sakai 2008 §3)."""
    return [_replace(m, judged_only=True) for m in parse_all(measures)]


def precision_parts(measures) -> list[tuple[Measure, Measure, Measure]]:
    """For each P@n of ``measures``: ``(P@n, AntiP@n, the measure as given)`` — the parts of
    Lipani et al.'s k̄@n = 1 − P@n − P̄@n."""
    out = []
    for m in parse_all(measures):
        if m.base == "P" and not m.judged_only:
            out.append((m, _replace(m, base="AntiP"), m))
    return out


class Scoring:
    """Scoring of rankings under a problem's variants (the base class of ``Problem``)."""

    def score_cells(
        self, labels: np.ndarray, hist: np.ndarray, measures, topic: np.ndarray | None = None
    ) -> np.ndarray:
        """Scores of rankings given as label matrices: rows × measures.

        ``labels``: rows × W labels by rank (:data:`~pbtools.measures.kernels.UNJUDGED`,
        :data:`~pbtools.measures.kernels.PAD` past the end); ``hist``: rows × labels, each
        row's relevance set, or with ``topic`` (one index per row) a table of relevance sets
        (sets × labels) that row i reads at ``topic[i]``. Chunked; the scores come from
        :func:`pbtools.measures.kernels.score`.
        """
        ms = parse_all(measures)
        out = np.zeros((len(labels), len(ms)))
        width = labels.shape[1] if labels.ndim == 2 else 1
        shared = None if topic is None else K.Topics.from_hist(hist)
        for sl in row_chunks(len(labels), width):
            view = K.View.from_matrix(labels[sl])
            if shared is None:
                topics, gt = K.Topics.from_hist(hist[sl]), np.arange(view.G)
            else:
                topics, gt = shared, topic[sl]
            out[sl], _ = K.score(view, topics, gt, ms, residuals=False)
        return out

    def padded_labels(self) -> np.ndarray:
        """The variants' labels as a (V·T) × (U + 1) table whose first column is
        :data:`~pbtools.measures.kernels.PAD`: local doc x of (variant v, topic t) is cell
        ``[v·T + t, x + 1]`` and the padding doc −1 reads PAD. Narrowest signed dtype; cached
        (rebuilt when :attr:`lab` is replaced)."""
        got = self._cache.get("padded")
        if got is None or got[0] is not self.lab:
            V, T, U = self.lab.shape
            lo, hi = (int(self.lab.min()), int(self.lab.max())) if self.lab.size else (0, 0)
            wide = max(-min(lo, K.PAD) - 1, hi)  # int8 when every label and PAD fit in it
            dt = np.int8 if wide < 2**7 else np.int16 if wide < 2**15 else np.int64
            tab = np.empty((V * T, U + 1), dtype=dt)
            tab[:, 0] = K.PAD
            tab[:, 1:] = self.lab.reshape(V * T, U)
            got = (self.lab, tab)
            self._cache["padded"] = got
        return got[1]

    def cell_labels(self, docs: np.ndarray, var: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Labels of ranked local docs (rows × W, −1 past the end) under each row's variant;
        PAD past the end. Narrow signed integers (int8 when the labels fit); column-major when
        ``docs`` is (the layout the engine's :class:`~pbtools.measures.kernels.MatrixView`
        keeps)."""
        T = self.lab.shape[1]
        tab = self.padded_labels()
        # int64 cells: the index type np.take works in (narrower ones are converted)
        base = (np.asarray(var, np.int64) * T + t) * tab.shape[1] + 1
        if docs.ndim == 2 and docs.strides[0] < docs.strides[1]:  # column-major: so is the
            return np.take(tab.reshape(-1), docs.T + base, mode="clip").T  # result, no copy
        return np.take(tab.reshape(-1), docs + base[:, None], mode="clip")

    def score_docs(self, docs: np.ndarray, var: np.ndarray, t: np.ndarray, measures):
        """Scores of rankings of local docs (rows × W) on topic ``t`` under variant ``var``."""
        ms = parse_all(measures)
        out = np.zeros((len(docs), len(ms)))
        width = docs.shape[1] if docs.ndim == 2 else 1
        hist = self.hist.reshape(-1, self.hist.shape[-1])  # (variant, topic) × labels
        cell = np.asarray(var, np.int64) * self.lab.shape[1] + t
        for sl in row_chunks(len(docs), width):
            labels = self.cell_labels(docs[sl], var[sl], t[sl])
            out[sl] = self.score_cells(labels, hist, ms, topic=cell[sl])
        return out

    @staticmethod
    def means(
        item: np.ndarray, values: np.ndarray, n_items: int, weights: np.ndarray | None = None
    ) -> np.ndarray:
        """Per item, the (``weights``-weighted) mean of its rows' values (items × measures;
        NaN for an item without rows or weight: a run with no topic to average over)."""
        if weights is not None:
            keep = weights != 0
            item, values, weights = item[keep], values[keep], weights[keep]
        cnt = np.bincount(item, weights=weights, minlength=n_items).astype(np.float64)
        out = np.zeros((n_items, values.shape[1]))
        for j in range(values.shape[1]):  # a handful of measures
            v = values[:, j] if weights is None else values[:, j] * weights
            out[:, j] = np.bincount(item, weights=v, minlength=n_items)
        with np.errstate(invalid="ignore", divide="ignore"):
            return out / cnt[:, None]

    def topic_means(
        self, item: np.ndarray, t: np.ndarray, values: np.ndarray, n_items: int
    ) -> np.ndarray:
        """Per item, the mean of its rows' values over their topics ``t``: every average over
        topics goes through here, each topic weighted by :attr:`weights` when set."""
        w = None if self.weights is None else self.weights[t]
        return self.means(item, values, n_items, w)

    def topic_counts(self, item: np.ndarray, t: np.ndarray, n_items: int) -> np.ndarray:
        """Per item, its number of topics (weighted by :attr:`weights` when set)."""
        w = None if self.weights is None else self.weights[t]
        return np.bincount(item, weights=w, minlength=n_items).astype(np.float64)

    def per_topic(self, slots: np.ndarray, var: np.ndarray, measures):
        """Per-topic scores of runs ``slots`` under variants ``var`` on the topics they are
        averaged over: ``(item, t, values)`` with values rows × measures.

        Kept for the problem's lifetime (weight-free), scored together with the P̄@n of every
        P@n: Webber's score(p, Q_u) and Lipani's P@n, P̄@n of the same pooled runs read one
        scoring of those rows."""
        ms = parse_all(measures)
        key = ("per_topic", np.asarray(slots).tobytes(), np.asarray(var).tobytes())
        got = self._cache.get(key)
        if got is None or not set(ms) <= set(got[0]):
            wide = list(dict.fromkeys([*ms, *(m for p in precision_parts(ms) for m in p[:2])]))
            item, t = np.nonzero(self.topic_rows(slots, var))
            vals = self.score_runs(slots[item], var[item], t, K.depth_needed(wide), wide)
            got = (wide, (item, t, vals))
            self._cache[key] = got
        item, t, values = got[1]
        return item, t, values[:, [got[0].index(m) for m in ms]]

    def score_runs(self, slots, var, t, width: int | None, measures) -> np.ndarray:
        """Scores of runs ``slots`` cut at ``width`` (None: whole) on topics ``t`` under
        variants ``var`` (one per row): rows × measures.

        When the rows repeat runs and topics (a pooled run under many variants), each distinct
        labelled ranking — the same run, topic, labels of its top ``width`` and, for measures
        that read it (:func:`~pbtools.measures.kernels.reads_relevance_set`), relevance set —
        is scored once (:func:`~pbtools.engine.rowgroups.same_rankings`; exact)."""
        enc = self.enc
        w = enc.L if width is None else max(1, min(int(width), enc.L))
        slots, var, t = (np.asarray(a, np.int64) for a in (slots, var, t))
        n_runs = len(dense_unique(slots * enc.T + t, enc.R * enc.T)[0]) if len(slots) else 0
        if len(slots) < 2 * n_runs:  # few repeats: grouping would not pay
            return self.score_docs(enc.D[slots, t, :w], var, t, measures)
        extra = []
        if K.reads_relevance_set(parse_all(measures)):  # equal relevance sets, by their id
            V, T = self.hist.shape[:2]
            hid = group_rows(list(self.hist.reshape(V * T, -1).T))[1]
            extra = [hid[var * T + t]]
        ref = 0 if self.truth_var is None else int(self.truth_var)
        rep, grp = same_rankings(enc.D, self.lab, ref, slots, var, t, w, extra)
        r = slots[rep], var[rep], t[rep]
        return self.score_docs(enc.D[r[0], r[2], :w], r[1], r[2], measures)[grp]

    def run_scores(self, slots: np.ndarray, var: np.ndarray, measures) -> np.ndarray:
        """Run-level scores (items × measures): the mean over the run's topics, rounded."""
        item, t, values = self.per_topic(slots, var, measures)
        return self.rounded(self.topic_means(item, t, values, len(slots)))
