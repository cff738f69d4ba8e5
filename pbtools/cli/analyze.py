"""``pbtools analyze``: the bias analysis of a collection."""

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

LEAVE_OUT = ("org", "run")
RUN_SETS = ("all", "top75")


def register(sub) -> None:
    """Add this command's sub-parser to ``sub``."""
    an = sub.add_parser(
        "analyze",
        help="the bias analysis of a collection (default: the bundled sample)",
        description="Leave-one-organization/run-out over all pooled runs and "
        "the top 75%%: every run's true, reduced-pool, Webber & "
        "Park and Lipani score at each cut-off, and per estimator "
        "MAE, SRE, SRE* and Kendall's tau.",
    )
    an.add_argument(
        "paths",
        nargs="*",
        metavar="TRACK_DIR | QRELS RUNS",
        help="a track directory or a qrels file and runs (default: data/sample)",
    )
    an.add_argument("--desc", help="desc.xml mapping run tags to organizations")
    an.add_argument(
        "-m",
        "--measure",
        action="append",
        help="measures to analyse (repeatable; default P@5 P@10 P@20 P@30 P@100); each "
        "estimator corrects those it supports (lipani: P@n)",
    )
    an.add_argument(
        "--leave-out",
        default="org,run",
        help="comma-separated leave-out units: org, run (default both)",
    )
    an.add_argument(
        "--run-sets",
        default="all,top75",
        help="comma-separated run sets: all, top75 (default both)",
    )
    an.add_argument(
        "--protocol",
        choices=("lipani2015",),
        help="reproduce Lipani et al. 2015 exactly (PROTOCOL-lipani2015.md)",
    )
    an.add_argument("--jobs", type=int, default=1, help="worker processes, >= 1 (0: every core)")
    an.add_argument("--no-progress", action="store_true", help="no progress bar")
    an.add_argument("-o", "--output", help="directory for the Parquet tables")
    add_io_options(an)
    an.set_defaults(func=run, validate=validate)


def validate(args: argparse.Namespace) -> None:
    """Every argument and path checked before any input is read."""
    from pbtools.experiments import analysis

    check_measures(args.measure or analysis.MEASURES)
    check_choices(args.leave_out, LEAVE_OUT, flag="--leave-out")
    check_choices(args.run_sets, RUN_SETS, flag="--run-sets")
    if args.jobs < 0:
        raise UsageError(f"--jobs must be >= 1 (or 0 for every core), not {args.jobs}")
    if not args.paths and not analysis.SAMPLE.is_dir():
        raise FileNotFoundError(
            f"the bundled sample {analysis.SAMPLE} is missing; give a TRACK_DIR"
        )
    check_inputs(args.paths, desc=args.desc)
    check_output(args.output, directory=True, inputs=[*args.paths, args.desc])


def run(args: argparse.Namespace) -> int:
    """``pbtools analyze``: the bias analysis of a collection (experiments.analysis.analyze)."""
    from pbtools.experiments import analysis
    from pbtools.measures import measure_names

    source = (
        None if not args.paths else (args.paths[0] if len(args.paths) == 1 else list(args.paths))
    )
    result = analysis.analyze(
        source,
        measures=measure_names(args.measure or analysis.MEASURES),
        leave_out=check_choices(args.leave_out, LEAVE_OUT, flag="--leave-out"),
        run_sets=check_choices(args.run_sets, RUN_SETS, flag="--run-sets"),
        protocol=args.protocol,
        lenient=args.lenient,
        float32=args.float32,
        run_id=args.run_id,
        desc=args.desc,
        jobs=args.jobs,
        progress=False if args.no_progress else None,
    )
    print(result.report())
    if args.output:
        from pbtools.cli.provenance import provenance

        inputs = [*(args.paths or [analysis.SAMPLE]), *([args.desc] if args.desc else [])]
        result.params.update(provenance(args, inputs))  # version, parameters, input SHA-256
        paths = result.write(args.output)
        print(f"\nwrote {', '.join(p.name for p in paths)} to {args.output}")
    return 0
