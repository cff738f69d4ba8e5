"""Read and write TREC runs, qrels and ``desc.xml``; Parquet round trips; adapters.

=====================  ====================================================================
module                 holds
=====================  ====================================================================
``io.readers``         :func:`read_run`, :func:`read_runs`, :func:`read_qrels`,
                       :func:`read_orgs`, :func:`read_collection`, :class:`Collection`,
                       :func:`find_tracks`, :func:`track_name`, :func:`load_collection`,
                       :func:`run_files`
``io.files``           paths, special files, bytes, byte-level checks, physical lines
``io.fields``          fields and typed columns (scores, ranks, labels) and their checks
``io.direct``          the one typed CSV read of run files that need no repair
``io.parse``           run and qrels files one by one (run identity, qrels duplicate rule)
``io.assemble``        parsed run files into one frame (merged ids, duplicate rule, order)
``io.desc``            the safe ``desc.xml`` parser; a track without organizations
``io.mistakes``        the wrong kind of file (binary, a run for the qrels …), refused
``io.repairs``         the repairs frame of ``lenient=True``, its warnings,
                       :class:`RepairableError`
``io.parquet``         :func:`write_parquet`, :func:`read_parquet` (page checksums, checked
                       metadata)
``io.atomic``          the one way a file is written: temporary file, fsync, rename
``io.results``         :func:`write_results`, :func:`read_results`: result directories
                       written all or nothing, with a manifest and a writer's lock
``io.adapters``        :func:`to_trec`, :func:`to_trec_qrels`, ir_measures, ranx, ir_datasets
``io.sampled``         :func:`read_sampled_qrels`, :func:`to_sampled_qrels`: sampled pools'
                       qrels with strata (sample_eval.pl's format)
=====================  ====================================================================

The input contract (what strict mode refuses and what ``lenient=True`` repairs) is documented
in :mod:`pbtools.io.readers` and, with the table of every kind of problem, in ``docs/input.md``.
"""

import sys as _sys

from pbtools import paused_gc, register_accessor

with paused_gc():  # pandas' import (pbtools.paused_gc)
    from pbtools.io.adapters import (
        from_ir_datasets,
        from_ir_measures,
        from_ranx,
        to_ir_measures,
        to_ranx,
        to_trec,
        to_trec_qrels,
    )
    from pbtools.io.parquet import CorruptFileError, read_parquet, write_parquet
    from pbtools.io.parse import file_run_name
    from pbtools.io.readers import (
        Collection,
        check_paths,
        find_tracks,
        load_collection,
        read_collection,
        read_orgs,
        read_qrels,
        read_run,
        read_runs,
        run_files,
        track_name,
    )
    from pbtools.io.repairs import RepairableError
    from pbtools.io.results import ResultSetError, read_results, write_results
    from pbtools.io.sampled import read_sampled_qrels, to_sampled_qrels

# the frames the readers return have DataFrame.pb (import pbtools is lazy); not while
# pbtools.validation, which the accessor needs, is itself importing pbtools.io (a worker
# process that unpickles a task may import it first)
_validation = _sys.modules.get("pbtools.validation")
if _validation is None or hasattr(_validation, "validates"):
    register_accessor()
del _sys, _validation

__all__ = [
    "Collection",
    "read_run",
    "read_runs",
    "read_qrels",
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
