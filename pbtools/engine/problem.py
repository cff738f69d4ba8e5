"""The encoded estimation problem every estimator works on, and its scoring (one engine).

An estimation problem is: runs to score (``new``), each against one relevance set (a qrels
*variant*: the reduced qrels of its left-out unit, or the qrels as given), the pooled runs R_p
each of them is compared with (``pair_u``/``pair_p``), the runs whose top d built the pool
(``pooled``) and the pool depth d. :class:`Problem` holds it on the dense layout of
:mod:`pbtools.engine.dense` so that an experiment encodes runs and qrels once and every
estimator reads the same arrays.

Every score is computed by :func:`pbtools.measures.kernels.score` — the engine behind
:func:`pbtools.measures.evaluate` — through :meth:`Problem.score_cells`; which topics a run is
averaged over is :func:`pbtools.measures.topics.topic_mask` (``topics``). The variants and R_p
are built by :mod:`pbtools.engine.build` (:func:`~pbtools.engine.build.from_frames` from run
and qrels frames; a leave-out experiment from label arrays).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from dataclasses import replace as _replace

import numpy as np
import pandas as pd

from pbtools.engine.dense import DenseRuns, label_histograms, row_chunks
from pbtools.engine.rowgroups import dense_unique, group_rows, same_rankings
from pbtools.measures import kernels as K
from pbtools.measures.names import Measure, measure_column, measure_list
from pbtools.measures.rounding import round_half_up
from pbtools.measures.topics import topic_mask

__all__ = ["Problem", "condensed_measures", "precision_parts"]


def condensed_measures(measures) -> list[Measure]:
    """The condensed-list versions (``judged_only=True``) of ``measures`` (Sakai 2008 §3)."""
    return [_replace(m, judged_only=True) for m in measure_list(measures, "condensed_measures")]


def precision_parts(measures) -> list[tuple[Measure, Measure, Measure]]:
    """For each P@n of ``measures``: ``(P@n, AntiP@n, the measure as given)`` — the parts of
    Lipani et al.'s k̄@n = 1 − P@n − P̄@n."""
    out = []
    for m in measure_list(measures, "precision_parts"):
        if m.base == "P" and not m.judged_only:
            out.append((m, _replace(m, base="AntiP"), m))
    return out


@dataclass
class Problem:
    """Runs to score, their relevance sets and R_p, on the dense layout (see module docstring).

    Attributes
    ----------
    enc : DenseRuns
        The encoded runs (pooled and new) and the documents of the qrels.
    pooled : ndarray
        Slots of the runs whose top ``depth`` built the pool (S).
    depth : int
        The pool depth d.
    lab, present : ndarray
        The qrels variants: labels (V × T × U, −1 unjudged) and which topics each variant
        judges (V × T).
    variants : Index
        Variant names (e.g. the left-out units).
    new, new_var : ndarray
        Slots of the runs to score and the variant each is scored against.
    pair_u, pair_p : ndarray
        R_p: one entry per (new run, pooled run) pair — index into ``new``, slot.
    truth_var : int or None
        The variant of the true scores (the full re-pooled qrels), when the problem has one.
    topics : str
        Which topics a run is averaged over (:data:`pbtools.measures.TOPIC_MODES`).
    decimals : int or None
        Half-up rounding of every run-level score before it is combined (PROTOCOL item 10).
    merges : callable or None
        ``merges(problem, pa, depth) → values``: r_p ∘ r_u scored per R_p pair, averaged
        over its topics (:class:`pbtools.engine.shared_merges.SharedMerges`; an experiment
        merges every pair of pooled runs once, streamed, for all its problems).
    weights : ndarray or None
        Per-topic weights (T,) of every average over topics (:meth:`topic_means`): a topic
        bootstrap replicate gives each topic its multiplicity in the resample. None: every
        topic counts once. Set it with :meth:`set_weights`.
    memoize : bool
        Keep the per-row scores that do not depend on :attr:`weights` (:meth:`memo`), so that
        an estimator re-run on another replicate only re-averages (a bootstrap sets it).
    """

    enc: DenseRuns
    pooled: np.ndarray
    depth: int
    lab: np.ndarray
    present: np.ndarray
    variants: pd.Index
    new: np.ndarray
    new_var: np.ndarray
    pair_u: np.ndarray
    pair_p: np.ndarray
    truth_var: int | None = None
    topics: str = "judged"
    decimals: int | None = None
    merges: object = None
    weights: np.ndarray | None = None
    memoize: bool = False
    _cache: dict = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------------------- basics
    @property
    def names(self) -> np.ndarray:
        """Names of the runs to score (aligned with ``new``)."""
        return np.asarray(self.enc.names)[self.new]

    @property
    def hist(self) -> np.ndarray:
        """Label histograms of the variants (V × T × labels), the engine's relevance sets."""
        if "hist" not in self._cache:
            self._cache["hist"] = label_histograms(self.lab)
        return self._cache["hist"]

    def set_hist(self, hist: np.ndarray) -> None:
        """Give :attr:`hist` when the caller derived it (an experiment's variants from their
        truth, :func:`~pbtools.engine.dense.variant_histograms`): it must equal
        :func:`~pbtools.engine.dense.label_histograms` of :attr:`lab`; kept until
        :meth:`forget`."""
        hist = np.asarray(hist, dtype=np.int64)
        if hist.shape[:2] != self.lab.shape[:2]:
            raise ValueError(f"hist must be variants × topics × labels, got {hist.shape}")
        self._cache["hist"] = hist

    def set_weights(self, weights) -> None:
        """Weight every topic average by ``weights`` (T,; None: unweighted) from now on; the
        cached run scores that depend on the weights are dropped."""
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        weighted = ("own", "pooled_means")
        for k in [k for k in self._cache if isinstance(k, tuple) and k[0] in weighted]:
            del self._cache[k]

    def memo(self, key, compute):
        """``compute()``, kept under ``key`` when :attr:`memoize` is on (the result must not
        depend on :attr:`weights`)."""
        if not self.memoize:
            return compute()
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def chunk(self, lo: int, hi: int, pair_u, pair_p, merges=None) -> Problem:
        """This problem restricted to its runs to score ``lo:hi`` with the pairs ``pair_u``
        (indices into ``new``, in ``lo:hi``), ``pair_p``: the encoding, the variants and
        their tables (label histograms, padded labels) shared; ``merges`` the chunk's own."""
        shared = {k: v for k, v in self._cache.items() if k in ("hist", "padded")}
        return Problem(
            enc=self.enc,
            pooled=self.pooled,
            depth=self.depth,
            lab=self.lab,
            present=self.present,
            variants=self.variants,
            new=self.new[lo:hi],
            new_var=self.new_var[lo:hi],
            pair_u=np.asarray(pair_u, dtype=np.int64) - lo,
            pair_p=np.asarray(pair_p, dtype=np.int64),
            truth_var=self.truth_var,
            topics=self.topics,
            decimals=self.decimals,
            merges=merges,
            weights=self.weights,
            memoize=self.memoize,
            _cache=shared,
        )

    def forget(self) -> None:
        """Drop every memoised and cached score (the encoding stays)."""
        self._cache.clear()

    def rounded(self, values: np.ndarray) -> np.ndarray:
        """``values`` rounded half-up to :attr:`decimals` (unchanged when None)."""
        return values if self.decimals is None else round_half_up(values, self.decimals)

    def topic_rows(self, slots: np.ndarray, var: np.ndarray, answered=None) -> np.ndarray:
        """Items × T mask of the topics each (run slot, variant) item is averaged over."""
        if answered is None:
            answered = self.enc.length[slots] > 0
        return topic_mask(answered, self.present[var], self.topics)

    # ---------------------------------------------------------------------------- scoring
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
        ms = measure_list(measures, "Problem.score_cells")
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
        ms = measure_list(measures, "Problem.score_docs")
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
        P@n; a later call that asks for more measures scores only those it adds: Webber's
        score(p, Q_u) and Lipani's P@n, P̄@n of the same pooled runs read one scoring of
        those rows, whichever estimator runs first."""
        ms = measure_list(measures, "Problem.per_topic")
        wide, (item, t, values) = self._topic_scores(slots, var, ms)
        return item, t, values[:, [wide.index(m) for m in ms]]

    def _topic_scores(self, slots: np.ndarray, var: np.ndarray, ms: list[Measure]):
        """``(measures scored, (item, t, values))`` of :meth:`per_topic`'s rows, with every
        measure of ``ms`` (and the P̄@n of its P@n) among those scored; cached."""
        key = ("per_topic", np.asarray(slots).tobytes(), np.asarray(var).tobytes())
        got = self._cache.get(key)
        if got is None:
            item, t = np.nonzero(self.topic_rows(slots, var))
            got = ([], (item, t, np.zeros((len(item), 0))))
        wide, (item, t, values) = got
        want = dict.fromkeys([*ms, *(m for p in precision_parts(ms) for m in p[:2])])
        add = [m for m in want if m not in wide]
        if add:
            more = self.score_runs(slots[item], var[item], t, K.depth_needed(add), add)
            wide, values = [*wide, *add], (np.hstack([values, more]) if wide else more)
        self._cache[key] = got = (wide, (item, t, values))
        return got

    def pooled_variants(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every pooled run of R_p on every variant it is compared under, once: ``(slots, var,
        inv)``, the distinct (pooled run, variant) items and each pair's item (aligned with
        :attr:`pair_u`); cached."""
        got = self._cache.get("pooled_variants")
        if got is None:
            R = self.enc.R
            combo = self.new_var[self.pair_u] * R + self.pair_p
            uc, inv = np.unique(combo, return_inverse=True)
            got = (uc % R, uc // R, inv.ravel())
            self._cache["pooled_variants"] = got
        return got

    def pooled_variant_scores(self, measures):
        """Per-topic scores of every pooled run of R_p on every variant it is compared under
        (its own topics): ``(inv, item, t, values)``, each pair's item (:meth:`pooled_variants`)
        and the items' rows (:meth:`per_topic`). One scoring for every estimator of the
        problem: Lipani's P@n, P̄@n and Webber & Park's score(p, Q_u) read the same rows."""
        slots, var, inv = self.pooled_variants()
        return (inv, *self.per_topic(slots, var, measures))

    def pooled_scores(self, measures) -> tuple[np.ndarray, np.ndarray]:
        """Per R_p pair, its pooled run's mean over its topics on the pair's variant (pairs ×
        measures, unrounded, :meth:`topic_means`) and its number of topics (pairs; both
        weighted by :attr:`weights`). The items' means are kept until :meth:`set_weights`,
        for every measure scored so far (:meth:`pooled_variant_scores`).

        Examples
        --------
        >>> from pbtools.engine.build import from_frames
        >>> def run(name, docs):
        ...     return pd.DataFrame({"name": name, "qid": "1", "docno": list(docs),
        ...                          "score": range(len(docs), 0, -1)})
        >>> pooled = pd.concat([run("p1", "ab"), run("p2", "cd")])
        >>> qrels = pd.DataFrame({"qid": "1", "docno": list("abc"), "label": [1, 0, 1]})
        >>> p = from_frames(pooled, run("u", "ax"), qrels, depth=2)
        >>> from pbtools.measures.names import parse_all
        >>> means, n_topics = p.pooled_scores(parse_all(["P@2"]))
        >>> means.ravel().tolist(), n_topics.tolist()
        ([0.5, 0.5], [1.0, 1.0])
        """
        ms = measure_list(measures, "Problem.pooled_scores")
        slots, var, inv = self.pooled_variants()
        wide, (item, t, values) = self._topic_scores(slots, var, ms)
        key = ("pooled_means", tuple(wide))
        got = self._cache.get(key)
        if got is None:
            n = len(slots)
            got = (self.topic_means(item, t, values, n), self.topic_counts(item, t, n))
            self._cache[key] = got
        return got[0][inv][:, [wide.index(m) for m in ms]], got[1][inv]

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
        ms = measure_list(measures, "Problem.score_runs")
        if K.reads_relevance_set(ms):  # equal relevance sets, by their id
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

    # ---------------------------------------------------------------------------- shared parts
    def own(self, measures) -> np.ndarray:
        """The runs to score on their own variants (len(new) × measures), rounded; cached."""
        ms = measure_list(measures, "Problem.own")
        key = ("own", tuple(ms))
        if key not in self._cache:
            self._cache[key] = self.run_scores(self.new, self.new_var, ms)
        return self._cache[key]

    def precision_values(self, measures) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The runs to score's own P@n, P̄@n and k̄@n = 1 − P@n − P̄@n (Lipani's s, s̄, k̄ after
        rounding; len(new) × the P@n of ``measures``), None when ``measures`` has no P@n."""
        parts = precision_parts(measures)
        if not parts:
            return None
        vals = self.own([m for p in parts for m in p[:2]])
        P, A = vals[:, 0::2], vals[:, 1::2]
        return P, A, 1.0 - P - A

    def precision_frame(self, measures) -> pd.DataFrame:
        """``name``, ``measure``, ``P``, ``AntiP``, ``k`` of the runs to score for every P@n of
        ``measures`` (:meth:`precision_values`)."""
        got = self.precision_values(measures)
        if got is None:
            return pd.DataFrame(columns=["name", "measure", "P", "AntiP", "k"])
        pm = [p[2] for p in precision_parts(measures)]
        cols = self.columns(got[0], pm, "", P=got[0], AntiP=got[1], k=got[2])
        return pd.DataFrame({c: cols[c] for c in ("name", "measure", "P", "AntiP", "k")})

    def frame(
        self, values: np.ndarray, measures, estimator: str, order=None, **columns
    ) -> pd.DataFrame:
        """Long frame of run-level ``values`` (len(new) × measures): ``name``, ``measure``,
        ``estimator``, ``value`` + extra columns (arrays of the same shape, raveled); with
        ``order``, exactly those columns in that order (absent ones NaN): :meth:`columns`."""
        return pd.DataFrame(self.columns(values, measures, estimator, order, **columns))

    def columns(
        self, values: np.ndarray, measures, estimator: str, order=None, **columns
    ) -> dict[str, np.ndarray | str]:
        """The columns of :meth:`frame` (``estimator`` a scalar), what an estimator's
        ``estimate_columns`` returns: a leave-out experiment makes one frame of them per
        estimator and configuration, not one per chunk of runs (issue 30 item 5)."""
        ms = measure_list(measures, "Problem.frame")
        cols = {
            "name": np.repeat(self.names, len(ms)),
            "measure": np.tile(measure_column(ms), len(self.new)),
            "estimator": estimator,
            "value": np.asarray(values, dtype=np.float64).ravel(),
        }
        cols.update({c: np.asarray(v).ravel() for c, v in columns.items()})
        if order is not None:
            cols = {c: cols[c] if c in cols else np.full(np.size(values), np.nan) for c in order}
        return cols
