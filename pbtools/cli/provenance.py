"""Provenance of a command's output: the pbtools version, every parameter, and each input file
with its SHA-256, stored in the metadata of the Parquet files the commands write.
"""

from __future__ import annotations

import argparse
import glob
import os
from collections.abc import Iterable
from pathlib import Path

from pbtools.io.atomic import sha256_file

#: the argparse destinations that name input files or directories
INPUT_ARGS = ("qrels", "runs", "new_run", "paths", "desc")


def input_files(sources: Iterable[str | os.PathLike]) -> list[dict]:
    """Every file named by ``sources`` — a file, a directory (every file under it, sorted) or a
    glob pattern — as ``{"path", "bytes", "sha256"}``, in order, each file once."""
    seen, out = set(), []
    for src in sources:
        p = Path(src)
        if p.is_dir():
            files = sorted(f for f in p.rglob("*") if f.is_file())
        elif p.is_file():
            files = [p]
        else:
            files = sorted(Path(f) for f in glob.glob(str(src)) if Path(f).is_file())
        for f in files:
            if str(f) in seen:
                continue
            seen.add(str(f))
            out.append({"path": str(f), "bytes": f.stat().st_size, "sha256": sha256_file(f)})
    return out


def _plain(value):
    if isinstance(value, os.PathLike):
        return str(value)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def provenance(args: argparse.Namespace | None, inputs: Iterable | None = None) -> dict:
    """The provenance of a command's output, for the metadata of the files it writes.

    Parameters
    ----------
    args : argparse.Namespace or None
        The parsed command line: ``command`` and every other option become ``parameters``;
        the input paths (:data:`INPUT_ARGS`) are hashed unless ``inputs`` is given.
    inputs : iterable of path, optional
        The files, directories or globs the command read (default: from ``args``).

    Returns
    -------
    dict
        ``pbtools_version``, ``command``, ``parameters`` (JSON values), ``inputs`` (one
        ``{"path", "bytes", "sha256"}`` per file read).

    Examples
    --------
    >>> import argparse
    >>> meta = provenance(argparse.Namespace(command="evaluate", measure=["AP"]), inputs=[])
    >>> sorted(meta)
    ['command', 'inputs', 'parameters', 'pbtools_version']
    >>> meta["parameters"]
    {'command': 'evaluate', 'measure': ['AP']}
    """
    import pbtools

    params = (
        {}
        if args is None
        else {
            k: v
            for k, v in vars(args).items()
            if k not in ("func", "validate") and not k.startswith("_")  # _measures: parsed -m
        }
    )
    if inputs is None:
        inputs = []
        for key in INPUT_ARGS:
            value = params.get(key)
            if value:
                inputs.extend(value if isinstance(value, list | tuple) else [value])
    return {
        "pbtools_version": pbtools.__version__,
        "command": params.get("command"),
        "parameters": _plain(params),
        "inputs": input_files(inputs),
    }
