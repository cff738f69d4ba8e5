"""Merged runs r' = r_p ∘ r_u scored for every problem of an experiment in one streamed pass
(the engine of Lipani et al. 2015's δ's, :class:`pbtools.corrections.lipani.Lipani`)."""

from __future__ import annotations

import threading

import numpy as np

from pbtools.engine.dense import CHUNK, expand_ranges
from pbtools.engine.merge import merge_rows
from pbtools.engine.parallel import ordered_map, resolve_threads
from pbtools.engine.problem import Problem, precision_parts

__all__ = ["SharedMerges", "CHUNK_ELEMENTS"]

#: merged cells (rows × depth) per chunk of :class:`SharedMerges`
CHUNK_ELEMENTS = 4 * CHUNK


class SharedMerges:
    """r' = r_p ∘ r_u scored for several problems in one streamed pass over the run pairs.

    Lipani's δ's need, per R_p pair and topic, P@n and P̄@n of the merged run on the unpooled
    run's qrels variant. The merge depends only on the two runs, so an experiment with several
    problems over the same encoding (run sets × leave-out units) :meth:`request` s them all
    first; the first call then merges every distinct (r_u, r_p) pair once, (r_u, r_p) next to
    (r_p, r_u) (they share their lookups), in chunks of at most :data:`CHUNK_ELEMENTS` merged
    cells (memory does not grow with runs²), and scores each chunk for every pending problem on
    its own variants and width.

    ``threads`` chunks are merged and scored at once (default: the usable cores, capped —
    :func:`~pbtools.engine.parallel.default_threads`; 1: serially); the results are the
    same whatever the count, and each thread's chunks are :data:`CHUNK_ELEMENTS` / ``threads``
    merged cells, so memory does not grow with it.

    ``problem.merges`` holds one (an experiment shares it); :meth:`Lipani.estimate` makes one
    for its problem alone otherwise. Calling it returns, per pair of the problem, the merged
    run's mean of each of ``pa`` over the topics the problem averages over
    (:meth:`~pbtools.engine.problem.Problem.topic_means`; NaN without a topic): pairs ×
    ``pa``. Each chunk is averaged over topics as soon as it is scored, so no (pair × topic)
    table outlives its chunk (the topics of a pair are all in one chunk, in the same order,
    so the means are those of the whole table). A problem that memoises its scores for
    topic-bootstrap replicates (``problem.memoize``), whose topic weights change, gets the
    (pair × topic) table instead: ``(pair, t, values)``, rows in (pair, topic) order.
    """

    def __init__(self, weight: float = 1.0, tie: str = "exclusive_first", threads=None):
        self.weight, self.tie = weight, tie
        self.threads = resolve_threads(threads)
        self._pending: dict = {}
        self._done: dict = {}
        self._lock = threading.Lock()

    def request(self, problem: Problem, measures) -> None:
        """Announce that ``problem`` will ask for the merges of the P@n of ``measures``."""
        parts = precision_parts(measures)
        if parts and len(problem.pair_u):
            pa = tuple(m for p in parts for m in p[:2])
            self._pending[self._key(problem, pa, max(m.cutoff for m, _, _ in parts))] = problem

    @staticmethod
    def _key(problem, pa, depth):
        return (id(problem), tuple(pa), int(depth))

    def __call__(self, problem: Problem, pa, depth: int):
        key = self._key(problem, pa, depth)
        with self._lock:  # problems finished on several threads: one pass serves them all
            if key not in self._done:
                self._pending[key] = problem
                self._run()
            return self._done.pop(key)

    def _run(self) -> None:
        jobs = list(self._pending.items())
        self._pending = {}
        enc = jobs[0][1].enc
        R, width = enc.R, max(k[2] for k, _ in jobs)
        codes = [p.new[p.pair_u].astype(np.int64) * R + p.pair_p for _, p in jobs]
        allc = np.unique(np.concatenate(codes))
        # every pair (u, p) next to (p, u), whose merges share their lookups (merge_rows), in
        # chunks of at most CHUNK_ELEMENTS merged cells: memory does not grow with runs²
        u, p = allc // R, allc % R
        order = np.lexsort((u, np.maximum(u, p), np.minimum(u, p)))
        seq = allc[order]
        at = np.empty(len(allc), dtype=np.int64)
        at[order] = np.arange(len(allc))
        where = [at[np.searchsorted(allc, code)] for code in codes]  # each pair's place in seq
        step = max(2, CHUNK_ELEMENTS // (self.threads * max(enc.T, 1) * width))
        for _, p in jobs:  # the problems' shared tables, built before the threads read them
            p.padded_labels(), p.hist

        def one(lo):  # the chunk seq[lo : lo + step], merged and scored for every job
            chunk = seq[lo : lo + step]
            pair, t, M = merge_rows(
                enc, chunk // R, chunk % R, weight=self.weight, tie=self.tie, depth=width
            )
            first = np.searchsorted(pair, np.arange(len(chunk) + 1))
            out = []
            for (key, p), pos in zip(jobs, where, strict=True):
                sel = np.flatnonzero((pos >= lo) & (pos < lo + len(chunk)))
                if not len(sel):
                    continue
                gi = pos[sel] - lo
                lens = first[gi + 1] - first[gi]
                item, rows = expand_ranges(first[gi], lens)
                qt = t[rows]
                var = p.new_var[p.pair_u][sel[item]]
                if p.topics != "answered":
                    keep = p.present[var, qt]
                    if not keep.all():
                        rows, item, qt, var = rows[keep], item[keep], qt[keep], var[keep]
                # M is column-major: the rows gathered as columns of M.T, column-major too
                if len(rows) and rows[-1] - rows[0] + 1 == len(rows) and (np.diff(rows) == 1).all():
                    docs = M[rows[0] : rows[-1] + 1, : key[2]]  # every row of the chunk: a view
                else:
                    docs = np.take(M.T[: key[2]], rows, axis=1).T
                vals = p.score_docs(docs, var, qt, list(key[1]))
                if p.memoize:  # the table, for replicates that re-weight the topics
                    out.append((key, (sel[item], qt, vals)))
                else:
                    out.append((key, (sel, p.topic_means(item, qt, vals, len(sel)))))
            return out

        parts = {k: [] for k, _ in jobs}
        for out in ordered_map(one, range(0, len(seq), step), self.threads):
            for key, got in out:
                parts[key].append(got)
        for key, p in jobs:
            self._done[key] = (_table if p.memoize else _means)(parts[key], p, len(key[1]))


def _means(parts: list, problem: Problem, width: int) -> np.ndarray:
    """The chunks' per-pair means ``(sel, means)`` as one pairs × ``width`` array."""
    merged = np.full((len(problem.pair_u), width), np.nan)
    for sel, means in parts:
        merged[sel] = means
    return merged


def _table(parts: list, problem: Problem, width: int) -> tuple:
    """The chunks' ``(pair, t, values)`` rows as one table in (pair, topic) order."""
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, width))
    qp = np.concatenate([g[0] for g in parts])
    o = np.argsort(qp, kind="stable")  # rows in (pair, topic) order
    return qp[o], np.concatenate([g[1] for g in parts])[o], np.concatenate([g[2] for g in parts])[o]
