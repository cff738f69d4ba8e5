"""``pbtools analyze``: the bias analysis of a collection, or of a simulated pool of it.

With ``--strategy NAME[:PARAMS] --budget N`` the collection's pooled runs are first pooled anew
by that strategy with the collection's qrels as the assessor (as ``pbtools pool --strategy``
does), and the analysis runs on ``(runs, simulated qrels, orgs)``: the pool depth and the pooled
runs are the strategy's (its contribution depth: the deepest best rank of a judged document), so
every fixed-cost pool can be analysed; for strategies that judge deep documents that depth is
large and the leave-out reductions remove little (``benchmarks/pooling_strategies.py``
discusses it).
"""

from __future__ import annotations

import argparse

from pbtools.cli.common import (
    UsageError,
    add_io_options,
    check_choices,
    check_inputs,
    check_measures,
    check_output,
)
from pbtools.cli.correct import add_estimators_option, estimators_of
from pbtools.cli.pool import add_strategy_args, check_strategy, describe_simulation, simulate
from pbtools.threads import cores_for

LEAVE_OUT = ("org", "run")
RUN_SETS = ("all", "top75")


def add_analysis_options(p: argparse.ArgumentParser) -> None:
    """The collection and the choices of an analysis (shared by ``analyze`` and ``report``)."""
    p.add_argument(
        "paths",
        nargs="*",
        metavar="TRACK_DIR | QRELS RUNS",
        help="a track directory or a qrels file and runs (default: the bundled sample)",
    )
    p.add_argument("--desc", help="desc.xml mapping run tags to organizations")
    p.add_argument(
        "--name",
        help="the collection's name in the output (default: its folder with the parent's, "
        "e.g. TREC-2/Adhoc; for QRELS RUNS the folder that holds them)",
    )
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        help="measures to analyse (repeatable; default P@5 P@10 P@20 P@30 P@100); each "
        "estimator corrects those it supports (lipani: P@n)",
    )
    p.add_argument(
        "--leave-out",
        default="org,run",
        help="comma-separated leave-out units: org, run (default both)",
    )
    p.add_argument(
        "--run-sets",
        default="all,top75",
        help="comma-separated run sets: all, top75 (default both)",
    )
    add_estimators_option(p, "analyze")
    p.add_argument(
        "--protocol",
        choices=("lipani2015",),
        help="reproduce Lipani et al. 2015 exactly (PROTOCOL-lipani2015.md)",
    )
    p.add_argument(
        "--all-topics",
        "-c",
        action="store_true",
        help="average over all qrels topics, missing ones scoring 0 (trec_eval -c); default: "
        "the topics each run answers that the qrels judge (under --protocol lipani2015: every "
        "topic the run answers)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=0,
        help="cores to use, >= 1 (default 0: every usable core); threads of this process, "
        "worker processes only beyond 4 cores; --jobs 1 uses the least memory",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the configurations on a Dask cluster: a scheduler address "
        "(tcp://host:8786) or 'local' (a LocalCluster of --jobs worker processes); needs "
        'pip install "pbtools[dask]"',
    )
    p.add_argument(
        "--top-ties",
        choices=("order", "include", "exclude"),
        default="order",
        help="when the top-75%% cut falls inside a tie of run scores: keep the tied runs in "
        "name order up to the cut (default, as the paper), keep them all, or drop them all; "
        "each such tie is reported",
    )
    sre = p.add_mutually_exclusive_group()
    sre.add_argument(
        "--sre-test",
        choices=("hsd", "t"),
        default="hsd",
        help="SRE*'s significance test, on the topics of each run's average: two-way Tukey "
        "HSD (default) or paired t-tests of every pair without multiplicity correction",
    )
    sre.add_argument(
        "--sre-pvalues",
        metavar="DIR_OR_FILE",
        help="SRE* from the reference tool's p-values: a directory of pValues.<metric>.csv "
        "files (lines runA,runB,p; a missing pair is not significant), or one measure's file",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_strategy_args(p, output=False)
    add_io_options(p)


def register(sub) -> None:
    """Add this command's sub-parser to ``sub``."""
    an = sub.add_parser(
        "analyze",
        help="the bias analysis of a collection (default: the bundled sample)",
        description="Leave-one-organization/run-out over all pooled runs and "
        "the top 75%: every run's true score and each estimator's (--estimators) at each "
        "cut-off, and per estimator MAE, SRE, SRE* and Kendall's tau.",
    )
    add_analysis_options(an)
    an.add_argument("-o", "--output", help="directory for the Parquet tables")
    an.add_argument(
        "--wide",
        action="store_true",
        help="one table for every configuration (wider than 80 columns)",
    )
    an.add_argument(
        "-v", "--verbose", action="store_true", help="also print the parse and analysis time"
    )
    an.set_defaults(func=run, validate=validate)


def validate_analysis(args: argparse.Namespace) -> None:
    """Check the analysis options of ``args`` (``analyze`` and ``report``) before any work."""
    from pbtools.experiments import analysis

    # the one parse of -m: Measure objects from here inward (analysis_from_args)
    args._measures = check_measures(args.measure or analysis.MEASURES)
    check_choices(args.leave_out, LEAVE_OUT, flag="--leave-out")
    check_choices(args.run_sets, RUN_SETS, flag="--run-sets")
    estimators_of(args, "analyze")
    check_strategy(args)
    if getattr(args, "protocol", None) and args.run_id != "tag":  # the preset names runs itself
        raise UsageError(
            f"--run-id {args.run_id} cannot apply with --protocol {args.protocol}: the preset "
            "names runs by file and organizations by tag (PROTOCOL item 1)"
        )
    if args.name is not None and not args.name.strip():
        raise UsageError("--name needs a non-empty name")
    if args.jobs < 0:
        raise UsageError(f"--jobs must be >= 1 (or 0 for every core), not {args.jobs}")
    cores_for(args.jobs)  # PBTOOLS_THREADS, before any work (an InputError naming it)
    if getattr(args, "dask", None) is not None:
        from pbtools.grid import import_distributed

        if not args.dask.strip():
            raise UsageError("--dask needs a scheduler address (tcp://host:8786) or 'local'")
        try:
            import_distributed()
        except ImportError as err:
            raise UsageError(f"--dask {args.dask}: {err}") from None
    if not args.paths and not analysis.SAMPLE.is_dir():
        raise FileNotFoundError(
            f"the bundled sample {analysis.SAMPLE} is missing; give a TRACK_DIR"
        )
    check_inputs(args.paths, desc=args.desc)
    _check_pvalues(args)


def _check_pvalues(args: argparse.Namespace) -> None:
    """--sre-pvalues: an existing file, or a directory with each measure's pValues file."""
    from pathlib import Path

    from pbtools.stats.significance import pvalues_file

    path = getattr(args, "sre_pvalues", None)
    if path is None:
        return
    measures = list(dict.fromkeys(args._measures))  # parsed by validate_analysis
    if Path(path).is_file() and len(measures) > 1:
        raise UsageError(
            f"--sre-pvalues {path}: a file holds one measure's p-values; with "
            f"{len(measures)} measures give the directory of pValues.<metric>.csv files"
        )
    lacking = [str(pvalues_file(path, m)) for m in measures if not pvalues_file(path, m).is_file()]
    if lacking:
        raise UsageError(f"--sre-pvalues: no such file: {', '.join(lacking)}")


def validate(args: argparse.Namespace) -> None:
    """Every argument and path checked before any input is read."""
    validate_analysis(args)
    from pbtools.experiments.analysis import Analysis

    check_output(
        args.output, directory=True, inputs=[*args.paths, args.desc], tables=Analysis.TABLES
    )


def analysis_from_args(args: argparse.Namespace, significance_to="discard"):
    """Run :func:`analyze` on the analysis options of ``args`` (checked by
    :func:`validate_analysis`). The significance table is streamed — never held whole —
    into ``significance_to`` (a writer of its blocks) or dropped (the default: the printed
    analysis and the HTML report need only SRE*, counted as the blocks go by)."""
    from pbtools.experiments import analysis
    from pbtools.experiments.configs import Design, Execution, Reading
    from pbtools.experiments.load import collection_name

    measures = getattr(args, "_measures", None) or check_measures(args.measure or analysis.MEASURES)
    leave_out = check_choices(args.leave_out, LEAVE_OUT, flag="--leave-out")
    run_sets = check_choices(args.run_sets, RUN_SETS, flag="--run-sets")
    source = (
        None if not args.paths else (args.paths[0] if len(args.paths) == 1 else list(args.paths))
    )
    strategy = check_strategy(args)
    name, pool = args.name, {}
    if strategy is not None:
        name = args.name or collection_name(source)
        source, pool = _simulated(args, strategy, source, analysis.SAMPLE)
    reading = Reading(
        lenient=args.lenient, float32=args.float32, run_id=args.run_id, desc=args.desc
    )
    design = Design(
        leave_out=leave_out,
        run_sets=run_sets,
        estimators=estimators_of(args, "analyze"),
        protocol=args.protocol,
        topics="all" if args.all_topics else None,
        sre_test=getattr(args, "sre_pvalues", None) or getattr(args, "sre_test", "hsd"),
        top_ties=getattr(args, "top_ties", "order"),
        **pool,
    )
    execution = Execution(
        jobs=args.jobs,
        dask=getattr(args, "dask", None),
        progress=False if args.no_progress else None,
    )
    return analysis.analyze(
        source,
        measures=measures,
        design=design,
        reading=reading,
        execution=execution,
        name=name,
        significance_to=significance_to,
    )


def run(args: argparse.Namespace) -> int:
    """``pbtools analyze``: the bias analysis of a collection (experiments.analysis.analyze).

    With ``-o DIR`` the writer's lock of ``DIR`` is taken first (a second run into ``DIR`` is
    refused at once), and the tables replace ``DIR`` as one result set
    (:func:`pbtools.io.write_results`)."""
    if not args.output:
        return _run(args)
    from pbtools.io.results import hold

    with hold(args.output):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    if not args.output:
        print(analysis_from_args(args).report(wide=args.wide, verbose=args.verbose))
        return 0
    from pbtools.cli.provenance import provenance
    from pbtools.experiments import analysis
    from pbtools.io.results import building

    # the result set is built while the analysis runs: the significance table (runs² rows)
    # goes to its Parquet file a block of pairs at a time, never whole (issue 30 item 4)
    with building(args.output, analysis.Analysis.TABLES) as out:
        result = analysis_from_args(args, significance_to=out.blocks("significance"))
        print(result.report(wide=args.wide, verbose=args.verbose))
        inputs = [*(args.paths or [analysis.SAMPLE]), *([args.desc] if args.desc else [])]
        result.params.update(provenance(args, inputs))  # version, parameters, input SHA-256
        paths = result.write_into(out)
    print(f"\nwrote {', '.join(p.name for p in paths)} to {args.output}")
    return 0


def _simulated(args: argparse.Namespace, strategy, source, sample) -> tuple:
    """``((runs, simulated qrels, orgs), pool)``: the collection read as ``analyze`` would read
    it, its pool inferred, ``strategy`` replayed over the pooled runs; ``pool`` gives analyze
    the strategy's pooled runs and contribution depth."""
    from pbtools import experiments, io
    from pbtools.pooling import infer_pool

    paths = [sample] if source is None else ([source] if isinstance(source, str) else source)
    if args.protocol is not None:
        runs, qrels, orgs = experiments.load(paths[0], protocol=args.protocol)
    else:
        col = io.load_collection(
            paths, desc=args.desc, lenient=args.lenient, float32=args.float32, run_id=args.run_id
        )
        runs, qrels, orgs = col.runs, col.qrels, col.orgs
    runs.attrs, qrels.attrs = {}, {}
    pooled = infer_pool(runs, qrels).pooled_runs
    pool = simulate(args, strategy, runs, qrels, pooled)
    print(describe_simulation(pool, len(pooled)))
    print(
        f"analysis on the simulated pool: {len(pooled)} pooled runs, contribution depth "
        f"{pool.depth} (the deepest best rank of a judged document)\n"
    )
    return (runs, pool.qrels, orgs), {"pooled": list(pooled), "depth": int(pool.depth)}
