"""``reproduce``: run a paper of :data:`PAPERS` on one collection or several, and write its
outputs as one result set.

:func:`reproduce` (``pbtools.reproduce``) and ``pbtools reproduce PAPER TRACK_OR_ROOT... [-o DIR]
[paper options]`` call the paper module's ``run`` (the contract in :mod:`pbtools.papers`) on
every track under the paths given; with ``out``, the module writes its tables (Parquet), its
figures (PNG, SVG, PDF), ``claims.md``/``claims.parquet``, the ``reading`` table (how the data
were read) and the provenance (pbtools version, parameters, SHA-256 of every input file, in every
table's metadata and in ``manifest.json``) to ``out``, all or nothing
(:func:`pbtools.io.results.write_results`).

A paper's options are its ``DEFAULTS``: each becomes a keyword of :func:`reproduce` and a flag of
the command (:func:`add_paper_options`: ``cutoffs`` → ``--cutoffs 5 10``, ``synthetic`` →
``--synthetic``, ``lenient`` → ``--strict``).
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from types import ModuleType

import pandas as pd

from pbtools.errors import InputError
from pbtools.papers import reading

#: the papers, by the name ``reproduce`` takes: (module, one line on what it reproduces)
PAPERS = {
    "lipani2015": (
        "pbtools.papers.lipani2015",
        "Lipani, Lupu & Hanbury 2015: Table 2 (MAE, SRE, SRE*), the α sweep, the indicators λ, "
        "Figures 1-4",
    ),
    "webber2009": (
        "pbtools.papers.webber2009",
        "Webber & Park 2009: score adjustment from pooled systems and common topics, Tables 1-4",
    ),
    "sakai2008": (
        "pbtools.papers.sakai2008",
        "Sakai 2008: nine metrics under leave-one-team-out, take-k-teams and shallow pools",
    ),
    "buckley2006": (
        "pbtools.papers.buckley2006",
        "Buckley et al. 2006: each group's unique relevant documents, MAP and bpref, depth",
    ),
}
#: the keywords of a paper's ``run`` that are not options of the paper
RUN_KEYWORDS = ("jobs", "dask", "progress")


def paper_module(paper: str) -> ModuleType:
    """The module of ``paper`` (a key of :data:`PAPERS`); :class:`InputError` otherwise.

    >>> paper_module("lipani2015").__name__
    'pbtools.papers.lipani2015'
    """
    if paper not in PAPERS:
        raise InputError(f"unknown paper {paper!r}: choose one of {', '.join(PAPERS)}")
    return importlib.import_module(PAPERS[paper][0])


def listing() -> str:
    """The papers, one line each (``pbtools reproduce --list``)."""
    return "\n".join(f"{k:12s} {v[1]}" for k, v in PAPERS.items())


def check_paths(paths, synthetic: bool = False) -> list[Path]:
    """The paths given, each a track or a directory holding tracks (:class:`InputError`
    otherwise, before any work); none with ``synthetic``."""
    if synthetic:
        if paths:
            raise InputError("give TRACK_OR_ROOT paths or --synthetic, not both")
        return []
    if not paths:
        raise InputError("give a track (TRACK/{QRels,Runs}) or a directory of tracks")
    reading.find(paths)  # every path exists and holds a track
    return [Path(p) for p in paths]


def reproduce(
    paper: str,
    *paths,
    out=None,
    progress: bool | None = True,
    jobs: int | None = None,
    **params,
) -> dict[str, pd.DataFrame]:
    """Reproduce ``paper`` on every track under ``paths`` and return its frames by name.

    Parameters
    ----------
    paper : str
        A key of :data:`PAPERS` (``"lipani2015"``, ``"webber2009"``, ``"sakai2008"``,
        ``"buckley2006"``).
    *paths : path
        Tracks (``TRACK/{QRels/,Runs/,desc.xml}``) or directories of tracks
        (``ROOT/<TREC-N>/<Track>/``); none with ``synthetic=True``. The claims about several
        collections are checked across all of them.
    out : path, optional
        The output directory, written as one result set (all or nothing, with its manifest);
        None writes nothing.
    progress : bool or None
        Progress bars on standard error (None: when it is a terminal).
    jobs : int, optional
        The cores to use: worker threads or processes (default: every core;
        :class:`~pbtools.experiments.configs.Execution`, the scheduler of ``analyze`` and
        ``correct``).
    **params
        The paper's options (its module's ``DEFAULTS``), e.g. ``cutoffs=(5, 10)``,
        ``run_id="file"``, ``protocol="default"``.

    Returns
    -------
    dict of DataFrame
        The paper's tables; always ``claims`` (:mod:`pbtools.papers.claims` columns) and
        ``reading`` (how each track was read).

    Examples
    --------
    >>> from pbtools.experiments.analysis import SAMPLE
    >>> res = reproduce("buckley2006", SAMPLE, depths=(None,), progress=False, jobs=1)
    >>> set(res["claims"]["holds"]) <= {"true", "false", "n.a."}, "D1" in set(res["claims"]["id"])
    (True, True)
    """
    module = paper_module(paper)
    defaults = getattr(module, "DEFAULTS", {})
    unknown = sorted(set(params) - set(defaults) - {"run_id"})
    if unknown:
        raise InputError(
            f"{paper}: unknown option(s) {', '.join(unknown)}; it takes {', '.join(defaults)}"
        )
    synthetic = bool(params.get("synthetic", False))
    roots = check_paths(paths, synthetic)
    root = None if synthetic else (roots[0] if len(roots) == 1 else roots)
    if out is not None:
        from pbtools.io.results import check_result_dir

        check_result_dir(out)  # without matplotlib the figures are left out, said on stderr
    from pbtools.experiments.configs import Execution

    # the one scheduler (analyze's and correct's): jobs checked, this process's threads capped
    # at the cores granted (the paper's grids count their processes: pbtools.grid.plan_jobs)
    with Execution(jobs=jobs, progress=progress).limits():
        return module.run(root, out, jobs=jobs, progress=progress, **params)


# --------------------------------------------------------------------------------------------
# a paper's options on the command line, from its DEFAULTS
# --------------------------------------------------------------------------------------------


def _scalar(sample):
    """The argparse ``type`` of the values like ``sample`` (None: text, "none" is None)."""
    if isinstance(sample, bool) or sample is None or isinstance(sample, str):
        return str
    return type(sample)


def _element(kind):
    def parse(text: str):
        if text.lower() in ("none", "d", "depth"):
            return None
        return kind(text)

    parse.__name__ = kind.__name__
    return parse


def add_paper_options(ap: argparse.ArgumentParser, module: ModuleType) -> list[str]:
    """A flag for every parameter of ``module.DEFAULTS`` (and ``--run-id``); returns the
    parameter names. ``module.OPTIONS`` (``{name: help}``), when present, documents them."""
    defaults = dict(getattr(module, "DEFAULTS", {}))
    helps = getattr(module, "OPTIONS", {})
    names = []
    for name, default in defaults.items():
        flag = "--" + name.replace("_", "-")
        text = helps.get(name, "")
        if name == "lenient":
            ap.add_argument(
                "--strict",
                dest="lenient",
                action="store_false",
                default=None,
                help="refuse malformed TREC input (default: repair and report)",
            )
        elif name == "run_id":
            ap.add_argument(
                flag,
                choices=reading.RUN_IDS,
                default=None,
                help=text
                or "run identity: auto (default; by tag, by file where "
                "files share a tag), file or tag",
            )
        elif isinstance(default, bool):
            ap.add_argument(flag, action="store_true", default=None, help=text)
        elif isinstance(default, tuple | list):
            sample = next((v for v in default if v is not None), "")
            ap.add_argument(
                flag,
                nargs="+",
                type=_element(_scalar(sample)),
                default=None,
                help=text or f"(default: {' '.join(map(str, default))})",
            )
        else:
            ap.add_argument(
                flag, type=_scalar(default), default=None, help=text or f"(default: {default})"
            )
        names.append(name)
    if "run_id" not in defaults:
        ap.add_argument(
            "--run-id",
            choices=reading.RUN_IDS,
            default=None,
            help="run identity: auto (default; by tag, by file where files share "
            "a tag), file or tag",
        )
        names.append("run_id")
    return names


def paper_params(args: argparse.Namespace, names: list[str]) -> dict:
    """The options given on the command line (those left at None are the paper's defaults);
    lists as tuples."""
    out = {}
    for name in names:
        v = getattr(args, name, None)
        if v is not None:
            out[name] = tuple(v) if isinstance(v, list) else v
    return out
