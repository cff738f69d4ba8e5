"""The estimators pbtools knows, by the name of their ``estimator`` column.

A new estimator is one module with a :class:`~pbtools.corrections.base.Estimator` subclass and
one line here; :func:`pbtools.corrections.correct`, ``pbtools correct --estimators`` and the
leave-out experiments find it by name.
"""

from __future__ import annotations

from pbtools.corrections.base import Estimator
from pbtools.corrections.lipani import Lipani
from pbtools.corrections.reduced import Condensed, ReducedPool, TrueScore
from pbtools.corrections.webber import WebberOnRuns
from pbtools.corrections.webber_topics import WebberCommonTopics
from pbtools.errors import InputError

__all__ = ["ESTIMATORS", "get", "register"]

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


def register(cls: type[Estimator]) -> type[Estimator]:
    """Register an estimator class under its ``name`` (usable as a class decorator)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    ESTIMATORS[cls.name] = cls
    return cls
