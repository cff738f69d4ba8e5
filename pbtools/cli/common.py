"""Helpers shared by the ``pbtools`` sub-commands: output, JSON, common options and the checks
of arguments and output paths that every command runs before any work."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pbtools.errors import InputError

if TYPE_CHECKING:  # imported where used: `pbtools --help` starts without numpy and pandas
    import numpy as np
    import pandas as pd

__all__ = [
    "FORMATS",
    "UsageError",
    "EmptyResult",
    "emit",
    "trec_lines",
    "trec_line_array",
    "dumps",
    "add_io_options",
    "add_collection_args",
    "check_output",
    "check_inputs",
    "check_measures",
    "check_choices",
    "check_fraction",
    "add_policy_option",
]


class UsageError(InputError):
    """A refused command-line argument (exit status 2); the message names the flag."""


class EmptyResult(InputError):
    """The input gives nothing to report (exit status 2, a message instead of an empty table)."""


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
            raise UsageError("--format parquet needs -o FILE")
        from pbtools import io
        from pbtools.cli.provenance import provenance

        io.write_parquet(df, out, metadata={**provenance(args, inputs), **(metadata or {})})
        print(f"wrote {len(df)} rows to {out}", file=sys.stderr)
        return
    if fmt == "tsv":
        text = df.to_csv(sep="\t", index=False, float_format="%.4f")
    else:
        from pbtools.cli.table import table_text

        text = table_text(df)  # pandas' to_string, one format per distinct cell
    if out:
        from pbtools.io.atomic import write_text

        write_text(out, text)
        print(f"wrote {len(df)} rows to {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def trec_lines(results: pd.DataFrame) -> str:
    """Format results like trec_eval: ``measure<TAB>qid<TAB>value``, ``%-22s`` and 4 decimals.

    Counting measures (``num_ret``, ``num_rel``, ``num_rel_ret``) print as integers, as in
    trec_eval. With several runs the run name is prefixed as a first column.

    Examples
    --------
    >>> import pandas as pd
    >>> r = pd.DataFrame({"name": "a", "qid": ["1", "1"], "measure": ["P@5", "NumRet"],
    ...                   "value": [0.4, 5.0]})
    >>> print(trec_lines(r).replace("\\t", "|"), end="")  # tabs shown as |
    P_5                   |1|0.4000
    num_ret               |1|5
    """
    lines = trec_line_array(results, with_name=results["name"].nunique() > 1)
    return "\n".join(lines.tolist()) + "\n"


def trec_line_array(results: pd.DataFrame, *, with_name: bool = False) -> np.ndarray:
    """The lines of :func:`trec_lines` (no newline), one per row of ``results``, as an object
    array; ``with_name`` prefixes the run name. Vectorised over rows: each distinct measure is
    parsed once and each distinct value formatted once."""
    import numpy as np
    import pandas as pd

    from pbtools import measures as m

    codes, uniq = pd.factorize(results["measure"].astype(str))
    parsed = [m.parse(u) for u in uniq]
    tname = np.array([f"{p.trec_name:<22s}\t" for p in parsed], dtype=object)[codes]
    summed = np.array([p.summed for p in parsed], dtype=bool)[codes]
    value = results["value"].to_numpy(dtype=np.float64)
    text = np.empty(len(value), dtype=object)
    for mask, fmt in ((summed, "{:.0f}"), (~summed, "{:.4f}")):
        if mask.any():
            u, inv = np.unique(
                np.round(value[mask]) if fmt == "{:.0f}" else value[mask], return_inverse=True
            )
            text[mask] = np.array([fmt.format(v) for v in u.tolist()], dtype=object)[inv.ravel()]
    qid = results["qid"].astype(str).to_numpy(dtype=object) if "qid" in results.columns else "all"
    lines = tname + qid + "\t" + text
    if with_name:
        lines = results["name"].astype(str).to_numpy(dtype=object) + "\t" + lines
    return lines


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
    """``--lenient``, ``--float32``, ``--run-id`` and the limits on hostile input
    (``--gunzip-ratio``, ``--xml-limit``: :mod:`pbtools.io.limits`)."""
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
    p.add_argument(
        "--gunzip-ratio",
        type=_limit("--gunzip-ratio"),
        metavar="N",
        help="a gzip file may expand to N times its size, at least 64 MiB (default 50, or "
        "PBTOOLS_GUNZIP_RATIO; 0: no limit): a larger one is refused as a gzip bomb",
    )
    p.add_argument(
        "--xml-limit",
        type=_limit("--xml-limit"),
        metavar="BYTES",
        help="the largest desc.xml read (default 16777216 = 16 MiB, or PBTOOLS_XML_LIMIT; "
        "0: no limit)",
    )


def _limit(flag: str):
    """argparse type of a limit: a number >= 0 (0: no limit), else a message naming ``flag``."""

    def parse(text: str) -> float:
        number = re.fullmatch(r"\s*(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*", text)
        value = float(text) if number else float("nan")
        if not 0 <= value < float("inf"):
            raise argparse.ArgumentTypeError(f"{flag} must be a number >= 0 (0: no limit)")
        return value

    return parse


# --------------------------------------------------------------------------------------------
# checks run before any work
# --------------------------------------------------------------------------------------------


def check_inputs(paths: Iterable, desc=None) -> None:
    """Every input path exists and is a regular file, a directory or a glob pattern; ``desc``
    (``--desc``) a regular file. Raises ``FileNotFoundError`` or
    :class:`~pbtools.frames.TrecFormatError` naming the path and what it is (a FIFO, a device, a
    dangling symbolic link, a link loop)."""
    from pbtools.io.files import check_file, check_paths

    check_paths([p for p in paths if p is not None])
    if desc is not None:
        check_file(desc)


def check_output(
    path,
    *,
    flag: str = "-o",
    directory: bool = False,
    inputs: Sequence = (),
    tables: Sequence[str] = (),
) -> None:
    """Refuse an output path before the work starts (:class:`UsageError` naming ``flag``).

    A file output (``directory=False``) must be a regular file or not exist yet (a device, a
    FIFO, a socket or a file under ``/proc`` is refused: pbtools replaces files whole,
    :func:`pbtools.io.atomic.check_target`), its parent directory must exist and be writable,
    an existing file must be writable, and it must not be one of the ``inputs``. A directory
    output must be a directory (or not exist yet, in an existing, writable parent) that is
    empty or holds a pbtools result set (:func:`pbtools.io.results.check_result_dir`;
    ``tables``: the ``<table>.parquet`` names of a set written before manifests).
    """
    from pbtools.io.atomic import UnsafeOutputError, check_target
    from pbtools.io.files import path_problem

    if path is None:
        return
    p = Path(path)
    same = [str(i) for i in inputs if i is not None and _same_file(p, Path(i))]
    if same:
        raise UsageError(f"{flag} {path}: is an input file (of {same[0]}); it would be overwritten")
    if p.is_dir():
        if not directory:
            raise UsageError(f"{flag} {path}: is a directory, expected a file name")
        if not os.access(p, os.W_OK | os.X_OK):
            raise UsageError(f"{flag} {path}: the directory is not writable")
        if not os.access(p.resolve().parent, os.W_OK | os.X_OK):
            raise UsageError(
                f"{flag} {path}: its parent directory is not writable (the new result set is "
                "built beside it, then swapped in)"
            )
        from pbtools.io.results import ResultSetError, check_result_dir  # (pandas: a result set)

        try:
            check_result_dir(p, tables)
        except (UnsafeOutputError, ResultSetError) as e:
            raise UsageError(f"{flag} {e}") from None
        return
    problem = path_problem(p)
    if problem is not None and "symbolic link" in problem:  # dangling, or a loop
        raise UsageError(f"{flag} {path}: is {problem}")
    if p.exists():
        if directory:
            raise UsageError(
                f"{flag} {path}: exists and is not a directory (a directory is expected: one "
                "Parquet file per table is written into it)"
            )
        try:
            check_target(p)
        except UnsafeOutputError as e:
            raise UsageError(f"{flag} {e}") from None
        try:
            with open(p, "ab"):  # opens without truncating: the file is left as it is
                pass
        except OSError as e:
            raise UsageError(f"{flag} {path}: cannot be written ({e.strerror or e})") from None
        if not os.access(p.resolve().parent, os.W_OK | os.X_OK):
            raise UsageError(
                f"{flag} {path}: its directory is not writable (the file is replaced by a new "
                "one written beside it)"
            )
        return
    try:
        check_target(p)  # /proc/…
    except UnsafeOutputError as e:
        raise UsageError(f"{flag} {e}") from None
    parent = p.parent
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: the directory {parent} is not writable")


def _same_file(out: Path, given: Path) -> bool:
    """``out`` is the input ``given``, or a file of the input directory or glob ``given``."""
    import glob

    if not out.is_file():
        return False
    if given.is_dir():
        candidates = list(given.iterdir())
    elif glob.has_magic(str(given)):
        candidates = [Path(f) for f in glob.glob(str(given))]
    else:
        candidates = [given]
    for c in candidates:
        try:
            if os.path.samefile(out, c):
                return True
        except OSError:
            continue
    return False


def check_measures(names: Sequence[str], *, flag: str = "-m") -> list:
    """Parse every measure name before any input is read; a name that
    :func:`pbtools.measures.parse` refuses raises :class:`UsageError` naming ``flag``."""
    from pbtools import measures as m

    out = []
    for name in names:
        try:
            out.append(m.parse(name))
        except InputError as e:
            raise UsageError(f"{flag} {name}: {e}") from None
    return out


def check_choices(value: str, allowed: Sequence[str], *, flag: str) -> list[str]:
    """A comma-separated list of ``allowed`` words (at least one, none repeated)."""
    items = [v.strip() for v in str(value).split(",")]
    if not any(items):
        raise UsageError(f"{flag} needs at least one of {', '.join(allowed)}")
    for v in items:
        if v not in allowed:
            raise UsageError(f"{flag}: {v!r} is not one of {', '.join(allowed)}")
    twice = sorted({v for v in items if items.count(v) > 1})
    if twice:
        raise UsageError(f"{flag}: {', '.join(twice)} listed twice")
    return items


def check_fraction(value, *, flag: str) -> None:
    """``value`` (if given) is a finite number in [0, 1)."""
    if value is None:
        return
    if not math.isfinite(value) or not 0 <= value < 1:
        raise UsageError(f"{flag} must be in [0, 1), not {value}")


def add_policy_option(p: argparse.ArgumentParser) -> None:
    """``--policy``: the pool-inference rule (:mod:`pbtools.pooling.inference`)."""
    from pbtools.policynames import DEFAULT_POLICY, POLICY_CHOICES

    p.add_argument(
        "--policy",
        choices=POLICY_CHOICES,
        default=DEFAULT_POLICY,
        help="pool inference rule (PROTOCOL items 4-6): paper (default; reproduces the "
        "paper's pools), snapshot2015 and later (the reference code's 2015 and current "
        "versions), counted10 (pbtools before issue 14); lipani2015 = paper, per_run = later "
        "(see pbtools.pooling.inference)",
    )
