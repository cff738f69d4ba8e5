"""The estimators pbtools knows, by the name of their ``estimator`` column.

A new estimator is one module with a :class:`~pbtools.corrections.base.Estimator` subclass and
one line here; :func:`pbtools.corrections.correct`, ``pbtools correct --estimators`` and the
leave-out experiments find it by name.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

from pbtools.corrections.base import Estimator
from pbtools.corrections.lipani import Lipani
from pbtools.corrections.reduced import Condensed, ReducedPool, TrueScore
from pbtools.corrections.webber import WebberOnRuns
from pbtools.corrections.webber_topics import WebberCommonTopics
from pbtools.errors import InputError

__all__ = ["ESTIMATORS", "SkippedMeasuresWarning", "get", "skipped", "warn_skipped"]

#: name → class; ``webber_topics`` needs fully judged common topics (its own ``score``)
ESTIMATORS: dict[str, type[Estimator]] = {
    "true": TrueScore,
    "reduced": ReducedPool,
    "condensed": Condensed,
    "lipani": Lipani,
    "webber": WebberOnRuns,
    "webber_topics": WebberCommonTopics,
}


def get(name: str) -> type[Estimator]:
    """The estimator class registered under ``name`` (an ``InputError`` naming the known ones).

    >>> get("lipani").supports
    frozenset({'P'})
    """
    try:
        return ESTIMATORS[str(name)]
    except KeyError:
        raise InputError(f"unknown estimator {name!r}; known: {sorted(ESTIMATORS)}") from None


class SkippedMeasuresWarning(UserWarning):
    """Some estimators asked for do not correct some measures asked for: they skip them, and
    their cells are absent (NA) — issued once per call by :func:`warn_skipped`.

    Examples
    --------
    >>> issubclass(SkippedMeasuresWarning, UserWarning)
    True
    """


def skipped(estimators: Iterable[str], measures) -> dict[str, list[str]]:
    """Estimator name → the measures of ``measures`` it does not correct (canonical names),
    for the estimators of ``estimators`` that skip any; unknown names raise ``ValueError``.

    >>> skipped(["reduced", "webber", "lipani"], ["P@10", "AP", "nDCG@10"])
    {'lipani': ['AP', 'nDCG@10']}
    """
    from pbtools.measures.names import parse_all

    ms = parse_all(measures)
    out: dict[str, list[str]] = {}
    for name in dict.fromkeys(map(str, estimators)):  # a handful of estimators
        cls = get(name)
        miss = [str(m) for m in ms if not cls.accepts(m)]
        if miss:
            out[name] = miss
    return out


def skipped_message(skips: dict[str, list[str]]) -> str:
    """One sentence naming each estimator's skipped measures and why (:func:`skipped`).

    >>> print(skipped_message({"lipani": ["AP", "nDCG@10"]}))  # doctest: +NORMALIZE_WHITESPACE
    the lipani estimator skips AP, nDCG@10: it corrects P@n only (its correction is built
    from P@n and anti-precision; not condensed lists); no estimate there (no rows; - or NA in
    tables)
    """
    parts = []
    for name, miss in skips.items():
        cls = get(name)
        scope = cls.scope or ", ".join(sorted(cls.supports or ()))
        parts.append(f"the {name} estimator skips {', '.join(miss)}: it corrects {scope}")
    return "; ".join(parts) + "; no estimate there (no rows; - or NA in tables)"


def warn_skipped(estimators: Iterable[str], measures, stacklevel: int = 3) -> dict[str, list[str]]:
    """:func:`skipped`, announced once as a :class:`SkippedMeasuresWarning` when any estimator
    skips a measure; returns the mapping (empty when every estimator takes every measure)."""
    skips = skipped(estimators, measures)
    if skips:
        warnings.warn(skipped_message(skips), SkippedMeasuresWarning, stacklevel=stacklevel)
    return skips
