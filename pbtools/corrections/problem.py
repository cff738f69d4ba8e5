"""The encoded estimation problem every estimator works on, and its scoring (one engine).

An estimation problem is: runs to score (``new``), each against one relevance set (a qrels
*variant*: the reduced qrels of its left-out unit, or the qrels as given), the pooled runs R_p
each of them is compared with (``pair_u``/``pair_p``), the runs whose top d built the pool
(``pooled``) and the pool depth d. :class:`Problem` holds it on the dense layout of
:mod:`pbtools.pooling.dense` so that an experiment encodes runs and qrels once and every
estimator reads the same arrays.

Every score is computed by :func:`pbtools.measures.kernels.score` — the engine behind
:func:`pbtools.measures.evaluate` — through :meth:`Problem.score_cells`; which topics a run is
averaged over is :func:`pbtools.measures.topics.topic_mask` (``topics``). A leave-out
experiment builds problems with :meth:`Problem` directly from label arrays;
:func:`from_frames` builds one from run and qrels frames (``correct``, the estimator classes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from dataclasses import replace as _replace

import numpy as np
import pandas as pd

from pbtools.frames import as_qrels, ranked
from pbtools.measures import kernels as K
from pbtools.measures.names import Measure, parse_all
from pbtools.measures.rounding import round_half_up
from pbtools.measures.topics import topic_mask, topics_mode
from pbtools.pooling.contrib import unit_map
from pbtools.pooling.dense import DenseRuns, label_histograms, row_chunks

__all__ = ["Problem", "from_frames", "condensed_measures", "precision_parts"]


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
        ``merges(problem, pa, depth) → (pair, t, values)``: r_p ∘ r_u scored per R_p pair and
        topic (:class:`pbtools.corrections.lipani.SharedMerges`; an experiment merges every
        pair of pooled runs once, streamed, for all its problems).
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

    def set_weights(self, weights) -> None:
        """Weight every topic average by ``weights`` (T,; None: unweighted) from now on; the
        cached run scores that depend on the weights are dropped."""
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        for k in [k for k in self._cache if isinstance(k, tuple) and k[0] == "own"]:
            del self._cache[k]

    def memo(self, key, compute):
        """``compute()``, kept under ``key`` when :attr:`memoize` is on (the result must not
        depend on :attr:`weights`)."""
        if not self.memoize:
            return compute()
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

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

    # ---------------------------------------------------------------------------- the engine
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
        PAD past the end. Narrow signed integers (int8 when the labels fit)."""
        T = self.lab.shape[1]
        tab = self.padded_labels()
        base = (np.asarray(var, np.int64) * T + t) * tab.shape[1] + 1
        if tab.size < 2**31:  # int32 cells: docs (int32) + base without a widening pass
            base = base.astype(np.int32)
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
            mask = self.topic_rows(slots, var)
            item, t, docs = self.enc.run_rows(slots, mask, K.depth_needed(wide))
            got = (wide, (item, t, self.score_docs(docs, var[item], t, wide)))
            self._cache[key] = got
        item, t, values = got[1]
        return item, t, values[:, [got[0].index(m) for m in ms]]

    def run_scores(self, slots: np.ndarray, var: np.ndarray, measures) -> np.ndarray:
        """Run-level scores (items × measures): the mean over the run's topics, rounded."""
        item, t, values = self.per_topic(slots, var, measures)
        return self.rounded(self.topic_means(item, t, values, len(slots)))

    # ---------------------------------------------------------------------------- shared parts
    def own(self, measures) -> np.ndarray:
        """The runs to score on their own variants (len(new) × measures), rounded; cached."""
        ms = parse_all(measures)
        key = ("own", tuple(ms))
        if key not in self._cache:
            self._cache[key] = self.run_scores(self.new, self.new_var, ms)
        return self._cache[key]

    def precision_frame(self, measures) -> pd.DataFrame:
        """``name``, ``measure``, ``P``, ``AntiP``, ``k`` of the runs to score for every P@n of
        ``measures`` (Lipani's s, s̄, k̄ = 1 − s − s̄ after rounding)."""
        parts = precision_parts(measures)
        if not parts:
            return pd.DataFrame(columns=["name", "measure", "P", "AntiP", "k"])
        vals = self.own([m for p in parts for m in p[:2]])
        P, A = vals[:, 0::2], vals[:, 1::2]
        n = len(self.new)
        out = pd.DataFrame(
            {
                "name": np.repeat(self.names, len(parts)),
                "measure": np.tile([str(p[2]) for p in parts], n),
                "P": P.ravel(),
                "AntiP": A.ravel(),
            }
        )
        out["k"] = 1.0 - out["P"] - out["AntiP"]
        return out

    def frame(self, values: np.ndarray, measures, estimator: str, **columns) -> pd.DataFrame:
        """Long frame of run-level ``values`` (len(new) × measures): ``name``, ``measure``,
        ``estimator``, ``value`` + extra columns (arrays of the same shape, raveled)."""
        ms = parse_all(measures)
        out = pd.DataFrame(
            {
                "name": np.repeat(self.names, len(ms)),
                "measure": np.tile([str(m) for m in ms], len(self.new)),
                "estimator": estimator,
                "value": np.asarray(values, dtype=np.float64).ravel(),
            }
        )
        for c, v in columns.items():
            out[c] = np.asarray(v).ravel()
        return out


def from_frames(
    pooled: pd.DataFrame,
    new: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    depth: int,
    orgs: pd.DataFrame | None = None,
    leave_out: str | None = None,
    rp: str = "org",
    rp_pairs: pd.DataFrame | None = None,
    topics: str | None = None,
    decimals: int | None = None,
    key: str = "left_out",
) -> Problem:
    """A :class:`Problem` from frames: the pooled runs, the runs to score and the qrels.

    Parameters
    ----------
    pooled : DataFrame
        The runs whose top ``depth`` built the pool (run columns).
    new : DataFrame
        The runs to score (run columns; PyTerrier frames without ``name`` are one run "run").
    qrels : DataFrame
        ``qid``, ``docno``, ``label`` (+ an optional ``key`` column: one variant per value; then
        ``new`` needs the same column, naming the variant each run is scored against).
    depth : int
        The pool depth d.
    orgs : DataFrame, optional
        ``name``, ``org`` (for ``leave_out="org"`` and ``rp="org"``).
    leave_out : {None, "run", "org"}
        None: the runs are unpooled and scored on ``qrels`` as given. ``"run"``/``"org"``: each
        run's unit is first withdrawn: its variant is the re-pool of the pooled runs outside
        the unit (PROTOCOL items 7-8).
    rp : {"org", "run"}
        R_p of a run: the pooled runs outside its left-out unit — the runs that built its
        qrels (``"org"``) — or every pooled run but itself (``"run"``, PROTOCOL item 12).
        Without ``leave_out`` both are every pooled run but the run itself.
    rp_pairs : DataFrame, optional
        ``unpooled``, ``name``: R_p given explicitly (overrides ``rp``).
    topics, decimals
        As :class:`Problem`.

    Returns
    -------
    Problem
        With ``truth_var`` the re-pool of ``pooled`` at depth d (PROTOCOL items 7, 14).
    """
    mode = topics_mode(topics)
    qrels = as_qrels(qrels)
    S, U = ranked(pooled), ranked(new)
    keyed = key in qrels.columns
    if keyed and key not in U.columns:
        raise ValueError(f"qrels have a {key!r} column: the runs to score need one too")
    enc = DenseRuns([S, U], [qrels])
    s_slots, u_slots = enc.slots(0), enc.slots(1)
    s_names = np.asarray(enc.names[s_slots])
    u_names = np.asarray(enc.names[u_slots])
    lab, present, var_names = enc.labels(qrels, key if keyed else None)
    counts = enc.top_counts(s_slots, depth)
    truth = np.where(counts > 0, lab[0], np.int16(-1)) if not keyed else None
    names_all = sorted(set(s_names) | set(u_names))
    if leave_out == "org" and orgs is None:
        raise ValueError("leave_out='org' needs orgs (name, org)")
    # the unit a run is withdrawn with; R_p under rp="org" is the pool without that unit
    unit = unit_map(names_all, leave_out or "run", orgs if leave_out == "org" else None)
    if keyed:
        umap = U[["name", key]].drop_duplicates("name")
        if umap["name"].duplicated().any():
            raise ValueError("a run to score is assigned to several qrels variants")
        var_of = dict(zip(umap["name"].astype(str), umap[key].astype(str), strict=True))
        u_var = var_names.get_indexer(pd.Index([var_of[n] for n in u_names], dtype="str"))
        if (u_var < 0).any():  # a variant the qrels do not have: nothing is judged
            lab = np.concatenate([lab, np.full((1, *lab.shape[1:]), -1, np.int16)])
            present = np.concatenate([present, np.zeros((1, present.shape[1]), bool)])
            var_names = var_names.append(pd.Index(["\0none"], dtype="str"))
            u_var = np.where(u_var < 0, len(var_names) - 1, u_var)
        truth_var = None
    elif leave_out is None:
        u_var = np.zeros(len(u_slots), np.int64)
        lab = np.stack([lab[0], truth])
        present = np.stack([present[0], present[0]])
        var_names = pd.Index(["", "\0truth"], dtype="str")
        truth_var = 1
    else:
        if leave_out not in ("run", "org"):
            raise ValueError(f"leave_out must be None, 'run' or 'org', got {leave_out!r}")
        lo = unit
        units = pd.Index(sorted({lo[n] for n in u_names}), dtype="str")
        s_unit = units.get_indexer(pd.Index([lo[n] for n in s_names], dtype="str"))
        # who pooled what, per left-out unit: the documents only that unit's runs pooled
        grp = np.where(s_unit >= 0, s_unit, len(units))
        C = enc.top_counts(s_slots, depth, groups=grp, n_groups=len(units) + 1)
        others = counts[None].astype(np.int32) - C[: len(units)].astype(np.int32)
        reduced = np.where(others > 0, lab[0][None], np.int16(-1)).astype(np.int16)
        lab = np.concatenate([reduced, truth[None]])
        present = np.repeat(present[:1], len(units) + 1, axis=0)
        var_names = units.append(pd.Index(["\0truth"], dtype="str"))
        u_var = units.get_indexer(pd.Index([lo[n] for n in u_names], dtype="str"))
        truth_var = len(units)
    if rp_pairs is not None:
        pu = pd.Index(u_names, dtype="str").get_indexer(rp_pairs["unpooled"].astype(str))
        pp = pd.Index(s_names, dtype="str").get_indexer(rp_pairs["name"].astype(str))
        ok = (pu >= 0) & (pp >= 0)
        pu, pp = pu[ok], pp[ok]
    else:
        uu = np.asarray([unit[n] for n in u_names], dtype=object)
        su = np.asarray([unit[n] for n in s_names], dtype=object)
        if rp not in ("org", "run"):
            raise ValueError(f"rp must be 'org' or 'run', got {rp!r}")
        keep = u_names[:, None] != s_names[None, :]
        if rp == "org":
            keep &= uu[:, None] != su[None, :]
        pu, pp = np.nonzero(keep)
    order = np.lexsort((pp, pu))
    return Problem(
        enc=enc,
        pooled=s_slots,
        depth=int(depth),
        lab=lab,
        present=present,
        variants=var_names,
        new=u_slots,
        new_var=np.asarray(u_var, dtype=np.int64),
        pair_u=np.asarray(pu, dtype=np.int64)[order],
        pair_p=s_slots[np.asarray(pp, dtype=np.int64)[order]],
        truth_var=truth_var,
        topics=mode,
        decimals=decimals,
    )
