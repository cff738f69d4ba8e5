"""pbtools — pool-bias tools for IR test collections.

Load TREC runs and qrels into long, Arrow-backed pandas frames (:mod:`pbtools.io`), score them with
trec_eval-exact measures (:mod:`pbtools.measures`), simulate pools (:mod:`pbtools.pooling`), correct
the scores of unpooled runs (:mod:`pbtools.corrections`) and compare estimators
(:mod:`pbtools.stats`). See README.md.

The front door, one verb per task, imported on first use:

==================  ===========================================================================
``read_collection`` a track ``TRACK/{QRels/,Runs/,desc.xml}`` (:func:`pbtools.io.read_collection`)
``evaluate``        trec_eval-exact measures of runs (:func:`pbtools.measures.evaluate`)
``compare``         paired tests between runs, Markdown/LaTeX tables
                    (:func:`pbtools.stats.comparison.compare`)
``correct``         a new run's corrected scores against a collection, with intervals
                    (:func:`pbtools.experiments.new_run.correct`)
``analyze``         the bias analysis of a collection, what ``pbtools analyze`` prints
                    (:func:`pbtools.experiments.analysis.analyze`)
``report``          its HTML page, what ``pbtools report`` writes (:func:`pbtools.toplevel.report`)
``simulate_pool``   a fixed-cost pool by a strategy (:func:`pbtools.toplevel.simulate_pool`)
``reproduce``       one of the four papers on any collections (:func:`pbtools.papers.reproduce`)
==================  ===========================================================================

One vocabulary: frames in the order ``(runs, qrels)``, ``leave_out="run"|"org"`` for the unit
withdrawn from the pool, ``topics="judged"|"all"|"answered"`` for the topics a run is averaged
over (``topics="all"`` is trec_eval's ``-c``).
"""

import sys as _sys

from pbtools.errors import InputError

__version__ = "0.1.0"

__all__ = [
    "Comparison",
    "InputError",
    "TrecFormatError",
    "TrecFormatWarning",
    "analyze",
    "compare",
    "correct",
    "evaluate",
    "judge",
    "reproduce",
    "read_collection",
    "report",
    "simulate_pool",
    "trec_order",
    "__version__",
]

#: names imported on first use (:pep:`562`): ``import pbtools`` imports neither pandas nor
#: numpy, so ``pbtools --help`` and ``--version`` start in a fraction of pandas' own import
#: time (``benchmarks/startup.py``); the front door's verbs need the readers, the measures,
#: scipy or the experiments, which ``import pbtools`` does not load
_LAZY = {
    "TrecFormatError": "pbtools.frames",
    "TrecFormatWarning": "pbtools.frames",
    "judge": "pbtools.frames",
    "trec_order": "pbtools.frames",
    "Comparison": "pbtools.stats.comparison",
    "analyze": "pbtools.experiments.analysis",
    "compare": "pbtools.stats.comparison",
    "correct": "pbtools.experiments.new_run",
    "evaluate": "pbtools.measures.evaluate",
    "read_collection": "pbtools.io.readers",
    "report": "pbtools.toplevel",
    "reproduce": "pbtools.papers.reproduce",
    "simulate_pool": "pbtools.toplevel",
}


class paused_gc:
    """Pause the cyclic garbage collector while pandas is imported, then leave it as it was.

    Importing pandas creates ~50,000 tracked objects and no garbage (a collection right after
    finds none); the collector's passes over them during the import cost ~0.1 s of every
    command's start-up (``import pbtools.cli`` in a fresh process, medians of 7: 0.62 → 0.51
    s; the import stage of ``benchmarks/evaluate_speed.py``).
    """

    def __enter__(self):
        import gc

        self.collecting = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        import gc

        if self.collecting:
            gc.enable()


def register_accessor() -> None:
    """Register the ``DataFrame.pb`` accessor (:mod:`pbtools.accessor`). ``import pbtools``
    does it when pandas is already imported, and so do the command line, the first use of a
    name of ``pbtools`` (``pbtools.judge``) and of a pandas name of ``pbtools.io``
    (``pbtools.io.read_runs``); else ``import pbtools.accessor``."""
    with paused_gc():
        import pbtools.accessor  # noqa: F401


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        register_accessor()
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pbtools' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


if "pandas" in _sys.modules:  # a session that has pandas gets DataFrame.pb at once
    register_accessor()
del _sys
