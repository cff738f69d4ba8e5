"""Pool inference: which runs of a collection were pooled, and to what depth (PROTOCOL items 4-6).

Given the qrels and *all* submitted runs of a test collection, :func:`infer_pool` recovers the
pool depth d and the pooled runs R_p, the way the reference tool of Lipani et al.
(aldolipani/PoolBiasEstimators, ``PoolAnalyser``) does. Every statistic is computed for all
(run, topic) rankings at once from the judged/unjudged flags of the runs in trec order.

Definitions (per ranking = one run on one topic that the qrels have; positions in trec order):

* **judged prefix** (item 4): the number of leading documents that are in the qrels (any label).
* **depth d** (item 5):

  - ``policy="lipani2015"``: the most frequent non-zero judged prefix over all (run, topic)
    rankings (ties to the larger);
  - ``policy="per_run"`` (later versions): each run's depth is its smallest non-zero judged prefix
    among the rankings it does not judge fully, or its longest ranking when every ranking is fully
    judged; d is the most frequent run depth (ties to the larger).

* **pooled** (item 6): with ``t`` = ⌊tolerance·d⌋ unjudged documents that may be stepped over
  (``tolerance`` 1/10 for ``lipani2015``, 1/20 for ``per_run``; any value may be passed), walk down
  the ranking until the (t+1)-th unjudged document; the *walk* is the number of positions passed
  (judged and stepped-over ones). A ranking *reaches d* when its walk is at least d or the ranking
  ends first (walk = length); a run is pooled when every one of its rankings reaches d.

  Counting positions, not only judged documents, is what makes TREC-2 come out as published:
  ``CLARTA`` on topic 120 has 5 unjudged documents in its top 100 and 11 by position 109, so a
  walk that counts judged documents only (the first version of the reference code) stops at 98
  judged documents and would wrongly call the run unpooled.

Topics the run has but the qrels lack are ignored; topics the run lacks count as reached.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pbtools.frames import (
    encode,
    group_starts,
    is_trec_ordered,
    mapped_codes,
    require_columns,
    trec_order,
    used_codes,
)

__all__ = ["PoolInfo", "infer_pool", "judged_prefixes", "POLICIES"]

#: default tolerance (fraction of d that may be stepped over) per policy
POLICIES: dict[str, float] = {"lipani2015": 1 / 10, "per_run": 1 / 20}


@dataclass
class PoolInfo:
    """The result of :func:`infer_pool`.

    ``depth``: the inferred pool depth d; ``pooled_runs``: the names of the pooled runs (R_p, in
    name order); ``runs``: one row per run — ``name``, ``topics`` (rankings on qrels topics),
    ``prefix_min``, ``prefix_median``, ``prefix_max`` (judged-prefix statistics), ``run_depth``
    (the run's own depth, ``per_run`` definition), ``short_topics`` (rankings that do not reach
    d), ``pooled`` (bool); ``policy``, ``tolerance`` (fraction) and ``skip`` (⌊tolerance·d⌋).
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
    runs = runs if is_trec_ordered(runs) else trec_order(runs)
    qcats = encode(qrels["qid"]).cat.categories
    rq = encode(runs["qid"])
    on_topic = qcats.get_indexer(rq.cat.categories)[rq.cat.codes.to_numpy()] >= 0
    if not on_topic.all():
        runs = runs.loc[on_topic]
    rqc, qcats_used = used_codes(runs["qid"])
    rdc, dcats_used = used_codes(runs["docno"])
    nd = np.int64(max(len(dcats_used), 1))
    qq, qd = mapped_codes(qrels["qid"], qcats_used), mapped_codes(qrels["docno"], dcats_used)
    qkey = np.unique(qq[(qq >= 0) & (qd >= 0)] * nd + qd[(qq >= 0) & (qd >= 0)])
    rkey = rqc * nd + rdc
    loc = np.minimum(np.searchsorted(qkey, rkey), max(len(qkey) - 1, 0))
    unj = ~(qkey[loc] == rkey) if len(qkey) else np.ones(len(rkey), dtype=bool)
    start = group_starts(encode(runs["name"]).cat.codes.to_numpy(), rqc)
    gid = np.cumsum(start) - 1
    ng = int(gid[-1]) + 1 if len(gid) else 0
    length = np.bincount(gid, minlength=ng).astype(np.int64)
    pos = runs["rank"].to_numpy().astype(np.int64)
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
    base = (cum - f.unj)[f.start] if ng else np.zeros(0, dtype=np.int64)
    stop = f.unj & (cum - base[f.gid] == skip + 1)
    stop_pos = np.full(ng, -1, dtype=np.int64)
    stop_pos[f.gid[stop]] = f.pos[stop]
    n_unj = np.bincount(f.gid, weights=f.unj, minlength=ng).astype(np.int64)
    walk = np.where(stop_pos > 0, stop_pos - 1, f.length)
    judged_walk = np.where(stop_pos > 0, stop_pos - 1 - skip, f.length - n_unj)
    return walk, judged_walk


def judged_prefixes(runs: pd.DataFrame, qrels: pd.DataFrame, skip: int = 0) -> pd.DataFrame:
    """Judged-prefix statistics of every (run, topic) ranking (PROTOCOL items 4 and 6).

    ``runs``: run columns; ``qrels``: ``qid``, ``docno`` (+ ``label``, unused: being listed is
    being judged). Only topics present in the qrels are kept. Returns one row per ranking:
    ``name``, ``qid``, ``length`` (documents ranked), ``prefix`` (judged prefix), ``walk``
    (positions before the (skip+1)-th unjudged document, or ``length``), ``judged_walk``
    (judged documents among them).
    """
    f = _flags(runs, qrels)
    walk, judged_walk = _walk(f, skip)
    return f.frame.assign(walk=walk, judged_walk=judged_walk)


def _mode(values: np.ndarray) -> int:
    """Most frequent value, ties to the larger; 0 for no values."""
    values = values[values > 0]
    if len(values) == 0:
        return 0
    vals, counts = np.unique(values, return_counts=True)
    return int(vals[counts == counts.max()].max())


def infer_pool(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    policy: str = "lipani2015",
    *,
    tolerance: float | None = None,
    depth: int | None = None,
) -> PoolInfo:
    """Infer the pool depth d and the pooled runs R_p from qrels and all submitted runs.

    PROTOCOL-lipani2015 items 4-6 (see the module docstring for the exact rules); Lipani §5.
    ``runs``: every submitted run (run columns); ``qrels``: ``qid``, ``docno``. ``policy``:
    ``"lipani2015"`` (d = mode over rankings, skip ⌊d/10⌋) or ``"per_run"`` (d = mode over run
    depths, skip ⌊d/20⌋). ``tolerance`` overrides the policy's fraction
    of d that may be stepped over; ``depth`` fixes d instead of inferring it. On TREC-2 ad hoc
    (run id = tag) both policies give d = 100 and R_p = all runs but ``rutfmed`` and ``uicah``.

    Returns a :class:`PoolInfo`.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {sorted(POLICIES)}, got {policy!r}")
    tol = POLICIES[policy] if tolerance is None else float(tolerance)
    flags = _flags(runs, qrels)
    plain = flags.frame
    nonfull = plain["prefix"] < plain["length"]
    g = plain.assign(nf=plain["prefix"].where(nonfull & (plain["prefix"] > 0)))
    per_run = g.groupby("name", observed=True, sort=True).agg(
        topics=("qid", "size"),
        prefix_min=("prefix", "min"),
        prefix_median=("prefix", "median"),
        prefix_max=("prefix", "max"),
        nonfull_min=("nf", "min"),
        longest=("length", "max"),
    )
    per_run["run_depth"] = per_run["nonfull_min"].fillna(per_run["longest"]).astype(np.int64)
    if depth is None:
        if policy == "lipani2015":
            depth = _mode(plain["prefix"].to_numpy())
        else:
            depth = _mode(per_run["run_depth"].to_numpy())
    depth = int(depth)
    skip = int(np.floor(tol * depth + 1e-9))
    walk, judged_walk = _walk(flags, skip)
    walked = plain.assign(walk=walk, judged_walk=judged_walk)
    reach = (walked["walk"] >= depth) | (walked["walk"] == walked["length"])
    short = (~reach).groupby(walked["name"], observed=True, sort=True).sum()
    table = per_run.drop(columns=["nonfull_min", "longest"]).reset_index()
    table["short_topics"] = short.reindex(table["name"]).fillna(0).astype(np.int64).to_numpy()
    table["pooled"] = table["short_topics"] == 0
    # runs without any ranking on a qrels topic cannot be pooled
    names = encode(runs["name"]).cat.categories
    missing = names[~names.isin(table["name"].astype(str))]
    if len(missing):
        extra = pd.DataFrame({"name": missing.astype(str), "topics": 0, "pooled": False})
        table = pd.concat([table.astype({"name": "str"}), extra], ignore_index=True)
    table["name"] = encode(table["name"].astype("str"))
    table = table.sort_values("name", key=lambda s: s.cat.codes).reset_index(drop=True)
    pooled = table.loc[table["pooled"], "name"].astype(str).tolist()
    rankings = walked.assign(reached=reach.to_numpy())
    return PoolInfo(depth, pooled, table, policy, tol, skip, rankings)
