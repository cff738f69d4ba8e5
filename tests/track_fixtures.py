"""An awkward, realistic test track with a known pool (issue 14 item 4).

:func:`awkward_track` writes, from one seed, a collection in the TRACK layout
(``TRACK/{QRels/qrels, Runs/input.<tag>, desc.xml}`` plus ``truth/qrels``) with the quirks of real
TREC tracks that a clean synthetic collection lacks:

* graded qrels (0/1/2) from a shallow pool (d = 10 by default) of a random *subset* of the runs;
* tab-separated run files whose rankings have different lengths (``min_length``..``max_length``
  per run and topic) and some tied scores (ordered by docno, descending, as trec_eval does);
* many organizations (``desc.xml``), most with one or two runs;
* a topic every run answers but the qrels lack (dropped from assessment), and optionally qrels
  topics no run answers (``qrels_only_topics``);
* optionally a few NaN scores (``nan_scores``; strict reading refuses them);
* *planted* rankings: some pooled runs have unjudged documents in or just below their top d, and
  every unpooled run has more of them in its top d. The plants make each pool-inference rule
  (:mod:`pbtools.pooling.inference`) give a different, known R_p.

The plants (one planted topic per run; the run's other topics are clean; t_P = ⌊d/5⌋,
t_S = ⌊d/10⌋, t_L = ⌊d/20⌋; "unjudged" documents are fresh ones no run of the pool retrieved):

=================  =====================================================  =====================
plant              the run's ranking on its planted topic                 pooled under
=================  =====================================================  =====================
``clean``          top d judged (every pooled run not planted)            every rule
``inside``         t_L + 1 unjudged documents inserted in the top d (the  paper, snapshot2015,
                   first such run has one at rank 1: judged prefix 0)     counted10
``inside_more``    t_S + 1 unjudged documents inserted in the top d       paper
``missing_below``  t_S documents of the top d replaced by unjudged ones,  counted10
                   then t_P + 1 − t_S unjudged ones just below d
``below``          one unjudged document inserted at rank d + 1           every rule
``short``          only ⌊d/2⌋ documents, all judged                       every rule
``novel``          (every unpooled run) t_P + 1 unjudged documents        no rule
                   inserted in the top d (the first at rank 1)
=================  =====================================================  =====================

:data:`PLANT_POOLED` holds the last column; :meth:`AwkwardTrack.expected_pooled` applies it. The
rules need d ≥ 10 and rankings of at least 2d documents, which :func:`awkward_track` checks.
Both depth rules recover d on the defaults and the seeds the tests try (clean pooled rankings
dominate the judged-prefix counts); the track records d, it does not guarantee it.

Runs, relevance and the pool come from :func:`pbtools.synth.generate` (one extra topic, the
dropped one); grades: a relevant document is highly relevant (2) with probability 0.3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from pbtools import synth
from pbtools.io import atomic

__all__ = ["PLANT_POOLED", "AwkwardTrack", "awkward_track"]

_ALL = frozenset({"paper", "snapshot2015", "later", "counted10"})
#: for each plant, the pool-inference rules under which a run so planted is pooled
PLANT_POOLED: dict[str, frozenset[str]] = {
    "clean": _ALL,
    "inside": frozenset({"paper", "snapshot2015", "counted10"}),
    "inside_more": frozenset({"paper"}),
    "missing_below": frozenset({"counted10"}),
    "below": _ALL,
    "short": _ALL,
    "novel": frozenset(),
}


@dataclass
class AwkwardTrack:
    """What :func:`awkward_track` wrote and the truth the generator knows.

    ``path`` (the track directory); ``depth`` (d of the pool that built the qrels); ``pooled``
    (names of the runs that built it); ``plants``: one row per run — ``name``, ``org``,
    ``pooled``, ``plant`` (see the module docstring), ``qid`` (planted topic, ``""`` for clean
    runs), ``positions`` (ranks of the planted unjudged documents, e.g. ``"1,7"``), ``file``;
    ``judged_topics`` (qids of the qrels that runs answer), ``run_only_topics`` (answered by
    every run, absent from the qrels), ``qrels_only_topics``; ``nan_lines``: ``file``,
    ``line``, ``qid``, ``docno`` of the NaN scores; ``params`` (the arguments).
    """

    path: Path
    depth: int
    pooled: list[str]
    plants: pd.DataFrame
    judged_topics: list[str]
    run_only_topics: list[str]
    qrels_only_topics: list[str]
    nan_lines: pd.DataFrame
    params: dict = field(default_factory=dict)

    def expected_pooled(self, policy: str) -> list[str]:
        """The runs a pool-inference rule (a name of :data:`PLANT_POOLED`'s sets) must pool."""
        if policy not in _ALL:
            raise ValueError(f"policy must be one of {sorted(_ALL)}, got {policy!r}")
        ok = self.plants["plant"].map(lambda p: policy in PLANT_POOLED[p])
        return sorted(self.plants.loc[ok, "name"].tolist())


def _check(runs, pooled, orgs, depth, min_length, max_length, docs, planted, nan_scores, topics):
    if depth < 10:
        raise ValueError(f"depth must be >= 10 for the plants to separate the rules, got {depth}")
    if not 2 * depth <= min_length <= max_length <= docs:
        raise ValueError(
            f"need 2*depth <= min_length <= max_length <= docs, got depth={depth}, "
            f"min_length={min_length}, max_length={max_length}, docs={docs}"
        )
    if not 1 <= pooled <= runs:
        raise ValueError(f"need 1 <= pooled <= runs, got pooled={pooled}, runs={runs}")
    if planted > pooled:
        raise ValueError(f"{planted} planted pooled runs but only {pooled} pooled runs")
    if not 1 <= orgs <= runs:
        raise ValueError(f"need 1 <= orgs <= runs, got orgs={orgs}, runs={runs}")
    if not 0 <= nan_scores <= topics:
        raise ValueError(f"need 0 <= nan_scores <= topics ({topics}), got {nan_scores}")


def _plan(rng, n_runs, is_pooled, counts, judged, depth):
    """The plant of every run, and per planted run: (run, plant, topic, inserted, replaced).

    ``inserted``: final ranks of the inserted unjudged documents; ``replaced``: ranks whose
    document is replaced by an unjudged one.
    """
    tp, ts, tl = depth // 5, depth // 10, depth // 20
    plant = np.full(n_runs, "clean", dtype=object)
    plant[~is_pooled] = "novel"
    order = rng.permutation(np.flatnonzero(is_pooled))
    plant[order[: sum(counts.values())]] = np.repeat(list(counts), list(counts.values()))
    ranks = np.arange(1, depth + 1)

    def inside(k: int, at_one: bool) -> list[int]:
        if at_one:  # the first such run: judged prefix 0
            return [1, *np.sort(rng.choice(ranks[1:], k - 1, replace=False)).tolist()]
        return np.sort(rng.choice(ranks, k, replace=False)).tolist()

    rows = []
    for j in np.flatnonzero(plant != "clean"):  # one per planted run (~20)
        kind, t = plant[j], int(rng.choice(judged))
        first = not any(r[1] == kind for r in rows)
        ins, rep = [], []
        if kind == "inside":
            ins = inside(tl + 1, first)
        elif kind == "inside_more":
            ins = inside(ts + 1, False)
        elif kind == "novel":
            ins = inside(tp + 1, first)
        elif kind == "missing_below":
            rep = np.sort(rng.choice(ranks, ts, replace=False)).tolist()
            ins = (depth + np.arange(1, tp + 2 - ts)).tolist()
        elif kind == "below":
            ins = [depth + 1]
        rows.append((int(j), kind, t, ins, rep))
    return plant, rows


def awkward_track(
    path,
    *,
    runs: int = 30,
    pooled: int = 20,
    orgs: int = 18,
    topics: int = 20,
    docs: int = 1000,
    depth: int = 10,
    min_length: int = 100,
    max_length: int = 200,
    inside: int = 3,
    inside_more: int = 2,
    missing_below: int = 1,
    below: int = 2,
    short: int = 1,
    nan_scores: int = 0,
    qrels_only_topics: int = 0,
    seed: int = 0,
) -> AwkwardTrack:
    """Write an awkward track (see the module docstring) under ``path`` and return its truth.

    Parameters
    ----------
    path : str or Path
        The track directory to create (``QRels/``, ``Runs/``, ``desc.xml``, ``truth/``).
    runs, pooled, orgs : int
        Runs, how many of them (drawn at random) built the pool, organizations.
    topics : int
        Judged topics; one more topic is answered by every run and absent from the qrels.
    docs : int
        Documents per topic in the generator.
    depth : int
        Pool depth d (≥ 10).
    min_length, max_length : int
        Range of the ranking lengths (each run and topic draws one; ≥ 2d).
    inside, inside_more, missing_below, below, short : int
        How many pooled runs carry each plant; the other pooled runs are clean.
    nan_scores : int
        Lines of one run whose score is NaN (the last document of as many topics).
    qrels_only_topics : int
        Extra judged topics no run answers.
    seed : int
        Everything is drawn from it.

    Returns
    -------
    AwkwardTrack

    Examples
    --------
    >>> import tempfile
    >>> from pbtools import io
    >>> tmp = tempfile.TemporaryDirectory()
    >>> track = awkward_track(tmp.name + "/AWK", runs=8, pooled=6, orgs=5, topics=4,
    ...                       docs=300, min_length=20, max_length=30, inside=1,
    ...                       inside_more=1, missing_below=1, below=1, short=1)
    >>> col = io.read_collection(track.path)
    >>> len(track.pooled), track.depth
    (6, 10)
    >>> set(col.runs["qid"].astype(str)) - set(col.qrels["qid"].astype(str)) == set(
    ...     track.run_only_topics)
    True
    >>> track.expected_pooled("paper") == sorted(set(track.pooled) - set(
    ...     track.plants.loc[track.plants["plant"] == "missing_below", "name"]))
    True
    >>> tmp.cleanup()
    """
    counts = {
        "inside": inside,
        "inside_more": inside_more,
        "missing_below": missing_below,
        "below": below,
        "short": short,
    }
    if min(*counts.values(), qrels_only_topics, topics - 1) < 0:
        raise ValueError("topics must be >= 1, plant counts and qrels_only_topics >= 0")
    _check(runs, pooled, orgs, depth, min_length, max_length, docs, sum(counts.values()),
           nan_scores, topics)  # fmt: skip
    params = {k: v for k, v in locals().items() if k not in ("path", "counts")}
    rng = np.random.default_rng([seed, 14])
    c = synth.generate(
        topics=topics + 1,
        docs=docs,
        runs=runs,
        orgs=orgs,
        run_length=max_length,
        depth=depth,
        unpooled=runs - pooled,
        seed=seed,
    )
    qids = np.array(c.runs["qid"].cat.categories, dtype=object)
    names = np.array(c.runs["name"].cat.categories, dtype=object)
    dropped = int(rng.integers(0, topics + 1))
    judged = np.array([t for t in range(topics + 1) if t != dropped])
    is_pooled = np.isin(names, c.pooled)
    plant, rows = _plan(rng, runs, is_pooled, counts, judged, depth)

    # every ranking as (run, topic, key, doc) rows; key orders the final ranking
    R, T, L = runs, topics + 1, max_length
    run = np.repeat(np.arange(R), T * L)
    top = np.tile(np.repeat(np.arange(T), L), R)
    rank = np.tile(np.arange(1, L + 1), R * T)
    doc = c.runs["docno"].cat.codes.to_numpy().astype(np.int64)
    length = rng.integers(min_length, max_length + 1, size=(R, T))
    fresh = docs  # next unjudged document id
    inserted = []  # (run, topic, key, doc)
    for j, kind, t, ins, rep in rows:  # ~20 planted rankings, a few documents each
        if kind == "short":
            length[j, t] = depth // 2
        for p in rep:
            doc[(run == j) & (top == t) & (rank == p)] = fresh
            fresh += 1
        for i, p in enumerate(ins):  # final rank p: after p - 1 - i original documents
            inserted.append((j, t, p - i - 0.5, fresh))
            fresh += 1
    keep = rank <= length[run, top]
    extra = np.array(inserted, dtype=np.float64).reshape(-1, 4)
    run = np.r_[run[keep], extra[:, 0]].astype(np.int64)
    top = np.r_[top[keep], extra[:, 1]].astype(np.int64)
    key = np.r_[rank[keep], extra[:, 2]]
    doc = np.r_[doc[keep], extra[:, 3]].astype(np.int64)
    order = np.lexsort((key, top, run))
    run, top, doc = run[order], top[order], doc[order]
    start = np.r_[True, (run[1:] != run[:-1]) | (top[1:] != top[:-1])]
    idx = np.arange(len(run))
    rank = idx - np.maximum.accumulate(np.where(start, idx, 0)) + 1

    # docnos: the generator's, then the unjudged ones, one width (string order = id order)
    width = max(4, len(str(fresh - 1)))
    docnos = np.char.add("d", np.char.zfill(np.arange(fresh).astype(str), width)).astype(object)
    # scores: strictly decreasing by rank (per-run base and step), some ties that trec order
    # resolves the same way (docno descending)
    base, step = rng.uniform(-10, 30, R), rng.uniform(0.001, 0.2, R)
    score = np.round(base[run] - step[run] * (rank - 1), 4)
    tie = np.r_[False, ~start[1:] & (doc[1:] < doc[:-1]) & (rng.random(len(run) - 1) < 0.1)]
    score = np.where(tie, np.r_[score[:1], score[:-1]], score)
    nan_run = int(rng.integers(0, R))
    last = np.r_[start[1:], True]
    is_nan = last & (run == nan_run) & np.isin(top, rng.choice(judged, nan_scores, replace=False))
    score = np.where(is_nan, np.nan, score)

    root = Path(path)
    for sub in ("QRels", "Runs", "truth"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    text, ends = synth.join_lines(
        [
            pa.array(qids[top], pa.string()),
            pa.scalar("Q0"),
            pa.array(docnos[doc], pa.string()),
            pa.array(rank).cast(pa.string()),
            pa.array(score).cast(pa.string()),
            pa.array(names[run], pa.string()),
        ],
        "\t",
    )
    bounds = np.searchsorted(run, np.arange(R + 1))
    files = []
    for j in range(R):  # one file per run
        lo = int(ends[bounds[j] - 1]) if bounds[j] else 0
        files.append(root / "Runs" / f"input.{names[j]}")
        atomic.write_bytes(files[-1], text[lo : int(ends[bounds[j + 1] - 1])])
    line = idx - bounds[run] + 1

    # graded judgments: relevant -> 1, or 2 with probability 0.3; the unjudged documents are
    # relevant with probability 0.2 (in truth only)
    tq = c.truth["qid"].cat.codes.to_numpy().astype(np.int64)
    td = c.truth["docno"].cat.codes.to_numpy().astype(np.int64)
    grade = c.truth["label"].to_numpy().astype(np.int64) * (1 + (rng.random(len(tq)) < 0.3))
    tkey = tq * fresh + td
    srt = np.argsort(tkey)
    qq = c.qrels["qid"].cat.codes.to_numpy().astype(np.int64)
    qd = c.qrels["docno"].cat.codes.to_numpy().astype(np.int64)
    qgrade = grade[srt][np.searchsorted(tkey[srt], qq * fresh + qd)]
    new = doc >= docs
    only = [f"{topics + 2 + i:03d}" for i in range(qrels_only_topics)]
    o_q, o_d = np.repeat(only, 20).astype(object), docnos[np.tile(np.arange(20), len(only))]
    o_lab = rng.integers(0, 3, len(o_q))
    parts = {
        "QRels/qrels": (qids[qq], docnos[qd], qgrade, qq != dropped),
        "truth/qrels": (
            np.r_[qids[tq], qids[top[new]]],
            np.r_[docnos[td], docnos[doc[new]]],
            np.r_[grade, (rng.random(int(new.sum())) < 0.2).astype(np.int64)],
            np.r_[tq != dropped, top[new] != dropped],
        ),
    }
    for target, (q, d, lab, ok) in parts.items():
        qr = pd.DataFrame(
            {"qid": np.r_[q[ok], o_q], "docno": np.r_[d[ok], o_d], "label": np.r_[lab[ok], o_lab]}
        ).sort_values(["qid", "docno"], kind="stable")
        synth.write_qrels(qr.astype({"qid": "str", "docno": "str"}), root / target)
    synth.write_desc(c.orgs, root / "desc.xml")

    planted = {j: (kind, t, ins, rep) for j, kind, t, ins, rep in rows}
    org_of = dict(zip(c.orgs["name"].astype(str), c.orgs["org"].astype(str), strict=True))
    table = pd.DataFrame(
        {
            "name": names.astype(str),
            "org": [org_of[n] for n in names],
            "pooled": is_pooled,
            "plant": plant.astype(str),
            "qid": [qids[planted[j][1]] if j in planted else "" for j in range(R)],
            "positions": [
                ",".join(map(str, sorted(planted[j][2] + planted[j][3]))) if j in planted else ""
                for j in range(R)
            ],
            "file": [str(f) for f in files],
        }
    )
    nan_lines = pd.DataFrame(
        {
            "file": [str(files[j]) for j in run[is_nan]],
            "line": line[is_nan],
            "qid": qids[top[is_nan]],
            "docno": docnos[doc[is_nan]],
        }
    )
    return AwkwardTrack(
        path=root,
        depth=depth,
        pooled=sorted(c.pooled),
        plants=table,
        judged_topics=[str(qids[t]) for t in judged],
        run_only_topics=[str(qids[dropped])],
        qrels_only_topics=only,
        nan_lines=nan_lines,
        params=params,
    )
