"""Webber & Park 2009 Algorithm 2: score adjustment inferred from fully judged common topics.

For an unpooled run r with per-topic unpooled scores u_i on all N topics (qrels Q_T from the
pool) and true scores t_c on n common topics C (where r too has been fully judged):

    a = (1/n) Σ_{c∈C} (t_c − u_c)                      (adjustment, §3.2)
    θ̂_a = ū + a,  ū = (1/N) Σ_i u_i                    (adjusted estimate of the mean true score)
    Var(θ̂_a) = (N − n)/(N·n) · σ̂²_a,  σ̂²_a = (1/(n−1)) Σ_c (u_c + a − t_c)²   (Eqs. 3, 7)

and a percentile bootstrap interval over resampled common topics (seeded), which §3.2 recommends
for small n where the normal approximation is dubious.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.corrections.rerank import precision_at
from pbtools.frames import judge, require_columns

__all__ = ["webber_common_topics", "WebberCommonTopics"]


def webber_common_topics(
    unpooled: pd.DataFrame,
    truth: pd.DataFrame,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    keys: Sequence[str] = (),
) -> pd.DataFrame:
    """Webber & Park Algorithm 2 from per-topic scores.

    ``unpooled``: per-topic unpooled scores on every topic — ``name``, ``qid``, ``value``
    (+ ``keys``, e.g. ``measure``); ``truth``: true per-topic scores on the common topics — the
    same columns. Returns one row per (keys, name): ``estimator`` (``"webber_topics"``),
    ``value`` (θ̂_a), ``reduced`` (ū), ``adjustment`` (a), ``variance`` (Var θ̂_a), ``se``,
    ``ci_low``, ``ci_high`` (bootstrap percentile interval at ``level``), ``n_common``,
    ``n_topics``.
    """
    require_columns(unpooled, ("name", "qid", "value"), "unpooled per-topic scores")
    require_columns(truth, ("name", "qid", "value"), "true per-topic scores")
    by = [*keys, "name"]
    u = unpooled.astype({"name": str, "qid": str})
    t = truth.astype({"name": str, "qid": str})
    both = u.merge(t, on=[*by, "qid"], suffixes=("_u", "_t"))
    rng = np.random.default_rng(seed)
    rows = []
    for key, grp in both.groupby(by, sort=True):  # one group per run: a handful
        key = key if isinstance(key, tuple) else (key,)
        sel = u
        for c, v in zip(by, key, strict=True):
            sel = sel[sel[c] == v]
        N, n = len(sel), len(grp)
        delta = (grp["value_t"] - grp["value_u"]).to_numpy()
        a = float(delta.mean())
        ubar = float(sel["value"].mean())
        s2 = float(((delta - a) ** 2).sum() / (n - 1)) if n > 1 else np.nan
        var = (N - n) / (N * n) * s2 if n > 0 else np.nan
        boot = delta[rng.integers(0, n, size=(n_boot, n))].mean(axis=1) if n else np.array([])
        lo, hi = (
            (np.quantile(boot, [(1 - level) / 2, (1 + level) / 2]) + ubar)
            if n
            else (np.nan, np.nan)
        )
        rows.append((*key, "webber_topics", ubar + a, ubar, a, var, np.sqrt(var), lo, hi, n, N))
    return pd.DataFrame(
        rows,
        columns=[
            *by,
            "estimator",
            "value",
            "reduced",
            "adjustment",
            "variance",
            "se",
            "ci_low",
            "ci_high",
            "n_common",
            "n_topics",
        ],
    )


class WebberCommonTopics:
    """Webber & Park Algorithm 2 as an estimator object (P@n).

    ``fit(qrels, runs, orgs=None)``: the pool's qrels Q_T (``runs``/``orgs`` kept for the common
    interface). ``score(run_or_runs, common_qrels)``: ``common_qrels`` hold the full judgments
    of the common topics (the new run's documents included). Parameters: ``measures`` (P@n),
    ``n_boot``, ``level``, ``seed``.
    """

    def __init__(
        self,
        measures: Sequence[str] = ("P@10",),
        n_boot: int = 2000,
        level: float = 0.95,
        seed: int = 0,
    ):
        self.measures, self.n_boot, self.level, self.seed = measures, n_boot, level, seed

    def get_params(self, deep: bool = True) -> dict[str, object]:
        """The constructor parameters (scikit-learn's protocol)."""
        return {
            "measures": self.measures,
            "n_boot": self.n_boot,
            "level": self.level,
            "seed": self.seed,
        }

    def fit(
        self,
        qrels: pd.DataFrame,
        runs: pd.DataFrame | None = None,
        orgs: pd.DataFrame | None = None,
    ):
        """Remember the pool's qrels Q_T (``runs`` and ``orgs`` for the common interface)."""
        self.qrels_, self.runs_, self.orgs_ = qrels, runs, orgs
        return self

    def score(self, run_or_runs: pd.DataFrame, common_qrels: pd.DataFrame) -> pd.DataFrame:
        """Algorithm 2: u_r on Q_T plus the mean (true − unpooled) difference on the common
        topics, with the §3.2 ratio-estimator variance and a seeded bootstrap interval.

        Columns: ``name``, ``measure``, ``estimator`` (``webber_topics``), ``value``,
        ``reduced``, ``adjustment``, ``variance``, ``se``, ``ci_low``, ``ci_high``,
        ``n_common``, ``n_topics``.
        """
        from pbtools.corrections.core import parse_measure

        if not hasattr(self, "qrels_"):
            raise RuntimeError("WebberCommonTopics is not fitted; call fit() first")
        cut = {parse_measure(m)[1]: m for m in self.measures}
        from pbtools.corrections.rerank import _sorted_runs

        run = _sorted_runs(run_or_runs)
        per_u = precision_at(judge(run, self.qrels_, keys=[]), sorted(cut))
        per_t = precision_at(
            judge(
                run[run["qid"].astype(str).isin(common_qrels["qid"].astype(str))],
                common_qrels,
                keys=[],
            ),
            sorted(cut),
        )
        for f in (per_u, per_t):
            f["measure"] = f["n"].map(cut)
            f["value"] = f["P"]
        out = webber_common_topics(
            per_u, per_t, n_boot=self.n_boot, level=self.level, seed=self.seed, keys=("measure",)
        )
        return out[
            [
                "name",
                "measure",
                "estimator",
                "value",
                "reduced",
                "adjustment",
                "variance",
                "se",
                "ci_low",
                "ci_high",
                "n_common",
                "n_topics",
            ]
        ]
