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

import numpy as np

from pbtools.corrections.base import Estimator
from pbtools.corrections.indicators import delta_values, fires, indicator_values
from pbtools.engine.problem import Problem, precision_parts
from pbtools.engine.shared_merges import SharedMerges

__all__ = ["Lipani"]


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
    principled defaults (:mod:`pbtools.presets`).

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

    def estimate_columns(self, problem: Problem, measures) -> dict:
        """Algorithm 1 for every run of the problem and every P@n of ``measures`` at once."""
        opts = self.choices()
        parts = precision_parts(measures)
        pa = [m for p in parts for m in p[:2]]  # P@n, AntiP@n interleaved
        k, pm = len(parts), [p[2] for p in parts]
        got = problem.precision_values(measures)
        P, A, K = (v.ravel() for v in got) if got is not None else (np.zeros(0),) * 3
        cols = problem.columns(P, pm, self.name)
        own = {c: cols[c] for c in ("name", "measure", "estimator")}
        nan = np.full(len(P), np.nan)
        if len(problem.pair_u) == 0:
            return {
                **own,
                **dict(value=P, P=P, AntiP=A, k=K, dP=nan, dAntiP=nan, dk=nan, lam=nan),
                **dict(fired=nan, adjustment=np.zeros(len(P)), n_pooled=np.zeros(len(P), int)),
            }
        # every pooled run of R_p on every variant it is compared under (its own topics),
        # scored once for every estimator of the problem
        pooled_vals = problem.rounded(problem.pooled_scores(pa)[0])
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
        group = problem.pair_u[:, None] * k + np.arange(k)  # the row of (r_u, P@n) in ``own``
        has = np.isfinite(merged[:, 0::2]).ravel()
        ind = indicator_values(P, A, *(v.ravel()[has] for v in (dP, dA, dk)), group.ravel()[has])
        fired = fires(ind, str(opts["indicator"]))
        adj = np.where(fired, ind["k"] * np.maximum(ind["dk"], 0.0), 0.0)
        rest = {c: ind[c] for c in ("k", "dP", "dAntiP", "dk", "lam")}
        return {
            **own,
            "value": P + adj,
            "P": P,
            "AntiP": A,
            **rest,
            "fired": fired,
            "adjustment": adj,
            "n_pooled": ind["n_pooled"],
        }
