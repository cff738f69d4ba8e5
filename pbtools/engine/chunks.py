"""The runs to score of a leave-out experiment taken a chunk at a time, so that its pairs of
runs are never all in memory (issue 25 item 4, issue 30 item 4).

Every estimator's result for a run to score depends only on that run's own R_p pairs (the
pooled runs it is compared with): Webber & Park's per-topic losses and Lipani's merged runs are
per (pair × topic) row, and both are averaged per run. So an experiment's problems are built
without pairs (:func:`pbtools.experiments.leaveout._build`) and estimated one chunk of runs to
score at a time (:func:`sub_problem`): each chunk's pairs, their (pair × topic) rows and the
merged runs live only while the chunk is estimated. A chunk holds whole runs, at most
:data:`PAIR_ROWS` (pair × topic) rows (one run at least), in the runs' order, so the rows of
every run are those of the whole problem in the same order and every result is identical to
estimating the whole problem at once.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from pbtools.engine.build import LeaveOutLabels, PairSpec
from pbtools.engine.problem import Problem

__all__ = [
    "LABEL_BYTES",
    "PAIR_ROWS",
    "VARIANT_BYTES",
    "chunk_bounds",
    "sub_problem",
    "waves",
]

#: the most (pair × topic) rows a chunk of runs to score holds (its estimators' arrays are a
#: few hundred bytes per row: a few hundred MiB at most, whatever the number of runs)
PAIR_ROWS = 1 << 18
#: the most bytes of label arrays of the blocks estimated together (:func:`waves`): their
#: compact variants (:class:`~pbtools.engine.variants.LeaveOutLabels`)
LABEL_BYTES = 1 << 30
#: the most bytes of dense label arrays (the chunk's variants, the truth and their padded
#: copies, :meth:`~pbtools.engine.problem.Problem.padded_labels`) that the problems of one chunk
#: of runs to score hold together (one run to score a chunk at least)
VARIANT_BYTES = 1 << 27


def chunk_bounds(
    new: np.ndarray,
    width: int,
    topics: int,
    rows: int | None = None,
    run_bytes: int = 0,
    budget: int | None = None,
) -> np.ndarray:
    """Slot boundaries of the chunks of runs to score: ``new`` (sorted slots of the runs to
    score of every problem) cut every ``rows // (width · topics)`` runs and every
    ``budget // run_bytes`` runs, whichever is fewer (at least one), where ``width`` is the
    most runs a run is paired with and ``run_bytes`` the label bytes a run to score adds to a
    chunk (its variant in every problem; ``budget``: :data:`VARIANT_BYTES`). Returns the
    ascending boundaries, the first the lowest slot, the last past the highest.

    Examples
    --------
    >>> chunk_bounds(np.array([2, 3, 5, 8, 9]), width=4, topics=2, rows=16).tolist()
    [2, 5, 9, 10]
    >>> chunk_bounds(np.array([2, 3, 5, 8, 9]), 4, 2, rows=16, run_bytes=5, budget=5).tolist()
    [2, 3, 5, 8, 9, 10]
    """
    rows = PAIR_ROWS if rows is None else rows
    budget = VARIANT_BYTES if budget is None else budget
    new = np.unique(new)
    if not len(new):
        return np.zeros(1, np.int64)
    per = max(1, int(rows) // max(1, int(width) * max(1, int(topics))))
    if run_bytes > 0:
        per = max(1, min(per, int(budget) // int(run_bytes)))
    return np.r_[new[::per], new[-1] + 1].astype(np.int64)


def waves(sizes, budget: int | None = None) -> list[list[int]]:
    """Consecutive groups of blocks whose ``sizes`` (bytes) sum to at most ``budget``
    (:data:`LABEL_BYTES`; one block at least): the blocks alive at once.

    Examples
    --------
    >>> waves([4, 4, 9, 1, 1], budget=8)
    [[0, 1], [2], [3, 4]]
    """
    budget = LABEL_BYTES if budget is None else budget
    out: list[list[int]] = []
    total = 0
    for i, size in enumerate(sizes):
        if out and total + size <= budget:
            out[-1].append(i)
            total += size
        else:
            out.append([i])
            total = size
    return out


def sub_problem(
    problem: Problem,
    spec: PairSpec,
    lo: int,
    hi: int,
    merges=None,
    variants: tuple[LeaveOutLabels, np.ndarray] | None = None,
) -> Problem:
    """``problem`` restricted to its runs to score ``lo:hi``, with their pairs (``spec``).

    The encoding, the variants and their cached tables (label histograms, padded labels) are
    shared; ``merges`` is the chunk's :class:`~pbtools.engine.shared_merges.SharedMerges`.
    ``variants``: ``(labels, var)``, the block's leave-out variants in compact form and the
    variant of each run to score of ``problem`` (whose own labels are then the truth alone):
    the chunk's problem holds the dense labels of the variants of runs ``lo:hi`` and then of
    the truth (its ``truth_var``), each run to score against its own.

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools.engine.build import from_frames
    >>> def run(name, docs):
    ...     return pd.DataFrame({"name": name, "qid": "1", "docno": list(docs),
    ...                          "score": range(len(docs), 0, -1)})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("abc"), "label": [1, 0, 1]})
    >>> pb = from_frames(pd.concat([run("p", "ab"), run("q", "cb")]),
    ...                  pd.concat([run("u", "ca"), run("v", "bc")]), qrels, depth=1)
    >>> spec = PairSpec(np.arange(2), np.array([5, 6]), pb.pooled)
    >>> sub = sub_problem(pb, spec, 1, 2)
    >>> sub.names.tolist(), sub.pair_u.tolist(), len(sub.pair_p)
    (['v'], [0, 0], 2)
    """
    pu, pp = spec.pairs(lo, hi)
    if variants is None:
        return problem.chunk(lo, hi, pu, pp, merges)
    labels, var = variants
    need, local = np.unique(var[lo:hi], return_inverse=True)
    sub = replace(
        problem,
        lab=labels.dense(need),
        present=np.repeat(problem.present[:1], len(need) + 1, axis=0),
        variants=pd.Index([*map(str, need), "\0truth"], dtype="str"),
        new=problem.new[lo:hi],
        new_var=local.ravel().astype(np.int64),
        pair_u=np.asarray(pu, dtype=np.int64) - lo,
        pair_p=np.asarray(pp, dtype=np.int64),
        truth_var=len(need),
        merges=merges,
        _cache={},
    )
    sub.set_hist(labels.histograms(need))
    return sub
