"""``pbtools correct``: every estimator's score for new, unpooled runs."""

from __future__ import annotations

import argparse
import sys

from pbtools.cli.common import (
    FORMATS,
    EmptyResult,
    UsageError,
    add_io_options,
    add_policy_option,
    check_choices,
    check_inputs,
    check_measures,
    check_output,
    emit,
)

#: the place in a help text where :class:`RegistryHelp` lists the registered estimators
ESTIMATOR_LIST = "%(estimator_list)s"


def usable_estimators(context: str = "cli") -> tuple[str, ...]:
    """The registered estimators a command can run: those that work on a pool alone
    (:attr:`~pbtools.corrections.base.Estimator.on_problem`), in registry order; for
    ``analyze``, which always computes the true score, not ``true``."""
    from pbtools.corrections.registry import ESTIMATORS

    drop = {"true"} if context == "analyze" else set()
    return tuple(n for n, cls in ESTIMATORS.items() if cls.on_problem and n not in drop)


def estimator_list(context: str) -> str:
    """The ``--estimators`` help of a command: the default (the registry's defaults for
    ``context``) and one entry per estimator a command can run, read from its class
    (:func:`pbtools.corrections.registry.describe`)."""
    from pbtools.corrections.registry import defaults, describe

    return f"default: {','.join(defaults(context))}. " + " ".join(
        f"[{describe(n)}]" for n in usable_estimators(context)
    )


class RegistryHelp(argparse.HelpFormatter):
    """A help formatter that lists the registered estimators where a help text says
    :data:`ESTIMATOR_LIST`, when the help is shown: registering a command imports no estimator
    (``pbtools --help`` starts without pandas), and an estimator registered at run time is
    listed. The option's ``estimator_context`` (:func:`add_estimators_option`) names whose
    defaults the help states."""

    def _expand_help(self, action: argparse.Action) -> str:
        original = action.help
        if ESTIMATOR_LIST not in str(original):
            return super()._expand_help(action)
        listing = estimator_list(getattr(action, "estimator_context", "cli"))
        action.help = str(original).replace(ESTIMATOR_LIST, listing.replace("%", "%%"))
        try:
            return super()._expand_help(action)
        finally:
            action.help = original


def add_estimators_option(p: argparse.ArgumentParser, context: str) -> None:
    """``--estimators``: comma-separated names of the registry; the default is the registry's
    defaults for ``context`` (None here: read when the command runs)."""
    p.formatter_class = RegistryHelp
    action = p.add_argument(
        "--estimators",
        default=None,
        help="comma-separated names of pbtools.corrections.ESTIMATORS (" + ESTIMATOR_LIST + ")",
    )
    action.estimator_context = context


def estimators_of(args: argparse.Namespace, context: str) -> list[str]:
    """The estimators ``--estimators`` names (checked), or the registry's defaults."""
    from pbtools.corrections.registry import defaults

    if args.estimators is None:
        return list(defaults(context))
    return check_choices(args.estimators, usable_estimators(context), flag="--estimators")


def register(sub) -> None:
    """Add this command's sub-parser to ``sub``."""
    co = sub.add_parser(
        "correct",
        help="every estimator's score for a new, unpooled run",
        description="Score a new run as if it had been pooled: true (with "
        "--leave-out) and every estimator of --estimators (pbtools.corrections.ESTIMATORS).",
    )
    co.add_argument("qrels", help="qrels file")
    co.add_argument("runs", help="directory (or glob) of the runs that built the pool")
    co.add_argument("new_run", help="the run to score (a file; several runs are allowed)")
    co.add_argument("--desc", help="desc.xml mapping run tags to organizations")
    co.add_argument(
        "-m",
        "--measure",
        action="append",
        help="any measure, e.g. P@10, AP, nDCG@10 (repeatable; default P@10); "
        "each estimator corrects those it supports (lipani: P@n)",
    )
    co.add_argument(
        "--leave-out",
        choices=("run", "org"),
        help="first remove the new run's run or organization from the pool",
    )
    add_estimators_option(co, "cli")
    co.add_argument(
        "--protocol",
        choices=("lipani2015",),
        help="the choices that reproduce Lipani et al. 2015 (see "
        "pbtools.corrections.PRESETS); default: the principled ones",
    )
    add_policy_option(co)
    co.add_argument(
        "--all-topics",
        "-c",
        action="store_true",
        help="average over all qrels topics, missing ones scoring 0 (trec_eval -c); default: "
        "the topics each run answers that the qrels judge (under --protocol lipani2015: every "
        "topic the run answers)",
    )
    co.add_argument(
        "--bootstrap",
        type=int,
        default=0,
        metavar="B",
        help="B bootstrap replicates over topics: a topic-sampling interval (topic_ci_low, "
        "topic_ci_high) and standard error (topic_se) for every estimate (default 0: none; 200 "
        "is a good start). It does not bound the pooled score: pi_low, pi_high do",
    )
    co.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="coverage of the prediction and bootstrap intervals (default 0.95)",
    )
    co.add_argument(
        "--no-prediction",
        action="store_true",
        help="skip the prediction intervals (pi_low, pi_high: where the run's pooled score "
        "lies, calibrated on the pooled runs' leave-one-out errors; one leave-one-out "
        "experiment over the collection)",
    )
    co.add_argument(
        "--scale",
        choices=("none", "unjudged"),
        default="none",
        help="prediction residuals as they are, or scaled by each run's unjudged share",
    )
    co.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    co.add_argument(
        "--jobs",
        type=int,
        default=0,
        help="cores to use, >= 1 (default 0: every usable core), as threads of this process; "
        "--jobs 1 uses the least memory",
    )
    co.add_argument("--format", choices=FORMATS, default="table")
    co.add_argument("-o", "--output", help="output file (default: standard output)")
    add_io_options(co)
    co.set_defaults(func=run, validate=validate)


def validate(args: argparse.Namespace) -> None:
    """Every argument and path checked before any input is read."""
    args._measures = check_measures(args.measure or ["P@10"])  # the one parse of -m
    estimators_of(args, "cli")
    if args.bootstrap < 0:
        raise UsageError(f"--bootstrap must be >= 0, not {args.bootstrap}")
    if not 0 < args.confidence < 1:
        raise UsageError(f"--confidence must be in (0, 1), not {args.confidence}")
    if args.format == "parquet" and not args.output:
        raise UsageError("--format parquet needs -o FILE")
    execution_of(args)  # --jobs (and PBTOOLS_THREADS) checked as pbtools.correct checks jobs=
    inputs = [args.qrels, args.runs, args.new_run]
    check_inputs(inputs, desc=args.desc)
    check_output(args.output, inputs=[*inputs, args.desc])


def execution_of(args: argparse.Namespace):
    """The :class:`~pbtools.experiments.configs.Execution` of ``--jobs``, checked by it (the
    validation of ``pbtools.correct(jobs=)``): a bad value is a :class:`UsageError` naming the
    option (exit status 2)."""
    from pbtools.errors import InputError
    from pbtools.experiments.configs import Execution

    try:
        return Execution(jobs=args.jobs, progress=False)
    except InputError as err:
        raise UsageError(f"--jobs {args.jobs}: {err}") from None


def run(args: argparse.Namespace) -> int:
    """``pbtools correct``: every estimator's score for new runs (pbtools.corrections.correct),
    on the cores of ``--jobs`` (:meth:`Execution.limits
    <pbtools.experiments.configs.Execution.limits>`, as ``pbtools.correct(jobs=)``)."""
    with execution_of(args).limits():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from pbtools import corrections, io
    from pbtools.measures import warn_coverage
    from pbtools.measures.names import measure_column
    from pbtools.pooling.inference import infer_pool
    from pbtools.progress import progress_bar

    col = io.read_collection(
        qrels=args.qrels,
        runs=args.runs,
        desc=args.desc,
        lenient=args.lenient,
        float32=args.float32,
        run_id=args.run_id,
    )
    new = io.read_runs(args.new_run, lenient=args.lenient, float32=args.float32, run_id=args.run_id)
    info = infer_pool(col.runs, col.qrels, policy=args.policy)
    pooled = info.pooled(col.runs)
    new_names = sorted(new["name"].astype("str").unique())
    in_pool = [n for n in new_names if n in set(info.pooled_runs)]
    if in_pool and not args.leave_out:
        print(
            f"pbtools: note: {', '.join(in_pool)} contributed to the pool; its scores are "
            "not biased. --leave-out run|org shows what it would have scored unpooled.",
            file=sys.stderr,
        )
    measures = list(dict.fromkeys(args._measures))  # parsed by validate: Measure objects
    estimators = estimators_of(args, "cli")
    if args.leave_out and "true" not in estimators:
        estimators.insert(0, "true")
    mode = str(
        corrections.resolve(args.protocol, topics="all" if args.all_topics else None)["topics"]
    )
    warn_coverage(new, col.qrels, topics=mode)  # topics that leave or enter the averages, once
    extra_ms, extra_est = [], []
    if not args.no_prediction:  # the reduced score and unjudged share the intervals need
        from pbtools.experiments.intervals import prediction_inputs

        extra_ms, extra_est = prediction_inputs(measures, estimators, info.depth)
    bar = progress_bar(args.bootstrap, None, desc="bootstrap")  # on a terminal only
    res = corrections.correct(
        new,
        (pooled, col.qrels, col.orgs),
        [*measures, *extra_ms],
        leave_out=args.leave_out,
        estimators=[*estimators, *extra_est],
        protocol=args.protocol,
        depth=info.depth,
        topics="all" if args.all_topics else None,
        n_boot=args.bootstrap,
        confidence=args.confidence,
        seed=args.seed,
        progress=None if bar is None else (lambda i, n: bar.update(1)),
    )
    if bar is not None:
        bar.close()
    if len(res) and not args.no_prediction:
        from pbtools.experiments.intervals import with_prediction

        res, _n = with_prediction(
            res,
            (col.runs, col.qrels, col.orgs),
            info.pooled_runs,
            info.depth,
            measures,
            estimators,
            leave_out=args.leave_out,
            confidence=args.confidence,
            scale=None if args.scale == "none" else args.scale,
            protocol=args.protocol,
            topics="all" if args.all_topics else None,
        )
    if len(res) == 0:
        raise EmptyResult(
            f"no result: the new run(s) {', '.join(new_names)} answer no topic that the qrels judge"
        )
    meta = {
        "command": "correct",
        "measures": measure_column(measures),
        "estimators": estimators,
        "leave_out": args.leave_out,
        "protocol": args.protocol,
        "depth": info.depth,
        "pooled_runs": info.pooled_runs,
        "new_runs": new_names,
        "bootstrap": args.bootstrap,
        "confidence": args.confidence if args.bootstrap else None,
        "seed": args.seed if args.bootstrap else None,
        "one_org_per_run": col.orgs.attrs.get("one_org_per_run"),  # why, when no orgs
        "prediction": not args.no_prediction,
        "scale": args.scale,
    }
    if args.format == "table" and not args.output:
        print(
            f"pool: d = {info.depth}, {len(info.pooled_runs)} pooled runs"
            + (f"; leaving out each new run's {args.leave_out}" if args.leave_out else "")
            + (
                f" (= its run: {meta['one_org_per_run']}, so each run is its own organization)"
                if args.leave_out == "org" and meta["one_org_per_run"]
                else ""
            )
        )
    if args.format == "table":  # indicator columns only where an estimator has them
        res = res.dropna(axis=1, how="all")
    if args.format in ("table", "tsv"):  # counts as integers, flags as true/false
        if "n_pooled" in res.columns:
            res["n_pooled"] = res["n_pooled"].round().astype("Int64")
        if "fired" in res.columns:
            res["fired"] = res["fired"].astype("boolean")
    emit(res, args.format, args.output, meta, args=args)
    return 0
