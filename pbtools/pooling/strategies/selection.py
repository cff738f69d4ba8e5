"""The two selection kernels: :func:`ranked` (non-adaptive) and :func:`sequential` (adaptive).

:func:`ranked` sorts every (topic, document) cell of all topics at once; :func:`sequential` is
**the one loop over judgments** of the strategies whose next choice depends on what was judged
(see :mod:`pbtools.pooling.strategies.base`), vectorised across topics.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pbtools.frames import group_starts, ranks_from_starts

__all__ = ["Selection", "ranked", "sequential"]


@dataclass
class Selection:
    """What a strategy chose: topic ``t`` and local document ``x`` in judging order (per topic),
    plus optional per-document columns (e.g. ``prob``, the inclusion probability of a sample)."""

    t: np.ndarray
    x: np.ndarray
    extra: dict[str, np.ndarray] = field(default_factory=dict)


def ranked(keys: list[np.ndarray], valid: np.ndarray, budget: np.ndarray) -> Selection:
    """The first ``budget[t]`` valid documents of every topic by descending ``keys``.

    ``keys``: ``(T, U)`` arrays, most significant first; remaining ties go to the smaller local
    id (documents of a topic are numbered in docno order). One ``lexsort`` over all topics.
    """
    t, x = np.nonzero(valid)
    cols = [-k[t, x] for k in reversed(keys)]
    order = np.lexsort((x, *cols, t))
    t, x = t[order], x[order]
    step = ranks_from_starts(group_starts(t))
    keep = step <= budget[t]
    return Selection(t[keep], x[keep])


def sequential(problem, assessor, budget: np.ndarray, policy) -> Selection:
    """The one loop over judgments of the adaptive strategies, vectorised across topics.

    Each iteration asks ``policy.step(t)`` for one document per active topic ``t`` (-1: the
    topic has nothing left), judges the new ones through ``assessor`` (a document already judged
    costs nothing; its known label is passed on), and reports back with
    ``policy.update(t, x, new, rel)``. A topic stays active until its budget is spent or its
    policy is exhausted. A policy with a ``record(t, x)`` method (the run each document was read
    from) adds a ``run`` column to the selection. The loop runs at most (budget + documents
    skipped as already judged) times; every iteration is a handful of numpy operations over the
    active topics.
    """
    active = budget > assessor.cost
    out_t, out_x, out_extra = [], [], []
    record = getattr(policy, "record", None)
    while active.any():
        t = np.flatnonzero(active)
        x = np.asarray(policy.step(t), dtype=np.int64)
        done = x < 0
        active[t[done]] = False
        t, x = t[~done], x[~done]
        if len(t) == 0:
            continue
        new = ~assessor.asked[t, x]
        rel = np.zeros(len(t), dtype=bool)
        rel[new] = assessor.judge(t[new], x[new])
        rel[~new] = assessor.known(t[~new], x[~new]) > 0
        if record is not None:
            out_extra.append(record(t, x)[new])
        policy.update(t, x, new, rel)
        out_t.append(t[new])
        out_x.append(x[new])
        active[t] &= assessor.cost[t] < budget[t]
    if not out_t:
        return Selection(np.zeros(0, np.int64), np.zeros(0, np.int64))
    t, x = np.concatenate(out_t), np.concatenate(out_x)
    order = np.argsort(t, kind="stable")  # iterations are in judging order within a topic
    extra = {"run": np.concatenate(out_extra)[order]} if out_extra else {}
    return Selection(t[order], x[order], extra)
