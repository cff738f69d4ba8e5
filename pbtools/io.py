"""Read and write TREC runs, qrels and ``desc.xml``; Parquet round trips; adapters.

Formats (whitespace-separated: any run of spaces and tabs separates fields; leading and trailing
blanks and CRLF line ends are fine; gzip is detected by its magic bytes, whatever the name):

* **run** line: ``qid Q0 docno rank score tag`` (6 fields). ``score`` must be a number (not
  NaN), ``rank`` a number; the rank is then ignored, as trec_eval ignores it, and rows are put
  into trec_eval order (:func:`pbtools.frames.trec_order`: score descending, docno descending).
* **qrels** line: ``qid iter docno label`` (4 fields); ``label`` an integer in the int16 range
  (negative allowed: −1 is "pooled but unjudged").
* **desc.xml**: ``<runs><tag>T</tag><organization>O</organization></runs>`` entries.

**Strict by default**, as trec_eval 10 is: malformed input raises
:class:`~pbtools.frames.TrecFormatError` naming the file, the exact 1-based physical line (blank
lines count; ``err.line``) and the problem. With ``lenient=True`` the dirty-archive repair rule
of trec_eval_reference (Lipani's tool) is applied and every repair is reported:

* blank lines and lines with too few fields are skipped; longer lines keep their first fields;
* a repeated (run, qid, docno) keeps the occurrence with the highest score, the first in file
  order on equal scores; a repeated (qid, docno) in qrels keeps the first;
* a file whose lines carry several run tags is read as one run under its first tag;
* two files with one tag (``run_id="tag"``) are merged into one run (then the rule above);
* ``read_collection``: runs that ``desc.xml`` does not list go to ``Collection.unmapped``.

Each repair is a row (``file``, ``line``, ``problem``, ``action``) of ``df.attrs["repairs"]`` /
``Collection.repairs``, and each repaired file gets one :class:`~pbtools.frames.TrecFormatWarning`
summarising its counts. Errors that cannot be repaired (non-numeric score, corrupt gzip, empty
file, malformed XML) raise in both modes.

Run identity (PROTOCOL item 1): ``run_id="tag"`` (default) names a run by its column-6 tag;
``run_id="file"`` by its file name without ``input.`` and ``.gz`` (``input.prc1.gz`` → ``prc1``).
"""

from __future__ import annotations

import glob as _glob
import json
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from pbtools import _parse
from pbtools._parse import file_run_name
from pbtools._repairs import AttrsFrame, Repairs, warn
from pbtools.frames import (
    TrecFormatError,
    TrecFormatWarning,
    as_qrels,
    as_run,
    encode,
)

__all__ = [
    "Collection", "read_run", "read_runs", "read_qrels", "read_orgs", "read_collection",
    "write_parquet", "read_parquet", "to_trec", "to_trec_qrels", "from_ir_measures",
    "to_ir_measures", "from_ranx", "to_ranx", "run_files", "file_run_name",
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
    ``FileNotFoundError`` when a file, directory or pattern yields nothing.
    """
    if isinstance(source, str | os.PathLike):
        items: list = [source]
    else:
        items = list(source)
    out: list[str] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            found = sorted(str(f) for f in p.iterdir() if f.name.startswith("input.")
                           and f.is_file())
            if not found:
                raise FileNotFoundError(f"no input.* run files in directory {p}")
            out.extend(found)
        elif p.is_file():
            out.append(str(p))
        elif _glob.has_magic(str(item)):
            found = sorted(f for f in _glob.glob(str(item)) if Path(f).is_file())
            if not found:
                raise FileNotFoundError(f"no file matches {item}")
            out.extend(found)
        else:
            raise FileNotFoundError(f"no such file or directory: {item}")
    return out


# --------------------------------------------------------------------------------------------
# runs
# --------------------------------------------------------------------------------------------


def read_runs(source: Source, *, lenient: bool = False, float32: bool = False,
              run_id: str = "tag") -> pd.DataFrame:
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
    by the frames derived from the result, not copied (see ``AttrsFrame`` in ``_parse``).

    Raises :class:`TrecFormatError` (file, line, problem) in strict mode for a wrong field count
    or blank line, a non-numeric score or rank, several tags in one file, two files with one tag
    (``run_id="tag"``), a repeated (qid, docno) in a run; in both modes for an empty file, a
    corrupt gzip or invalid UTF-8. ``FileNotFoundError`` when the source matches no file.
    """
    _parse.check_run_id(run_id)
    paths = run_files(source)
    df, _files, repairs = _parse.load_runs(paths, lenient=lenient, float32=float32, run_id=run_id)
    if lenient:
        warn(repairs)
    return df


def read_run(path: PathLike, *, lenient: bool = False, float32: bool = False,
             run_id: str = "tag") -> pd.DataFrame:
    """Read one TREC run file (gzip transparent) into a run frame.

    Same columns, options and errors as :func:`read_runs`; a file whose lines carry several run
    tags raises in strict mode, and is read under its first tag (reported) with
    ``lenient=True``.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no such run file: {path}")
    return read_runs([p], lenient=lenient, float32=float32, run_id=run_id)


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
    lenient keeps the first), an empty file, a corrupt gzip.
    """
    p = Path(path) if isinstance(path, str | os.PathLike) else None
    if p is not None and p.is_dir():
        paths = sorted(str(f) for f in p.iterdir() if f.is_file())
    elif p is not None and p.is_file():
        paths = [str(p)]
    else:
        paths = run_files(path)
    if not paths:
        raise FileNotFoundError(f"no qrels file in {path}")
    df, repairs = _parse.load_qrels(paths, lenient)
    if lenient:
        df.attrs["repairs"] = repairs
        warn(repairs)
    return df


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
    names, orgs, repairs = _parse.parse_desc(path, lenient)
    df = pd.DataFrame({"name": encode(pd.Series(names, dtype="str")),
                       "org": encode(pd.Series(orgs, dtype="str"))})
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
    ``desc.xml``), ``files`` (``file``, ``name``: which file gave which run), ``repairs``
    (``file``, ``line``, ``problem``, ``action``; empty unless lenient), ``unmapped`` (sorted run
    names that ``desc.xml`` does not list), ``path`` (the track directory), ``name`` (its name).
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
        return (f"Collection({self.name!r}: {self.runs['name'].nunique()} runs, "
                f"{len(self.runs)} run rows, {len(self.qrels)} judgments, "
                f"{len(self.repairs)} repairs, unmapped={self.unmapped})")


def read_collection(track_dir: PathLike | None = None, *, lenient: bool = False,
                    float32: bool = False, run_id: str = "tag", name: str | None = None,
                    qrels: PathLike | None = None, runs: Source | None = None,
                    desc: PathLike | None = None) -> Collection:
    """Read a track laid out as ``TRACK/{QRels/,Runs/,desc.xml}`` (``../shared/data/trec``).

    ``QRels/``: every file is read and concatenated (:func:`read_qrels`); ``Runs/``: its
    ``input.*`` files (:func:`read_runs`); ``desc.xml``: :func:`read_orgs`. ``name`` defaults to
    the directory's name. Options as in :func:`read_runs`.

    The parts can also be named one by one, for collections not in the TRACK layout:
    ``read_collection(qrels="qrels.txt", runs="runs/", desc="desc.xml")`` (``desc`` optional:
    without it every run is its own organization, each run named as its own org). Explicit parts
    override the track directory's.

    Returns a :class:`Collection`. Raises :class:`TrecFormatError` for any strict-mode format
    error of the files, and (strict) for a run whose name ``desc.xml`` lacks, naming desc.xml
    and the run; lenient lists such runs in ``Collection.unmapped`` and records a repair. A
    missing ``desc.xml`` is an error (strict) or leaves every run unmapped (lenient).
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
            raise ValueError("read_collection needs a track directory, or both qrels= and runs=")
        qrels_src, runs_src = qrels, runs
        root = Path(runs if not isinstance(runs, list | tuple) else runs[0])
        implicit_orgs = desc is None
        desc = Path(desc) if desc is not None else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrecFormatWarning)
        qrels = read_qrels(qrels_src, lenient=lenient)
        runs, files, repairs = _parse.load_runs(run_files(runs_src), lenient=lenient,
                                                float32=float32, run_id=run_id)
    rep = Repairs()
    rep.parts.append(repairs)
    if "repairs" in qrels.attrs:
        rep.parts.insert(0, qrels.attrs["repairs"])
    if implicit_orgs:
        tags = pd.Series(runs["name"].cat.categories, dtype="str")
        orgs = pd.DataFrame({"name": encode(tags), "org": encode(tags)})
    elif desc.is_file():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrecFormatWarning)
            orgs = read_orgs(desc, lenient=lenient)
        if "repairs" in orgs.attrs:
            rep.parts.append(orgs.attrs.pop("repairs"))
    elif lenient:
        orgs = pd.DataFrame({"name": encode(pd.Series([], dtype="str")),
                             "org": encode(pd.Series([], dtype="str"))})
        rep.add(desc, None, "desc.xml is missing", "every run left unmapped")
    else:
        raise TrecFormatError("desc.xml is missing (run tag → organization map)", desc)
    known = set(orgs["name"].astype("str"))
    unmapped = sorted(n for n in runs["name"].cat.categories if n not in known)
    if unmapped:
        if not lenient:
            raise TrecFormatError(f"desc.xml lacks run tag {unmapped[0]!r}"
                                  + (f" (and {len(unmapped) - 1} more: {unmapped[1:]})"
                                     if len(unmapped) > 1 else ""), desc)
        for u in unmapped:
            rep.add(desc, None, f"desc.xml lacks run {u!r}",
                    "listed in Collection.unmapped (kept in the runs, no organization)")
    rep_frame = rep.frame()
    if lenient:
        runs.attrs["repairs"] = rep_frame
        qrels.attrs["repairs"] = rep_frame
        warn(rep_frame)
    return Collection(runs=runs, qrels=qrels, orgs=orgs, files=files, repairs=rep_frame,
                      unmapped=unmapped, path=root, name=name or root.name)


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


def load_collection(paths: Sequence[PathLike], *, desc: PathLike | None = None,
                    **options) -> Collection:
    """A collection from command-line style arguments: ``[TRACK_DIR]`` or ``[QRELS, RUNS...]``.

    One path that is a directory: :func:`read_collection` of that track (``desc`` overrides its
    ``desc.xml``). Two or more: a qrels file followed by run files, directories or globs.
    """
    paths = [Path(p) for p in paths]
    missing = [str(p) for p in paths if not p.exists() and not any(c in str(p) for c in "*?[")]
    if missing:
        raise FileNotFoundError(f"no such file or directory: {missing[0]}")
    if len(paths) == 1 and paths[0].is_dir():
        return read_collection(paths[0], desc=desc, **options)
    if len(paths) < 2:
        raise ValueError("expected TRACK_DIR, or QRELS followed by run files or a runs directory")
    return read_collection(qrels=paths[0], runs=[str(p) for p in paths[1:]], desc=desc, **options)


# --------------------------------------------------------------------------------------------
# Parquet
# --------------------------------------------------------------------------------------------

_META_KEY = b"pbtools"


def _to_json(value):
    if isinstance(value, pd.DataFrame):
        return {"__dataframe__": {
            "columns": [str(c) for c in value.columns],
            "dtypes": [str(t) for t in value.dtypes],
            "data": [[None if pd.isna(v) else (v.item() if hasattr(v, "item") else v)
                      for v in value[c].tolist()] for c in value.columns]}}
    if isinstance(value, dict):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_json(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    return value


def _from_json(value):
    if isinstance(value, dict):
        if set(value) == {"__dataframe__"}:
            d = value["__dataframe__"]
            return AttrsFrame({c: pd.Series(v, dtype=t) if t != "category" else
                               encode(pd.Series(v, dtype="str"))
                               for c, t, v in zip(d["columns"], d["dtypes"], d["data"],
                                                  strict=True)})
        return {k: _from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value


def write_parquet(df: pd.DataFrame, path: PathLike, metadata: dict | None = None) -> None:
    """Write a frame to Parquet so that :func:`read_parquet` gives it back exactly.

    Dtypes (categorical ids with their dictionary, nullable ``Int16`` labels, int32 ranks,
    Arrow-backed strings), row order, index and values round-trip. ``df.attrs`` (JSON values or
    DataFrames such as ``attrs["repairs"]``) and ``metadata`` (a JSON-serialisable dict, read
    back as ``attrs["metadata"]``) are stored as JSON in the Parquet schema metadata.
    """
    plain = df.copy(deep=False)
    plain.attrs = {}  # stored below, as pbtools JSON (pyarrow would try and warn)
    table = pa.Table.from_pandas(plain, preserve_index=None)
    cats = {}
    for c in df.columns:
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            categories = df[c].cat.categories
            used = df[c].cat.codes.to_numpy()
            complete = (categories.is_monotonic_increasing and categories.dtype == "str"
                        and len(np.unique(used[used >= 0])) == len(categories))
            cats[str(c)] = None if complete else {
                "categories": [str(x) for x in categories], "ordered": bool(df[c].cat.ordered),
                "str": categories.dtype == "str"}
    attrs = {k: v for k, v in df.attrs.items() if k != "metadata"}
    meta = {"attrs": _to_json(attrs), "metadata": _to_json(metadata if metadata is not None
                                                           else df.attrs.get("metadata")),
            "categoricals": cats}
    schema_meta = dict(table.schema.metadata or {})
    schema_meta[_META_KEY] = json.dumps(meta).encode()
    pq.write_table(table.replace_schema_metadata(schema_meta), str(path))


def read_parquet(path: PathLike) -> pd.DataFrame:
    """Read a Parquet file written by :func:`write_parquet` (or any Parquet file).

    Categorical columns come back with their exact dictionary (sorted Arrow-backed ``str``
    categories for pbtools ids); ``attrs`` are restored and the ``metadata`` given to
    :func:`write_parquet` is ``attrs["metadata"]``.
    """
    table = pq.read_table(str(path))
    raw = (table.schema.metadata or {}).get(_META_KEY)
    df = table.to_pandas()
    df.attrs.clear()
    if raw is None:
        return df
    meta = json.loads(raw)
    for c, spec in meta.get("categoricals", {}).items():
        if c not in df.columns:
            continue
        if spec is None:
            df[c] = encode(df[c].astype("str"))
        else:
            values = df[c].astype("str" if spec["str"] else object)
            cats = pd.Index(spec["categories"], dtype="str" if spec["str"] else object)
            df[c] = pd.Categorical(values, categories=cats, ordered=spec["ordered"])
    df.attrs.update(_from_json(meta.get("attrs") or {}))
    if meta.get("metadata") is not None:
        df.attrs["metadata"] = _from_json(meta["metadata"])
    return df


# --------------------------------------------------------------------------------------------
# writing TREC files and adapters
# --------------------------------------------------------------------------------------------


def _write_lines(lines: pa.Array, path: PathLike) -> None:
    table = pa.table({"line": lines})
    opts = pcsv.WriteOptions(include_header=False, quoting_style="none")
    compression = "gzip" if str(path).endswith(".gz") else None
    with pa.output_stream(str(path), compression=compression) as out:
        pcsv.write_csv(table, out, write_options=opts)


def _str(s: pd.Series) -> pa.Array:
    return pa.array(s.astype("str").to_numpy(dtype=object), type=pa.string())


def to_trec(run: pd.DataFrame, path: PathLike) -> None:
    """Write a run frame as TREC run text (``qid Q0 docno rank score name``).

    ``path`` a file (``.gz`` → gzip): every run of the frame goes into it (:func:`read_run`
    wants one run per file, so give it one run, or read several back with ``lenient=True``);
    ``path`` an existing directory: one ``input.<name>`` file per run (read back with
    :func:`read_runs`). Needs ``qid``, ``docno``, ``score``; ``name`` defaults to ``run``. Rows
    are written in trec order with ranks 1..n, scores with the shortest text that reads back to
    the same float64, so reading the file gives the frame's values exactly.
    """
    run = as_run(run)
    if Path(path).is_dir():
        for name in run["name"].cat.categories:
            one = run[run["name"] == name]
            if len(one):
                to_trec(one, Path(path) / f"input.{name}")
        return
    score = pc.cast(pa.array(run["score"].to_numpy(dtype=np.float64)), pa.string())
    rank = pc.cast(pa.array(run["rank"].to_numpy()), pa.string())
    q0 = pa.array(np.full(len(run), "Q0", dtype=object), type=pa.string())
    lines = pc.binary_join_element_wise(_str(run["qid"]), q0, _str(run["docno"]), rank, score,
                                        _str(run["name"]), " ")
    _write_lines(lines, path)


def to_trec_qrels(qrels: pd.DataFrame, path: PathLike) -> None:
    """Write a qrels frame as a TREC qrels file (``qid 0 docno label``; ``.gz`` → gzip), in the
    frame's row order. Needs ``qid``, ``docno``, ``label`` (ir_measures names accepted)."""
    qrels = as_qrels(qrels)
    zero = pa.array(np.full(len(qrels), "0", dtype=object), type=pa.string())
    label = pc.cast(pa.array(qrels["label"].to_numpy()), pa.string())
    lines = pc.binary_join_element_wise(_str(qrels["qid"]), zero, _str(qrels["docno"]), label,
                                        " ")
    _write_lines(lines, path)


def from_ir_measures(data, name: str = "run") -> pd.DataFrame:
    """An ir_measures run or qrels (DataFrame or iterable of ``ScoredDoc``/``Qrel`` tuples with
    ``query_id``, ``doc_id`` and ``score`` or ``relevance``) → a pbtools run frame (trec order,
    ``name`` column filled with ``name`` unless present) or qrels frame.

    ir_datasets yields the same tuples, so ``from_ir_measures(dataset.qrels_iter())`` and
    ``from_ir_measures(dataset.scoreddocs_iter(), name=...)`` load its data (extra fields such as
    ``iteration`` are dropped); :func:`from_ir_datasets` is the same function."""
    df = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    df = df.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    if "score" in df.columns:
        df = df[[c for c in ("name", "qid", "docno", "score") if c in df.columns]]
        if "name" not in df.columns:
            df = df.assign(name=name)
        return as_run(df)
    return as_qrels(df[["qid", "docno", "label"]])


from_ir_datasets = from_ir_measures


def to_ir_measures(df: pd.DataFrame) -> pd.DataFrame:
    """A run frame (``qid``, ``docno``, ``score``) or qrels frame (``label``) → ir_measures'
    columns ``query_id``, ``doc_id``, ``score`` / ``relevance`` (plain ``str`` ids; ``name``
    kept when present)."""
    cols = {"qid": "query_id", "docno": "doc_id", "label": "relevance"}
    keep = [c for c in ("name", "qid", "docno", "score", "label") if c in df.columns]
    out = df[keep].rename(columns=cols)
    for c in ("name", "query_id", "doc_id"):
        if c in out.columns:
            out[c] = out[c].astype("str")
    if "relevance" in out.columns:
        out["relevance"] = out["relevance"].astype(np.int64)
    return out.reset_index(drop=True)


def to_ranx(df: pd.DataFrame) -> dict[str, dict[str, float | int]]:
    """A single run (``qid``, ``docno``, ``score``) or qrels (``label``) frame → ranx's dict
    form ``{q_id: {doc_id: score}}``. Raises ``ValueError`` for several runs."""
    if "name" in df.columns and df["name"].nunique() > 1:
        raise ValueError("to_ranx takes one run; select it first")
    value = "score" if "score" in df.columns else "label"
    out: dict[str, dict] = {}
    for q, d, v in zip(df["qid"].astype("str"), df["docno"].astype("str"),
                       df[value].tolist(), strict=True):
        out.setdefault(q, {})[d] = v
    return out


def from_ranx(data: dict[str, dict[str, float]], name: str = "run",
              qrels: bool = False) -> pd.DataFrame:
    """ranx's ``{q_id: {doc_id: score}}`` → a run frame named ``name`` (trec order), or a
    qrels frame when ``qrels=True``."""
    rows = [(q, d, v) for q, docs in data.items() for d, v in docs.items()]
    q, d, v = (list(x) for x in zip(*rows, strict=True)) if rows else ([], [], [])
    if qrels:
        return as_qrels(pd.DataFrame({"qid": pd.Series(q, dtype="str"),
                                      "docno": pd.Series(d, dtype="str"), "label": v}))
    return as_run(pd.DataFrame({"name": name, "qid": pd.Series(q, dtype="str"),
                                "docno": pd.Series(d, dtype="str"),
                                "score": np.asarray(v, dtype=np.float64)}))
