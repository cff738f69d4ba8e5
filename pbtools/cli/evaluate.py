"""``pbtools evaluate``: per-topic measures and trec_eval averages of runs."""

from __future__ import annotations

import argparse
import sys

from pbtools.cli.common import (
    FORMATS,
    EmptyResult,
    UsageError,
    add_io_options,
    check_inputs,
    check_output,
    emit,
)
from pbtools.cli.trec import (
    add_trec_options,
    check_trec_options,
    trec_lines_of,
    trec_report,
    truncate,
)

#: measures of ``pbtools evaluate`` without ``-m``
DEFAULT_MEASURES = ("P@10", "AP", "nDCG", "Bpref")
_MEASURE_LIST = "(the measures)"  # the help's epilog: the measure families, when it is shown


class _HelpWithMeasures(argparse.RawDescriptionHelpFormatter):
    """``--help`` ending with every measure family's declaration (read only when shown)."""

    def add_text(self, text):
        if text is _MEASURE_LIST:
            from pbtools.measures import describe

            lines = describe().replace("\n", "\n  ")
            text = f"measures (-m; parameters with their defaults; trec_eval's names):\n  {lines}"
        super().add_text(text)


def register(sub) -> None:
    """Add this command's sub-parser to ``sub``."""
    ev = sub.add_parser(
        "evaluate",
        help="trec_eval-exact measures of runs",
        description="Evaluate runs against qrels; averages like trec_eval.",
        epilog=_MEASURE_LIST,
        formatter_class=_HelpWithMeasures,
    )
    ev.add_argument("qrels", help="qrels file (qid iter docno label)")
    ev.add_argument("runs", nargs="+", help="run files, directories of runs, or globs")
    ev.add_argument(
        "-m",
        "--measure",
        action="append",
        help="measure name, e.g. P@10, AP, nDCG@10, RBP(p=0.8)@10, or trec_eval's: map, "
        "P.5,10, all_trec, official (repeatable; default P@10, AP, nDCG, Bpref; with --trec "
        "official)",
    )
    ev.add_argument(
        "--per-topic",
        "-q",
        action="store_true",
        help="per-topic values, then each run's averages as qid 'all' (trec_eval -q)",
    )
    ev.add_argument(
        "--all-topics",
        "-c",
        action="store_true",
        help="average over all qrels topics, missing ones scoring 0 (trec_eval -c)",
    )
    ev.add_argument(
        "--trec",
        action="store_true",
        help="print like trec_eval (its lines and order; one block per run)",
    )
    add_trec_options(ev)
    ev.add_argument(
        "--plain",
        action="store_true",
        help="on a sampled qrels (five columns, sample_eval.pl's), also score plain measures "
        "(AP, P@10, ...), which count the unsampled documents as unjudged: biased",
    )
    ev.add_argument("--format", choices=FORMATS, default="table")
    ev.add_argument("-o", "--output", help="output file (default: standard output)")
    add_io_options(ev)
    ev.set_defaults(func=run, validate=validate, exit_fast=True)  # cli.entry


def validate(args: argparse.Namespace) -> None:
    """Every argument and path checked before any input is read."""
    args.trec_lines, args.trec_strict = trec_lines_of(args, DEFAULT_MEASURES)
    check_trec_options(args)
    if args.trec and args.format != "table":
        raise UsageError(
            f"--trec prints trec_eval's layout; it cannot be combined with --format {args.format}"
        )
    if args.format == "parquet" and not args.output:
        raise UsageError("--format parquet needs -o FILE")
    check_inputs([args.qrels, *args.runs])
    check_output(args.output, inputs=[args.qrels, *args.runs])


def with_all_rows(per, avg):
    """Per-topic rows followed, for each run, by its ``all`` rows (the averages), as
    ``trec_eval -q`` prints them; ``qid`` stays dictionary-encoded (``"all"`` added)."""
    import numpy as np
    import pandas as pd

    from pbtools.frames import encode

    cols = [c for c in per.columns if c in avg.columns or c == "qid"]  # no average of a text
    both = pd.concat([per.astype({"qid": "str"}), avg.assign(qid="all")[cols]], ignore_index=True)
    both["qid"] = encode(both["qid"].astype("str"))
    # each run's place in order of first appearance, by its code (no Python loop over rows)
    code, _ = pd.factorize(both["name"].astype("str"), sort=False)
    is_all = np.zeros(len(both), dtype=np.int64)
    is_all[len(per) :] = 1  # the averages, appended after every per-topic row
    return both.iloc[np.argsort(code * 2 + is_all, kind="stable")].reset_index(drop=True)


def run(args: argparse.Namespace) -> int:
    """``pbtools evaluate``: per-topic measures and trec_eval averages of runs."""
    from pbtools import io
    from pbtools import measures as m
    from pbtools.cli import sampled

    if sampled.is_sampled_qrels(args.qrels):  # sample_eval.pl's five columns: the estimators
        return output(args, *sampled.score(args))
    if args.plain:
        raise UsageError(
            f"--plain applies to sampled qrels (five columns); {args.qrels} has trec_eval's four"
        )
    qrels = io.read_qrels(args.qrels, lenient=args.lenient)
    runs = io.read_runs(args.runs, lenient=args.lenient, float32=args.float32, run_id=args.run_id)
    runs = truncate(runs, args.max_per_topic)  # -M
    lines = args.trec_lines
    ms = list(dict.fromkeys(t.measure for t in lines if t.measure is not None))  # parsed once
    mode = "all" if args.all_topics else None
    per = m.evaluate(runs, qrels, ms, per_topic=True, topics=mode)
    avg = m.aggregate(per, qrels=qrels, topics=mode)
    return output(args, runs, qrels, per, avg, lines, args.trec_strict)


def output(args, runs, qrels, per, avg, lines, strict: bool) -> int:
    """Print or write the per-topic values ``per`` and averages ``avg`` as ``args`` ask: pbtools'
    table/tsv/parquet, or trec_eval's layout (``--trec``) of ``lines``."""
    names = list(dict.fromkeys(str(t.measure) for t in lines if t.measure is not None))
    if len(avg) == 0:
        raise EmptyResult(
            "no result: no run answers a topic that the qrels judge (run topics: "
            f"{_some(runs['qid'])}; qrels topics: {_some(qrels['qid'])}); --all-topics scores "
            "every qrels topic, missing ones 0"
        )
    if args.trec:
        text = trec_report(
            per,
            avg,
            lines,
            per_topic=args.per_topic,
            summary=not args.no_summary,
            strict=strict,
        )
        if args.output:
            from pbtools.io.atomic import write_text

            write_text(args.output, text)
        else:
            sys.stdout.write(text)
        return 0
    meta = {"command": "evaluate", "measures": names}
    if args.per_topic:
        emit(with_all_rows(per, avg), args.format, args.output, meta, args=args)
    else:
        wide = avg.pb.wide() if args.format == "table" else avg
        emit(wide, args.format, args.output, meta, args=args)
    return 0


def _some(ids, n: int = 5) -> str:
    """A few distinct ids, for a message."""
    u = sorted(set(ids.astype(str)))
    return ", ".join(u[:n]) + (f", … ({len(u)} in all)" if len(u) > n else "")
