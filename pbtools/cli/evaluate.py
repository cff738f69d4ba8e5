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
from pbtools.cli.table import Coded, Columns, columns_text, tsv_text
from pbtools.cli.trec import (
    add_trec_options,
    check_trec_options,
    trec_lines_of,
    trec_report,
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
    ev.set_defaults(func=run, validate=validate, exit_fast=True, pandas_free=True)  # cli.entry


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
    ``trec_eval -q`` prints them (frames): :func:`_with_all_rows`, the one layout, on
    :class:`~pbtools.cli.table.Columns`; ``qid`` stays dictionary-encoded (``"all"`` added), and
    another id column is one only where ``per`` and ``avg`` hold it over the same dictionary
    (else strings: pandas' ``concat`` of the two, which the Parquet schema has kept)."""
    import pandas as pd

    out = _with_all_rows(Columns.from_frame(per), Columns.from_frame(avg)).frame()
    for c in out.columns:
        a, b = per[c].dtype, avg[c].dtype if c in avg.columns else None
        if c != "qid" and isinstance(out[c].dtype, pd.CategoricalDtype) and a != b:
            out[c] = out[c].astype("str")
    return out


def run(args: argparse.Namespace) -> int:
    """``pbtools evaluate``: per-topic measures and trec_eval averages of runs."""
    from pbtools.cli import sampled

    if sampled.is_sampled_qrels(args.qrels):  # sample_eval.pl's five columns: the estimators
        return output(args, *sampled.score(args))
    if args.plain:
        raise UsageError(
            f"--plain applies to sampled qrels (five columns); {args.qrels} has trec_eval's four"
        )
    runs, qrels = read_encoded(args)
    return evaluate_encoded(args, runs, qrels)


def read_encoded(args: argparse.Namespace):
    """The runs and qrels of ``args`` as :class:`~pbtools.io.encoded.EncodedRuns` and
    :class:`~pbtools.io.encoded.EncodedQrels` (the readers print their repairs): the one place
    of ``evaluate`` that reads (:mod:`pbtools.io.reading`: the one reader, without pandas)."""
    from pbtools.io.reading import read_qrels_encoded, read_runs_encoded
    from pbtools.measures.stages import stage

    stage("import")  # (a profiler's marks: benchmarks/evaluate_speed.py)
    qrels = read_qrels_encoded(args.qrels, lenient=args.lenient)
    stage("qrels")
    runs = read_runs_encoded(
        args.runs, lenient=args.lenient, float32=args.float32, run_id=args.run_id
    )
    stage("runs")
    return runs, qrels


def evaluate_encoded(args: argparse.Namespace, runs, qrels) -> int:
    """Everything after the reading, on codes and arrays (no pandas but for ``--format
    parquet``): ``-M``, the coverage warnings, the per-topic values, the averages, the output.
    The arrays' part runs with pandas kept out of pyarrow
    (:func:`pbtools.nopandas.without_pandas`); the frames' writers (Parquet) after it."""
    from pbtools.measures.stages import stage
    from pbtools.nopandas import without_pandas

    runs = _first_ranks(runs, args.max_per_topic)  # -M
    with without_pandas():
        text, rows = _arrays_text(args, runs, qrels)
    if text is None:  # Parquet, or a cell pandas quotes or escapes: the frames' writers
        ms = list(dict.fromkeys(t.measure for t in args.trec_lines if t.measure is not None))
        return _as_frames(args, runs, qrels, ms, args.trec_lines)
    code = _write(args, text, rows)
    stage("write")
    return code


def _arrays_text(args: argparse.Namespace, runs, qrels) -> tuple[str | None, int | None]:
    """The output of ``args`` and its rows (None for trec_eval's layout), from the arrays;
    ``(None, None)`` when the frames' writers must write it (Parquet, a cell pandas quotes)."""
    import warnings

    from pbtools.measures.encoded import score_encoded, topic_table
    from pbtools.measures.stages import stage
    from pbtools.measures.topics import CoverageWarning, coverage_messages

    lines = args.trec_lines
    ms = list(dict.fromkeys(t.measure for t in lines if t.measure is not None))  # parsed once
    mode = "all" if args.all_topics else "judged"
    for text in coverage_messages(*topic_table(runs, qrels), topics=mode):
        warnings.warn(CoverageWarning(text), stacklevel=3)
    stage("coverage")
    if args.format == "parquet":  # the frames score and write it (and refuse an empty result)
        return None, None
    per = score_encoded(runs, qrels, ms, mode)
    avg = per.averages()
    stage("aggregate")
    if len(avg[0]) == 0:
        raise EmptyResult(_empty_message(_used(runs.qid, runs.qids), _used(qrels.qid, qrels.qids)))
    per_table, avg_table = _tables(per, avg)
    if args.trec:
        text = trec_report(
            per_table,
            avg_table,
            lines,
            per_topic=args.per_topic,
            summary=not args.no_summary,
            strict=args.trec_strict,
        )
        stage("tables")
        return text, None
    if args.per_topic:
        table = _with_all_rows(per_table, avg_table)
    else:
        table = _wide(avg_table) if args.format == "table" else avg_table
    text = (tsv_text if args.format == "tsv" else columns_text)(table)
    stage("tables")
    return text, (None if text is None else len(table))


def _first_ranks(runs, n: int | None):
    """trec_eval ``-M n``: each ranking's first ``n`` documents (the reader's rows are in trec
    order, ranks 1..n)."""
    import dataclasses

    if n is None:
        return runs
    keep = runs.rank <= n
    arrays = {f: getattr(runs, f)[keep] for f in ("name", "qid", "docno", "score", "rank")}
    return dataclasses.replace(runs, **arrays)


def _used(codes, dictionary) -> list[str]:
    """The ids of ``dictionary`` that ``codes`` use."""
    import numpy as np

    return [dictionary[int(i)].as_py() for i in np.unique(codes).tolist()]


def _tables(per, avg):
    """The per-topic values and the averages as :class:`~pbtools.cli.table.Columns`: the
    columns of :func:`~pbtools.measures.compute`'s and :func:`~pbtools.measures.aggregate`'s
    frames (``residual`` with an RBP measure, ``text`` with a string measure)."""
    import numpy as np

    group, measure, value = per.rows()
    mnames = [str(m) for m in per.measures]
    pt = Columns(
        name=Coded(per.name[group], per.names),
        qid=Coded(per.qid[group], per.qids),
        measure=Coded(measure, mnames),
        value=value,
    )
    if per.residual is not None:
        pt["residual"] = per.residual.ravel()
    if per.texts:
        text = np.full(per.values.shape, None, dtype=object)
        for j, t in per.texts.items():
            text[:, j] = t
        pt["text"] = text.ravel()
    run, meas, val, res = avg
    av = Columns(name=Coded(run, per.names), measure=Coded(meas, mnames), value=val)
    if res is not None:
        av["residual"] = res
    return pt, av


def _with_all_rows(per, avg):
    """:func:`with_all_rows` on :class:`~pbtools.cli.table.Columns`: each run's per-topic rows
    followed by its averages, qid ``all``."""
    import numpy as np
    import pyarrow as pa

    from pbtools.idarrays import merge_dictionaries

    n, k = len(per), len(avg)
    used = np.unique(per["qid"].codes)  # the topics of the rows and "all", sorted (as encoded)
    topics = pa.array([per["qid"].strings[i] for i in used.tolist()], type=pa.string())
    union, maps = merge_dictionaries([topics, pa.array(["all"])])
    tmap, amap = maps or (np.arange(len(topics)), np.zeros(1, np.int64))  # (topics: ["all"])
    remap = np.zeros(len(per["qid"].strings), np.int64)
    remap[used] = tmap
    qid = Coded(np.r_[remap[per["qid"].codes], np.full(k, amap[0])], union.tolist())
    out = Columns()
    for c, col in per.items():
        if c == "qid":
            out[c] = qid
        elif isinstance(col, Coded):
            out[c] = _stacked(col, avg[c])
        elif c in avg:
            out[c] = np.r_[col, avg[c]]
        else:  # no average of a text
            out[c] = np.r_[col, np.full(k, None if col.dtype == object else np.nan, col.dtype)]
    names = out["name"].codes
    _, first = np.unique(names, return_index=True)
    rank = np.empty(len(out["name"].strings), dtype=np.int64)
    rank[names[np.sort(first)]] = np.arange(len(first))  # each run's place of first appearance
    is_all = np.r_[np.zeros(n, np.int64), np.ones(k, np.int64)]
    return out.take(np.argsort(rank[names] * 2 + is_all, kind="stable"))


def _stacked(top: Coded, bottom: Coded) -> Coded:
    """The rows of ``top`` then those of ``bottom``, over one dictionary (``top``'s when both
    hold it, else the sorted union: :func:`pbtools.idarrays.merge_dictionaries`)."""
    import numpy as np
    import pyarrow as pa

    from pbtools.idarrays import merge_dictionaries

    if top.strings == bottom.strings:
        return Coded(np.r_[top.codes, bottom.codes], top.strings)
    union, (tm, bm) = merge_dictionaries([pa.array(top.strings), pa.array(bottom.strings)])
    return Coded(np.r_[tm[top.codes], bm[bottom.codes]], union.tolist())


def _wide(avg):
    """The averages one row per run, one column per measure, runs and measures in order of
    first appearance: the wide table of both paths (frames: :func:`output`). ``avg.pb.wide()``
    gives the same table but for a measure whose averages are all NaN, which its pivot drops
    and this keeps."""
    import numpy as np

    run, meas = avg["name"].codes, avg["measure"].codes
    _, rfirst = np.unique(run, return_index=True)
    _, mfirst = np.unique(meas, return_index=True)
    runs, measures = run[np.sort(rfirst)], meas[np.sort(mfirst)]
    rpos = np.empty(max(run.max(initial=-1) + 1, 1), np.int64)
    rpos[runs] = np.arange(len(runs))
    mpos = np.empty(max(meas.max(initial=-1) + 1, 1), np.int64)
    mpos[measures] = np.arange(len(measures))
    grid = np.full((len(runs), len(measures)), np.nan)
    grid[rpos[run], mpos[meas]] = avg["value"]
    out = Columns(name=Coded(runs, avg["name"].strings))
    for j, m in enumerate(measures.tolist()):
        out[avg["measure"].strings[m]] = grid[:, j]
    return out


def _write(args, text: str, rows: int | None) -> int:
    """``text`` to ``-o`` (saying how many rows, unless ``rows`` is None) or standard output."""
    if args.output:
        from pbtools.io.atomic import write_text

        write_text(args.output, text)
        if rows is not None:
            print(f"wrote {rows} rows to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _as_frames(args, runs, qrels, ms, lines) -> int:
    """The frame path (pandas): ``--format parquet`` (pandas' Parquet schema), or a TSV cell
    that needs quotes."""
    import warnings

    from pbtools import measures as m

    qr, rf = qrels.frame(), runs.frame()
    mode = "all" if args.all_topics else None
    with warnings.catch_warnings():  # said already
        warnings.simplefilter("ignore")
        per = m.evaluate(rf, qr, ms, per_topic=True, topics=mode, warn=False)
        avg = m.aggregate(per, qrels=qr, topics=mode)
    return output(args, rf, qr, per, avg, lines, args.trec_strict)


def output(args, runs, qrels, per, avg, lines, strict: bool) -> int:
    """Print or write the per-topic values ``per`` and averages ``avg`` (frames) as ``args``
    ask: pbtools' table/tsv/parquet, or trec_eval's layout (``--trec``) of ``lines``."""
    names = list(dict.fromkeys(str(t.measure) for t in lines if t.measure is not None))
    if len(avg) == 0:
        raise EmptyResult(_empty_message(_some_ids(runs["qid"]), _some_ids(qrels["qid"])))
    if args.trec:
        text = trec_report(
            per,
            avg,
            lines,
            per_topic=args.per_topic,
            summary=not args.no_summary,
            strict=strict,
        )
        return _write(args, text, None)
    meta = {"command": "evaluate", "measures": names}
    if args.per_topic:
        emit(with_all_rows(per, avg), args.format, args.output, meta, args=args)
    else:
        wide = _wide(Columns.from_frame(avg)).frame() if args.format == "table" else avg
        emit(wide, args.format, args.output, meta, args=args)
    return 0


def _empty_message(run_ids: list[str], qrels_ids: list[str]) -> str:
    return (
        f"no result: no run answers a topic that the qrels judge (run topics: {_some(run_ids)}; "
        f"qrels topics: {_some(qrels_ids)}); --all-topics scores every qrels topic, missing "
        "ones 0"
    )


def _some_ids(ids) -> list[str]:
    return sorted(set(ids.astype(str)))


def _some(ids: list[str], n: int = 5) -> str:
    """A few distinct ids, for a message."""
    u = sorted(set(ids))
    return ", ".join(u[:n]) + (f", … ({len(u)} in all)" if len(u) > n else "")
