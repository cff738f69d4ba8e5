"""The estimators of a leave-out experiment run one chunk of runs to score at a time
(:mod:`pbtools.engine.chunks`): the pairs of runs, their (pair × topic) rows, the merged runs
and the dense labels of the qrels variants live only while their chunk is estimated (issue 25
item 4, issue 30 item 4). Used by :func:`pbtools.experiments.leaveout.experiment_tables`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.corrections.correct import estimator_columns, run_estimators
from pbtools.corrections.lipani import Lipani
from pbtools.engine import chunks
from pbtools.engine.parallel import ordered_map
from pbtools.engine.shared_merges import SharedMerges

__all__ = ["estimate_in_chunks"]


def estimate_in_chunks(tasks, estimators, opts: dict, threads: int = 1) -> list:
    """Every estimator on every problem of ``tasks``, one chunk of runs to score at a time
    (:mod:`pbtools.engine.chunks`).

    ``tasks``: ``(measures, problem, spec)`` or ``(measures, problem, spec, variants)`` per
    problem, the problem without pairs, ``spec`` its :class:`~pbtools.engine.build.PairSpec`
    and ``variants`` its leave-out variants in compact form and the variant of each run to
    score (:func:`~pbtools.engine.chunks.sub_problem`; the problem's own labels then the truth
    alone); the problems share one encoding and their runs to score are in slot order. The
    chunks cut the runs to score of all the problems at the same slots
    (:func:`~pbtools.engine.chunks.chunk_bounds`: at most
    :data:`~pbtools.engine.chunks.PAIR_ROWS` (pair × topic) rows and
    :data:`~pbtools.engine.chunks.VARIANT_BYTES` of dense labels a chunk), so one streamed pass
    of a chunk's :class:`~pbtools.engine.shared_merges.SharedMerges` merges each of its pairs of
    runs once for every problem. ``threads`` problems of a chunk are estimated at once. Returns,
    per task, the frame of :func:`~pbtools.corrections.correct.run_estimators` on the whole problem.
    """
    tasks = [(*task, None)[:4] for task in tasks]
    run_bytes = 0  # the dense labels a run to score adds to a chunk: its variant, padded
    for _ms, problem, _spec, variants in tasks:  # the shared tables, built before the threads
        problem.padded_labels(), problem.hist  # read them
        if np.any(np.diff(problem.new) <= 0):
            raise ValueError("the runs to score must be in slot order")
        if variants is not None:
            run_bytes += 2 * variants[0].truth.nbytes
    width = max((len(spec.block) for _m, _p, spec, _v in tasks), default=1)
    n_topics = tasks[0][1].enc.T if tasks else 1
    bounds = chunks.chunk_bounds(
        np.concatenate([p.new for _, p, _, _ in tasks] or [[]]),
        width,
        n_topics,
        run_bytes=run_bytes,
    )
    parts: list[list] = [[] for _ in tasks]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        for i, res in _chunk(tasks, a, b, estimators, opts, threads):
            parts[i].append(res)
    out = []
    for (ms, problem, _spec, _v), got in zip(tasks, parts, strict=True):
        if not got:  # no run to score: the estimators' empty frames
            out.append(run_estimators(problem, ms, estimators, opts))
            continue
        # per estimator, its columns over the chunks: one frame each (not one per chunk)
        frames = [_joined([g[j] for g in got]) for j in range(len(got[0]))]
        out.append(frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True))
    return out


def _joined(parts: list[dict]) -> pd.DataFrame:
    """One estimator's columns (:meth:`~pbtools.corrections.base.Estimator.estimate_columns`)
    over the chunks of runs as one frame: ``pd.concat`` of the chunks' frames, each column
    joined in numpy when its chunks' arrays agree in type (strings of any width), else those
    frames concatenated (an estimator's own columns, an int64 and a float64 chunk)."""
    sizes = [len(p["value"]) for p in parts]
    cols: dict = {}
    for c in parts[0]:
        arrays = [
            np.full(n, p[c]) if np.ndim(p[c]) == 0 else p[c]
            for p, n in zip(parts, sizes, strict=True)
        ]
        kinds = {a.dtype.kind if isinstance(a, np.ndarray) else "?" for a in arrays}
        same = len({a.dtype for a in arrays}) == 1 or kinds == {"U"}
        if "?" in kinds or not same:
            return pd.concat([pd.DataFrame(p) for p in parts], ignore_index=True)
        cols[c] = arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
    return pd.DataFrame(cols)


def _chunk(tasks, a: int, b: int, estimators, opts: dict, threads: int) -> list:
    """The estimators on the runs to score of slots ``a:b`` of every task of
    :func:`estimate_in_chunks`: ``(task index, columns)`` per task with such runs, the columns
    (:meth:`~pbtools.corrections.base.Estimator.estimate_columns`) of every estimator that
    supports a measure of the task, in ``estimators`` order. The chunk's problems (its variants'
    labels) and merges are freed on return."""
    lipani = "lipani" in estimators
    merges = SharedMerges(float(opts["weight"]), str(opts["tie"])) if lipani else None
    subs = []
    for i, (ms, problem, spec, variants) in enumerate(tasks):
        lo, hi = (int(x) for x in np.searchsorted(problem.new, [a, b]))
        if hi == lo:
            continue
        sub = chunks.sub_problem(problem, spec, lo, hi, merges, variants)
        if merges is not None and Lipani.supported(ms):
            merges.request(sub, Lipani.supported(ms))
        subs.append((i, ms, sub))
    done = ordered_map(
        lambda s: estimator_columns(s[2], s[1], estimators, opts), subs, threads, ahead=0
    )
    return [(i, res) for (i, _ms, _sub), res in zip(subs, done, strict=True)]
