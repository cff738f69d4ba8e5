"""How the papers read their collections, shown: run identity and the repairs of the input.

Every paper (:mod:`pbtools.papers`) reads its tracks here, the same way:

* **Run identity** (``run_id``): ``"auto"`` (the default) names a run by its tag (column 6 of
  the run file) unless two files carry the same tag, in which case each of those files is its
  own run, named by its file (TREC-2's ``input.prc1`` and ``input.prc2`` both carry
  ``prceo1``: two runs ``prc1`` and ``prc2``, as ``desc.xml`` lists them, not one artificial
  run of twice the length). ``"file"`` names every run by its file, ``"tag"`` by its tag (files
  sharing a tag are merged into one run, a repair that is reported).
* **Repairs** (``lenient=True``, the default: TREC archives are dirty) are never hidden: each
  track's repairs are counted by kind (:func:`pbtools.io.repairs.problem_kinds`) in the
  ``reading`` table every paper writes, in its terminal report and in the header of its
  ``claims.md``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pbtools import io
from pbtools.errors import InputError
from pbtools.frames import TrecFormatWarning

#: the run identities a paper can read with (``--run-id``)
RUN_IDS = ("auto", "file", "tag")
#: the columns of the ``reading`` table (one row per track)
READING_COLUMNS = ["track", "lenient", "run_id", "files", "runs", "repairs", "by_kind", "by_file"]


@dataclass
class Track:
    """One collection: frames plus the inferred (real) or known (synthetic) pool, and how it
    was read (``reading``: one row of :data:`READING_COLUMNS`)."""

    name: str
    runs: pd.DataFrame
    qrels: pd.DataFrame
    orgs: pd.DataFrame
    pooled: list[str]
    depth: int
    truth: pd.DataFrame | None = None  # complete judgments (synthetic collections only)
    reading: dict = field(default_factory=dict)
    repairs: pd.DataFrame | None = None


def check_run_id(run_id: str) -> str:
    """``run_id`` if it is one of :data:`RUN_IDS`, else :class:`~pbtools.errors.InputError`.

    >>> check_run_id("auto")
    'auto'
    """
    if run_id not in RUN_IDS:
        raise InputError(f"run_id must be one of {', '.join(RUN_IDS)}, not {run_id!r}")
    return run_id


def tag_names(files: pd.DataFrame) -> dict[str, str]:
    """``run_id="auto"``: the new name of each file-named run whose tag no other file carries
    (its tag), as ``{file name: tag}``; files sharing a tag keep their file names.

    ``files``: ``name`` (the run named by file) and ``tag`` (the file's first tag), as
    :attr:`pbtools.io.Collection.files` read with ``run_id="file"``.

    >>> files = pd.DataFrame({"name": ["a", "prc1", "prc2", "x"],
    ...                       "tag": ["a", "prceo1", "prceo1", "y"]})
    >>> tag_names(files)
    {'x': 'y'}
    """
    names = files["name"].astype(str)
    tags = files["tag"].astype(str)
    shared = tags.duplicated(keep=False)
    rename = {n: t for n, t, s in zip(names, tags, shared, strict=True) if not s and n != t}
    final = [rename.get(n, n) for n in names]
    clash = {n for n in final if final.count(n) > 1}  # a tag that is another file's name
    return {n: t for n, t in rename.items() if t not in clash}


def shared_tags(files: pd.DataFrame) -> dict[str, list[str]]:
    """The tags several files carry, with the runs (by file) that carry them.

    >>> shared_tags(pd.DataFrame({"name": ["a", "p1", "p2"], "tag": ["a", "pe", "pe"]}))
    {'pe': ['p1', 'p2']}
    """
    f = files.assign(name=files["name"].astype(str), tag=files["tag"].astype(str))
    g = f[f["tag"].duplicated(keep=False)].groupby("tag", sort=True)["name"]
    return {t: sorted(v) for t, v in g}


def by_kind(repairs: pd.DataFrame | None) -> pd.DataFrame:
    """The repairs counted by kind: ``kind``, ``repairs``, ``files`` (most frequent first;
    :func:`pbtools.experiments.htmlparts.repair_counts`)."""
    from pbtools.experiments.htmlparts import repair_counts

    return repair_counts(repairs)[0]


def kinds_text(repairs: pd.DataFrame | None) -> str:
    """``"1253 × wrong field count, 25 × blank line"``: the repairs by kind, one line.

    >>> rep = pd.DataFrame({"file": ["a", "a", "b"], "line": [1, 2, 5], "action": "skipped",
    ...                     "problem": ["blank line", "blank line", "7 fields, expected 6"]})
    >>> kinds_text(rep), kinds_text(None)
    ('2 × blank line, 1 × wrong field count', 'none')
    """
    k = by_kind(repairs)
    if k.empty:
        return "none"
    return ", ".join(f"{int(n)} × {kind}" for kind, n in zip(k["kind"], k["repairs"], strict=True))


def reading_row(name: str, col, run_id: str, lenient: bool) -> dict:
    """The ``reading`` row of a track read as ``col`` (:class:`pbtools.io.Collection`)."""
    shared = shared_tags(col.files) if col is not None and len(col.files) else {}
    how = {
        "auto": "by tag; by file where files share a tag",
        "file": "by file",
        "tag": "by tag (files sharing a tag merged)",
    }[run_id]
    return {
        "track": name,
        "lenient": bool(lenient),
        "run_id": run_id,
        "files": 0 if col is None else len(col.files),
        "runs": 0 if col is None else int(col.runs["name"].nunique()),
        "repairs": 0 if col is None else len(col.repairs),
        "by_kind": kinds_text(None if col is None else col.repairs),
        "by_file": how
        + (
            "; " + "; ".join(f"tag {t!r}: runs {', '.join(v)}" for t, v in shared.items())
            if shared
            else ""
        ),
    }


def read_track(
    path, name: str, *, lenient: bool = True, run_id: str = "auto", float32: bool = False
):
    """Read one track (:func:`pbtools.io.read_collection`) with the run identity ``run_id``
    (:data:`RUN_IDS`). Returns ``(collection, reading row)``; the collection's ``runs`` are
    named as ``run_id`` says (``unmapped`` recomputed), its frames' ``attrs`` cleared.

    Repairs are not issued as warnings here: they are counted by kind in the reading row,
    which every paper shows.
    """
    check_run_id(run_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrecFormatWarning)
        col = io.read_collection(
            path, lenient=lenient, float32=float32, run_id="tag" if run_id == "tag" else "file"
        )
    if run_id == "auto":
        rename = tag_names(col.files)
        if rename:
            col.runs["name"] = col.runs["name"].cat.rename_categories(
                lambda c: rename.get(str(c), c)
            )
            col.files["name"] = col.files["name"].astype(str).map(lambda c: rename.get(c, c))
    known = set(col.orgs["name"].astype(str))
    col.unmapped = sorted(set(col.runs["name"].astype(str).unique()) - known)
    for f in (col.runs, col.qrels, col.orgs):
        f.attrs.clear()
    return col, reading_row(name, col, run_id, lenient)


def reading_frame(rows) -> pd.DataFrame:
    """The ``reading`` table of a paper's output from its tracks' reading rows."""
    return pd.DataFrame(list(rows), columns=READING_COLUMNS)


def reading_lines(reading: pd.DataFrame | None) -> list[str]:
    """One line per track on how it was read, for the terminal and ``claims.md``.

    >>> r = reading_frame([{"track": "T", "lenient": True, "run_id": "auto", "files": 3,
    ...     "runs": 3, "repairs": 2, "by_kind": "2 × blank line", "by_file": "by tag"}])
    >>> reading_lines(r)[0]
    'T: 3 run files read leniently as 3 runs (by tag); 2 repairs: 2 × blank line'
    """
    if reading is None or reading.empty:
        return []
    out = []
    for r in reading.itertuples(index=False):
        if r.files == 0:
            out.append(f"{r.track}: generated (pbtools.synth), nothing read")
            continue
        how = "leniently" if r.lenient else "strictly"
        out.append(
            f"{r.track}: {r.files} run files read {how} as {r.runs} runs ({r.by_file}); "
            f"{r.repairs} repairs" + (f": {r.by_kind}" if r.repairs else "")
        )
    return out


def source_paths(roots) -> list[Path]:
    """``roots`` (a path or several) as a list of paths, each checked to exist
    (:class:`~pbtools.errors.InputError` otherwise)."""
    many = [roots] if isinstance(roots, str | Path) else list(roots)
    out = []
    for r in many:
        p = Path(r)
        if not p.exists():
            raise InputError(f"{r}: no such track or directory of tracks")
        out.append(p)
    if not out:
        raise InputError("give a track or a directory of tracks")
    return out


def find(roots) -> list[tuple[str, Path]]:
    """``(name, track directory)`` of every track under ``roots``
    (:func:`pbtools.io.find_tracks` on each): the name is the track's path below its root
    (``TREC-2/Adhoc``), made unique across roots. :class:`~pbtools.errors.InputError` for a
    root without a track."""
    out: list[tuple[str, Path]] = []
    seen: set[str] = set()
    for root in source_paths(roots):
        try:
            tracks = io.find_tracks(root)
        except FileNotFoundError as e:
            raise InputError(str(e)) from None
        for t in tracks:
            name = io.track_name(t, root) if t != root else io.track_name(t)
            base, i = name, 2
            while name in seen:
                name, i = f"{base} ({i})", i + 1
            seen.add(name)
            out.append((name, t))
    return out
