"""Corrections of the scores of unpooled runs: the merge operator, indicators and estimators.

The papers' algorithms, readable beside the papers; the encoded problem they work on and its
machinery are :mod:`pbtools.engine`.

=============================  ============================================================
module                         holds
=============================  ============================================================
``corrections.merge``          the merge operator r_p ∘ r_u (Lipani et al. 2015 Eq. 2)
``corrections.indicators``     δP, δP̄, δk, ΔP, ΔP̄, Δk, λ and when the correction fires
``presets``        every choice, its principled default, the presets
``corrections.base``           the estimator protocol (scikit-learn's)
``corrections.reduced``        :class:`ReducedPool`, :class:`TrueScore`, :class:`Condensed`
``corrections.lipani``         :class:`Lipani` (Algorithm 1; P@n)
``corrections.webber``         :class:`WebberOnRuns` (Webber & Park Algorithm 1; any measure)
``corrections.webber_topics``  :class:`WebberCommonTopics` (Algorithm 2; any measure)
``corrections.registry``       the estimators by name
``corrections.correct``        :func:`correct`, :func:`estimate`, :func:`condensed`
=============================  ============================================================
"""

from pbtools.corrections.base import RESULT_COLUMNS, Estimator
from pbtools.corrections.correct import condensed, correct, estimate
from pbtools.corrections.lipani import Lipani
from pbtools.corrections.merge import TIES, merge
from pbtools.corrections.reduced import Condensed, ReducedPool, TrueScore
from pbtools.corrections.registry import ESTIMATORS
from pbtools.corrections.webber import WebberOnRuns
from pbtools.corrections.webber_topics import WebberCommonTopics, webber_common_topics
from pbtools.presets import DEFAULTS, PRESETS, resolve

__all__ = [
    "PRESETS",
    "DEFAULTS",
    "resolve",
    "estimate",
    "correct",
    "condensed",
    "merge",
    "TIES",
    "webber_common_topics",
    "Estimator",
    "ESTIMATORS",
    "RESULT_COLUMNS",
    "TrueScore",
    "ReducedPool",
    "Lipani",
    "WebberOnRuns",
    "WebberCommonTopics",
    "Condensed",
]
