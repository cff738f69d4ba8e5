"""The ``pbtools`` command line.

Sub-commands (``pbtools COMMAND --help`` for each):

* ``evaluate QRELS RUN_OR_DIR... -m P@10 -m AP`` — trec_eval-exact measures;
* ``pool TRACK_DIR`` — collection properties, inferred pool, reduced qrels, unique contributions;
* ``correct QRELS RUNS_DIR NEW_RUN -m P@10`` — every estimator's score for a new run;
* ``analyze [TRACK_DIR]`` — the whole bias analysis of a collection (default: the bundled sample).

Bad input exits with status 2 and a ``file:line: problem`` message, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import pandas as pd

from pbtools.frames import TrecFormatError, TrecFormatWarning

FORMATS = ("table", "tsv", "parquet")


# ------------------------------------------------------------------------------ output helpers
def emit(df: pd.DataFrame, fmt: str, out: str | None, metadata: dict | None = None) -> None:
    """Write ``df`` as an aligned table, TSV or Parquet to ``out`` (default: standard output)."""
    if fmt == "parquet":
        if not out:
            raise SystemExit("pbtools: error: --format parquet needs -o FILE")
        from pbtools import io

        io.write_parquet(df, out, metadata=metadata)
        print(f"wrote {len(df)} rows to {out}", file=sys.stderr)
        return
    if fmt == "tsv":
        text = df.to_csv(sep="\t", index=False, float_format="%.4f")
    else:
        text = df.to_string(index=False, float_format=lambda v: f"{v:.4f}") + "\n"
    if out:
        Path(out).write_text(text)
        print(f"wrote {len(df)} rows to {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def trec_lines(results: pd.DataFrame) -> str:
    """Format results like trec_eval: ``measure<TAB>qid<TAB>value``, ``%-22s`` and 4 decimals.

    Counting measures (``num_ret``, ``num_rel``, ``num_rel_ret``) print as integers, as in
    trec_eval. With several runs the run name is prefixed as a first column.
    """
    from pbtools import measures as m

    many = results["name"].nunique() > 1
    out = []
    has_qid = "qid" in results.columns
    for row in results.itertuples(index=False):
        meas = m.parse(str(row.measure))
        value = row.value
        text = f"{int(round(value))}" if meas.summed else f"{value:.4f}"
        tname = meas.trec_name
        qid = str(row.qid) if has_qid else "all"
        line = f"{tname:<22s}\t{qid}\t{text}"
        out.append(f"{row.name}\t{line}" if many else line)
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------ sub-commands
def cmd_evaluate(args: argparse.Namespace) -> int:
    """``pbtools evaluate``: per-topic measures and trec_eval averages of runs."""
    from pbtools import io
    from pbtools import measures as m

    qrels = io.read_qrels(args.qrels, lenient=args.lenient)
    runs = io.read_runs(args.runs, lenient=args.lenient, float32=args.float32,
                        run_id=args.run_id)
    names = args.measure or ["P@10", "AP", "nDCG", "Bpref"]
    per = m.evaluate(runs, qrels, names, per_topic=True, all_topics=args.all_topics)
    avg = m.aggregate(per, qrels=qrels, all_topics=args.all_topics)
    if args.trec:
        text = ""
        if args.per_topic:
            text += trec_lines(per)
        text += trec_lines(avg)
        if args.output:
            Path(args.output).write_text(text)
        else:
            sys.stdout.write(text)
        return 0
    if args.per_topic:
        emit(per, args.format, args.output, {"command": "evaluate", "measures": names})
    else:
        wide = avg.pb.wide() if args.format == "table" else avg
        emit(wide, args.format, args.output, {"command": "evaluate", "measures": names})
    return 0


def _collection(args: argparse.Namespace):
    from pbtools import io

    return io.load_collection(args.paths, desc=args.desc, lenient=args.lenient,
                              float32=args.float32, run_id=args.run_id)


def cmd_pool(args: argparse.Namespace) -> int:
    """``pbtools pool``: |R|, |O|, |R_p|, d, |T|, reduced qrels, unique contributions."""
    from pbtools import pooling

    col = _collection(args)
    info = pooling.describe(col, policy=args.policy, tolerance=args.tolerance)
    if args.json:
        print(dumps(info))
    else:
        print(f"collection  {col.name}  ({col.path})")
        shared = info["|R| files"] != info["|R|"]
        for key in ("|R|", "|O|", "|R_p|", "d", "|T|"):
            value = f"{info[key]}"
            if shared and key in ("|R|", "|R_p|"):
                value = f"{info[key + ' files']} run files ({info[key]} distinct run tags)"
            print(f"  {key:6s} {value}")
        print(f"  pooled runs ({info['policy']} policy): {', '.join(info['pooled_runs'])}")
        if info["unpooled_runs"]:
            print(f"  not pooled: {', '.join(info['unpooled_runs'])}")
        if info["unmapped"]:
            print(f"  runs without an organization: {', '.join(info['unmapped'])}")
    if args.leave_out:
        if not args.output:
            raise SystemExit("pbtools: error: --leave-out needs -o FILE.parquet")
        reduced = pooling.leave_one_out(col.qrels, col.runs, info["depth"], by=args.leave_out,
                                        orgs=col.orgs, pooled=info["pooled_runs"])
        emit(reduced, "parquet", args.output,
             {"command": "pool", "leave_out": args.leave_out, "depth": info["depth"],
              "pooled_runs": info["pooled_runs"], "collection": col.name})
    if args.unique:
        report = pooling.unique_contributions(col.runs, col.qrels, col.orgs, info["depth"],
                                              measures=args.measure or ["AP", "P@10"],
                                              pooled=info["pooled_runs"])
        print()
        print("unique contributions per organization (Buckley et al. 2007; Sakai 2008 Table 2)")
        emit(report, "table", None)
    return 0


def cmd_correct(args: argparse.Namespace) -> int:
    """``pbtools correct``: every estimator's score for new runs (pbtools.corrections.correct)."""
    from pbtools import corrections, io
    from pbtools.inference import infer_pool

    col = io.read_collection(qrels=args.qrels, runs=args.runs, desc=args.desc,
                             lenient=args.lenient, float32=args.float32, run_id=args.run_id)
    new = io.read_runs(args.new_run, lenient=args.lenient, float32=args.float32,
                       run_id=args.run_id)
    info = infer_pool(col.runs, col.qrels, policy=args.policy)
    pooled = col.runs[col.runs["name"].astype("str").isin(info.pooled_runs)]
    new_names = sorted(new["name"].astype("str").unique())
    in_pool = [n for n in new_names if n in set(info.pooled_runs)]
    if in_pool and not args.leave_out:
        print(f"pbtools: note: {', '.join(in_pool)} contributed to the pool; its scores are "
              "not biased. --leave-out run|org shows what it would have scored unpooled.",
              file=sys.stderr)
    measures = args.measure or ["P@10"]
    estimators = [e.strip() for e in args.estimators.split(",") if e.strip()]
    if args.leave_out and "true" not in estimators:
        estimators.insert(0, "true")
    parts = []
    for name in measures:
        kind = corrections.parse_measure(name)[0]
        use = [e for e in estimators if kind == "P" or e != "lipani"]
        parts.append(corrections.correct(
            col.qrels, pooled, new, orgs=col.orgs, measures=[name], leave_out=args.leave_out,
            estimators=use, protocol=args.protocol, depth=info.depth))
    res = pd.concat(parts, ignore_index=True)
    meta = {"command": "correct", "measures": measures, "estimators": estimators,
            "leave_out": args.leave_out, "protocol": args.protocol, "depth": info.depth,
            "pooled_runs": info.pooled_runs, "new_runs": new_names}
    if args.format == "table" and not args.output:
        print(f"pool: d = {info.depth}, {len(info.pooled_runs)} pooled runs"
              + (f"; leaving out each new run's {args.leave_out}" if args.leave_out else ""))
    emit(res, args.format, args.output, meta)
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    """``pbtools analyze``: the bias analysis of a collection (pbtools.analysis.analyze)."""
    from pbtools import analysis, corrections

    cutoffs = []
    for name in args.measure or [f"P@{n}" for n in analysis.CUTOFFS]:
        kind, n, _ = corrections.parse_measure(name)
        if kind != "P":
            raise ValueError(f"analyze compares estimators of P@n; {name!r} is not a P@n")
        cutoffs.append(n)
    source = None if not args.paths else (args.paths[0] if len(args.paths) == 1
                                          else list(args.paths))
    if source is None and not analysis.SAMPLE.is_dir():
        raise FileNotFoundError(f"the bundled sample {analysis.SAMPLE} is missing; "
                                "give a TRACK_DIR")
    result = analysis.analyze(
        source, cutoffs=cutoffs, leave_out=args.leave_out.split(","),
        run_sets=args.run_sets.split(","), protocol=args.protocol, lenient=args.lenient,
        float32=args.float32, run_id=args.run_id, desc=args.desc, jobs=args.jobs,
        progress=False if args.no_progress else None)
    print(result.report())
    if args.output:
        paths = result.write(args.output)
        print(f"\nwrote {', '.join(p.name for p in paths)} to {args.output}")
    return 0


def _add_collection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="TRACK_DIR | QRELS RUNS",
                   help="a track directory TRACK/{QRels/,Runs/,desc.xml}, or a qrels file "
                        "followed by run files or a runs directory")
    p.add_argument("--desc", help="desc.xml mapping run tags to organizations")


def _add_io_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lenient", action="store_true",
                   help="repair dirty TREC files (short lines, extra columns, duplicate "
                        "documents) and report every repair, instead of stopping at the first")
    p.add_argument("--float32", action="store_true",
                   help="read scores as 32-bit floats (trec_eval 9 / pytrec_eval ties)")
    p.add_argument("--run-id", choices=("tag", "file"), default="tag",
                   help="name runs by the tag in column 6 (default) or by file name")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pbtools`` command (one sub-parser per command)."""
    parser = argparse.ArgumentParser(
        prog="pbtools", description="Pool-bias tools for IR test collections.")
    parser.add_argument("--version", action="version",
                        version=f"pbtools {__import__('pbtools').__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("evaluate", help="trec_eval-exact measures of runs",
                        description="Evaluate runs against qrels; averages like trec_eval.")
    ev.add_argument("qrels", help="qrels file (qid iter docno label)")
    ev.add_argument("runs", nargs="+", help="run files, directories of runs, or globs")
    ev.add_argument("-m", "--measure", action="append",
                    help="measure name, e.g. P@10, AP, nDCG@10, RBP(p=0.8)@10 (repeatable; "
                         "default P@10, AP, nDCG, Bpref)")
    ev.add_argument("--per-topic", "-q", action="store_true", help="per-topic values too")
    ev.add_argument("--all-topics", "-c", action="store_true",
                    help="average over all qrels topics, missing ones scoring 0 (trec_eval -c)")
    ev.add_argument("--trec", action="store_true", help="print like trec_eval")
    ev.add_argument("--format", choices=FORMATS, default="table")
    ev.add_argument("-o", "--output", help="output file (default: standard output)")
    _add_io_options(ev)
    ev.set_defaults(func=cmd_evaluate)

    po = sub.add_parser("pool", help="collection properties, inferred pool, reduced qrels",
                        description="Infer the pool depth and pooled runs from the qrels; "
                                    "optionally write leave-one-out reduced qrels and the "
                                    "unique-contribution report.")
    _add_collection_args(po)
    po.add_argument("--json", action="store_true", help="print the properties as JSON")
    po.add_argument("--policy", choices=("lipani2015", "per_run"), default="lipani2015",
                    help="pool-depth inference policy (see pbtools.inference.infer_pool)")
    po.add_argument("--tolerance", type=float, default=None,
                    help="share of d of unjudged documents a pooled run may step over")
    po.add_argument("--leave-out", choices=("run", "org"),
                    help="write the reduced qrels of every run or organization (-o)")
    po.add_argument("--unique", action="store_true",
                    help="per-organization unique (relevant) contributions and their effect")
    po.add_argument("-m", "--measure", action="append",
                    help="measures for --unique (default AP, P@10)")
    po.add_argument("-o", "--output", help="Parquet file for --leave-out")
    _add_io_options(po)
    po.set_defaults(func=cmd_pool)

    co = sub.add_parser("correct", help="every estimator's score for a new, unpooled run",
                        description="Score a new run as if it had been pooled: true (with "
                                    "--leave-out), reduced pool, Webber & Park, Lipani et al., "
                                    "condensed lists.")
    co.add_argument("qrels", help="qrels file")
    co.add_argument("runs", help="directory (or glob) of the runs that built the pool")
    co.add_argument("new_run", help="the run to score (a file; several runs are allowed)")
    co.add_argument("--desc", help="desc.xml mapping run tags to organizations")
    co.add_argument("-m", "--measure", action="append",
                    help="P@n or RBP(p=x)@n (repeatable; default P@10)")
    co.add_argument("--leave-out", choices=("run", "org"),
                    help="first remove the new run's run or organization from the pool")
    co.add_argument("--estimators", default="reduced,webber,lipani,condensed",
                    help="comma-separated: true, reduced, webber, lipani, condensed")
    co.add_argument("--protocol", choices=("lipani2015",),
                    help="the choices that reproduce Lipani et al. 2015 (see "
                         "pbtools.corrections.PRESETS); default: the principled ones")
    co.add_argument("--policy", choices=("lipani2015", "per_run"), default="lipani2015",
                    help="pool inference policy")
    co.add_argument("--format", choices=FORMATS, default="table")
    co.add_argument("-o", "--output", help="output file (default: standard output)")
    _add_io_options(co)
    co.set_defaults(func=cmd_correct)

    an = sub.add_parser("analyze", help="the bias analysis of a collection (default: the "
                                        "bundled sample)",
                        description="Leave-one-organization/run-out over all pooled runs and "
                                    "the top 75%%: every run's true, reduced-pool, Webber & "
                                    "Park and Lipani score at each cut-off, and per estimator "
                                    "MAE, SRE, SRE* and Kendall's tau.")
    an.add_argument("paths", nargs="*", metavar="TRACK_DIR | QRELS RUNS",
                    help="a track directory or a qrels file and runs (default: data/sample)")
    an.add_argument("--desc", help="desc.xml mapping run tags to organizations")
    an.add_argument("-m", "--measure", action="append",
                    help="P@n cut-offs to analyse (repeatable; default P@5 P@10 P@20 P@30 "
                         "P@100)")
    an.add_argument("--leave-out", default="org,run",
                    help="comma-separated leave-out units: org, run (default both)")
    an.add_argument("--run-sets", default="all,top75",
                    help="comma-separated run sets: all, top75 (default both)")
    an.add_argument("--protocol", choices=("lipani2015",),
                    help="reproduce Lipani et al. 2015 exactly (PROTOCOL-lipani2015.md)")
    an.add_argument("--jobs", type=int, default=1, help="worker processes (0: every core)")
    an.add_argument("--no-progress", action="store_true", help="no progress bar")
    an.add_argument("-o", "--output", help="directory for the Parquet tables")
    _add_io_options(an)
    an.set_defaults(func=cmd_analyze)

    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pbtools`` console script."""
    import pbtools.accessor  # noqa: F401  (registers .pb)

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default", TrecFormatWarning)
            warnings.showwarning = _show_warning
            return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `pbtools ... | head`
        sys.stderr.close()
        return 0
    except TrecFormatError as err:
        print(f"pbtools: error: {err}", file=sys.stderr)
        if not getattr(args, "lenient", True):
            print("pbtools: hint: --lenient repairs dirty TREC files and reports each repair",
                  file=sys.stderr)
        return 2
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as err:
        print(f"pbtools: error: {err}", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"pbtools: error: {err}", file=sys.stderr)
        return 2


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as one ``pbtools: warning: ...`` line (no source line of pbtools' own code)."""
    print(f"pbtools: warning: {message}", file=sys.stderr)


def _json_default(o):
    if hasattr(o, "item"):
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    return str(o)


def dumps(obj) -> str:
    """JSON text of ``obj`` with numpy/pandas scalars converted."""
    return json.dumps(obj, indent=2, default=_json_default)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
