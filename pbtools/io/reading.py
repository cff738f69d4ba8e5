"""The one reader of runs and qrels, without pandas: files into codes and dictionaries.

:func:`read_runs_encoded` and :func:`read_qrels_encoded` read TREC run and qrels files into an
:class:`~pbtools.io.encoded.EncodedRuns` / :class:`~pbtools.io.encoded.EncodedQrels`: the rows,
codes, dictionaries and repairs of the frames :func:`pbtools.io.read_runs` and
:func:`pbtools.io.read_qrels` return, which are built from these (``.frame()`` plus
``attrs["repairs"]``). The input contract (what strict mode refuses, what ``lenient=True``
repairs) is :mod:`pbtools.io.readers`'; ``docs/input.md`` has the table.

Importing this module or calling its readers imports no pandas (the command line's
``evaluate`` reads through them: importing pandas costs ~0.45 s of a TREC-sized evaluation);
they keep pyarrow from importing it too (:func:`pbtools.nopandas.without_pandas`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from pbtools.io import assemble as _assemble
from pbtools.io import files as _files
from pbtools.io import parse as _parse
from pbtools.io.encoded import EncodedQrels, EncodedRuns
from pbtools.io.mistakes import check_qrels_source
from pbtools.io.repairs import warn
from pbtools.nopandas import without_pandas

__all__ = ["read_runs_encoded", "read_qrels_encoded"]

PathLike = str | os.PathLike
Source = PathLike | Iterable[PathLike]


def read_runs_encoded(
    source: Source, *, lenient: bool = False, float32: bool = False, run_id: str = "tag"
) -> EncodedRuns:
    """Read TREC run files into :class:`~pbtools.io.encoded.EncodedRuns`, without pandas.

    Parameters
    ----------
    source : path, glob pattern, or iterable of those
        A run file, a directory (its ``input.*`` files), a glob pattern, or a list of those;
        gzip is transparent.
    lenient : bool
        Repair and report what strict mode refuses (:mod:`pbtools.io.readers`).
    float32 : bool
        Round scores to the nearest float32 before ordering (trec_eval 9 / pytrec_eval ties).
    run_id : {"tag", "file"}
        Name runs by column 6 or by the file name (:func:`pbtools.io.file_run_name`).

    Returns
    -------
    EncodedRuns
        The rows, codes and dictionaries of :func:`pbtools.io.read_runs`' frame (trec order);
        ``repairs`` the :class:`~pbtools.io.repairs.Repairs` (file then line order) with
        ``lenient=True``, else None. Each repaired file gets one ``TrecFormatWarning``.

    Raises
    ------
    TrecFormatError, FileNotFoundError
        As :func:`pbtools.io.read_runs`, with the same messages, files and lines.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "input.r"
    >>> _ = f.write_text("1 Q0 d1 1 1.0 r\\n1 Q0 d2 2 2.0 r\\n")
    >>> runs = read_runs_encoded(f)
    >>> runs.names.to_pylist(), runs.docnos.to_pylist(), runs.docno.tolist(), runs.rank.tolist()
    (['r'], ['d1', 'd2'], [1, 0], [1, 2])
    """
    _parse.check_run_id(run_id)
    with without_pandas():
        paths, expanded = _files.expand(source, lenient=lenient)
        runs, _, repairs = _assemble.load_runs(
            paths, lenient=lenient, float32=float32, run_id=run_id, repairs=expanded
        )
        if lenient:
            warn(repairs)
    return runs


def read_qrels_encoded(path: Source, *, lenient: bool = False) -> EncodedQrels:
    """Read TREC qrels (``qid iter docno label``) into :class:`~pbtools.io.encoded.EncodedQrels`,
    without pandas.

    Parameters
    ----------
    path : path, glob pattern, or iterable of those
        A file (gzip transparent), or a directory / glob / list whose files are concatenated.
    lenient : bool
        Repair and report what strict mode refuses (a repeated judgment keeps the first).

    Returns
    -------
    EncodedQrels
        The rows (file order), codes and dictionaries of :func:`pbtools.io.read_qrels`' frame;
        ``repairs`` with ``lenient=True`` (the source's first, then the files' in file and line
        order), else None. Each repaired file gets one ``TrecFormatWarning``.

    Raises
    ------
    TrecFormatError, FileNotFoundError
        As :func:`pbtools.io.read_qrels`, with the same messages, files and lines.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "qrels"
    >>> _ = f.write_text("1 0 d2 1\\n1 0 d1 0\\n")
    >>> q = read_qrels_encoded(f)
    >>> q.docnos.to_pylist(), q.docno.tolist(), q.label.tolist()
    (['d1', 'd2'], [1, 0], [1, 0])
    """
    for item in [path] if isinstance(path, str | os.PathLike) else list(path):
        check_qrels_source(item)
    with without_pandas():
        paths, expanded = _files.expand(path, lenient=lenient, entries=None)
        if not paths:
            raise FileNotFoundError(f"no qrels file in {path}")
        qrels = _parse.load_qrels(paths, lenient)
        if lenient:
            expanded.extend(qrels.repairs)
            qrels.repairs = expanded
            warn(qrels.repairs)
        else:
            qrels.repairs = None
    return qrels
