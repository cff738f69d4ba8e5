"""The one builder of the encoded problem's relevance-set variants and of R_p.

Every estimator compares a run to score with the pooled runs R_p on the qrels without its
left-out unit (PROTOCOL-lipani2015 items 7, 8, 12). Those are built here, once, for both
callers: :func:`from_frames` (a problem from run and qrels frames: ``correct`` and the
estimator classes) and the leave-out experiments (:mod:`pbtools.experiments.leaveout`, through
:class:`EncodedPool`):

* :func:`repool` — the truth: the qrels restricted to the pooled runs' top d (item 7);
* :func:`leave_out_labels` — each unit's reduced qrels, then the truth, with their label
  histograms (item 8);
* :class:`PairSpec` — R_p: each run to score paired with the pooled runs of another key
  (its unit, ``rp="org"``, or its name, ``rp="run"``; item 12);
* :func:`unit_map` — the leave-out unit of each run (its name or its organisation).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from pbtools.engine.dense import DenseRuns, variant_histograms
from pbtools.engine.problem import Problem
from pbtools.errors import InputError
from pbtools.frames import as_qrels, ranked, require_columns
from pbtools.measures.topics import topics_mode
from pbtools.validation import validates

__all__ = [
    "EncodedPool",
    "PairSpec",
    "from_frames",
    "leave_out_labels",
    "repool",
    "unit_map",
]


@validates(orgs="orgs")
def unit_map(
    names: Iterable[str],
    unit: str = "run",
    orgs: pd.DataFrame | None = None,
) -> pd.Series:
    """The unit of each run name: the name itself (``unit="run"``) or its organisation.

    ``orgs`` (columns ``name``, ``org``) is required for ``unit="org"``; a run it does not list is
    an organisation of its own, named after the run. Returns a ``str`` Series indexed by name.
    """
    names = pd.Index(pd.unique(np.asarray(list(map(str, names)), dtype=object)), dtype="str")
    if unit == "run":
        return pd.Series(names, index=names, dtype="str")
    if unit != "org":
        raise InputError(f"unit must be 'run' or 'org', got {unit!r}")
    if orgs is None:
        raise InputError("unit='org' needs an orgs frame (columns name, org)")
    require_columns(orgs, ("name", "org"), "orgs")
    m = pd.Series(
        orgs["org"].astype("str").to_numpy(),
        index=pd.Index(orgs["name"].astype("str").to_numpy(), dtype="str"),
    )
    m = m[~m.index.duplicated(keep="first")]
    out = pd.Series(m.reindex(names).to_numpy(), index=names, dtype="str")
    return out.fillna(pd.Series(names, index=names, dtype="str"))


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
    # who pooled what: per document the number of units and the only one, if one
    count, owner = enc.top_owners(slots, depth, unit, n_units)
    truth = np.where(count > 0, labels, -1).astype(labels.dtype)
    left_out = np.asarray(left_out, np.int64)
    # every variant starts as the truth; variant v loses the documents only its unit pooled
    lab = np.empty((len(left_out) + 1, *truth.shape), dtype=truth.dtype)
    lab[:] = truth
    variant_of = np.full(n_units + 1, -1, dtype=np.int64)
    variant_of[left_out] = np.arange(len(left_out))
    only = variant_of[owner.ravel()]  # owner −1 (none or several units) reads the spare −1
    cells = np.flatnonzero(only >= 0)
    lab.reshape(len(lab), -1)[only[cells], cells] = -1
    return lab, variant_histograms(truth, only[cells], cells, len(lab))


class PairSpec:
    """R_p of each run to score: the pooled runs of the block whose key differs from its own.

    ``u_key`` (one per run to score) and ``p_key`` (one per run of ``block``) are integer
    codes: a run to score is paired with every run of the block of another key (its own slot
    under ``rp="run"``, its unit under ``rp="org"``), in block order.

    Examples
    --------
    >>> spec = PairSpec(np.array([0, 1]), np.array([0, 1, 1]), np.array([10, 11, 12]))
    >>> [a.tolist() for a in spec.pairs(0, 2)]
    [[0, 0, 1], [11, 12, 10]]
    """

    def __init__(self, u_key: np.ndarray, p_key: np.ndarray, block: np.ndarray):
        self.u_key, self.p_key, self.block = u_key, p_key, block

    @classmethod
    def from_labels(cls, u_labels, p_labels, block: np.ndarray) -> PairSpec:
        """The spec of string keys (run names or units), coded over their union.

        >>> spec = PairSpec.from_labels(["o1", "o2"], ["o1", "o2", "o2"], np.array([4, 5, 6]))
        >>> [a.tolist() for a in spec.pairs(0, 2)]
        [[0, 0, 1], [5, 6, 4]]
        """
        u = pd.Index(list(u_labels), dtype="str")
        p = pd.Index(list(p_labels), dtype="str")
        keys = u.append(p).unique()
        return cls(keys.get_indexer(u), keys.get_indexer(p), np.asarray(block))

    def pairs(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """``pair_u`` (index into the runs to score) and ``pair_p`` (slot) of runs ``lo:hi``,
        in (run, block) order."""
        pu, pi = np.nonzero(self.u_key[lo:hi, None] != self.p_key[None, :])
        return pu.astype(np.int64) + lo, self.block[pi]


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
    hist = None
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
        lab = np.stack([lab[0], repool(enc, s_slots, depth, lab[0])])
        present = np.stack([present[0], present[0]])
        var_names = pd.Index(["", "\0truth"], dtype="str")
        truth_var = 1
    else:
        if leave_out not in ("run", "org"):
            raise ValueError(f"leave_out must be None, 'run' or 'org', got {leave_out!r}")
        units = pd.Index(sorted({unit[n] for n in u_names}), dtype="str")
        every = units.append(pd.Index(sorted({unit[n] for n in s_names}), dtype="str")).unique()
        s_unit = every.get_indexer(pd.Index([unit[n] for n in s_names], dtype="str"))
        # each unit's reduced qrels, then the truth: the re-pools without it and with all
        lab, hist = leave_out_labels(
            enc, s_slots, depth, lab[0], s_unit, len(every), every.get_indexer(units)
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
            raise ValueError(f"rp must be 'org' or 'run', got {rp!r}")
        # R_p: the pooled runs of another unit (rp="org") or every other run (rp="run")
        key_of = unit if rp == "org" else {n: n for n in names_all}
        spec = PairSpec.from_labels(
            [key_of[n] for n in u_names], [key_of[n] for n in s_names], s_slots
        )
        pair_u, pair_p = spec.pairs(0, len(u_slots))
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
