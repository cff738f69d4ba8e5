"""Correcting the scores of new runs against one pool: :func:`correct`.

It builds one encoded :class:`~pbtools.engine.problem.Problem` and runs every requested
estimator of the registry (:mod:`pbtools.corrections.registry`) on it, each on the measures it
supports. Its signature is the verb's everywhere — ``correct(runs, collection, measures, *,
estimators, leave_out, topics, ...)``, as :func:`pbtools.correct` — with the pool as one
argument; the old forms, ``correct(new_runs, pooled_runs, qrels, orgs, ...)`` and
``estimate(pooled, unpooled, qrels, ...)``, still work with a ``DeprecationWarning``.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Iterable, Sequence

import pandas as pd

from pbtools.corrections.base import tidy
from pbtools.corrections.bootstrap import check_bootstrap, topic_bootstrap
from pbtools.corrections.registry import defaults, get, warn_skipped
from pbtools.engine.build import from_frames
from pbtools.engine.problem import Problem
from pbtools.errors import InputError
from pbtools.frames import ranked
from pbtools.measures.names import measure_list, parse_all
from pbtools.presets import resolve
from pbtools.validation import validates

__all__ = ["correct", "estimate", "condensed", "run_estimators", "estimator_columns"]


def run_estimators(problem: Problem, measures, estimators: Iterable[str], opts: dict):
    """Every estimator of ``estimators`` on ``problem``, each on the measures it supports;
    the tidy frame of their rows (estimators supporting none of the measures add nothing).
    ``measures``: parsed :class:`~pbtools.measures.Measure` objects."""
    parts = [
        tidy(est.estimate(problem, use)) for est, use in _estimators(measures, estimators, opts)
    ]
    if not parts:
        return tidy(pd.DataFrame({"name": [], "measure": [], "estimator": [], "value": []}))
    return pd.concat(parts, ignore_index=True)


def estimator_columns(problem: Problem, measures, estimators: Iterable[str], opts: dict) -> list:
    """:func:`run_estimators` before its frames are made: the columns
    (:meth:`~pbtools.corrections.base.Estimator.estimate_columns`) of every estimator that
    supports a measure, in order."""
    return [
        est.estimate_columns(problem, use) for est, use in _estimators(measures, estimators, opts)
    ]


def _estimators(measures, estimators: Iterable[str], opts: dict) -> list:
    """``(estimator, its measures)`` of every estimator of ``estimators`` that supports some of
    ``measures``; an estimator that needs more than the problem refused."""
    ms = measure_list(measures, "run_estimators")
    out = []
    for name in estimators:  # a handful of estimators
        cls = get(name)
        if not cls.on_problem:
            raise InputError(
                f"the {name} estimator does not work on a pool alone: use its class, "
                f"pbtools.corrections.{cls.__name__} ({cls.description})"
            )
        use = cls.supported(ms)
        if not use:
            continue
        params = {c: opts.get(c) for c in cls.choice_names}
        out.append((cls(measures=use, **params), use))
    return out


def _pool_frames(collection) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    """``(pooled_runs, qrels, orgs)`` of a ``(pooled_runs, qrels[, orgs])`` tuple or of an io
    ``Collection`` (``runs``, ``qrels``, ``orgs``); anything else is refused."""
    if hasattr(collection, "runs") and hasattr(collection, "qrels"):
        return collection.runs, collection.qrels, getattr(collection, "orgs", None)
    if (
        isinstance(collection, tuple)
        and len(collection) in (2, 3)
        and all(isinstance(f, pd.DataFrame) for f in collection[:2])
    ):
        return collection[0], collection[1], (collection[2] if len(collection) == 3 else None)
    raise InputError(
        "collection must be the pool: a (pooled_runs, qrels) or (pooled_runs, qrels, orgs) "
        f"tuple of frames or an io Collection, not {type(collection).__name__} (a track "
        "directory or run files: pbtools.correct reads them and infers the pool)"
    )


def _old_form(args: tuple, kwargs: dict) -> bool:
    """Whether a call of :func:`correct` uses the signature before issue 29:
    ``correct(new_runs, pooled_runs, qrels, orgs=None, measures=..., ...)``."""
    return (
        (len(args) > 1 and isinstance(args[1], pd.DataFrame))
        or "new_runs" in kwargs
        or "pooled_runs" in kwargs
    )


def _old_signature(
    new_runs,
    pooled_runs,
    qrels,
    orgs=None,
    measures=("P@10",),
    leave_out=None,
    estimators=None,
    protocol=None,
    depth=None,
    n_boot=0,
    confidence=0.95,
    seed=0,
    progress=None,
    lenient=False,
    **choices,
):  # pragma: no cover - only its signature is used
    """The parameters of :func:`correct` before issue 29 (bound by :func:`_from_old_form`)."""


def _from_old_form(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The arguments of an old-form call, in the one signature's form."""
    given = inspect.signature(_old_signature).bind(*args, **kwargs).arguments
    choices = given.pop("choices", {})
    runs, pool = given.pop("new_runs"), (given.pop("pooled_runs"), given.pop("qrels"))
    pool += (given.pop("orgs", None),)
    return (runs, pool), {**given, **choices}


def accepts_old_form(fn):
    """:func:`correct` also takes its old signature (new runs, pooled runs, qrels, orgs), with
    a ``DeprecationWarning`` naming the new one."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _old_form(args, kwargs):
            warnings.warn(
                "corrections.correct(new_runs, pooled_runs, qrels, orgs, ...) is deprecated: "
                "pass the pool as one argument, correct(runs, (pooled_runs, qrels, orgs), "
                "measures, ...), the signature of pbtools.correct",
                DeprecationWarning,
                stacklevel=2,
            )
            args, kwargs = _from_old_form(args, kwargs)
        return fn(*args, **kwargs)

    return wrapper


@accepts_old_form
@validates(runs="run", collection="collection")
def correct(
    runs: pd.DataFrame,
    collection,
    measures: Sequence[str] = ("P@10",),
    *,
    estimators: Iterable[str] | None = None,
    leave_out: str | None = None,
    topics: str | None = None,
    n_boot: int = 0,
    confidence: float = 0.95,
    seed: int | None = 0,
    protocol: str | None = None,
    depth: int | None = None,
    progress=None,
    lenient: bool = False,
    rp_pairs: pd.DataFrame | None = None,
    **choices,
) -> pd.DataFrame:
    """Correct the scores of one or more runs for pool bias, against a pool taken as given.

    The one signature of the verb: :func:`pbtools.correct` has the same parameters in the same
    order (plus ``prediction``, ``scale`` and ``policy``); it reads a collection of every
    submitted run, infers which built the pool and adds prediction intervals. Here
    ``collection`` *is* the pool.

    Parameters
    ----------
    runs : DataFrame
        The run(s) to score (run columns; a PyTerrier frame without ``name`` is one run).
    collection : tuple or Collection
        The pool: ``(pooled_runs, qrels)`` or ``(pooled_runs, qrels, orgs)`` frames — the runs
        that built the pool (run columns), ``qid``, ``docno``, ``label`` and ``name``, ``org``
        (needed for ``leave_out="org"``) — or an io ``Collection`` whose runs all built it.
    measures : sequence of str
        Any measures of :func:`pbtools.measures.parse`; each estimator scores those it supports
        (Lipani: P@n; the others: every measure). The measures an estimator skips are
        announced once (:class:`~pbtools.corrections.registry.SkippedMeasuresWarning`) and
        recorded in ``attrs["skipped"]`` (estimator → measures).
    estimators : iterable of str, optional
        Names of :data:`pbtools.corrections.registry.ESTIMATORS` (default: the registry's
        defaults for ``"correct"``, :func:`~pbtools.corrections.registry.defaults`: reduced,
        webber, lipani).
    leave_out : {None, "run", "org"}
        None: the runs are unpooled; R_p = every pooled run, Q = the qrels. ``"run"`` /
        ``"org"``: a run that is in the pool is first withdrawn — its run or organisation
        is removed from the pool (its qrels are the re-pool without the unit) — and ``true``
        shows what it scores pooled.
    topics : {"judged", "all", "answered"}, optional
        The topics a run is averaged over (:mod:`pbtools.measures.topics`; ``"all"`` is
        trec_eval's ``-c``); default: the protocol's.
    n_boot : int
        Bootstrap replicates over topics for a confidence interval of every estimate
        (:func:`pbtools.corrections.bootstrap.topic_bootstrap`); 0 (default): no interval.
    confidence, seed
        The interval's coverage and the resampling seed.
    protocol : str, optional
        ``"lipani2015"`` selects every choice of the paper (:mod:`pbtools.presets`).
    depth : int, optional
        The pool depth d (default: inferred with :func:`pbtools.pooling.infer_pool`).
    progress : callable, optional
        A ``progress(i, n)`` hook called after each bootstrap replicate.
    lenient : bool
        The frames are checked by :mod:`pbtools.validation`; True: repeated rows are dropped
        with a warning instead of refused.
    rp_pairs : DataFrame, optional
        ``unpooled``, ``name``: R_p of every run given explicitly (default: every pooled run
        with another name, outside the run's left-out unit).
    **choices
        ``weight``, ``tie``, ``indicator``, ``rp``, ``decimals``, ``replace`` (another name
        raises ``TypeError``).

    Returns
    -------
    DataFrame
        :data:`~pbtools.corrections.base.RESULT_COLUMNS`: ``name``, ``measure``, ``estimator``,
        ``value`` + the indicators; with ``n_boot`` > 0, ``topic_ci_low``, ``topic_ci_high`` and
        ``topic_se`` after ``value``.

    Examples
    --------
    >>> def run(name, docs):
    ...     return pd.DataFrame({"name": name, "qid": "1", "docno": list(docs),
    ...                          "score": range(len(docs), 0, -1)})
    >>> pooled = pd.concat([run("p1", "abcd"), run("p2", "bade")])
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "label": [1, 0]})
    >>> out = correct(run("u", "xayb"), (pooled, qrels), ["P@2", "nDCG@2"], depth=2)
    >>> out[["measure", "estimator", "value"]].round(4).to_numpy().tolist()
    [['P@2', 'reduced', 0.5], ['nDCG@2', 'reduced', 0.6309], ['P@2', 'webber', 0.5], \
['nDCG@2', 'webber', 0.6309], ['P@2', 'lipani', 0.75]]
    """
    pooled_runs, qrels, orgs = _pool_frames(collection)
    opts = resolve(protocol, topics=topics, **choices)
    ms = parse_all(measures)
    names = list(defaults("correct") if estimators is None else estimators)
    if n_boot:
        check_bootstrap(n_boot, confidence)
    for n in names:
        get(n)  # unknown names fail before any work
    skips = warn_skipped(names, ms)
    out = _scores(
        runs,
        pooled_runs,
        qrels,
        orgs,
        ms,
        names,
        opts,
        depth=depth,
        leave_out=leave_out,
        rp_pairs=rp_pairs,
        n_boot=n_boot,
        confidence=confidence,
        seed=seed,
        progress=progress,
    )
    out.attrs["skipped"] = skips
    return out


def _scores(
    runs,
    pooled_runs,
    qrels,
    orgs,
    ms,
    names,
    opts,
    *,
    depth=None,
    leave_out=None,
    rp_pairs=None,
    rp=None,
    n_boot=0,
    confidence=0.95,
    seed=0,
    progress=None,
) -> pd.DataFrame:
    """The work of :func:`correct` on checked arguments: one encoded problem, every estimator
    of ``names`` on it (and the topic bootstrap when ``n_boot``)."""
    S = ranked(pooled_runs)
    if depth is None:
        from pbtools.pooling.inference import infer_pool

        depth = infer_pool(S, qrels, policy=str(opts["pool_policy"])).depth
    problem = from_frames(
        S,
        runs,
        qrels,
        depth=int(depth),
        orgs=orgs,
        leave_out=leave_out,
        rp=str(opts["rp"] if rp is None else rp),
        rp_pairs=rp_pairs,
        topics=str(opts["topics"]),
        decimals=opts["decimals"],
    )
    if not n_boot:
        return run_estimators(problem, ms, names, opts)
    return topic_bootstrap(
        problem,
        lambda p: run_estimators(p, ms, names, opts),
        n_boot=n_boot,
        confidence=confidence,
        seed=seed,
        progress=progress,
    )


def estimate(
    pooled: pd.DataFrame,
    unpooled: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    rp_pairs: pd.DataFrame | None = None,
    depth: int = 100,
    measures: Sequence[str] = ("P@10",),
    estimators: Iterable[str] = ("reduced", "lipani", "webber"),
    protocol: str | None = None,
    **choices,
) -> pd.DataFrame:
    """Deprecated: :func:`correct` with the pool as one argument,
    ``correct(unpooled, (pooled, qrels), measures, estimators=..., depth=..., rp_pairs=...)``.

    Scores many unpooled runs at once, each with its own qrels and its own R_p: ``unpooled``
    (run columns) and ``qrels`` may carry a ``left_out`` column (one relevance set per value,
    each run scored against the one its ``left_out`` names); ``rp_pairs`` (``unpooled``,
    ``name``) gives R_p of every run (default: every pooled run with another name).
    """
    warnings.warn(
        "corrections.estimate(pooled, unpooled, qrels, ...) is deprecated: use "
        "corrections.correct(unpooled, (pooled, qrels), measures, estimators=..., depth=..., "
        "rp_pairs=...), the one signature of the verb",
        DeprecationWarning,
        stacklevel=2,
    )
    opts = resolve(protocol, **choices)
    ms = parse_all(measures)
    return _scores(
        unpooled,
        pooled,
        qrels,
        None,
        ms,
        list(estimators),
        opts,
        depth=depth,
        rp_pairs=rp_pairs,
        rp="run",
    )


def condensed(
    runs: pd.DataFrame, qrels: pd.DataFrame, measures=("P@10",), decimals: int | None = None
) -> pd.DataFrame:
    """Condensed-list scores (Sakai 2007/2008; Webber & Park §2): unjudged documents removed
    before ranking. ``qrels`` may carry a ``left_out`` key (then ``runs`` need it too).
    Returns the tidy frame with ``estimator`` = ``"condensed"``."""
    opts = resolve(None, decimals=decimals)
    return _scores(
        runs,
        runs.iloc[:0],
        qrels,
        None,
        parse_all(measures),
        ["condensed"],
        opts,
        depth=100,
        rp="run",
    )
