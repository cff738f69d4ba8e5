"""The estimators pbtools knows, by the name of their ``estimator`` column.

A new estimator is one module with a :class:`~pbtools.corrections.base.Estimator` subclass and
one line here (or ``ESTIMATORS[cls.name] = cls`` at run time); :func:`pbtools.corrections.correct`,
:func:`pbtools.analyze`, ``pbtools correct --estimators``, the leave-out experiments, the
figures and the reports find it by name, and read what they show of it from the class
(:func:`defaults`, :func:`describe`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping

from pbtools.corrections.base import DEFAULT_CONTEXTS, Estimator
from pbtools.corrections.lipani import Lipani
from pbtools.corrections.reduced import Condensed, ReducedPool, TrueScore
from pbtools.corrections.webber import WebberOnRuns
from pbtools.corrections.webber_topics import WebberCommonTopics
from pbtools.errors import InputError

__all__ = [
    "ESTIMATORS",
    "SkippedMeasuresWarning",
    "Described",
    "defaults",
    "describe",
    "get",
    "skipped",
    "warn_skipped",
]

#: name → class, in the order tables, legends and help list them; ``webber_topics`` needs fully
#: judged common topics (its own ``predict``)
ESTIMATORS: dict[str, type[Estimator]] = {
    "true": TrueScore,
    "reduced": ReducedPool,
    "webber": WebberOnRuns,
    "lipani": Lipani,
    "condensed": Condensed,
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


def defaults(context: str = "analyze") -> tuple[str, ...]:
    """The default estimators of a verb (``"analyze"``, ``"correct"``, ``"cli"``): those whose
    :attr:`~pbtools.corrections.base.Estimator.default_for` names it, in registry order.

    >>> defaults("analyze"), defaults("cli")
    (('reduced', 'webber', 'lipani'), ('reduced', 'webber', 'lipani', 'condensed'))
    """
    if context not in DEFAULT_CONTEXTS:
        raise InputError(f"unknown context {context!r}; known: {', '.join(DEFAULT_CONTEXTS)}")
    return tuple(n for n, cls in ESTIMATORS.items() if context in cls.default_for)


def describe(name: str) -> str:
    """One line on an estimator for help texts: its name, label, description and the measures
    it corrects (:attr:`~pbtools.corrections.base.Estimator.supports`).

    >>> print(describe("lipani"))  # doctest: +NORMALIZE_WHITESPACE
    lipani (Lipani et al.; P@n): Lipani et al. 2015: the reduced score plus a share of the
    run's unjudged documents, estimated by merging its ranking with the pooled runs'.
    """
    cls = get(name)
    measures = (
        "every measure"
        if cls.supports is None
        else ", ".join(f"{b}@n" if b == "P" else b for b in sorted(cls.supports))
    )
    label = cls.label or cls.name
    return f"{name} ({label}; {measures}): {cls.description}"


class Described(Mapping):
    """A live, read-only view name → one attribute of every registered estimator that sets it
    (``Described("colour")["lipani"]``): the figures' palette, the legends' labels and help read
    the classes through it, so an estimator registered later appears at once.

    >>> Described("colour")["lipani"], "webber" in Described("label")
    ('#1f77b4', True)
    """

    def __init__(self, attribute: str):
        self.attribute = attribute

    def __getitem__(self, name: str):
        cls = ESTIMATORS.get(name)
        value = getattr(cls, self.attribute, None) if cls is not None else None
        if not value:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return (n for n, cls in ESTIMATORS.items() if getattr(cls, self.attribute, None))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"Described({self.attribute!r}: {dict(self)!r})"


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
