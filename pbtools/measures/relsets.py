"""Relevance sets of the qrels as label histograms: what every kernel of
:mod:`pbtools.measures.kernels` reads from the qrels (R, N, the ideal ranking's gains), one
row per topic. Re-exported by :mod:`~.kernels` (``kernels.Topics``), where it was defined.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Topics"]


class Topics:
    """Relevance sets of the qrels, one per *topic* (a qid, or a qid under one qrels variant).

    Stored as a label histogram ``hist[t, v]`` = number of judged documents of topic ``t`` with
    label ``v`` (0 ≤ v ≤ max label; negative labels are unjudged and not counted). Everything a
    kernel needs from the qrels — R, the judged non-relevant count N, the ideal ranking's DCG and
    cumulative gain — is a function of that histogram, so a relevance set derived from another
    (a reduced pool, an inner re-pool) is an exact, cheap histogram subtraction
    (:meth:`from_hist`).

    The ideal ranking lists the relevant labels in descending order: label ``v`` occupies the
    positions ``above_v + 1 … above_v + hist[t, v]``, ``above_v`` being the number of relevant
    documents with a larger label.
    """

    def __init__(self, t: np.ndarray, label: np.ndarray, n_topics: int):
        t = np.asarray(t, dtype=np.int64)
        label = np.asarray(label, dtype=np.int64)
        judged = label >= 0
        width = int(label[judged].max()) + 1 if judged.any() else 1
        hist = np.bincount(t[judged] * width + label[judged], minlength=n_topics * width).reshape(
            n_topics, width
        )
        self._init(hist)

    @classmethod
    def from_hist(cls, hist: np.ndarray) -> Topics:
        """Topics from a label histogram ``hist[t, v]`` (topics × labels 0..max, counts ≥ 0)."""
        out = cls.__new__(cls)
        out._init(np.asarray(hist, dtype=np.int64).reshape(len(hist), -1))
        return out

    def _init(self, hist: np.ndarray) -> None:
        self.hist, self.T = hist, hist.shape[0]
        self._cache: dict = {}

    def num_rel(self, rel: int) -> np.ndarray:
        """R: relevant documents per topic (label >= rel), as float."""
        return self.hist[:, rel:].sum(axis=1).astype(np.float64)

    def num_nonrel(self, rel: int) -> np.ndarray:
        """N: judged non-relevant documents per topic (0 <= label < rel), as float."""
        return self.hist[:, :rel].sum(axis=1).astype(np.float64)

    def gain_vector(self, rel: int, gains: tuple | None = None) -> np.ndarray:
        """The gain of each label 0..max: ``gains`` (``((label, gain), ...)``, trec_eval's
        ``ndcg.1=3,2=9``) where given, else the label when ``>= rel``, else 0."""
        g = np.where(np.arange(self.hist.shape[1]) >= rel, np.arange(self.hist.shape[1]), 0.0)
        for label, gain in [(a, b) for a, b in gains or () if 0 <= a < len(g)]:
            g[label] = gain
        return g

    def ideal(self, rel: int, gains: tuple | None = None):
        """The ideal ranking per topic as gain blocks: ``(gains, above, count)``.

        ``gains`` (the positive gains, descending: the labels ``>= rel`` without ``gains``), and
        per topic and gain the number of documents ranked above the block (``above``, topics ×
        gains) and in it (``count``). Labels of equal gain form one block.
        """
        if gains is not None:
            key = ("ideal", rel, gains)
            if key not in self._cache:
                gv = self.gain_vector(rel, gains)
                values = np.unique(gv[gv > 0])[::-1]
                pick = gv[None, :] == values[:, None]  # gains × labels
                count = self.hist @ pick.T.astype(np.int64)
                above = np.cumsum(count, axis=1) - count
                self._cache[key] = (values, above, count)
            return self._cache[key]
        key = ("ideal", rel)
        if key not in self._cache:
            count = self.hist[:, rel:][:, ::-1]
            gains = np.arange(self.hist.shape[1] - 1, rel - 1, -1, dtype=np.int64)
            above = np.cumsum(count, axis=1) - count
            self._cache[key] = (gains, above, count)
        return self._cache[key]

    def ideal_dcg(self, rel: int, n: int | None, gains: tuple | None = None) -> np.ndarray:
        """IDCG@n per topic: Σ_{k ≤ min(n, R)} g*_k / log2(k + 1) (trec_eval ``m_ndcg_cut.c``).

        Each label block contributes ``g · (H(end) − H(start))`` with ``H(k) = Σ_{i≤k} 1 /
        log2(i + 1)``, positions clipped at ``n``.
        """
        gains, above, count = self.ideal(rel, gains)
        top = int((above + count).max()) if above.size else 0
        harm = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(2, top + 2.0)))])
        lo, hi = above, above + count
        if n is not None:
            lo, hi = np.minimum(lo, n), np.minimum(hi, n)
        return ((harm[hi] - harm[lo]) * gains[None, :]).sum(axis=1)

    def ideal_cg(self, rel: int, t: np.ndarray, k: np.ndarray) -> np.ndarray:
        """cg*(k) for topic ``t``: ideal cumulative gain at rank k (total gain for k > R)."""
        gains, above, count = self.ideal(rel)
        inside = np.clip(np.asarray(k)[:, None] - above[t], 0, count[t])
        return (inside * gains[None, :]).sum(axis=1).astype(np.float64)
