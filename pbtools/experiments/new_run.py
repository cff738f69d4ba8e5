"""The notebook front door: ``pbtools.correct(runs, collection, measures)``.

One call takes a new run (a run frame, a PyTerrier result frame or a run file) and a test
collection (a track directory, ``[QRELS, RUNS...]``, an io ``Collection`` or a
``(runs, qrels, orgs)`` tuple), and returns every applicable corrected score of the run with a
prediction interval for its pooled score (:mod:`pbtools.experiments.intervals`, calibrated on
the collection's own leave-one-out errors) and a bootstrap interval over topics. It is
:func:`pbtools.corrections.correct` with the pool inferred from the collection
(:func:`pbtools.pooling.infer_pool`), the collection's unpooled runs kept out of R_p, and
:func:`pbtools.corrections.bootstrap.topic_bootstrap` on.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Sequence
from os import PathLike

import pandas as pd

from pbtools.corrections.bootstrap import DEFAULT_N_BOOT, check_bootstrap
from pbtools.corrections.correct import correct as correct_runs
from pbtools.corrections.registry import SkippedMeasuresWarning, defaults, get, warn_skipped
from pbtools.errors import InputError
from pbtools.experiments.configs import Execution
from pbtools.experiments.intervals import SCALES, prediction_inputs, with_prediction
from pbtools.experiments.load import load
from pbtools.frames import ranked
from pbtools.measures.names import parse_all
from pbtools.pooling.inference import infer_pool
from pbtools.presets import resolve
from pbtools.validation import check_argument, validates

__all__ = ["correct", "DEFAULT_ESTIMATORS"]

#: the estimators :func:`correct` ran by default when this module was imported (each on the
#: measures it supports); a call reads the registry's defaults then
#: (:func:`pbtools.corrections.registry.defaults`)
DEFAULT_ESTIMATORS = defaults("correct")


def _new_runs(new_run, lenient: bool) -> pd.DataFrame:
    """The run(s) to correct in the run schema, trec order (a frame, or run file paths)."""
    if isinstance(new_run, str | PathLike):
        new_run = [new_run]
    if isinstance(new_run, list | tuple) and all(isinstance(p, str | PathLike) for p in new_run):
        from pbtools.io import read_runs

        return read_runs(list(new_run), lenient=lenient)
    if isinstance(new_run, pd.DataFrame):
        return ranked(new_run) if len(new_run) else new_run
    raise TypeError(
        "new_run must be a run frame (name, qid, docno, score), a PyTerrier result frame "
        f"(qid, docno, score) or run file path(s), not {type(new_run).__name__}"
    )


def _renamed_new_run(fn):
    """:func:`correct` also takes its first parameter's old name, ``new_run=``, with a
    ``DeprecationWarning``."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "new_run" in kwargs:
            warnings.warn(
                "pbtools.correct(new_run=...) is deprecated: the parameter is runs=, as in "
                "corrections.correct",
                DeprecationWarning,
                stacklevel=2,
            )
            kwargs["runs"] = kwargs.pop("new_run")
        return fn(*args, **kwargs)

    return wrapper


@_renamed_new_run
@validates()  # the frames are checked below, after the arguments
def correct(
    runs,
    collection,
    measures: Sequence[str] = ("P@10",),
    *,
    estimators: Iterable[str] | None = None,
    leave_out: str | None = None,
    topics: str | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    confidence: float = 0.95,
    seed: int | None = 0,
    protocol: str | None = None,
    depth: int | None = None,
    progress: bool | None = None,
    lenient: bool = False,
    prediction: bool = True,
    scale: str | None = None,
    policy: str | None = None,
    jobs: int | None = None,
    **choices,
) -> pd.DataFrame:
    """Correct a new run's scores for pool bias, with prediction intervals, in one line.

    Steps: read the collection (lenient: every repair is issued as a
    :class:`~pbtools.frames.TrecFormatWarning`); infer the pool depth d and the pooled runs R_p
    from its qrels and runs (:func:`pbtools.pooling.infer_pool`, PROTOCOL-lipani2015 items 4-6;
    runs the inference finds unpooled are kept out of R_p); score the new run with every
    estimator of ``estimators`` on the measures it supports (Lipani et al. 2015: P@n; reduced
    pool and Webber & Park 2009: every measure); give every estimate a prediction interval for
    the score the run would have had had it contributed to the pool (``pi_low``, ``pi_high``:
    split-conformal quantiles of the leave-one-organisation-out errors of the collection's
    pooled runs, :mod:`pbtools.experiments.intervals`); and a percentile bootstrap interval
    over topics (``topic_ci_low``, ``topic_ci_high``,
    :func:`pbtools.corrections.bootstrap.topic_bootstrap`: each replicate re-runs the
    estimator on a resample of the judged topics).

    The two intervals answer different questions. The topic interval says how the estimate
    would move on another sample of topics; it does not see the estimator's bias for this run
    and covers the pooled score at no stated rate. The prediction interval covers the pooled
    score with probability at least ``confidence`` *if the new run's estimation error is
    exchangeable with the pooled runs' leave-one-out errors* — the run is like one more
    organisation's run drawn from the same population as the pooled runs, scored on a pool it
    did not contribute to. The guarantee is over new runs, not conditional on this run; a run
    with more unjudged documents than every pooled run had when left out is an extrapolation
    (an :class:`~pbtools.experiments.intervals.ExtrapolationWarning`, ``extrapolated`` True).
    The calibration costs one leave-one-out experiment over the collection
    (``prediction=False`` skips it). ``docs/uncertainty.md`` has the measured coverage.

    The one signature of the verb: :func:`pbtools.corrections.correct` has the same parameters
    in the same order (without ``prediction``, ``scale``, ``policy`` and ``jobs``), and takes
    the pool itself as ``collection``.

    Parameters
    ----------
    runs : DataFrame, str or path
        The run(s) to correct (called ``new_run`` before issue 29: that keyword still works,
        with a ``DeprecationWarning``): a run frame (``name``, ``qid``, ``docno``, ``score``), a
        PyTerrier result frame (``qid``, ``docno``, ``score``, no ``name``: one run named
        ``"run"``; its ``rank`` is recomputed from ``score`` in trec_eval's order), or the path
        of a TREC run file (read strictly unless ``lenient``).
    collection : str, path, list, Collection or tuple
        A track directory (``QRels/``, ``Runs/``, ``desc.xml``), ``[QRELS, RUNS...]``, an io
        ``Collection`` or ``(runs, qrels, orgs)`` (:func:`pbtools.experiments.load.load`).
    measures : sequence of str
        Measure names (:func:`pbtools.measures.parse`).
    estimators : iterable of str, optional
        Estimator names (:data:`pbtools.corrections.registry.ESTIMATORS`); default: the
        registry's defaults for ``"correct"`` (reduced, webber and lipani). An estimator adds
        no row for a measure it does not support; the measures skipped are announced once
        (:class:`~pbtools.corrections.registry.SkippedMeasuresWarning`) and listed in
        ``attrs["skipped"]``.
    leave_out : {None, "run", "org"}
        None: the new run is not in the pool (its name must differ from every pooled run's).
        ``"run"`` / ``"org"``: score a run of the collection as if it, or its organisation,
        had not contributed (the ``true`` estimator then gives its pooled score).
    topics : {"judged", "all", "answered"}, optional
        The topics a run is averaged over (:mod:`pbtools.measures.topics`; ``"all"`` is
        trec_eval's ``-c``); default: the protocol's.
    n_boot : int
        Bootstrap replicates B (default 200). Each costs one re-averaging of every estimator:
        ≈ 30 ms for reduced, Webber and Lipani at P@10 and AP on TREC-2 (a whole call with
        B = 200 took 8.8 s on an idle 2-core machine); raise B for finer interval ends.
    confidence : float
        Coverage of the intervals (default 0.95).
    seed : int or None
        Seed of the topic resampling.
    prediction : bool
        Compute the prediction intervals (default True).
    scale : {None, "unjudged"}
        Residuals as they are (default) or scaled by each run's unjudged share at the cut-off
        (:mod:`pbtools.experiments.intervals`).
    protocol : str, optional
        ``"lipani2015"``: every choice of the paper (:mod:`pbtools.presets`).
    policy : str, optional
        Pool inference policy (default: the protocol's, ``"paper"``).
    jobs : int, optional
        The cores to use (None or 0: every usable core; 1: one thread, the least memory):
        :class:`~pbtools.experiments.configs.Execution`, the scheduler ``analyze`` uses.
    depth : int, optional
        Fix the pool depth d instead of inferring it.
    progress : bool, optional
        Progress bar over the replicates (default: on a terminal only).
    lenient : bool
        The frames given (``runs``, a ``(runs, qrels, orgs)`` collection) are checked by
        :mod:`pbtools.validation`, and run files read strictly; True: repeated rows are
        dropped and files repaired, each with a warning, instead of refused.
    **choices
        Estimator choices (``weight``, ``tie``, ``indicator``, ``rp``, ``decimals``,
        ``replace``); another name raises ``TypeError``.

    Returns
    -------
    DataFrame
        One row per (run, measure, estimator): ``name``, ``measure``, ``estimator``,
        ``value``, ``pi_low``, ``pi_high`` (prediction interval; NaN for ``true``),
        ``topic_ci_low``, ``topic_ci_high``, ``topic_se`` (the topic replicates' standard
        deviation), then the indicator columns of
        :data:`pbtools.corrections.base.RESULT_COLUMNS`, then ``extrapolated``. ``attrs``
        records ``depth``, ``pooled_runs``, ``unpooled_runs``, ``policy``, ``n_boot``,
        ``confidence``, ``seed``, ``scale``, ``n_calibration`` (calibration runs per
        measure and estimator) and ``skipped`` (estimator → the measures it skipped). The topic
        columns were called ``ci_low``, ``ci_high``, ``se`` before 26: renamed, without aliases,
        because they were read as bounds on the pooled score.

    Raises
    ------
    ValueError
        An unknown measure or estimator, ``n_boot`` < 1, a confidence outside (0, 1), or a new
        run named like a pooled run without ``leave_out`` — all before any scoring; a frame
        that breaks the input contract (:class:`pbtools.validation.FrameError`).
    TypeError
        An unknown keyword argument.

    Examples
    --------
    >>> import pbtools
    >>> from pbtools import synth
    >>> c = synth.generate(topics=8, runs=6, orgs=3, docs=200, run_length=50, depth=10)
    >>> collection = (c.runs[c.runs["name"] != "o03r2"], c.qrels, c.orgs)
    >>> new = c.runs[c.runs["name"] == "o03r2"].drop(columns="name")  # a PyTerrier frame
    >>> out = pbtools.correct(new, collection, ["P@10", "AP"], n_boot=50)
    >>> out[["measure", "estimator"]].to_numpy().tolist()
    [['P@10', 'reduced'], ['AP', 'reduced'], ['P@10', 'webber'], ['AP', 'webber'], \
['P@10', 'lipani']]
    >>> bool(((out["topic_ci_low"] <= out["value"]) & (out["value"] <= out["topic_ci_high"])).all())
    True
    >>> bool(((out["pi_low"] <= out["pi_high"])).all())
    True
    """
    execution = Execution(jobs=jobs, progress=progress)  # the one scheduler
    with execution.limits():  # this process's threads: the cores granted
        ms = parse_all(measures)  # unknown names and bad arguments fail before any work
        names = list(defaults("correct") if estimators is None else estimators)
        for n in names:
            get(n)
        check_bootstrap(n_boot, confidence)
        skips = warn_skipped(names, ms)  # once, here (pointing at the caller's line)
        if scale not in SCALES:
            raise InputError(f"scale must be one of {SCALES}, not {scale!r}")
        if topics is not None:
            choices["topics"] = topics
        opts = resolve(protocol, **choices)
        runs = check_argument(runs, "run", "runs", lenient=lenient)
        collection = check_argument(collection, "collection", "collection", lenient=lenient)
        new = _new_runs(runs, lenient)
        if len(new) == 0:
            raise InputError("the new run has no rows")
        all_runs, qrels, orgs = load(collection, protocol=protocol)
        S = ranked(all_runs)
        pool = infer_pool(S, qrels, policy=policy or str(opts["pool_policy"]), depth=depth)
        pooled = pool.pooled(S)
        new_names = set(new["name"].astype(str).unique())
        clash = sorted(new_names & set(pool.pooled_runs))
        if clash and leave_out is None:
            raise InputError(
                f"run(s) {', '.join(clash)} are pooled runs of the collection: pass "
                "leave_out='run' or 'org' to score them as if they had not contributed, or rename "
                "the new run"
            )
        # the new run's reduced score and unjudged share, as the calibration has them
        extra_ms, extra_est = prediction_inputs(ms, names, pool.depth) if prediction else ([], [])
        bar = None
        if n_boot:
            from pbtools.progress import progress_bar

            bar = progress_bar(n_boot, progress, desc="bootstrap")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SkippedMeasuresWarning)  # announced above
                out = correct_runs(
                    new,
                    (pooled, qrels, orgs),
                    [*ms, *extra_ms],
                    leave_out=leave_out,
                    estimators=[*names, *extra_est],
                    protocol=protocol,
                    depth=pool.depth,
                    n_boot=n_boot,
                    confidence=confidence,
                    seed=seed,
                    progress=None if bar is None else (lambda i, n: bar.update(1)),
                    **choices,
                )
        finally:
            if bar is not None:
                bar.close()
        n_cal = None
        if prediction:
            out, n_cal = with_prediction(
                out,
                (all_runs, qrels, orgs),
                pool.pooled_runs,
                pool.depth,
                ms,
                names,
                leave_out=leave_out,
                confidence=confidence,
                scale=scale,
                protocol=protocol,
                **choices,
            )
        out.attrs = {
            "depth": int(pool.depth),
            "pooled_runs": list(pool.pooled_runs),
            "unpooled_runs": pool.unpooled_runs,
            "policy": pool.policy,
            "n_boot": int(n_boot),
            "confidence": float(confidence),
            "seed": seed,
            "skipped": skips,
            "scale": scale,
            "n_calibration": n_cal,
        }
        return out
