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

import numpy as np

from pbtools.engine.build import PairSpec
from pbtools.engine.problem import Problem

__all__ = [
    "LABEL_BYTES",
    "PAIR_ROWS",
    "chunk_bounds",
    "sub_problem",
    "waves",
]

#: the most (pair × topic) rows a chunk of runs to score holds (its estimators' arrays are a
#: few hundred bytes per row: a few hundred MiB at most, whatever the number of runs)
PAIR_ROWS = 1 << 18
#: the most bytes of label arrays (each block's variants and their padded copy) of the blocks
#: estimated together (:func:`waves`)
LABEL_BYTES = 1 << 30


def chunk_bounds(new: np.ndarray, width: int, topics: int, rows: int | None = None) -> np.ndarray:
    """Slot boundaries of the chunks of runs to score: ``new`` (sorted slots of the runs to
    score of every problem) cut every ``rows // (width · topics)`` runs (at least one), where
    ``width`` is the most runs a run is paired with. Returns the ascending boundaries, the
    first the lowest slot, the last past the highest.

    Examples
    --------
    >>> chunk_bounds(np.array([2, 3, 5, 8, 9]), width=4, topics=2, rows=16).tolist()
    [2, 5, 9, 10]
    """
    rows = PAIR_ROWS if rows is None else rows
    new = np.unique(new)
    if not len(new):
        return np.zeros(1, np.int64)
    per = max(1, int(rows) // max(1, int(width) * max(1, int(topics))))
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


def sub_problem(problem: Problem, spec: PairSpec, lo: int, hi: int, merges=None) -> Problem:
    """``problem`` restricted to its runs to score ``lo:hi``, with their pairs (``spec``).

    The encoding, the variants and their cached tables (label histograms, padded labels) are
    shared; ``merges`` is the chunk's :class:`~pbtools.engine.shared_merges.SharedMerges`.

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
    return problem.chunk(lo, hi, pu, pp, merges)
