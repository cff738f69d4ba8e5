"""Read and write TREC runs, qrels and ``desc.xml``; Parquet round trips; adapters.

=====================  ====================================================================
module                 holds
=====================  ====================================================================
``io.readers``         :func:`read_run`, :func:`read_runs`, :func:`read_qrels`,
                       :func:`read_orgs`, :func:`read_collection`, :class:`Collection`,
                       :func:`find_tracks`, :func:`track_name`, :func:`load_collection`,
                       :func:`run_files` (frames built from ``io.reading``'s result)
``io.reading``         :func:`read_runs_encoded`, :func:`read_qrels_encoded`: the one reader,
                       without pandas, into ``io.encoded``'s :class:`EncodedRuns` /
                       :class:`EncodedQrels` (codes and dictionaries)
``io.files``           paths, special files, bytes, byte-level checks, physical lines
``io.fields``          fields and typed columns (scores, ranks, labels) and their checks
``io.direct``          the one typed CSV read of run files that need no repair
``io.parse``           run and qrels files one by one (run identity, qrels duplicate rule)
``io.assemble``        parsed run files into one frame (merged ids, duplicate rule, order)
``io.desc``            the safe ``desc.xml`` parser; a track without organizations
``io.mistakes``        the wrong kind of file (binary, a run for the qrels …), refused
``io.repairs``         the repairs of ``lenient=True`` (plain columns, no pandas), their
                       warnings, :class:`RepairableError`; ``io.repairframe`` their frame
``io.parquet``         :func:`write_parquet`, :func:`read_parquet` (page checksums, checked
                       metadata)
``io.memory``          :func:`release_memory`: freed pages handed back between big steps
``io.atomic``          the one way a file is written: temporary file, fsync, rename
``io.results``         :func:`write_results`, :func:`read_results`: result directories
                       written all or nothing, with a manifest and a writer's lock
``io.adapters``        :func:`to_trec`, :func:`to_trec_qrels`, ir_measures, ranx, ir_datasets
``io.sampled``         :func:`read_sampled_qrels`, :func:`to_sampled_qrels`: sampled pools'
                       qrels with strata (sample_eval.pl's format)
=====================  ====================================================================

The input contract (what strict mode refuses and what ``lenient=True`` repairs) is documented
in :mod:`pbtools.io.readers` and, with the table of every kind of problem, in ``docs/input.md``.

Every name here is imported on first use (``from pbtools.io import read_runs`` as usual):
importing ``pbtools.io`` imports no pandas, nor does the pandas-free reader
(``python3 -X importtime -c "import pbtools.io.reading"``).
"""

import sys as _sys

#: every public name and the module it lives in, imported on first use (:pep:`562`): importing
#: ``pbtools.io`` (or any ``pbtools.io.X``) imports no pandas, so the pandas-free readers
#: (:func:`read_runs_encoded`, :func:`read_qrels_encoded`) run without it; ``from pbtools.io
#: import read_runs`` and ``pbtools.io.read_runs`` work as ever
_LAZY = {
    **dict.fromkeys(
        (
            "from_ir_datasets",
            "from_ir_measures",
            "from_ranx",
            "to_ir_measures",
            "to_ranx",
            "to_trec",
            "to_trec_qrels",
        ),
        "pbtools.io.adapters",
    ),
    **dict.fromkeys(("CorruptFileError", "read_parquet", "write_parquet"), "pbtools.io.parquet"),
    "file_run_name": "pbtools.io.parse",
    "check_paths": "pbtools.io.files",
    **dict.fromkeys(
        (
            "Collection",
            "find_tracks",
            "load_collection",
            "read_collection",
            "read_orgs",
            "read_qrels",
            "read_run",
            "read_runs",
            "run_files",
            "track_name",
        ),
        "pbtools.io.readers",
    ),
    **dict.fromkeys(("read_runs_encoded", "read_qrels_encoded"), "pbtools.io.reading"),
    **dict.fromkeys(("EncodedRuns", "EncodedQrels"), "pbtools.io.encoded"),
    "RepairableError": "pbtools.io.repairs",
    **dict.fromkeys(("ResultSetError", "read_results", "write_results"), "pbtools.io.results"),
    **dict.fromkeys(("read_sampled_qrels", "to_sampled_qrels"), "pbtools.io.sampled"),
}


def _register() -> None:
    """Give the frames the readers return ``DataFrame.pb``, once pandas is imported; not
    while :mod:`pbtools.validation`, which the accessor needs, is itself importing
    ``pbtools.io`` (a worker process that unpickles a task may import it first)."""
    from pbtools import register_accessor

    validation = _sys.modules.get("pbtools.validation")
    pandas = _sys.modules.get("pandas")  # None: imported, or import refused (sys.modules)
    if pandas is not None and (validation is None or hasattr(validation, "validates")):
        register_accessor()


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        from pbtools import paused_gc

        with paused_gc():  # pandas' import (pbtools.paused_gc)
            value = getattr(importlib.import_module(_LAZY[name]), name)
        _register()
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pbtools.io' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


_register()  # a session that has pandas gets DataFrame.pb at once

__all__ = [
    "Collection",
    "read_run",
    "read_runs",
    "read_qrels",
    "read_runs_encoded",
    "read_qrels_encoded",
    "EncodedRuns",
    "EncodedQrels",
    "read_sampled_qrels",
    "to_sampled_qrels",
    "read_orgs",
    "read_collection",
    "find_tracks",
    "track_name",
    "load_collection",
    "write_parquet",
    "read_parquet",
    "to_trec",
    "to_trec_qrels",
    "from_ir_measures",
    "to_ir_measures",
    "from_ranx",
    "to_ranx",
    "from_ir_datasets",
    "run_files",
    "file_run_name",
    "check_paths",
    "RepairableError",
    "write_results",
    "read_results",
    "ResultSetError",
    "CorruptFileError",
]
