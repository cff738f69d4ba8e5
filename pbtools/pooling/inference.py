"""Pool inference: which runs of a collection were pooled, and to what depth (PROTOCOL items 4-6).

Given the qrels and *all* submitted runs of a test collection, :func:`infer_pool` recovers the
pool depth d and the pooled runs R_p the way the reference tool of Lipani et al.
(aldolipani/PoolBiasEstimators, ``PoolAnalyser``) does, under one of four named rules
(:data:`POLICIES`). Every statistic is computed for all (run, topic) rankings at once from the
judged/unjudged flags of the runs in trec order; no loop over runs, topics or documents.

Only the topics that have rows in the qrels are used (never the categories of an encoded qid
column, which may list topics shared with the runs but never judged). Topics only in the runs,
and qrels topics no run answers, are ignored.

Definitions, per *ranking* (one run on one qrels topic, after de-duplication, in trec order):

* **judged prefix** (item 4): the number of leading documents that are in the qrels (any label).
* **depth d** (item 5), by the policy's ``depth_from``:

  - ``"rankings"`` (2015 code): the most frequent non-zero judged prefix over all rankings;
  - ``"runs"`` (later code): each run votes — nothing when one of its rankings has judged prefix
    0 (the run is *ignored*, it does not fall back to a smaller prefix); its longest ranking
    when every ranking is judged to the end ("full"); else its smallest judged prefix among the
    rankings that are not full. d is the most frequent vote.

  Ties go to the larger value (the later code's ``modeRight``; the 2015 code broke ties by hash
  order). The later code takes the longest ranking over *all* of a run's topics; here only
  qrels topics count, like everywhere else.

* **a** (item 6): walk down the ranking stepping over at most t unjudged documents; the walk
  stops at the (t+1)-th unjudged one or at the end of the ranking. With ``counted=False`` a is
  the number of *judged* documents walked over; with ``counted=True`` it is the number of
  positions walked over (judged and stepped-over ones).
* **pooled**: a run is pooled when on every qrels topic it answers a ≥ d, or the ranking is
  short: ``length < a + ⌊d/10⌋`` (``counted=False``, the 2015 code) or a reaches the end of the
  ranking (``counted=True``, the later code). A run that answers no qrels topic is not pooled
  (the reference code's ``forall`` over no topic would call it pooled; it contributed nothing).

The policies (t = ⌊d/divisor⌋):

================  ============  =========  =========  ==============================================
policy            d from        a          t          source
================  ============  =========  =========  ==============================================
``paper``         rankings      judged     ⌊d/5⌋      reproduces the paper's |R_p| (default; the
                                                      ``lipani2015`` protocol preset's rule)
``snapshot2015``  rankings      judged     ⌊d/10⌋     the 2015 snapshot of the code (bfd5d65)
``later``         runs          positions  ⌊d/20⌋     the code's current head (``PoolAnalyzer``)
``counted10``     rankings      positions  ⌊d/10⌋     pbtools' rule before issue 14 (no version
                                                      of the reference code implements it)
================  ============  =========  =========  ==============================================

Aliases (:data:`ALIASES`): ``lipani2015`` = ``paper`` (the rule of the ``lipani2015`` preset;
before issue 14 this name meant ``counted10``), ``per_run`` = ``later`` (per-run depth votes;
before issue 14 a run with a zero-prefix ranking fell back to its smallest non-zero prefix).

On TREC-2 ad hoc (run id = tag) d = 100 under every policy; ``paper``, ``later`` and
``counted10`` pool all run files but ``rutfmed`` and ``uicah`` (36), ``snapshot2015`` 32.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pbtools.errors import InputError
from pbtools.frames import (
    encode,
    group_starts,
    mapped_codes,
    positions_in,
    ranked,
    require_columns,
    used_codes,
)
from pbtools.ids import index_in
from pbtools.policynames import ALIASES, DEFAULT_POLICY, POLICY_CHOICES
from pbtools.validation import validates

__all__ = [
    "ALIASES",
    "DEFAULT_POLICY",
    "EmptyPoolError",
    "POLICIES",
    "POLICY_CHOICES",
    "Policy",
    "PoolInfo",
    "get_policy",
    "infer_pool",
    "judged_prefixes",
]


@dataclass(frozen=True)
class Policy:
    """One pool-inference rule (PROTOCOL items 5-6; see the module docstring).

    ``name``; ``depth_from``: ``"rankings"`` (mode of the judged prefixes) or ``"runs"`` (mode
    of the per-run votes); ``counted``: whether stepped-over unjudged documents count in a (and
    a short ranking must be walked to its end) or not (and a short ranking may end fewer than
    ⌊d/10⌋ documents after a); ``divisor``: t = ⌊d/divisor⌋; ``source``: where the rule comes
    from.
    """

    name: str
    depth_from: str
    counted: bool
    divisor: int
    source: str

    def skip(self, depth: int) -> int:
        """t, the number of unjudged documents a ranking may step over at depth ``depth``."""
        return int(depth) // self.divisor


#: the pool-inference rules by name
POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        Policy("paper", "rankings", False, 5, "the paper's |R_p| (PROTOCOL item 6; the preset)"),
        Policy("snapshot2015", "rankings", False, 10, "reference code of 2015-07-20 (bfd5d65)"),
        Policy("later", "runs", True, 20, "reference code, current head (PoolAnalyzer)"),
        Policy("counted10", "rankings", True, 10, "pbtools before issue 14; no reference code"),
    )
}


class EmptyPoolError(InputError):
    """Pool inference found no pool: no shared topic, no judged prefix, or no pooled run."""


def get_policy(policy: str | Policy) -> Policy:
    """The :class:`Policy` named ``policy`` (a name of :data:`POLICIES` or :data:`ALIASES`)."""
    if isinstance(policy, Policy):
        return policy
    name = ALIASES.get(policy, policy)
    if name not in POLICIES:
        raise InputError(f"pool policy must be one of {', '.join(POLICY_CHOICES)}; got {policy!r}")
    return POLICIES[name]


@dataclass
class PoolInfo:
    """The result of :func:`infer_pool`.

    ``depth``: the pool depth d; ``pooled_runs``: the names of the pooled runs (R_p, in name
    order); ``runs``: one row per run — ``name``, ``topics`` (its rankings on qrels topics),
    ``prefix_min``, ``prefix_median``, ``prefix_max`` (judged prefixes), ``run_depth`` (the run's
    depth vote as in the ``later`` policy; 0 = no vote: a ranking with judged prefix 0, or no
    qrels topic), ``short_topics`` (rankings on which the run is not pooled), ``pooled``;
    ``policy`` (canonical name), ``tolerance`` (t/d, or the fraction passed), ``skip`` (t);
    ``rankings``: one row per ranking — ``name``, ``qid``, ``length``, ``prefix``, ``walk``,
    ``judged_walk`` (see :func:`judged_prefixes`), ``a`` (the policy's a) and ``reached``.
    """

    depth: int
    pooled_runs: list[str]
    runs: pd.DataFrame
    policy: str
    tolerance: float
    skip: int
    rankings: pd.DataFrame = field(repr=False, default=None)

    @property
    def unpooled_runs(self) -> list[str]:
        """Names of the runs that are not pooled."""
        return self.runs.loc[~self.runs["pooled"], "name"].astype(str).tolist()

    def pooled(self, runs: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``runs`` whose run is pooled (R_p): what the estimators compare with."""
        return runs[runs["name"].astype(str).isin(self.pooled_runs).to_numpy()]


@dataclass
class _Flags:
    """Judged flags of every ranked document, grouped by (run, topic) ranking (trec order)."""

    gid: np.ndarray  # ranking index of each row
    start: np.ndarray  # row starts a ranking
    pos: np.ndarray  # 1-based position in the ranking
    unj: np.ndarray  # row's document is not in the qrels
    length: np.ndarray  # per ranking
    prefix: np.ndarray  # per ranking: judged prefix
    frame: pd.DataFrame  # per ranking: name, qid, length, prefix


def _flags(runs: pd.DataFrame, qrels: pd.DataFrame) -> _Flags:
    require_columns(qrels, ("qid", "docno"), "qrels")
    require_columns(runs, ("name", "qid", "docno", "score"), "runs")
    runs = ranked(runs)
    judged_topics = used_codes(qrels["qid"])[1]  # topics with rows, not the categories
    rq = encode(runs["qid"])
    on_topic = judged_topics.get_indexer(rq.cat.categories)[rq.cat.codes.to_numpy()] >= 0
    if not on_topic.all():
        runs = runs.loc[on_topic]
    rqc, qcats_used = used_codes(runs["qid"])
    qq = mapped_codes(qrels["qid"], qcats_used)
    # every run row's document by its code in the qrels' docno dictionary (−1: judged on no
    # topic, so unjudged): the runs' dictionary is looked up in the qrels' (the small side);
    # the (topic, document) pairs of the qrels then live in a small key space
    rd, qdoc = encode(runs["docno"]), encode(qrels["docno"])
    qd = qdoc.cat.codes.to_numpy().astype(np.int64)
    nj = max(len(qdoc.cat.categories), 1)
    rj = index_in(rd.cat.categories, qdoc.cat.categories)[rd.cat.codes.to_numpy()]
    ok = (qq >= 0) & (qd >= 0)
    qkey = np.unique(qq[ok] * nj + qd[ok])
    unj = rj < 0  # judged on no topic; the others' (topic, document) keys built in place
    np.maximum(rj, 0, out=rj)
    rj += rqc * nj
    unj |= positions_in(qkey, rj, len(qcats_used) * nj) < 0
    del rj
    start = group_starts(encode(runs["name"]).cat.codes.to_numpy(), rqc)
    gid = np.cumsum(start) - 1
    ng = int(gid[-1]) + 1 if len(gid) else 0
    length = np.bincount(gid, minlength=ng).astype(np.int64)
    pos = runs["rank"].to_numpy()  # as stored (int32): only indexed
    # first unjudged row of each ranking (rows are in ranking order): no ufunc.at
    idx = np.flatnonzero(unj)
    g = gid[idx]
    head = np.r_[True, g[1:] != g[:-1]] if len(g) else np.zeros(0, dtype=bool)
    prefix = length.copy()
    prefix[g[head]] = pos[idx[head]] - 1
    first = np.flatnonzero(start)
    frame = pd.DataFrame(
        {
            "name": runs["name"].iloc[first].to_numpy(),
            "qid": runs["qid"].iloc[first].to_numpy(),
            "length": length,
            "prefix": prefix,
        }
    ).astype({"name": runs["name"].dtype, "qid": runs["qid"].dtype})
    return _Flags(gid, start, pos, unj, length, prefix, frame)


def _walk(f: _Flags, skip: int) -> tuple[np.ndarray, np.ndarray]:
    """Per ranking: positions and judged documents before the (skip+1)-th unjudged one."""
    ng = len(f.length)
    cum = np.cumsum(f.unj)
    base = cum[f.start] - f.unj[f.start] if ng else np.zeros(0, dtype=np.int64)
    cum -= base[f.gid]  # unjudged rows so far in the ranking (in place: no row temporaries)
    stop = f.unj & (cum == skip + 1)
    stop_pos = np.full(ng, -1, dtype=np.int64)
    stop_pos[f.gid[stop]] = f.pos[stop]
    n_unj = np.bincount(f.gid[f.unj], minlength=ng)
    walk = np.where(stop_pos > 0, stop_pos - 1, f.length)
    judged_walk = np.where(stop_pos > 0, stop_pos - 1 - skip, f.length - n_unj)
    return walk, judged_walk


@validates(runs="run", qrels="judgments")
def judged_prefixes(runs: pd.DataFrame, qrels: pd.DataFrame, skip: int = 0) -> pd.DataFrame:
    """Judged-prefix statistics of every (run, topic) ranking (PROTOCOL items 4 and 6).

    Parameters
    ----------
    runs : DataFrame
        Run columns (``name``, ``qid``, ``docno``, ``score``, ``rank``); put in trec order when
        they are not.
    qrels : DataFrame
        ``qid``, ``docno`` (a ``label`` is not used: being listed is being judged). Only topics
        with rows in it are kept.
    skip : int
        t, the number of unjudged documents the walk may step over.

    Returns
    -------
    DataFrame
        One row per ranking: ``name``, ``qid``, ``length`` (documents ranked), ``prefix``
        (judged prefix), ``walk`` (positions before the (skip+1)-th unjudged document, or
        ``length``), ``judged_walk`` (judged documents among them).

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools.frames import as_run
    >>> runs = as_run(pd.DataFrame({"name": "A", "qid": "1", "docno": list("abxcyzd"),
    ...                             "score": [7.0, 6, 5, 4, 3, 2, 1]}))
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("abcd"), "label": 0})
    >>> judged_prefixes(runs, qrels, skip=1)[["length", "prefix", "walk", "judged_walk"]]
       length  prefix  walk  judged_walk
    0       7       2     4            3
    """
    f = _flags(runs, qrels)
    walk, judged_walk = _walk(f, skip)
    return f.frame.assign(walk=walk, judged_walk=judged_walk)


def _mode(values: np.ndarray) -> int:
    """Most frequent positive value, ties to the larger; 0 for no positive value."""
    values = values[values > 0]
    if len(values) == 0:
        return 0
    vals, counts = np.unique(values, return_counts=True)
    return int(vals[counts == counts.max()].max())


def _per_run(plain: pd.DataFrame) -> pd.DataFrame:
    """Per-run prefix statistics and the run's depth vote (``later`` policy, item 5)."""
    full = plain["prefix"] >= plain["length"]
    g = plain.assign(
        zero=(plain["prefix"] == 0).astype(np.int64),
        nf=plain["prefix"].where(~full),
    )
    per_run = g.groupby("name", observed=True, sort=True).agg(
        topics=("qid", "size"),
        prefix_min=("prefix", "min"),
        prefix_median=("prefix", "median"),
        prefix_max=("prefix", "max"),
        zeros=("zero", "sum"),
        nonfull_min=("nf", "min"),
        longest=("length", "max"),
    )
    vote = per_run["nonfull_min"].fillna(per_run["longest"]).astype(np.int64)
    per_run["run_depth"] = vote.where(per_run["zeros"] == 0, 0)
    return per_run.drop(columns=["zeros", "nonfull_min", "longest"])


def _sample(names) -> str:
    names = [str(n) for n in names]
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


@validates(runs="run", qrels="judgments")
def infer_pool(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    policy: str | Policy = DEFAULT_POLICY,
    *,
    tolerance: float | None = None,
    depth: int | None = None,
) -> PoolInfo:
    """Infer the pool depth d and the pooled runs R_p from the qrels and all submitted runs.

    PROTOCOL-lipani2015 items 4-6; Lipani et al. 2015 §5. The rules are in the module docstring.

    Parameters
    ----------
    runs : DataFrame
        Every submitted run (run columns).
    qrels : DataFrame
        ``qid``, ``docno``. Its topics are the qids of its rows.
    policy : str or Policy
        ``"paper"`` (default), ``"snapshot2015"``, ``"later"``, ``"counted10"``, or an alias of
        :data:`ALIASES` (``"lipani2015"`` = ``"paper"``, ``"per_run"`` = ``"later"``).
    tolerance : float, optional
        Overrides the policy's t with ⌊tolerance·d⌋.
    depth : int, optional
        Fixes d (≥ 1) instead of inferring it.

    Returns
    -------
    PoolInfo

    Raises
    ------
    EmptyPoolError
        (a ``ValueError``) when no run answers a qrels topic, when d cannot be inferred (no
        ranking starts with a judged document), or when no run is pooled.

    References
    ----------
    A. Lipani, M. Lupu, A. Hanbury. Splitting water: precision and anti-precision to reduce pool
    bias. SIGIR 2015.

    Examples
    --------
    Three runs on one topic judged to depth 4; B has one unjudged document (``x``) in its top 4,
    C two (``x``, ``y``):

    >>> import pandas as pd
    >>> from pbtools.frames import as_run
    >>> rankings = {"A": "abcdefgh", "B": "abxcdefg", "C": "axbycdef"}
    >>> runs = as_run(pd.DataFrame([
    ...     {"name": n, "qid": "1", "docno": doc, "score": 10.0 - i}
    ...     for n, docs in rankings.items() for i, doc in enumerate(docs)]))
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("abcd"), "label": [1, 0, 0, 1]})
    >>> info = infer_pool(runs, qrels, "paper", depth=4)  # t = 0: a = judged before the 1st x
    >>> info.skip, info.pooled_runs
    (0, ['A'])
    >>> infer_pool(runs, qrels, "counted10", tolerance=0.25, depth=4).pooled_runs  # t = 1
    ['A', 'B']
    >>> infer_pool(runs, qrels, "paper", tolerance=0.5, depth=4).pooled_runs  # t = 2
    ['A', 'B', 'C']
    """
    pol = get_policy(policy)
    if depth is not None and int(depth) < 1:
        raise InputError(f"depth must be >= 1, got {depth}")
    if tolerance is not None and not tolerance >= 0:
        raise InputError(f"tolerance must be >= 0, got {tolerance}")
    flags = _flags(runs, qrels)
    plain = flags.frame
    names = encode(runs["name"]).cat.categories
    if len(plain) == 0:
        raise EmptyPoolError(
            f"no pool: none of the {len(names)} runs answers any of the "
            f"{len(used_codes(qrels['qid'])[1])} qrels topics (run topics: "
            f"{_sample(used_codes(runs['qid'])[1])}; qrels topics: "
            f"{_sample(used_codes(qrels['qid'])[1])})"
        )
    per_run = _per_run(plain)
    if depth is None:
        if pol.depth_from == "rankings":
            depth = _mode(plain["prefix"].to_numpy())
        else:
            depth = _mode(per_run["run_depth"].to_numpy())
        if depth == 0:
            why = (
                "every run has a ranking whose first document is unjudged (policy "
                f"{pol.name!r} ignores such runs)"
                if pol.depth_from == "runs" and (plain["prefix"] > 0).any()
                else "no ranking of any run starts with a judged document"
            )
            raise EmptyPoolError(
                f"no pool: cannot infer the pool depth: {why}; are these the qrels of these "
                "runs (same qids and docnos)?"
            )
    depth = int(depth)
    skip = pol.skip(depth) if tolerance is None else int(np.floor(tolerance * depth + 1e-9))
    tol = skip / depth if tolerance is None else float(tolerance)
    walk, judged_walk = _walk(flags, skip)
    length = plain["length"].to_numpy()
    if pol.counted:
        a = walk
        reach = (a >= depth) | (a >= length)
    else:
        a = judged_walk
        reach = (a >= depth) | (length < a + depth // 10)
    rankings = plain.assign(walk=walk, judged_walk=judged_walk, a=a, reached=reach)
    short = (~rankings["reached"]).groupby(rankings["name"], observed=True, sort=True).sum()
    table = per_run.reset_index()
    table["short_topics"] = short.reindex(table["name"]).fillna(0).astype(np.int64).to_numpy()
    table["pooled"] = table["short_topics"] == 0
    # runs without any ranking on a qrels topic are not pooled
    missing = names[~names.isin(table["name"].astype(str))]
    if len(missing):
        extra = pd.DataFrame(
            {"name": missing.astype(str), "topics": 0, "run_depth": 0, "short_topics": 0}
        ).assign(pooled=False)
        table = pd.concat([table.astype({"name": "str"}), extra], ignore_index=True)
        table = table.astype({"topics": np.int64, "run_depth": np.int64})
    table["name"] = encode(table["name"].astype("str"))
    table = table.sort_values("name", key=lambda s: s.cat.codes).reset_index(drop=True)
    pooled = table.loc[table["pooled"], "name"].astype(str).tolist()
    if not pooled:
        best = table[table["topics"] > 0].sort_values("short_topics", kind="stable").iloc[0]
        raise EmptyPoolError(
            f"no pool: no run is pooled at depth d = {depth} under policy {pol.name!r} "
            f"(t = {skip}): every run has a qrels topic on which it is judged less than d deep; "
            f"the closest, {best['name']}, on {best['short_topics']} of {best['topics']} topics"
        )
    return PoolInfo(depth, pooled, table, pol.name, tol, skip, rankings)
