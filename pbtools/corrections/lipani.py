"""Lipani, Lupu & Hanbury 2015 (SIGIR), §3-4 and Algorithm 1: the anti-precision correction.

For an unpooled run r_u with s = P@n, s̄ = P̄@n and k̄ = 1 − s − s̄ on its qrels Q, and every
pooled run r_p ∈ R_p, the merged run r' = r_p ∘ r_u (:mod:`pbtools.corrections.merge`) gives
δP = P@n(r') − P@n(r_p), δP̄ = P̄@n(r') − P̄@n(r_p), δk = −δP − δP̄ (Algorithm 1; Eq. 1 has a
typo). With ΔP, ΔP̄, Δk their means over R_p and λ = k̄·(ΔP·s̄ − ΔP̄·s) (Eq. 3), the estimate is
s + k̄·max(Δk, 0) when the indicator fires (λ > 0 by default), else s — so it stays within
[s, s + k̄].

Why P@n only: the correction redistributes the unjudged share k̄@n of the top n between relevant
and non-relevant in proportion to what the merged runs reveal, which is additive in ranks only
for precision. A generalisation to a rank-weighted measure would need (i) the measure's
counterpart of anti-precision (the judged non-relevant mass under the same weights, e.g. RBP's
weights), (ii) its residual in place of k̄, and (iii) an argument that δk transfers between the
pooled runs' and the new run's rank weights — none of which the paper gives. pbtools therefore
declares ``supports = {"P"}``; Webber & Park's adjustment covers the other measures.
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd

from pbtools.corrections.base import Estimator
from pbtools.corrections.indicators import delta_values, fires, indicator_values
from pbtools.corrections.merge import merge_rows
from pbtools.corrections.parallel import ordered_map, resolve_threads
from pbtools.corrections.problem import Problem, precision_parts
from pbtools.pooling.dense import CHUNK, expand_ranges

__all__ = ["Lipani", "SharedMerges"]

#: merged cells (rows × depth) per chunk of :class:`SharedMerges`
CHUNK_ELEMENTS = 4 * CHUNK


class Lipani(Estimator):
    """Lipani et al. 2015 Algorithm 1: s + k̄·max(Δk, 0) when the indicator fires (P@n).

    Parameters
    ----------
    weight : float, optional
        α of Eq. 2: the weight of r_u's ranks in the merge (the paper: 1). Named ``weight``
        because ``alpha`` is the significance level everywhere else in pbtools.
    indicator : {"lambda", "dP", "dAntiP", "always"}, optional
        When the correction fires (§3.2: λ > 0).
    measures, protocol, depth
        As :class:`~pbtools.corrections.base.Estimator`.
    tie : {"exclusive_first", "lipani2015"}, optional
        The merge's tie rule (PROTOCOL item 11).
    rp : {"org", "run"}, optional
        R_p without r_u's unit, or without r_u only (PROTOCOL item 12).
    decimals : int, optional
        Half-up rounding of every P@n, P̄@n before they are combined (PROTOCOL item 10).
    topics : {"judged", "all", "answered"}, optional
        Topic averaging (:mod:`pbtools.measures.topics`).

    Unset choices come from ``protocol`` (``"lipani2015"`` reproduces Table 2) or the
    principled defaults (:mod:`pbtools.corrections.choices`).

    Examples
    --------
    >>> import pandas as pd
    >>> def run(name, docs):
    ...     return pd.DataFrame({"name": name, "qid": "1", "docno": list(docs),
    ...                          "score": range(len(docs), 0, -1)})
    >>> pooled = pd.concat([run("p1", "abcd"), run("p2", "bade")])
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "label": [1, 0]})
    >>> out = Lipani(measures=["P@2"], depth=2).fit(pooled, qrels).predict(run("u", "xayb"))
    >>> out[["value", "k", "dk", "lam", "fired"]].to_numpy().tolist()
    [[0.75, 0.5, 0.5, 0.125, True]]
    """

    name = "lipani"
    label = "Lipani et al."
    colour = "#1f77b4"
    marker = "^"
    description = (
        "Lipani et al. 2015: the reduced score plus a share of the run's unjudged "
        "documents, estimated by merging its ranking with the pooled runs'."
    )
    default_for = frozenset({"analyze", "correct", "cli"})
    supports = frozenset({"P"})
    scope = "P@n only (its correction is built from P@n and anti-precision; not condensed lists)"
    choice_names = ("decimals", "topics", "weight", "tie", "indicator", "rp")

    def __init__(
        self,
        weight: float | None = None,
        indicator: str | None = None,
        measures=("P@10",),
        tie: str | None = None,
        rp: str | None = None,
        decimals: int | None = None,
        topics: str | None = None,
        protocol: str | None = None,
        depth: int | None = None,
    ):
        super().__init__(measures, decimals, topics, protocol, depth)
        self.weight, self.indicator, self.tie, self.rp = weight, indicator, tie, rp

    @classmethod
    def accepts(cls, measure) -> bool:
        """P@n only (not its condensed list)."""
        return measure.base == "P" and not measure.judged_only

    def estimate(self, problem: Problem, measures) -> pd.DataFrame:
        """Algorithm 1 for every run of the problem and every P@n of ``measures`` at once."""
        opts = self.choices()
        parts = precision_parts(measures)
        pa = [m for p in parts for m in p[:2]]  # P@n, AntiP@n interleaved
        own = problem.precision_frame(measures)
        if len(problem.pair_u) == 0:
            out = own.assign(estimator=self.name, value=own["P"], adjustment=0.0, n_pooled=0)
            return out
        enc = problem.enc
        # every pooled run of R_p on every variant it is compared under (its own topics)
        combo = problem.new_var[problem.pair_u] * enc.R + problem.pair_p
        uc, inv = np.unique(combo, return_inverse=True)
        pooled_vals = problem.run_scores(uc % enc.R, uc // enc.R, pa)[inv.ravel()]
        # r' = r_p ∘ r_u on the topics both runs have, scored on r_u's variant
        depth = max(m.cutoff for m, _, _ in parts)

        def merged_rows():
            merges = problem.merges
            if merges is None:  # this problem alone, streamed
                merges = SharedMerges(float(opts["weight"]), str(opts["tie"]))
            return merges(problem, pa, depth)

        key = ("lipani", float(opts["weight"]), str(opts["tie"]), depth, tuple(pa))
        merged = problem.memo(key, merged_rows)
        if problem.memoize:  # replicates re-weight the topics of a (pair × topic) table
            merged = problem.topic_means(*merged, len(problem.pair_u))
        merged = problem.rounded(merged)
        # δ per (pair, P@n) whose merged run has a topic to average over, pair-major
        dP, dA, dk = delta_values(
            merged[:, 0::2], merged[:, 1::2], pooled_vals[:, 0::2], pooled_vals[:, 1::2]
        )
        k = len(parts)
        group = problem.pair_u[:, None] * k + np.arange(k)  # the row of (r_u, P@n) in ``own``
        has = np.isfinite(merged[:, 0::2]).ravel()
        ind = indicator_values(
            own["P"].to_numpy(),
            own["AntiP"].to_numpy(),
            *(v.ravel()[has] for v in (dP, dA, dk)),
            group.ravel()[has],
        )
        fired = fires(ind, str(opts["indicator"]))
        adj = np.where(fired, ind["k"] * np.maximum(ind["dk"], 0.0), 0.0)
        out = own.astype({"name": str, "measure": str}).assign(**ind)
        return out.assign(fired=fired, adjustment=adj, value=out["P"] + adj, estimator=self.name)


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
    :func:`~pbtools.corrections.parallel.default_threads`; 1: serially); the results are the
    same whatever the count, and each thread's chunks are :data:`CHUNK_ELEMENTS` / ``threads``
    merged cells, so memory does not grow with it.

    ``problem.merges`` holds one (an experiment shares it); :meth:`Lipani.estimate` makes one
    for its problem alone otherwise. Calling it returns, per pair of the problem, the merged
    run's mean of each of ``pa`` over the topics the problem averages over
    (:meth:`~pbtools.corrections.problem.Problem.topic_means`; NaN without a topic): pairs ×
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
