"""Corrections of the scores of unpooled runs: the merge operator, indicators and estimators.

=============================  ============================================================
module                         holds
=============================  ============================================================
``corrections.rerank``         the merge operator r_p ∘ r_u and the δ/Δ/λ indicators
``corrections.core``           :func:`estimate` (the vectorised core), presets, choices
``corrections.estimators``     :func:`correct` and the scikit-learn style estimator classes
``corrections.webber_topics``  Webber & Park Algorithm 2 (common fully judged topics)
=============================  ============================================================
"""

from pbtools.corrections.core import DEFAULTS, PRESETS, condensed, estimate, parse_measure, resolve
from pbtools.corrections.estimators import (
    Condensed,
    Lipani,
    ReducedPool,
    TrueScore,
    WebberOnRuns,
    correct,
)
from pbtools.corrections.webber_topics import WebberCommonTopics, webber_common_topics

__all__ = [
    "PRESETS",
    "DEFAULTS",
    "parse_measure",
    "resolve",
    "estimate",
    "correct",
    "condensed",
    "webber_common_topics",
    "TrueScore",
    "ReducedPool",
    "Lipani",
    "WebberOnRuns",
    "WebberCommonTopics",
    "Condensed",
]
