"""What the paper-reproduction scripts share: finding and loading tracks, the synthetic stand-in,
running over every track, writing the outputs and the command-line boilerplate (the figures'
helpers are :mod:`pbtools.papers.plotting`, re-exported here).

Each script reproduces a paper "over any directory of TREC tracks": ``ROOT`` is a track
(``TRACK/{QRels/,Runs/,desc.xml}``), or a directory of them (``ROOT/<TREC-N>/<Track>/``, as in
``../shared/data/trec``), or ``--synthetic`` for a :mod:`pbtools.synth` collection with complete
judgments.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from pbtools import grid
from pbtools.errors import InputError
from pbtools.papers import claims, reading
from pbtools.papers.plotting import (  # noqa: F401  (public here as before)
    FIGURE_FORMATS,
    can_draw,
    legend_outside,
    log_ticks,
    matplotlib_null_locator,
    plot_suffix,
    pyplot,
    save_figure,
)
from pbtools.papers.reading import Track
from pbtools.pooling import inference
from pbtools.progress import progress_bar

__all__ = ["Track", "load_tracks", "run_tracks", "write_outputs"]

#: the synthetic collection the scripts use with ``--synthetic`` (pbtools.synth.generate)
SYNTHETIC = dict(topics=50, docs=1500, runs=30, orgs=15, run_length=500, depth=50)


def load_tracks(
    root=None,
    *,
    synthetic: bool = False,
    lenient: bool = True,
    seed: int = 0,
    infer: bool = True,
    quiet: bool = False,
    run_id: str = "auto",
) -> list[Track]:
    """Every track under ``root`` (a path or several; :func:`reading.find`), or one synthetic
    collection.

    Real tracks are read leniently by default (TREC archives are dirty) with the run identity
    ``run_id`` (:data:`reading.RUN_IDS`; ``"auto"``: by tag, by file where files share a tag),
    by :func:`reading.read_track`; each track's ``reading`` row counts its repairs by kind
    (printed to standard error unless ``quiet``; never hidden from the outputs, which carry
    the ``reading`` table). The pool is inferred (:func:`pbtools.pooling.infer_pool`) when
    ``infer``. The track name is its path below its root, or ``<parent>/<track>`` when the
    root is the track (``TREC-2/Adhoc`` either way).
    """
    if synthetic:
        from pbtools import synth

        col = synth.generate(**SYNTHETIC, seed=seed)
        return [
            Track(
                "synthetic",
                col.runs,
                col.qrels,
                col.orgs,
                sorted(col.pooled),
                int(col.depth),
                col.truth,
                reading=reading.reading_row("synthetic", None, run_id, lenient),
            )
        ]
    if root is None:
        raise InputError("give a ROOT directory of tracks, or --synthetic")
    out = []
    for name, t in reading.find(root):
        col, row = reading.read_track(t, name, lenient=lenient, run_id=run_id)
        if row["repairs"] and not quiet:
            print(f"{t}: {row['repairs']} lenient repairs: {row['by_kind']}", file=sys.stderr)
        pooled, depth = [], 0
        if infer:
            info = inference.infer_pool(col.runs, col.qrels)
            pooled, depth = sorted(map(str, info.pooled_runs)), int(info.depth)
        out.append(
            Track(
                name,
                col.runs,
                col.qrels,
                col.orgs,
                pooled,
                depth,
                reading=row,
                repairs=col.repairs,
            )
        )
    return out


# --------------------------------------------------------------------------------------------
# leave-one-out experiment frames: one adapter for the ``n`` → ``measure`` change
# --------------------------------------------------------------------------------------------


def with_cutoff(frame: pd.DataFrame) -> pd.DataFrame:
    """A leave-one-out experiment or analysis frame with both an integer cut-off ``n`` and a
    ``measure`` name (``P@n``), whichever of the two the library produced, and the leave-out
    mode as ``by`` (the library's ``leave_out`` column, when it has no ``by``).

    :func:`pbtools.experiments.leave_one_out_experiment` and
    :func:`pbtools.experiments.analysis.analyze` key their rows by the cut-off ``n`` today and
    will name the measure (``measure`` = ``"P@10"``) instead; the paper scripts read every such
    frame through this function, so they work with both. Frames with neither column are
    returned unchanged.

    >>> with_cutoff(pd.DataFrame({"n": [5, 10]}))["measure"].tolist()
    ['P@5', 'P@10']
    >>> with_cutoff(pd.DataFrame({"measure": ["P@5", "P@10"]}))["n"].tolist()
    [5, 10]
    """
    if "by" not in frame.columns and "leave_out" in frame.columns:
        frame = frame.assign(by=frame["leave_out"])
    if "n" not in frame.columns and "measure" in frame.columns:
        from pbtools.measures import parse

        names = frame["measure"].astype(str)
        cut = {m: parse(m).cutoff for m in names.unique()}
        frame = frame.assign(n=names.map(cut).astype("int64"))
    elif "measure" not in frame.columns and "n" in frame.columns:
        frame = frame.assign(measure="P@" + frame["n"].astype(int).astype(str))
    return frame


# --------------------------------------------------------------------------------------------
# running a script over every track, and its outputs
# --------------------------------------------------------------------------------------------


def resolve_params(defaults: dict, params: dict) -> dict:
    """``defaults`` updated by ``params``; ``TypeError`` for a parameter ``defaults`` lacks."""
    p = {**defaults, **params}
    unknown = set(p) - set(defaults)
    if unknown:
        raise TypeError(f"unknown parameters {sorted(unknown)}")
    return p


#: the parameters every paper takes besides its own (:func:`run_tracks` adds them)
COMMON_DEFAULTS = dict(run_id="auto")


def run_tracks(
    script: str,
    root,
    out,
    defaults: dict,
    params: dict,
    per_track: Callable[[Track, dict, int], dict[str, pd.DataFrame]],
    *,
    jobs: int | None = None,
    plot: Callable | None = None,
    infer: bool = True,
    quiet: bool = False,
    title: str | None = None,
    across: Callable[[dict, dict], pd.DataFrame | None] | None = None,
    progress: bool | None = None,
) -> dict[str, pd.DataFrame]:
    """The ``run`` of a paper: ``per_track(track, params, jobs)`` on every track of
    :func:`load_tracks` (``root``: a path or several; ``synthetic``, ``lenient``, ``seed`` and
    ``run_id`` from the parameters), its frames concatenated by name, the ``reading`` table
    added (how each track was read: :mod:`reading`), and written to ``out`` as one result set
    (:func:`write_outputs`; None: write nothing).

    ``params`` are checked against ``defaults`` and :data:`COMMON_DEFAULTS`
    (:func:`resolve_params`) and must include ``synthetic``, ``lenient`` and ``seed``; ``jobs``
    None or 0 is :func:`pbtools.grid.default_jobs`. ``plot(result, out)`` draws the figures.
    ``across(result, params)``: the claims about several collections, checked across the
    tracks (appended to ``claims``). A ``claims`` frame (:mod:`claims`) is written with its
    Markdown twin, headed by ``title`` and how the tracks were read.
    """
    p = resolve_params({**COMMON_DEFAULTS, **defaults}, params)
    jobs = grid.default_jobs() if not jobs else jobs
    frames: dict[str, list[pd.DataFrame]] = {}
    tracks = load_tracks(
        root,
        synthetic=p["synthetic"],
        lenient=p["lenient"],
        seed=p["seed"],
        infer=infer,
        quiet=quiet,
        run_id=p["run_id"],
    )
    bar = progress_bar(len(tracks), progress if len(tracks) > 1 else False, script)
    for track in tracks:
        for k, v in per_track(track, p, jobs).items():
            frames.setdefault(k, []).append(v)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    result = {k: pd.concat(v, ignore_index=True) for k, v in frames.items()}
    result["reading"] = reading.reading_frame(t.reading for t in tracks)
    if across is not None and "claims" in result:
        more = across(result, p)
        if more is not None and len(more):
            result["claims"] = claims.concat([result["claims"], more])
    if out is not None:
        write_outputs(result, Path(out), metadata(script, root, p), plot, title)
    return result


def metadata(script: str, root, params: dict) -> dict:
    """The provenance of a paper's outputs (every table's Parquet metadata and the result
    set's manifest): the paper (``script``), ``root``, the parameters (tuples as lists), the
    pbtools version and every input file under ``root`` with its size and SHA-256."""
    import pbtools
    from pbtools.cli.provenance import input_files

    roots = [] if root is None else [root] if isinstance(root, str | Path) else list(root)
    return {
        "script": script,
        "root": None if root is None else ", ".join(map(str, roots)),
        "pbtools_version": pbtools.__version__,
        **{k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()},
        "inputs": input_files(roots),
    }


def write_outputs(
    result: dict[str, pd.DataFrame],
    out: Path,
    meta: dict,
    plot: Callable | None = None,
    title: str | None = None,
    documents: dict[str, str] | None = None,
) -> None:
    """``out`` as one result set, all or nothing (:func:`pbtools.io.results.write_results`):
    ``<name>.parquet`` for every frame (with ``meta``, the provenance, in its metadata and the
    manifest), ``claims.md`` (headed by ``title`` and how the tracks were read), the
    ``documents`` (file name → text: ``table2.md``, …) and the figures ``plot(result, dir)``
    draws. A reader of ``out`` sees the previous set or this one, never a mix."""
    from pbtools.io.results import write_results

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tables = {k: v.reset_index(drop=True) for k, v in result.items()}
    name = title or meta.get("script", "")

    def extra(directory: Path) -> None:
        if "claims" in result:
            text = claims.markdown_document(
                result["claims"], name, reading.reading_lines(result.get("reading"))
            )
            (directory / "claims.md").write_text(text)
        for file, text in (documents or {}).items():
            (directory / file).write_text(text)
        if plot is not None and can_draw():
            plot(result, directory)

    write_results(out, tables, params=meta, metadata={**meta, "title": name}, extra=extra)


# --------------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------------


def parser(
    doc: str,
    out: str,
    seed: int,
    seed_help: str | None = None,
) -> argparse.ArgumentParser:
    """The arguments every script takes: ``ROOT``, ``--synthetic``, ``-o/--out`` (default
    ``out``), ``--jobs``, ``--dask``, ``--seed`` (default ``seed``), ``--strict``,
    ``--no-progress``. The description is the first paragraph of ``doc``, the epilog the rest
    (what the script reproduces, its departures from the paper and what the data cannot
    support)."""
    ap = argparse.ArgumentParser(
        description=doc.split("\n\n")[0],
        epilog=doc.split("\n\n", 1)[-1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("root", nargs="?", help="a track dir or a directory of tracks")
    ap.add_argument("--synthetic", action="store_true", help="use a pbtools.synth collection")
    ap.add_argument("-o", "--out", default=out, help="output directory")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="worker processes")
    ap.add_argument("--dask", metavar="ADDRESS", help="Dask scheduler address (tcp://...)")
    ap.add_argument("--seed", type=int, default=seed, help=seed_help)
    ap.add_argument("--strict", action="store_true", help="fail on malformed TREC input")
    add_run_id(ap)
    ap.add_argument("--no-progress", action="store_true")
    return ap


def add_run_id(ap: argparse.ArgumentParser, default: str | None = "auto") -> None:
    """``--run-id auto|file|tag``: how runs are identified (:mod:`reading`)."""
    ap.add_argument(
        "--run-id",
        choices=reading.RUN_IDS,
        default=default,
        help="how a run is named: auto (default) by its tag, by its file where several files "
        "share a tag (TREC-2's input.prc1 and input.prc2, tag prceo1); file: by file; tag: by "
        "tag, files sharing one merged into one run",
    )


def parse_args(ap: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Parse ``argv``; an error unless ``ROOT`` or ``--synthetic`` is given."""
    a = ap.parse_args(argv)
    if not a.synthetic and not a.root:
        ap.error("give ROOT or --synthetic")
    return a


def common_params(a: argparse.Namespace) -> dict:
    """``run`` keywords of the common arguments: ``jobs``, ``dask``, ``progress``, ``seed``,
    ``lenient``, ``synthetic``."""
    return dict(
        jobs=a.jobs,
        dask=a.dask,
        progress=False if a.no_progress else None,
        seed=a.seed,
        lenient=not a.strict,
        synthetic=a.synthetic,
        run_id=a.run_id,
    )


def add_seed_check(ap: argparse.ArgumentParser) -> None:
    """``--check-seeds S [S ...]``: rerun with other seeds and compare the claims' verdicts."""
    ap.add_argument(
        "--check-seeds",
        type=int,
        nargs="+",
        default=[],
        metavar="SEED",
        help="rerun the experiment with these seeds and write OUT-seeds/stability.md: whether "
        "every claim gets the same verdict (the default settings are meant to make them agree)",
    )


def check_seeds(run: Callable, a: argparse.Namespace, result: dict, **params) -> int:
    """Rerun ``run(root, None, seed=s, **params)`` for every ``--check-seeds`` seed, print and
    write the verdicts side by side: ``stability.parquet`` / ``.md``, a result set of its own
    beside ``a.out`` (``<out>-seeds``: ``a.out`` is the run's own, complete set). Returns the
    number of claims whose verdict differs between seeds."""
    if not a.check_seeds:
        return 0
    by_seed = {a.seed: result["claims"]}
    common = {k: v for k, v in common_params(a).items() if k != "seed"}
    for s in a.check_seeds:
        by_seed[s] = run(a.root, None, **common, **params, seed=s)["claims"]
    table = claims.stability(by_seed)
    seeds_dir = Path(a.out).with_name(Path(a.out).name + "-seeds")
    claims.write_stability(
        table, seeds_dir, {"script": Path(sys.argv[0]).stem, "seeds": list(by_seed)}
    )
    bad = table[~table["stable"]]
    print(
        f"\nverdicts across seeds {list(by_seed)}: {len(table) - len(bad)} of {len(table)} "
        "claims agree" + ("" if bad.empty else f"; differ: {', '.join(bad['id'])}")
    )
    return len(bad)


def run_main(
    ap: argparse.ArgumentParser, a: argparse.Namespace, run: Callable, report, t0, **params
):
    """The end of every paper's ``main``: ``run`` on ``a``'s tracks with ``params``, a refusal
    of the input as one line and exit status 2 (no traceback), else :func:`finish` and, when
    the paper takes ``--check-seeds``, :func:`check_seeds`."""
    try:
        result = run(a.root, a.out, **common_params(a), **params)
    except InputError as e:
        print(f"{ap.prog}: error: {e}", file=sys.stderr)
        return 2
    status = finish(result, report, a.out, t0)
    if getattr(a, "check_seeds", None):
        check_seeds(run, a, result, **params)
    return status


def finish(result: dict[str, pd.DataFrame], report: Callable, out, t0: float) -> int:
    """Print how the tracks were read, ``report(result)`` and what was written to ``out`` since
    ``t0``; exit status 0."""
    for line in reading.reading_lines(result.get("reading")):
        print(line)
    print(report(result))
    print(
        f"\nwrote {len(result)} Parquet files and plots to {out} "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    return 0
