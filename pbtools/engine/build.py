"""The one builder of the encoded problem's relevance-set variants and of R_p.

Every estimator compares a run to score with the pooled runs R_p on the qrels without its
left-out unit (PROTOCOL-lipani2015 items 7, 8, 12). Those are built here, once, for both
callers: :func:`from_frames` (a problem from run and qrels frames: ``correct``) and
:class:`FittedPool` (the pool's side of it encoded once, an estimator's ``fit``; ``from_frames``
is one fitted pool and one problem) and the leave-out experiments
(:mod:`pbtools.experiments.leaveout`, through :class:`EncodedPool`):

* :func:`repool` — the truth: the qrels restricted to the pooled runs' top d (item 7);
* :func:`leave_out_labels` — each unit's reduced qrels, then the truth, with their label
  histograms (item 8); :func:`~pbtools.engine.variants.leave_out_variants` the same in
  compact form (the truth and each variant's removed cells, :mod:`pbtools.engine.variants`),
  which a leave-out experiment writes out a chunk of variants at a time;
* :class:`~pbtools.engine.units.PairSpec` — R_p: each run to score paired with the pooled runs
  of another key (its unit, ``rp="org"``, or its name, ``rp="run"``; item 12);
* :func:`~pbtools.engine.units.unit_map` — the leave-out unit of each run (its name or its
  organisation); both live in :mod:`pbtools.engine.units` and are re-exported here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.engine.dense import DenseRuns, label_histograms
from pbtools.engine.problem import Problem
from pbtools.engine.units import PairSpec, unit_map
from pbtools.engine.variants import LeaveOutLabels, leave_out_variants
from pbtools.errors import InputError
from pbtools.frames import as_qrels, ranked
from pbtools.measures.topics import topics_mode

__all__ = [
    "EncodedPool",
    "FittedPool",
    "LeaveOutLabels",
    "PairSpec",
    "from_frames",
    "leave_out_labels",
    "leave_out_variants",
    "repool",
    "unit_map",
]


def repool(enc: DenseRuns, slots: np.ndarray, depth: int, labels: np.ndarray) -> np.ndarray:
    """The qrels re-pooled from the runs ``slots`` at ``depth`` (PROTOCOL item 7): ``labels``
    (T × U) where one of those runs ranks the document in its top ``depth``, −1 (unjudged)
    elsewhere; ``labels``' dtype.

    Examples
    --------
    >>> import pandas as pd
    >>> run = pd.DataFrame({"name": ["a", "a", "b"], "qid": "1", "docno": ["x", "y", "z"],
    ...                     "rank": [1, 2, 1]})
    >>> enc = DenseRuns([run])
    >>> repool(enc, enc.slots(0), 1, np.array([[1, 0, 1]], np.int16)).tolist()
    [[1, -1, 1]]
    """
    pooled = enc.top_counts(slots, depth) > 0
    return np.where(pooled, labels, -1).astype(labels.dtype)


def leave_out_labels(
    enc: DenseRuns,
    slots: np.ndarray,
    depth: int,
    labels: np.ndarray,
    unit: np.ndarray,
    n_units: int,
    left_out: np.ndarray,
    owners: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The leave-out variants of the qrels: for each unit of ``left_out``, the re-pool of the
    runs ``slots`` without that unit's runs (PROTOCOL item 8), then the truth, the re-pool of
    them all (item 7).

    Parameters
    ----------
    enc : DenseRuns
        The encoding.
    slots : ndarray
        The runs whose top ``depth`` built the pool.
    depth : int
        The pool depth d.
    labels : ndarray
        T × U labels of the qrels as given (−1 unjudged).
    unit : ndarray
        The unit code (0 … ``n_units`` − 1) of each run of ``slots``.
    n_units : int
        The number of unit codes.
    left_out : ndarray
        The unit codes withdrawn, one variant each, in variant order (a unit without runs has
        the truth as its reduced qrels).
    owners : tuple of ndarray, optional
        ``enc.top_owners(slots, depth, unit, k)`` computed before (k ≤ ``n_units``: units
        ``k`` … ``n_units`` − 1 have no runs): who pooled what, kept by a :class:`FittedPool`.

    Returns
    -------
    lab : ndarray
        (len(left_out) + 1) × T × U labels, ``labels``' dtype: variant i is the pool without
        unit ``left_out[i]``, the last the truth.
    hist : ndarray
        Their label histograms (:func:`~pbtools.engine.dense.variant_histograms`; what
        :func:`~pbtools.engine.dense.label_histograms` of ``lab`` gives, without a pass over
        every variant).

    Examples
    --------
    Runs a (unit 0) and b (unit 1), one topic, depth 1: a pooled x, b pooled z. Without unit 0,
    x is unjudged; without unit 1, z is.

    >>> import pandas as pd
    >>> run = pd.DataFrame({"name": ["a", "a", "b", "b"], "qid": "1",
    ...                     "docno": ["x", "y", "z", "x"], "rank": [1, 2, 1, 2]})
    >>> enc = DenseRuns([run])
    >>> lab, hist = leave_out_labels(enc, enc.slots(0), 1, np.array([[1, 1, 0]], np.int16),
    ...                              np.array([0, 1]), 2, np.array([0, 1]))
    >>> lab[:, 0].tolist(), hist[:, 0].tolist()
    ([[-1, -1, 0], [1, -1, -1], [1, -1, 0]], [[1, 0], [0, 1], [1, 1]])
    """
    got = leave_out_variants(enc, slots, depth, labels, unit, n_units, left_out, owners)
    return got.dense(), got.hist


class EncodedPool:
    """The encoded pooled runs and the qrels as given, shared by every problem of a leave-out
    experiment (its run sets and leave-out units); labels as int8 when they fit.

    Parameters
    ----------
    enc : DenseRuns
        The pooled runs and the qrels' documents.
    labels, present : ndarray
        The qrels' labels (T × U, −1 unjudged) and the topics they judge (T,).
    depth : int
        The pool depth d.
    topics : str
        Which topics a run is averaged over (:data:`pbtools.measures.TOPIC_MODES`).
    decimals : int or None
        Half-up rounding of every run-level score (PROTOCOL item 10).
    """

    def __init__(self, enc: DenseRuns, labels, present, depth: int, topics: str, decimals=None):
        if labels.size and int(labels.max()) < 127:  # labels as int8: every block's variants
            labels = labels.astype(np.int8)  # are built before the shared merge pass
        self.enc, self.lab0, self.present0, self.depth = enc, labels, present, depth
        self.topics, self.decimals = topics, decimals

    def problem(self, block, lab, new, new_var, truth_var, topics=None) -> Problem:
        """A :class:`~pbtools.engine.problem.Problem` over the pooled runs ``block`` with the
        label variants ``lab`` (named by number), the runs to score ``new`` against variants
        ``new_var`` and no R_p pairs yet (a leave-out experiment adds them a chunk at a time,
        :func:`pbtools.engine.chunks.sub_problem`)."""
        nothing = np.zeros(0, np.int64)
        return Problem(
            enc=self.enc,
            pooled=block,
            depth=self.depth,
            lab=lab,
            present=np.repeat(self.present0[None], len(lab), axis=0),
            variants=pd.Index([str(i) for i in range(len(lab))], dtype="str"),
            new=new,
            new_var=new_var,
            pair_u=nothing,
            pair_p=nothing,
            truth_var=truth_var,
            topics=self.topics if topics is None else topics,
            decimals=self.decimals,
        )

    def truth(self, block) -> np.ndarray:
        """The re-pool of the runs ``block`` at depth d (PROTOCOL item 7): labels T × U."""
        return repool(self.enc, block, self.depth, self.lab0)


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
    pool = FittedPool(pooled, qrels, depth=depth, orgs=orgs, key=key)
    return pool.problem(
        new, leave_out=leave_out, rp=rp, rp_pairs=rp_pairs, topics=topics, decimals=decimals
    )


def _widen(a: np.ndarray, width: int) -> np.ndarray:
    """``a`` with −1 (unjudged) columns appended up to ``width`` along its last axis."""
    if a.shape[-1] == width:
        return a
    out = np.full((*a.shape[:-1], width), -1, dtype=a.dtype)
    out[..., : a.shape[-1]] = a
    return out


class FittedPool:
    """The side of every problem that the runs to score do not change, encoded once: the
    pooled runs with the qrels' documents (:class:`~pbtools.engine.dense.DenseRuns`), the
    qrels' labels, the truth (their re-pool at depth d, PROTOCOL item 7) and its label
    histograms, and, per leave-out unit kind, who pooled what (the leave-out variants' work
    that does not depend on the units left out). An estimator's
    :meth:`~pbtools.corrections.Estimator.fit` keeps one; :meth:`problem` adds the runs to
    score (:meth:`DenseRuns.extended <pbtools.engine.dense.DenseRuns.extended>`: the pool's
    slots, topics and local ids unchanged) and reuses the rest. :func:`from_frames` is one
    pool and one :meth:`problem`, so a fitted pool's estimates are those of one call.

    Parameters
    ----------
    pooled, qrels, depth, orgs, key
        As :func:`from_frames`.
    topics : Series, optional
        Topic ids to encode besides the pooled runs' and the qrels' (the runs to score's).

    Examples
    --------
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("ab"), "label": [1, 0]})
    >>> p1 = pd.DataFrame({"name": "p1", "qid": "1", "docno": list("ab"), "score": [2, 1]})
    >>> pool = FittedPool(p1, qrels, depth=1)
    >>> u = pd.DataFrame({"name": "u", "qid": "1", "docno": list("xa"), "score": [2, 1]})
    >>> pb = pool.problem(u)
    >>> pb.names.tolist(), pb.lab[:, 0].tolist(), pb.enc is pool.enc
    (['u'], [[1, 0, -1], [1, -1, -1]], False)
    """

    def __init__(self, pooled, qrels, *, depth: int, orgs=None, key="left_out", topics=None):
        self.S, self.qrels = ranked(pooled), as_qrels(qrels)
        self.depth, self.orgs, self.key = int(depth), orgs, key
        self.keyed = key in self.qrels.columns
        self.enc = DenseRuns([self.S], [self.qrels], topics=topics)
        self.slots = self.enc.slots(0)
        self.names = np.asarray(self.enc.names[self.slots])
        self.lab, self.present, self.var_names = self.enc.labels(
            self.qrels, key if self.keyed else None
        )
        self.truth, self.hist = None, None
        if not self.keyed:  # the qrels as given and the truth: the variants without leave-out
            self.truth = np.stack([self.lab[0], repool(self.enc, self.slots, depth, self.lab[0])])
            self.hist = label_histograms(self.truth)
        self._owners: dict[str, tuple] = {}

    def owners(self, leave_out: str) -> tuple[pd.Index, tuple[np.ndarray, np.ndarray]]:
        """The pooled runs' units (``leave_out``: ``"run"`` or ``"org"``; sorted) and who
        pooled what by unit (:meth:`~pbtools.engine.dense.DenseRuns.top_owners`); once."""
        if leave_out not in self._owners:
            orgs = self.orgs if leave_out == "org" else None
            unit = unit_map(self.names, leave_out, orgs).reindex(self.names)
            units = pd.Index(sorted(set(unit)), dtype="str")
            code = units.get_indexer(pd.Index(unit.to_numpy(), dtype="str"))
            got = self.enc.top_owners(self.slots, self.depth, code, len(units))
            self._owners[leave_out] = (units, got)
        return self._owners[leave_out]

    def problem(
        self,
        new: pd.DataFrame,
        *,
        leave_out: str | None = None,
        rp: str = "org",
        rp_pairs: pd.DataFrame | None = None,
        topics: str | None = None,
        decimals: int | None = None,
    ) -> Problem:
        """The problem of scoring the runs ``new`` against this pool (arguments as
        :func:`from_frames`)."""
        mode = topics_mode(topics)
        U = ranked(new)
        key, depth, orgs = self.key, self.depth, self.orgs
        if self.keyed and key not in U.columns:
            raise InputError(f"qrels have a {key!r} column: the runs to score need one too")
        enc = self.enc.extended([U])
        if enc is None:  # topics the pool lacks: a pool with them (topic numbers stay sorted)
            pool = FittedPool(self.S, self.qrels, depth=depth, orgs=orgs, key=key, topics=U.qid)
            return pool.problem(
                U, leave_out=leave_out, rp=rp, rp_pairs=rp_pairs, topics=mode, decimals=decimals
            )
        s_slots, u_slots = self.slots, enc.slots(1)
        s_names = self.names
        u_names = np.asarray(enc.names[u_slots])
        lab, present, var_names = self.lab, self.present, self.var_names
        hist = None
        names_all = sorted(set(s_names) | set(u_names))
        if leave_out == "org" and orgs is None:
            raise InputError("leave_out='org' needs orgs (name, org)")
        # the unit a run is withdrawn with; R_p under rp="org" is the pool without that unit
        unit = unit_map(names_all, leave_out or "run", orgs if leave_out == "org" else None)
        if self.keyed:
            umap = U[["name", key]].drop_duplicates("name")
            if umap["name"].duplicated().any():
                raise InputError("a run to score is assigned to several qrels variants")
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
            lab, hist = self.truth, self.hist
            present = np.stack([present[0], present[0]])
            var_names = pd.Index(["", "\0truth"], dtype="str")
            truth_var = 1
        else:
            if leave_out not in ("run", "org"):
                raise InputError(f"leave_out must be None, 'run' or 'org', got {leave_out!r}")
            pooled_units, owners = self.owners(leave_out)
            units = pd.Index(sorted({unit[n] for n in u_names}), dtype="str")
            left = pooled_units.get_indexer(units)
            alone = left < 0  # a unit without pooled runs: its own code, the truth as variant
            left[alone] = len(pooled_units) + np.arange(int(alone.sum()))
            # each unit's reduced qrels, then the truth: the re-pools without it and with all
            n_units = len(pooled_units) + int(alone.sum())
            lab, hist = leave_out_labels(
                self.enc, s_slots, depth, lab[0], None, n_units, left, owners=owners
            )
            present = np.repeat(present[:1], len(units) + 1, axis=0)
            var_names = units.append(pd.Index(["\0truth"], dtype="str"))
            u_var = units.get_indexer(pd.Index([unit[n] for n in u_names], dtype="str"))
            truth_var = len(units)
        if rp_pairs is not None:
            pu = pd.Index(u_names, dtype="str").get_indexer(rp_pairs["unpooled"].astype(str))
            pp = pd.Index(s_names, dtype="str").get_indexer(rp_pairs["name"].astype(str))
            ok = (pu >= 0) & (pp >= 0)
            order = np.lexsort((pp[ok], pu[ok]))
            pair_u, pair_p = pu[ok][order], s_slots[pp[ok][order]]
        else:
            if rp not in ("org", "run"):
                raise InputError(f"rp must be 'org' or 'run', got {rp!r}")
            # R_p: the pooled runs of another unit (rp="org") or every other run (rp="run")
            key_of = unit if rp == "org" else {n: n for n in names_all}
            spec = PairSpec.from_labels(
                [key_of[n] for n in u_names], [key_of[n] for n in s_names], s_slots
            )
            pair_u, pair_p = spec.pairs(0, len(u_slots))
        lab = _widen(lab, enc.U)  # the runs to score's own documents: unjudged
        problem = Problem(
            enc=enc,
            pooled=s_slots,
            depth=int(depth),
            lab=lab,
            present=present,
            variants=var_names,
            new=u_slots,
            new_var=np.asarray(u_var, dtype=np.int64),
            pair_u=np.asarray(pair_u, dtype=np.int64),
            pair_p=np.asarray(pair_p, dtype=np.int64),
            truth_var=truth_var,
            topics=mode,
            decimals=decimals,
        )
        if hist is not None:
            problem.set_hist(hist)
        return problem
