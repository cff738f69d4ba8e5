"""The reduced-pool score and the true score: the baselines every correction is judged by."""

from __future__ import annotations

import numpy as np

from pbtools.corrections.base import RESULT_COLUMNS, Estimator
from pbtools.engine.problem import Problem, condensed_measures, precision_parts

__all__ = ["ReducedPool", "TrueScore", "Condensed"]


def _precision_columns(problem: Problem, measures) -> dict[str, np.ndarray]:
    """The runs' own P@n, P̄@n, k̄@n (:meth:`Problem.precision_values`) as extra columns of
    :meth:`Problem.frame` (len(new) × measures arrays, NaN for a measure that is not a P@n)."""
    got = problem.precision_values(measures)
    if got is None:
        return {}
    pm = [p[2] for p in precision_parts(measures)]
    pos = np.array([pm.index(m) if m in pm else -1 for m in measures])
    return {
        c: np.where(pos[None, :] >= 0, v[:, np.maximum(pos, 0)], np.nan)
        for c, v in zip(("P", "AntiP", "k"), got, strict=True)
    }


class ReducedPool(Estimator):
    """The score on the (reduced) qrels, unjudged documents counted non-relevant.

    The lower bound of Lipani et al. 2015 §3-4 and the uncorrected baseline of their §5.1: for a
    run r_u and its qrels Q, ``value`` = score(r_u, Q). Every measure.

    Examples
    --------
    >>> import pandas as pd
    >>> pooled = pd.DataFrame({"name": "p", "qid": "1", "docno": list("ab"), "score": [2., 1.]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "label": [1, 0]})
    >>> new = pd.DataFrame({"name": "u", "qid": "1", "docno": list("xa"), "score": [2., 1.]})
    >>> ReducedPool(measures=["P@2", "AP"], depth=2).fit(pooled, qrels).predict(new)[
    ...     ["measure", "value"]].to_numpy().tolist()
    [['P@2', 0.5], ['AP', 0.5]]
    """

    name = "reduced"
    label = "reduced pool"
    colour = "#2ca02c"
    marker = "o"
    description = (
        "the run's score on the pool without the left-out organization's (or run's) "
        "documents, unjudged documents counted non-relevant: the uncorrected, biased score."
    )
    default_for = frozenset({"analyze", "correct", "cli"})

    def estimate_columns(self, problem: Problem, measures) -> dict:
        """score(r_u, Q) for every run to score (rounded when the problem says so)."""
        values = problem.own(measures)
        extra = _precision_columns(problem, measures)
        adjustment = np.zeros_like(values)
        return problem.columns(
            values, measures, self.name, RESULT_COLUMNS, adjustment=adjustment, **extra
        )


class TrueScore(Estimator):
    """The run's score with its unit pooled: on the re-pooled qrels (Lipani et al. 2015 §5;
    PROTOCOL-lipani2015 items 7, 14). Every measure.

    Examples
    --------
    >>> import pandas as pd
    >>> pooled = pd.DataFrame({"name": "p", "qid": "1", "docno": list("ab"), "score": [2., 1.]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b", "z"], "label": [1, 0, 1]})
    >>> TrueScore(measures=["R@2"], depth=1).fit(pooled, qrels).predict(pooled)["value"].tolist()
    [1.0]
    """

    name = "true"
    label = "true score"
    colour = "#000000"
    marker = "D"
    description = "the run's score on the whole pool (its own documents judged)."

    def estimate_columns(self, problem: Problem, measures) -> dict:
        """score(r_u, truth): the truth variant is the re-pool of the pooled runs at depth d."""
        if problem.truth_var is None:
            raise ValueError("this problem has no truth (re-pooled qrels) variant")
        var = np.full(len(problem.new), problem.truth_var, dtype=np.int64)
        values = problem.run_scores(problem.new, var, measures)
        return problem.columns(values, measures, self.name, RESULT_COLUMNS)


class Condensed(Estimator):
    """The condensed-list score: unjudged documents removed before ranking (Sakai 2008 §3;
    Webber & Park 2009 §2). Biased upward for unpooled runs — a baseline. Every measure.

    Examples
    --------
    >>> import pandas as pd
    >>> pooled = pd.DataFrame({"name": "p", "qid": "1", "docno": list("ab"), "score": [2., 1.]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "label": [1, 0]})
    >>> new = pd.DataFrame({"name": "u", "qid": "1", "docno": list("xa"), "score": [2., 1.]})
    >>> Condensed(measures=["P@1"], depth=2).fit(pooled, qrels).predict(new)["value"].tolist()
    [1.0]
    """

    name = "condensed"
    label = "condensed list"
    colour = "#9467bd"
    marker = "v"
    description = (
        "Sakai 2008: the score of the ranking with its unjudged documents removed (biased upwards)."
    )
    default_for = frozenset({"cli"})

    def estimate_columns(self, problem: Problem, measures) -> dict:
        """score(condensed r_u, Q), reported under the measure's own name."""
        cms = condensed_measures(measures)  # P@10 and P(judged_only=True)@10: one list
        once = list(dict.fromkeys(cms))
        values = problem.own(once)[:, [once.index(m) for m in cms]]
        return problem.columns(values, measures, self.name, RESULT_COLUMNS)
