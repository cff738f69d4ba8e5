"""Evaluation measures: the name grammar, the vectorised kernels and trec_eval averaging.

=====================  ====================================================================
module                 holds
=====================  ====================================================================
``measures.names``     the grammar: :class:`Measure`, :func:`parse`, :data:`MEASURES`
``measures.kernels``   the scoring engine: rankings (View), relevance sets (Topics), score()
``measures.formulas``  one kernel per measure (the formulas)
``measures.formulas_trec``  the kernels of the rest of trec_eval's all_trec
``measures.registry``  :func:`family`: a measure family's one declaration (name, parameters,
                       defaults, formula, citation, depth, trec_eval names, kernel)
``measures.arrays``    :class:`~.arrays.Grouping`: the array core (judged rows' codes grouped by
                       keys, run and topic, trec-ordered, scored; no pandas)
``measures.scoring``   :func:`compute`: judged rankings grouped, ordered and scored per topic
``measures.evaluate``  :func:`evaluate` (judge, then :func:`compute`), :func:`aggregate`
``measures.averages``  trec_eval's averages on arrays, equal to pandas' grouped means
``measures.encoded``   per-topic values of encoded runs and qrels (the command line's path)
``measures.topics``    which topics a run is averaged over (one definition), coverage reports
``measures.rounding``  :func:`round_half_up` (the one rounding of published numbers)
``measures.sampled``   estimators for sampled pools: infAP, xinfAP, infNDCG, statAP
=====================  ====================================================================
"""

import sys as _sys
import types as _types

from pbtools.measures import (  # noqa: F401  (register the kernels)
    formulas,
    formulas_trec,
    sampled,
)
from pbtools.measures.names import MEASURES, Measure, measure_names, parse, parse_all
from pbtools.measures.registry import (
    FAMILIES,
    MeasureFamily,
    describe,
    family,
    family_of,
    register_measure,
    unregister,
)
from pbtools.measures.rounding import round_half_up
from pbtools.measures.topics import (
    TOPIC_MODES,
    CoverageWarning,
    topic_coverage,
    topic_mask,
    topics_mode,
    warn_coverage,
)

#: the frame functions, in modules that load pandas: imported on first use, so that the
#: measures (the grammar, the kernels, the array core) load without pandas (the command line's
#: ``evaluate``, issue 30)
_LAZY = {"evaluate": "evaluate", "aggregate": "evaluate", "compute": "scoring"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


class _Package(_types.ModuleType):
    """``pbtools.measures.evaluate`` is both a module and a function: the package's attribute
    is the function (as when it was imported eagerly), also after the module is imported."""

    def __setattr__(self, name, value):
        if name in _LAZY and isinstance(value, _types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package

__all__ = [
    "Measure",
    "parse",
    "parse_all",
    "compute",
    "evaluate",
    "aggregate",
    "MEASURES",
    "measure_names",
    "CoverageWarning",
    "topic_coverage",
    "warn_coverage",
    "TOPIC_MODES",
    "topic_mask",
    "topics_mode",
    "round_half_up",
    "register_measure",
    "family",
    "family_of",
    "unregister",
    "MeasureFamily",
    "FAMILIES",
    "describe",
]
