"""Pooling strategies: which documents to judge, in which order, at a fixed cost.

Each strategy is a class (parameters in ``__init__``, scikit-learn style) that cites its source;
:data:`REGISTRY` maps the names a spec string uses to the classes, and :func:`parse` reads a
spec ``NAME[:PARAMS]`` such as ``rbp:0.8``, ``depth:10``, ``mtf``, ``hedge:beta=0.2`` or
``stratified:10,30,100:1,0.25,0.0625``. :meth:`pbtools.pooling.Pool.simulate` runs one against
existing judgments. A new strategy is one class (in a family module, or a new one) plus one line
in :data:`REGISTRY`; ``docs/pooling.md`` shows how.

==============  =======================  =====================================================
name            class                    source
==============  =======================  =====================================================
``depth``       :class:`Depth`           depth-d pooling (TREC)
``take``        :class:`TakeN`           Take@N, best rank first (Lipani et al. 2019)
``rbp``         :class:`RBPA`            RBP-based method A (Moffat, Webber & Zobel 2007)
``rbpb``        :class:`RBPB`            RBP-based method B
``rbpc``        :class:`RBPC`            RBP-based method C (adaptive)
``mtf``         :class:`MoveToFront`     move-to-front (Cormack, Palmer & Clarke 1998)
``hedge``       :class:`Hedge`           Hedge (Aslam, Pavlu & Savell 2003)
``maxmean``     :class:`MaxMean`         MaxMean bandit (Losada, Parapar & Barreiro 2016)
``rrf``         :class:`RRF`             reciprocal rank fusion (Cormack et al. 2009)
``borda``       :class:`Borda`           Borda count (Aslam & Montague 2001)
``combsum``     :class:`CombSUM`         CombSUM (Fox & Shaw 1994)
``uniform``     :class:`UniformSample`   uniform sample of the depth-k pool (infAP)
``stratified``  :class:`Stratified`      stratified sample by rank (statAP, xinfAP)
==============  =======================  =====================================================
"""

from __future__ import annotations

import inspect

from pbtools.errors import InputError
from pbtools.pooling.strategies.bandits import MaxMean
from pbtools.pooling.strategies.base import (
    Assessor,
    PoolingTask,
    Strategy,
    allocate,
    from_rankings,
    run_strategy,
)
from pbtools.pooling.strategies.depth import Depth, TakeN
from pbtools.pooling.strategies.fusion import RRF, Borda, CombSUM
from pbtools.pooling.strategies.hedge import Hedge
from pbtools.pooling.strategies.mtf import MoveToFront
from pbtools.pooling.strategies.rbp import RBPA, RBPB, RBPC
from pbtools.pooling.strategies.sampling import Stratified, UniformSample
from pbtools.pooling.strategies.selection import Selection, ranked, sequential

#: registry name → strategy class (a new strategy: one line here)
REGISTRY: dict[str, type[Strategy]] = {
    cls.name: cls
    for cls in (
        Depth,
        TakeN,
        RBPA,
        RBPB,
        RBPC,
        MoveToFront,
        Hedge,
        MaxMean,
        RRF,
        Borda,
        CombSUM,
        UniformSample,
        Stratified,
    )
}


def _value(text: str, default, where: str):
    """``text`` converted to the type of the parameter's ``default``."""
    try:
        if isinstance(default, tuple):
            kind = type(default[0]) if default else float
            return tuple(kind(v) for v in text.split(",") if v != "")
        if isinstance(default, bool):
            raise ValueError
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
        return text
    except ValueError:
        if isinstance(default, tuple):
            kind = "comma-separated numbers"
        else:
            kind = {int: "an integer", float: "a number"}.get(type(default), "valid")
        raise InputError(f"{where}: {text!r} is not {kind}") from None


def parse(spec) -> Strategy:
    """A strategy from a spec ``NAME[:PARAMS]`` (or a :class:`Strategy`, returned checked).

    ``PARAMS`` are ``:``-separated values, positional in the order of the class's parameters or
    ``key=value``; a tuple parameter takes comma-separated values. Unknown names, parameters or
    malformed values raise ``ValueError`` naming them.

    Examples
    --------
    >>> parse("rbp:0.8"), parse("depth:10"), parse("hedge:beta=0.2")
    (RBPA(p=0.8), Depth(depth=10), Hedge(beta=0.2))
    >>> parse("stratified:10,50:1,0.1")
    Stratified(bounds=(10, 50), weights=(1.0, 0.1))
    >>> parse("rbp:2")
    Traceback (most recent call last):
    ...
    pbtools.errors.InputError: rbp: p must lie in (0, 1], got 2.0
    """
    if isinstance(spec, Strategy):
        spec.check()
        return spec
    name, *args = str(spec).strip().split(":")
    name = name.lower()
    if name not in REGISTRY:
        raise InputError(f"unknown pooling strategy {name!r}; known: {', '.join(REGISTRY)}")
    cls = REGISTRY[name]
    params = cls.param_names()
    defaults = {
        p: v.default for p, v in inspect.signature(cls.__init__).parameters.items() if p != "self"
    }
    kwargs = {}
    for i, arg in enumerate(args):
        key, eq, text = arg.partition("=")
        if not eq:
            if i >= len(params):
                raise InputError(f"{name}: takes {len(params)} parameter(s), got {len(args)}")
            key, text = params[i], arg
        if key not in params:
            raise InputError(f"{name}: unknown parameter {key!r}; parameters: {params or 'none'}")
        kwargs[key] = _value(text, defaults[key], f"{name} {key}")
    strategy = cls(**kwargs)
    strategy.check()
    return strategy


__all__ = [
    "REGISTRY",
    "parse",
    "Strategy",
    "PoolingTask",
    "Assessor",
    "Selection",
    "allocate",
    "ranked",
    "sequential",
    "run_strategy",
    "from_rankings",
    "Depth",
    "TakeN",
    "RBPA",
    "RBPB",
    "RBPC",
    "MoveToFront",
    "Hedge",
    "MaxMean",
    "RRF",
    "Borda",
    "CombSUM",
    "UniformSample",
    "Stratified",
]


def __getattr__(name: str):
    """``Problem``, the earlier name of :class:`PoolingTask` (deprecated: it was easily taken
    for the estimators' :class:`pbtools.engine.problem.Problem`)."""
    if name == "Problem":
        import warnings

        warnings.warn(
            "pbtools.pooling.strategies.Problem is now PoolingTask",
            DeprecationWarning,
            stacklevel=2,
        )
        return PoolingTask
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
