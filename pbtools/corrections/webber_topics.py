"""Webber & Park 2009 Algorithm 2: score adjustment inferred from fully judged common topics.

For an unpooled run r with per-topic unpooled scores u_i on all N topics (qrels Q_T from the
pool) and true scores t_c on n common topics C (where r too has been fully judged):

    a = (1/n) Σ_{c∈C} (t_c − u_c)                      (adjustment, §3.2)
    θ̂_a = ū + a,  ū = (1/N) Σ_i u_i                    (adjusted estimate of the mean true score)
    Var(θ̂_a) = (N − n)/(N·n) · σ̂²_a,  σ̂²_a = (1/(n−1)) Σ_c (u_c + a − t_c)²   (Eqs. 3, 7)

and a percentile bootstrap interval over resampled common topics (seeded), which §3.2 recommends
for small n where the normal approximation is dubious. The per-topic scores come from
:func:`pbtools.measures.evaluate`, so every measure can be adjusted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.corrections.base import Estimator
from pbtools.frames import ranked, require_columns
from pbtools.measures.evaluate import evaluate
from pbtools.validation import validates

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


class WebberCommonTopics(Estimator):
    """Webber & Park Algorithm 2 as an estimator object, every measure.

    ``fit(pooled_runs, qrels, orgs=None)``: the pool's qrels Q_T (the runs and orgs are
    kept for the common interface). ``predict(runs, common_qrels)``: ``common_qrels`` hold the
    full judgments of the common topics (the new run's documents included; ``score``, the old
    name, is a deprecated alias). Parameters:
    ``measures``, ``n_boot``, ``level``, ``seed``, ``topics``.

    Examples
    --------
    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": ["1", "2"], "docno": ["a", "b"], "label": [1, 1]})
    >>> common = pd.DataFrame({"qid": "1", "docno": ["a", "x"], "label": [1, 1]})
    >>> new = pd.DataFrame({"name": "u", "qid": ["1", "1", "2"], "docno": ["x", "a", "b"],
    ...                     "score": [2.0, 1.0, 1.0]})
    >>> est = WebberCommonTopics(measures=["P@2"], n_boot=50).fit(None, qrels)
    >>> est.predict(new, common)[["value", "reduced", "adjustment"]].to_numpy().tolist()
    [[1.0, 0.5, 0.5]]
    """

    name = "webber_topics"
    label = "Webber & Park (common topics)"
    colour = "#8c564b"
    marker = "P"
    description = (
        "Webber & Park 2009 Algorithm 2: the reduced score plus the mean error on common "
        "topics judged in full (needs their qrels: pbtools.corrections.WebberCommonTopics)."
    )
    on_problem = False

    def __init__(
        self,
        measures=("P@10",),
        n_boot: int = 2000,
        level: float = 0.95,
        seed: int = 0,
        topics: str | None = None,
    ):
        self.measures, self.n_boot, self.level, self.seed = measures, n_boot, level, seed
        self.topics = topics
        self.protocol, self.depth = None, None

    @classmethod
    def _param_names(cls) -> list[str]:
        return ["measures", "n_boot", "level", "seed", "topics"]

    @validates(pooled_runs="run", qrels="qrels", orgs="orgs")
    def fit(self, pooled_runs, qrels: pd.DataFrame, orgs=None, *, lenient: bool = False):
        """Remember the pool's qrels Q_T (``pooled_runs`` and ``orgs`` for the common
        interface; Algorithm 2 does not use them); checked as :meth:`Estimator.fit`."""
        self.qrels_, self.runs_, self.orgs_ = qrels, pooled_runs, orgs
        return self

    @validates(runs="run", common_qrels="qrels")
    def predict(self, runs, common_qrels: pd.DataFrame, measures=None, *, lenient=False):
        """Algorithm 2: the run's mean on Q_T plus the mean (true − unpooled) difference on the
        common topics, with the §3.2 ratio-estimator variance and a seeded bootstrap interval.

        Columns: ``name``, ``measure``, ``estimator`` (``webber_topics``), ``value``,
        ``reduced``, ``adjustment``, ``variance``, ``se``, ``ci_low``, ``ci_high``,
        ``n_common``, ``n_topics``.
        """
        if not hasattr(self, "qrels_"):
            raise RuntimeError("WebberCommonTopics is not fitted; call fit() first")
        ms = self.measures if measures is None else measures
        run = ranked(runs)
        common = run[run["qid"].astype(str).isin(common_qrels["qid"].astype(str))]
        opts = {"per_topic": True, "topics": self.topics, "warn": False}
        per_u = evaluate(run, self.qrels_, ms, **opts)
        per_t = evaluate(common, common_qrels, ms, **opts)
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
