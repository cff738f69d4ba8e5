"""The encoded estimation problem every estimator works on, and its scoring (one engine).

An estimation problem is: runs to score (``new``), each against one relevance set (a qrels
*variant*: the reduced qrels of its left-out unit, or the qrels as given), the pooled runs R_p
each of them is compared with (``pair_u``/``pair_p``), the runs whose top d built the pool
(``pooled``) and the pool depth d. :class:`Problem` holds it on the dense layout of
:mod:`pbtools.engine.dense` so that an experiment encodes runs and qrels once and every
estimator reads the same arrays.

Every score is computed by :func:`pbtools.measures.kernels.score` — the engine behind
:func:`pbtools.measures.evaluate` — through :meth:`Problem.score_cells`
(:mod:`pbtools.engine.scoring`); which topics a run is averaged over is
:func:`pbtools.measures.topics.topic_mask` (``topics``). A leave-out experiment builds problems
with :meth:`Problem` directly from label arrays; :func:`from_frames` builds one from run and
qrels frames (``correct``, the estimator classes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pbtools.engine.dense import DenseRuns, label_histograms
from pbtools.engine.scoring import Scoring, condensed_measures, precision_parts
from pbtools.frames import as_qrels, ranked
from pbtools.measures.names import parse_all
from pbtools.measures.rounding import round_half_up
from pbtools.measures.topics import topic_mask, topics_mode
from pbtools.pooling.who_pooled import unit_map

__all__ = ["Problem", "from_frames", "condensed_measures", "precision_parts"]


@dataclass
class Problem(Scoring):
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
