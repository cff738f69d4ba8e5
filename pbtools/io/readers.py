"""Read and write TREC runs, qrels and ``desc.xml``; Parquet round trips; adapters.

Formats (whitespace-separated: any run of spaces and tabs separates fields; leading and trailing
blanks and CRLF line ends are fine; gzip is detected by its magic bytes, whatever the name):

* **run** line: ``qid Q0 docno rank score tag`` (6 fields). ``score`` must be a finite number
  that a double holds, ``rank`` a number; the rank is then ignored, as trec_eval ignores it, and
  rows are put into trec_eval order (:func:`pbtools.frames.trec_order`: score descending, docno
  descending).
* **qrels** line: ``qid iter docno label`` (4 fields); ``label`` an integer in the int16 range
  (negative allowed: −1 is "pooled but unjudged").
* **desc.xml**: ``<runs><tag>T</tag><organization>O</organization></runs>`` entries, plain text,
  no entity declarations (:mod:`pbtools.io.desc`).
* files: regular files, UTF-8 without a byte-order mark, no control bytes but TAB, LF, CR, no
  bare CR line ends (:mod:`pbtools.io.files`).

**Strict by default**, as trec_eval 10 is: malformed input raises
:class:`~pbtools.frames.TrecFormatError` naming the file, the exact 1-based physical line (blank
lines count; ``err.line``) and the problem. With ``lenient=True`` the dirty-archive repair rule
of trec_eval_reference (Lipani's tool) is applied and every repair is reported:

* blank lines and lines with too few fields are skipped; longer lines keep their first fields;
* a repeated (run, qid, docno) keeps the occurrence with the highest score, the first in file
  order on equal scores; a repeated (qid, docno) in qrels keeps the first;
* a file whose lines carry several run tags is read as one run under its first tag;
* two files with one tag (``run_id="tag"``) are merged into one run (then the rule above);
* NaN, infinite, overflowing and underflowing scores are kept (NaN last in its topic), a
  non-numeric rank is ignored;
* a byte-order mark is removed, bare CRs end lines, a line with a control byte is skipped;
* a directory entry that is not a regular file, and a file given twice, are skipped;
* ``read_collection``: runs that ``desc.xml`` does not list go to ``Collection.unmapped``.

Each repair is a row (``file``, ``line``, ``problem``, ``action``) of ``df.attrs["repairs"]`` /
``Collection.repairs``, and each repaired file gets one :class:`~pbtools.frames.TrecFormatWarning`
summarising its counts. A strict refusal of a problem that lenient reading repairs is a
:class:`~pbtools.io.repairs.RepairableError`. Errors that cannot be repaired (a non-numeric
score, invalid UTF-8, corrupt gzip, malformed or unsafe XML, a special file given by name) raise
in both modes. ``docs/input.md`` has the table of every kind of problem and what it gets.

Run identity (PROTOCOL item 1): ``run_id="tag"`` (default) names a run by its column-6 tag;
``run_id="file"`` by its file name without ``input.`` and ``.gz`` (``input.prc1.gz`` → ``prc1``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pbtools.errors import InputError
from pbtools.frames import (
    TrecFormatWarning,
    encode,
)
from pbtools.io import assemble as _assemble
from pbtools.io import desc as _desc
from pbtools.io import files as _files
from pbtools.io import parse as _parse
from pbtools.io.encoded import EncodedQrels, EncodedRuns
from pbtools.io.files import check_paths  # noqa: F401 (re-exported; pandas-free)
from pbtools.io.reading import read_qrels_encoded, read_runs_encoded
from pbtools.io.repairs import RepairableError, Repairs, warn

__all__ = [
    "Collection",
    "read_run",
    "read_runs",
    "read_qrels",
    "read_orgs",
    "read_collection",
    "find_tracks",
    "track_name",
    "load_collection",
    "run_files",
    "check_paths",
]

PathLike = str | os.PathLike
Source = PathLike | Iterable[PathLike]


# --------------------------------------------------------------------------------------------
# sources
# --------------------------------------------------------------------------------------------


def run_files(source: Source) -> list[str]:
    """Expand a run source into a list of files.

    ``source``: a file, a directory (its ``input.*`` files, sorted by name), a glob pattern
    (sorted matches) or a list of those (expanded in the given order). Raises
    ``FileNotFoundError`` when a file, directory or pattern yields nothing, and
    :class:`TrecFormatError` for anything that is not a regular file (a FIFO, a device, a
    dangling symbolic link or a link loop — also inside a directory) and for a file reached
    twice; :func:`read_runs` with ``lenient=True`` skips those and reports them instead.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("input.b", "input.a", "notes.txt"):
    ...     _ = (d / name).write_text("1 Q0 d1 1 1.0 r\\n")
    >>> [pathlib.Path(f).name for f in run_files(d)]
    ['input.a', 'input.b']
    """
    return _files.expand(source, lenient=False)[0]


# --------------------------------------------------------------------------------------------
# runs
# --------------------------------------------------------------------------------------------


def read_runs(
    source: Source, *, lenient: bool = False, float32: bool = False, run_id: str = "tag"
) -> pd.DataFrame:
    """Read TREC run files into one long run frame.

    ``source``: a run file, a directory (its ``input.*`` files), a glob pattern, or a list of
    those; gzip is transparent. ``run_id``: ``"tag"`` names runs by column 6, ``"file"`` by the
    file name (:func:`file_run_name`). ``float32=True`` rounds scores to the nearest float32
    (kept as float64) before ordering, reproducing trec_eval 9 / pytrec_eval ties (the lenient
    duplicate rule compares the file's double values, as the reference cleaning did).

    Returns columns ``name``, ``qid``, ``docno`` (dictionary-encoded ids), ``score`` (float64),
    ``rank`` (int32, 1..n in trec_eval order), rows in trec order (name, qid, score desc, docno
    desc). With ``lenient=True`` ``attrs["repairs"]`` holds the repairs (``file``, ``line``
    (Int64, NA for a whole file), ``problem``, ``action``; in file then line order), which are
    also issued as one :class:`TrecFormatWarning` per repaired file. The repairs frame is shared
    by the frames derived from the result, not copied (:mod:`pbtools.io.repairframe`).

    Raises :class:`TrecFormatError` (file, line, problem) in strict mode for a wrong field count
    or blank line, a NaN, infinite, overflowing or underflowing score, a non-numeric rank,
    several tags in one file, two files with one tag (``run_id="tag"``), a repeated (qid, docno)
    in a run, a byte-order mark, bare CRs, a control byte, an empty file, a directory entry
    that is not a regular file, a file given twice; in both modes for a non-numeric score, a
    corrupt gzip, invalid UTF-8 or a special file (FIFO, device, dangling link) given by name.
    ``FileNotFoundError`` when the source matches no file. ``docs/input.md`` lists what
    ``lenient=True`` does instead.
    """
    return frame_of(read_runs_encoded(source, lenient=lenient, float32=float32, run_id=run_id))


def frame_of(read: EncodedRuns | EncodedQrels) -> pd.DataFrame:
    """The frame of what the pandas-free reader gives (:mod:`pbtools.io.reading`), its repairs
    (if any) in ``attrs["repairs"]``: what :func:`read_runs` / :func:`read_qrels` return."""
    df = read.frame()
    if read.repairs is not None:
        df.attrs["repairs"] = read.repairs.frame()
    return df


def read_run(
    path: PathLike, *, lenient: bool = False, float32: bool = False, run_id: str = "tag"
) -> pd.DataFrame:
    """Read one TREC run file (gzip transparent) into a run frame.

    Same columns, options and errors as :func:`read_runs`; a file whose lines carry several run
    tags raises in strict mode, and is read under its first tag (reported) with
    ``lenient=True``.
    """
    _files.check_file(path)
    return read_runs([Path(path)], lenient=lenient, float32=float32, run_id=run_id)


# --------------------------------------------------------------------------------------------
# qrels
# --------------------------------------------------------------------------------------------


def read_qrels(path: Source, *, lenient: bool = False) -> pd.DataFrame:
    """Read TREC qrels (``qid iter docno label``) into a qrels frame.

    ``path``: a file (gzip transparent), or a directory / glob / list whose files are
    concatenated. Returns ``qid``, ``docno`` (dictionary-encoded) and ``label`` (int16), in file
    order; with ``lenient=True`` ``attrs["repairs"]`` holds the repairs.

    Raises :class:`TrecFormatError` (file, line, problem) for a field count other than 4 or a
    blank line (strict), a non-integer or out-of-int16 label, a repeated (qid, docno) (strict;
    lenient keeps the first), an empty file, a corrupt gzip; in both modes for the wrong kind
    of file (a run file, a directory of runs, a binary file: :mod:`pbtools.io.mistakes`).
    """
    return frame_of(read_qrels_encoded(path, lenient=lenient))


# --------------------------------------------------------------------------------------------
# desc.xml
# --------------------------------------------------------------------------------------------


def read_orgs(path: PathLike, *, lenient: bool = False) -> pd.DataFrame:
    """Read a TREC ``desc.xml`` (run tag → organization) into an orgs frame.

    Every element that has ``<tag>`` and ``<organization>`` children (TREC's ``<runs>``) is one
    entry. Returns ``name``, ``org`` (dictionary-encoded), in file order.

    Raises :class:`TrecFormatError` with the line for malformed XML, an entry lacking its tag or
    organization, or a tag listed twice (with ``lenient=True`` a repeated tag keeps the first
    entry and is recorded in ``attrs["repairs"]``).
    """
    names, orgs, repairs = _desc.parse_desc(path, lenient)
    df = pd.DataFrame(
        {"name": encode(pd.Series(names, dtype="str")), "org": encode(pd.Series(orgs, dtype="str"))}
    )
    if lenient:
        df.attrs["repairs"] = repairs
        warn(repairs)
    return df


# --------------------------------------------------------------------------------------------
# collections
# --------------------------------------------------------------------------------------------


@dataclass
class Collection:
    """A TREC track read by :func:`read_collection`.

    ``runs`` (run frame), ``qrels`` (qrels frame), ``orgs`` (``name``, ``org``: every entry of
    ``desc.xml``; without organizations each run its own, the reason in
    ``orgs.attrs["one_org_per_run"]``), ``files`` (``file``, ``name``: which file gave which
    run), ``repairs`` (``file``, ``line``, ``problem``, ``action``; empty unless lenient),
    ``unmapped`` (sorted run names that ``desc.xml`` does not list), ``path`` (the track
    directory), ``name`` (its name).
    """

    runs: pd.DataFrame
    qrels: pd.DataFrame
    orgs: pd.DataFrame
    files: pd.DataFrame
    repairs: pd.DataFrame
    unmapped: list[str]
    path: Path
    name: str

    def __repr__(self) -> str:
        return (
            f"Collection({self.name!r}: {self.runs['name'].nunique()} runs, "
            f"{len(self.runs)} run rows, {len(self.qrels)} judgments, "
            f"{len(self.repairs)} repairs, unmapped={self.unmapped})"
        )


def read_collection(
    track_dir: PathLike | None = None,
    *,
    lenient: bool = False,
    float32: bool = False,
    run_id: str = "tag",
    name: str | None = None,
    qrels: PathLike | None = None,
    runs: Source | None = None,
    desc: PathLike | None = None,
) -> Collection:
    """Read a track laid out as ``TRACK/{QRels/,Runs/,desc.xml}`` (``../shared/data/trec``).

    ``QRels/``: every file is read and concatenated (:func:`read_qrels`); ``Runs/``: its
    ``input.*`` files (:func:`read_runs`); ``desc.xml``: :func:`read_orgs`. ``name`` defaults to
    the directory's name. Options as in :func:`read_runs`.

    The parts can also be named one by one, for collections not in the TRACK layout:
    ``read_collection(qrels="qrels.txt", runs="runs/", desc="desc.xml")``. Explicit parts
    override the track directory's.

    Without organizations — no ``desc`` given, no ``desc.xml`` in the track, an empty one, one
    that lists no run — each run is its own organization (named as the run), so leaving out an
    organization is leaving out a run: said once by a
    :class:`~pbtools.io.desc.OrganizationsWarning`, and kept in ``Collection.orgs.attrs
    ["one_org_per_run"]`` (the reason), which the reports and output metadata carry.

    Returns a :class:`Collection`. Raises :class:`TrecFormatError` for any strict-mode format
    error of the files, and (strict) for a run whose name ``desc.xml`` lacks, naming desc.xml
    and the run; lenient lists such runs in ``Collection.unmapped`` and records a repair.
    """
    _parse.check_run_id(run_id)
    if track_dir is not None:
        root = Path(track_dir)
        if not root.is_dir():
            raise FileNotFoundError(f"no such track directory: {track_dir}")
        qrels_src = qrels if qrels is not None else root / "QRels"
        runs_src = runs if runs is not None else root / "Runs"
        desc = Path(desc) if desc is not None else root / "desc.xml"
        implicit_orgs = False
    else:
        if qrels is None or runs is None:
            raise InputError("read_collection needs a track directory, or both qrels= and runs=")
        qrels_src, runs_src = qrels, runs
        root = Path(runs if not isinstance(runs, list | tuple) else runs[0])
        implicit_orgs = desc is None
        desc = Path(desc) if desc is not None else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrecFormatWarning)
        qrels_read = read_qrels_encoded(qrels_src, lenient=lenient)
        run_paths, expanded = _files.expand(runs_src, lenient=lenient)
        runs_read, file_columns, repairs = _assemble.load_runs(
            run_paths, lenient=lenient, float32=float32, run_id=run_id, repairs=expanded
        )
    qrels, runs, files = qrels_read.frame(), runs_read.frame(), files_frame(file_columns)
    rep = Repairs()
    if qrels_read.repairs is not None:
        rep.extend(qrels_read.repairs)
    rep.extend(repairs)
    reason = _desc.no_organizations(desc, given=not implicit_orgs)
    if reason is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrecFormatWarning)
            orgs = read_orgs(desc, lenient=lenient)
        if "repairs" in orgs.attrs:
            rep.extend(Repairs.from_frame(orgs.attrs.pop("repairs")))
        if not len(orgs):
            reason = f"{desc} lists no run"
    if reason is not None:  # each run its own organization, said once
        orgs = _desc.own_organizations(runs["name"].cat.categories, reason)
    known = set(orgs["name"].astype("str"))
    unmapped = sorted(n for n in runs["name"].cat.categories if n not in known)
    if unmapped:
        if not lenient:
            raise RepairableError(
                f"desc.xml lacks run tag {unmapped[0]!r}"
                + (f" (and {len(unmapped) - 1} more: {unmapped[1:]})" if len(unmapped) > 1 else ""),
                desc,
            )
        for u in unmapped:
            rep.add(
                desc,
                None,
                f"desc.xml lacks run {u!r}",
                "listed in Collection.unmapped (kept in the runs, no organization)",
            )
    rep_frame = rep.frame()
    if lenient:
        runs.attrs["repairs"] = rep_frame
        qrels.attrs["repairs"] = rep_frame
        warn(rep)
    return Collection(
        runs=runs,
        qrels=qrels,
        orgs=orgs,
        files=files,
        repairs=rep_frame,
        unmapped=unmapped,
        path=root,
        name=name or root.name,
    )


def files_frame(files: dict[str, list[str]]) -> pd.DataFrame:
    """``Collection.files``: ``file``, ``name`` (encoded), ``tag``, one row a run file, from
    the columns :func:`pbtools.io.assemble.load_runs` gives."""
    return pd.DataFrame(
        {
            "file": pd.array(files["file"], dtype="str"),
            "name": encode(pd.Series(files["name"], dtype="str")),
            "tag": pd.array(files["tag"], dtype="str"),
        }
    )


def find_tracks(root: PathLike) -> list[Path]:
    """Track directories under ``root``: ``root`` itself when it holds ``QRels/`` and ``Runs/``,
    else every ``root/*/`` or ``root/*/*/`` that does (``ROOT/<TREC-N>/<Track>/``, the layout
    of ``../shared/data/trec``), sorted. Raises ``FileNotFoundError`` when there is none."""
    root = Path(root)

    def is_track(p: Path) -> bool:
        return (p / "QRels").is_dir() and (p / "Runs").is_dir()

    if is_track(root):
        return [root]
    found = sorted(p for p in root.glob("*") if p.is_dir() and is_track(p))
    found += sorted(p for p in root.glob("*/*") if p.is_dir() and is_track(p))
    if not found:
        raise FileNotFoundError(f"no track (a directory with QRels/ and Runs/) under {root}")
    return found


def track_name(paths: PathLike | Sequence[PathLike], root: PathLike | None = None) -> str:
    """A track's name for reports: its path below ``root`` (:func:`find_tracks`' root), else
    its folder with the parent's (``TREC-2/Adhoc``: the last folder alone, ``Adhoc``, names
    every ad hoc track). Several paths (``QRELS RUNS...``) name the folder that holds them all.

    Examples
    --------
    >>> track_name("data/trec/TREC-2/Adhoc"), track_name("data/trec/TREC-2/Adhoc", "data/trec")
    ('TREC-2/Adhoc', 'TREC-2/Adhoc')
    >>> track_name(["t/Adhoc/QRels/qrels.1", "t/Adhoc/Runs"], "t")
    'Adhoc'
    """
    many = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    where = Path(os.path.commonpath([os.path.abspath(p) for p in many]))
    if len(many) > 1 and where.is_file():
        where = where.parent
    if root is not None:
        below = os.path.relpath(where, os.path.abspath(root))
        if below != "." and not below.startswith(".."):
            return Path(below).as_posix()
    return "/".join(where.parts[-2:] if len(where.parts) > 2 else where.parts[-1:])


def load_collection(
    paths: Sequence[PathLike], *, desc: PathLike | None = None, **options
) -> Collection:
    """A collection from command-line style arguments: ``[TRACK_DIR]`` or ``[QRELS, RUNS...]``.

    One path that is a directory: :func:`read_collection` of that track (``desc`` overrides its
    ``desc.xml``). Two or more: a qrels file followed by run files, directories or globs.
    """
    paths = [Path(p) for p in paths]
    check_paths(paths)
    if len(paths) == 1 and paths[0].is_dir():
        return read_collection(paths[0], desc=desc, **options)
    if len(paths) < 2:
        raise InputError("expected TRACK_DIR, or QRELS followed by run files or a runs directory")
    return read_collection(qrels=paths[0], runs=[str(p) for p in paths[1:]], desc=desc, **options)
