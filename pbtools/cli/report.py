"""``pbtools report``: the bias report of a collection as one self-contained HTML page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pbtools.cli.analyze import add_analysis_options, analysis_from_args, validate_analysis
from pbtools.cli.common import check_output


def register(sub) -> None:
    """Add this command's sub-parser to ``sub``."""
    rp = sub.add_parser(
        "report",
        help="the bias report of a collection as one HTML page (default: the bundled sample)",
        description="Analyse a collection as `pbtools analyze` does and write one "
        "self-contained HTML page (figures inline as SVG, no script, no network): the "
        "collection's properties, the unjudged share of every run, each run's true and "
        "estimated scores when its organization is left out of the pool, every "
        "estimator's error with a legend and the summary of every setup, every estimator's "
        "score of the runs outside the pool, and the input's repairs and runs that lack "
        "topics.",
    )
    add_analysis_options(rp)
    rp.add_argument(
        "-o",
        "--output",
        default="report.html",
        help="the HTML file to write (default: report.html)",
    )
    rp.set_defaults(func=run, validate=validate)


def validate(args: argparse.Namespace) -> None:
    """Every argument and the output path checked before any work."""
    validate_analysis(args)
    check_output(args.output, inputs=[*args.paths, args.desc])


def run(args: argparse.Namespace) -> int:
    """``pbtools report``: :func:`pbtools.experiments.analysis.analyze`, then
    :func:`pbtools.experiments.htmlreport.write_html`."""
    import time

    from pbtools.experiments import htmlreport
    from pbtools.progress import StageProgress

    out = Path(args.output)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        hint = 'pip install "pbtools[plots]"'
        print(f"pbtools: error: the report draws with matplotlib: {hint}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    result = analysis_from_args(args)
    t1 = time.perf_counter()
    with StageProgress(["figures"], False if args.no_progress else None, "report") as stages:
        stages("figures")
        htmlreport.write_html(result, out)
    t2 = time.perf_counter()
    print(
        f"wrote {out} ({out.stat().st_size / 1024:.0f} KiB): analysis {t1 - t0:.1f} s, "
        f"report {t2 - t1:.1f} s"
    )
    return 0
