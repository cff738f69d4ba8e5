"""``pbtools compare``: runs compared with paired tests, as a table with significance marks."""

from __future__ import annotations

import argparse
import sys

from pbtools.cli.common import (
    UsageError,
    add_io_options,
    check_inputs,
    check_measures,
    check_output,
    emit,
)

FORMATS = ("markdown", "latex", "tsv", "parquet")
TESTS = ("t", "wilcoxon", "randomisation", "randomization", "tukey")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
DEFAULT_MEASURES = ("P@10", "AP", "nDCG@10")


def register(sub) -> None:
    """Add this command's sub-parser to ``sub``."""
    co = sub.add_parser(
        "compare",
        help="compare runs: means, confidence intervals, paired tests, significance marks",
        description="Evaluate runs per topic and compare them: each run's mean with a "
        "confidence interval; paired tests against --baseline (or all pairs, with Tukey's "
        "HSD); p-values corrected for multiple testing; a Markdown or LaTeX table whose "
        "superscripts mark significant differences (as ranx does).",
    )
    co.add_argument("qrels", help="qrels file (qid iter docno label)")
    co.add_argument("runs", nargs="+", help="run files, directories of runs, or globs")
    co.add_argument("--baseline", help="the run to test the others against (default: all pairs)")
    co.add_argument(
        "-m",
        "--measure",
        action="append",
        help="measure name (repeatable; default P@10, AP, nDCG@10)",
    )
    co.add_argument(
        "--test",
        action="append",
        choices=TESTS,
        help="paired test (repeatable; default t, wilcoxon, randomisation; tukey is added "
        "without a baseline)",
    )
    co.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default="holm",
        help="multiple-testing correction per measure and test (default holm)",
    )
    co.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    co.add_argument(
        "-B",
        "--samples",
        type=int,
        default=10_000,
        help="sign vectors of the randomisation test (10000)",
    )
    co.add_argument("--seed", type=int, default=0, help="seed of the randomisation test (0)")
    co.add_argument(
        "--marks",
        choices=TESTS,
        help="the test whose decisions the table marks (default: the first test; "
        "tukey without a baseline)",
    )
    co.add_argument("--ci", action="store_true", help="show confidence intervals in the table")
    co.add_argument(
        "--all-topics",
        "-c",
        action="store_true",
        help="score topics a run lacks as an empty ranking (trec_eval -c) instead of refusing",
    )
    co.add_argument("--format", choices=FORMATS, default="markdown")
    co.add_argument("-o", "--output", help="output file (default: standard output)")
    add_io_options(co)
    co.set_defaults(func=run, validate=_check)


def _check(args: argparse.Namespace) -> None:
    """Refuse bad arguments, inputs and the output path before reading anything (exit 2)."""
    if not 0.0 < args.alpha < 1.0:
        raise UsageError(f"--alpha must be in (0, 1), got {args.alpha}")
    if args.samples < 1:
        raise UsageError(f"--samples must be positive, got {args.samples}")
    if args.format == "parquet" and not args.output:
        raise UsageError("--format parquet needs -o FILE")
    args._measures = check_measures(args.measure or DEFAULT_MEASURES)  # the one parse of -m
    check_inputs([args.qrels, *args.runs])
    check_output(args.output, inputs=[args.qrels, *args.runs])


def run(args: argparse.Namespace) -> int:
    """``pbtools compare``: :func:`pbtools.compare` on the runs' per-topic scores."""
    from pbtools import io
    from pbtools import measures as m
    from pbtools.measures.names import measure_column
    from pbtools.stats.comparison import compare

    qrels = io.read_qrels(args.qrels, lenient=args.lenient)
    runs = io.read_runs(args.runs, lenient=args.lenient, float32=args.float32, run_id=args.run_id)
    names = sorted(runs["name"].astype("str").unique())
    if args.baseline is not None and args.baseline not in names:
        raise UsageError(f"--baseline {args.baseline!r} is not among the runs {names}")
    measures = list(dict.fromkeys(args._measures))  # parsed by _check: Measure objects inward
    per = m.evaluate(
        runs, qrels, measures, per_topic=True, topics="all" if args.all_topics else None
    )
    tests = args.test or ["t", "wilcoxon", "randomisation"]
    cmp = compare(
        per,
        baseline=args.baseline,
        tests=tests,
        correction=args.correction,
        alpha=args.alpha,
        B=args.samples,
        seed=args.seed,
    )
    if args.format == "parquet":
        meta = {"command": "compare", "measures": measure_column(measures), "summary": cmp.summary}
        emit(cmp.tests, "parquet", args.output, meta, args)
        return 0
    if args.format == "tsv":  # every digit of the p-values
        text = cmp.tests.to_csv(sep="\t", index=False)
    elif args.format == "latex":
        text = cmp.to_latex(test=args.marks)
    else:
        text = cmp.to_markdown(test=args.marks, ci=args.ci)
        if args.baseline is not None:
            text += "\n" + cmp.details_markdown() + "\n"
    if args.output:
        from pbtools.io.atomic import write_text

        write_text(args.output, text)
        print(f"wrote the comparison of {len(names)} runs to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
