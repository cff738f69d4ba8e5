"""Helpers shared by the ``pbtools`` sub-commands: output, JSON and common options."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

__all__ = [
    "FORMATS",
    "emit",
    "trec_lines",
    "dumps",
    "add_io_options",
    "add_collection_args",
    "add_policy_option",
]

FORMATS = ("table", "tsv", "parquet")


def emit(
    df: pd.DataFrame,
    fmt: str,
    out: str | None,
    metadata: dict | None = None,
    args: argparse.Namespace | None = None,
    inputs: list | None = None,
) -> None:
    """Write ``df`` as an aligned table, TSV or Parquet to ``out`` (default: standard output).

    Parquet files carry :func:`pbtools.cli.provenance.provenance` (pbtools version, command,
    every parameter of ``args``, each input file with its SHA-256; ``inputs`` overrides the
    files taken from ``args``) merged with ``metadata``, read back as ``attrs["metadata"]``.
    """
    if fmt == "parquet":
        if not out:
            raise SystemExit("pbtools: error: --format parquet needs -o FILE")
        from pbtools import io
        from pbtools.cli.provenance import provenance

        io.write_parquet(df, out, metadata={**provenance(args, inputs), **(metadata or {})})
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


def _json_default(o):
    if hasattr(o, "item"):
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    return str(o)


def dumps(obj) -> str:
    """JSON text of ``obj`` with numpy/pandas scalars converted."""
    return json.dumps(obj, indent=2, default=_json_default)


def add_collection_args(p: argparse.ArgumentParser) -> None:
    """``TRACK_DIR | QRELS RUNS...`` and ``--desc``."""
    p.add_argument(
        "paths",
        nargs="+",
        metavar="TRACK_DIR | QRELS RUNS",
        help="a track directory TRACK/{QRels/,Runs/,desc.xml}, or a qrels file "
        "followed by run files or a runs directory",
    )
    p.add_argument("--desc", help="desc.xml mapping run tags to organizations")


def add_io_options(p: argparse.ArgumentParser) -> None:
    """``--lenient``, ``--float32`` and ``--run-id``."""
    p.add_argument(
        "--lenient",
        action="store_true",
        help="repair dirty TREC files (short lines, extra columns, duplicate "
        "documents) and report every repair, instead of stopping at the first",
    )
    p.add_argument(
        "--float32",
        action="store_true",
        help="read scores as 32-bit floats (trec_eval 9 / pytrec_eval ties)",
    )
    p.add_argument(
        "--run-id",
        choices=("tag", "file"),
        default="tag",
        help="name runs by the tag in column 6 (default) or by file name",
    )


def add_policy_option(p: argparse.ArgumentParser) -> None:
    """``--policy``: the pool-inference rule (:mod:`pbtools.pooling.inference`)."""
    from pbtools.pooling.inference import DEFAULT_POLICY, POLICY_CHOICES

    p.add_argument(
        "--policy",
        choices=POLICY_CHOICES,
        default=DEFAULT_POLICY,
        help="pool inference rule (PROTOCOL items 4-6): paper (default; reproduces the "
        "paper's pools), snapshot2015 and later (the reference code's 2015 and current "
        "versions), counted10 (pbtools before issue 14); lipani2015 = paper, per_run = later "
        "(see pbtools.pooling.inference)",
    )
