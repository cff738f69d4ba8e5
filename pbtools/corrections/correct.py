"""Correcting the scores of new runs against one pool: :func:`correct`, :func:`estimate`.

Both build one encoded :class:`~pbtools.engine.problem.Problem` and run every requested
estimator of the registry (:mod:`pbtools.corrections.registry`) on it, each on the measures it
supports.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from pbtools.corrections.base import tidy
from pbtools.corrections.bootstrap import check_bootstrap, topic_bootstrap
from pbtools.corrections.choices import resolve
from pbtools.corrections.registry import get, warn_skipped
from pbtools.engine.build import from_frames
from pbtools.engine.problem import Problem
from pbtools.errors import InputError
from pbtools.frames import ranked
from pbtools.measures.names import parse_all
from pbtools.validation import validates

__all__ = ["correct", "estimate", "condensed", "run_estimators"]


def run_estimators(problem: Problem, measures, estimators: Iterable[str], opts: dict):
    """Every estimator of ``estimators`` on ``problem``, each on the measures it supports;
    the tidy frame of their rows (estimators supporting none of the measures add nothing)."""
    ms = parse_all(measures)
    parts = []
    for name in estimators:  # a handful of estimators
        cls = get(name)
        if name == "webber_topics":
            raise InputError(
                "webber_topics needs fully judged common topics: use "
                "pbtools.corrections.WebberCommonTopics"
            )
        use = cls.supported(ms)
        if not use:
            continue
        params = {c: opts.get(c) for c in cls.choice_names}
        est = cls(measures=[str(m) for m in use], **params)
        parts.append(tidy(est.estimate(problem, use)))
    if not parts:
        return tidy(pd.DataFrame({"name": [], "measure": [], "estimator": [], "value": []}))
    return pd.concat(parts, ignore_index=True)


@validates(new_runs="run", pooled_runs="run", qrels="qrels", orgs="orgs")
def correct(
    new_runs: pd.DataFrame,
    pooled_runs: pd.DataFrame,
    qrels: pd.DataFrame,
    orgs: pd.DataFrame | None = None,
    measures: Sequence[str] = ("P@10",),
    leave_out: str | None = None,
    estimators: Iterable[str] = ("reduced", "webber", "lipani"),
    protocol: str | None = None,
    depth: int | None = None,
    n_boot: int = 0,
    confidence: float = 0.95,
    seed: int | None = 0,
    progress=None,
    lenient: bool = False,
    **choices,
) -> pd.DataFrame:
    """Correct the scores of one or more new runs for pool bias (the CLI's entry point).

    Parameters
    ----------
    new_runs : DataFrame
        The run(s) to score (run columns; a PyTerrier frame without ``name`` is one run).
    pooled_runs : DataFrame
        The runs that built the pool (run columns).
    qrels : DataFrame
        ``qid``, ``docno``, ``label``.
    orgs : DataFrame, optional
        ``name``, ``org`` (needed for ``leave_out="org"``).
    measures : sequence of str
        Any measures of :func:`pbtools.measures.parse`; each estimator scores those it supports
        (Lipani: P@n; the others: every measure). The measures an estimator skips are
        announced once (:class:`~pbtools.corrections.registry.SkippedMeasuresWarning`) and
        recorded in ``attrs["skipped"]`` (estimator → measures).
    leave_out : {None, "run", "org"}
        None: the new runs are unpooled; R_p = every pooled run, Q = ``qrels``. ``"run"`` /
        ``"org"``: a new run that is in the pool is first withdrawn — its run or organisation
        is removed from the pool (its qrels are the re-pool without the unit) — and ``true``
        shows what it scores pooled.
    estimators : iterable of str
        Names of :data:`pbtools.corrections.registry.ESTIMATORS`.
    protocol : str, optional
        ``"lipani2015"`` selects every choice of the paper (:mod:`pbtools.corrections.choices`).
    depth : int, optional
        The pool depth d (default: inferred with :func:`pbtools.pooling.infer_pool`).
    n_boot : int
        Bootstrap replicates over topics for a confidence interval of every estimate
        (:func:`pbtools.corrections.bootstrap.topic_bootstrap`); 0 (default): no interval.
    confidence, seed, progress
        The interval's coverage, the resampling seed and a ``progress(i, n)`` hook.
    lenient : bool
        The frames are checked by :mod:`pbtools.validation`; True: repeated rows are dropped
        with a warning instead of refused.
    **choices
        ``weight``, ``tie``, ``indicator``, ``rp``, ``decimals``, ``replace``, ``topics``
        (another name raises ``TypeError``).

    Returns
    -------
    DataFrame
        :data:`~pbtools.corrections.base.RESULT_COLUMNS`: ``name``, ``measure``, ``estimator``,
        ``value`` + the indicators; with ``n_boot`` > 0, ``topic_ci_low``, ``topic_ci_high`` and
        ``topic_se``
        after ``value``.

    Examples
    --------
    >>> def run(name, docs):
    ...     return pd.DataFrame({"name": name, "qid": "1", "docno": list(docs),
    ...                          "score": range(len(docs), 0, -1)})
    >>> pooled = pd.concat([run("p1", "abcd"), run("p2", "bade")])
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "label": [1, 0]})
    >>> out = correct(run("u", "xayb"), pooled, qrels, measures=["P@2", "nDCG@2"], depth=2)
    >>> out[["measure", "estimator", "value"]].round(4).to_numpy().tolist()
    [['P@2', 'reduced', 0.5], ['nDCG@2', 'reduced', 0.6309], ['P@2', 'webber', 0.5], \
['nDCG@2', 'webber', 0.6309], ['P@2', 'lipani', 0.75]]
    """
    opts = resolve(protocol, **choices)
    ms = parse_all(measures)
    names = list(estimators)
    if n_boot:
        check_bootstrap(n_boot, confidence)
    for n in names:
        get(n)  # unknown names fail before any work
    skips = warn_skipped(names, ms)
    S = ranked(pooled_runs)
    if depth is None:
        from pbtools.pooling.inference import infer_pool

        depth = infer_pool(S, qrels, policy=str(opts["pool_policy"])).depth
    problem = from_frames(
        S,
        new_runs,
        qrels,
        depth=int(depth),
        orgs=orgs,
        leave_out=leave_out,
        rp=str(opts["rp"]),
        topics=str(opts["topics"]),
        decimals=opts["decimals"],
    )
    if n_boot:
        out = topic_bootstrap(
            problem,
            lambda p: run_estimators(p, ms, names, opts),
            n_boot=n_boot,
            confidence=confidence,
            seed=seed,
            progress=progress,
        )
    else:
        out = run_estimators(problem, ms, names, opts)
    out.attrs["skipped"] = skips
    return out


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
    """Score many unpooled runs at once, each with its own qrels and its own R_p.

    ``unpooled`` (run columns) and ``qrels`` may carry a ``left_out`` column: one relevance set
    per value, each run scored against the one its ``left_out`` names (a leave-one-out
    experiment's shape). ``rp_pairs`` (``unpooled``, ``name``) gives R_p of every run (default:
    every pooled run with another name). Choices and the result as :func:`correct`.
    """
    opts = resolve(protocol, **choices)
    problem = from_frames(
        pooled,
        unpooled,
        qrels,
        depth=int(depth),
        rp="run",
        rp_pairs=rp_pairs,
        topics=str(opts["topics"]),
        decimals=opts["decimals"],
    )
    return run_estimators(problem, measures, list(estimators), opts)


def condensed(
    runs: pd.DataFrame, qrels: pd.DataFrame, measures=("P@10",), decimals: int | None = None
) -> pd.DataFrame:
    """Condensed-list scores (Sakai 2007/2008; Webber & Park §2): unjudged documents removed
    before ranking. ``qrels`` may carry a ``left_out`` key (then ``runs`` need it too).
    Returns the tidy frame with ``estimator`` = ``"condensed"``."""
    return estimate(
        runs.iloc[:0], runs, qrels, measures=measures, estimators=("condensed",), decimals=decimals
    )
