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
                    (:func:`pbtools.experiments.oneline.correct`)
``analyze``         the bias analysis of a collection, what ``pbtools analyze`` prints
                    (:func:`pbtools.experiments.analysis.analyze`)
``report``          its HTML page, what ``pbtools report`` writes (:func:`pbtools.toplevel.report`)
``simulate_pool``   a fixed-cost pool by a strategy (:func:`pbtools.toplevel.simulate_pool`)
==================  ===========================================================================

One vocabulary: frames in the order ``(runs, qrels)``, ``leave_out="run"|"org"`` for the unit
withdrawn from the pool, ``topics="judged"|"all"|"answered"`` for the topics a run is averaged
over (``topics="all"`` is trec_eval's ``-c``).
"""

import gc as _gc

# Importing pandas (for the accessor) creates ~50,000 tracked objects and no garbage (a
# collection right after finds none); the cyclic collector's passes over them during the import
# cost ~0.1 s of every command's start-up (``import pbtools.cli`` in a fresh process, medians
# of 7: 0.62 → 0.51 s; the import stage of ``benchmarks/evaluate_speed.py``). The collector is
# paused for the import only, and left as it was.
_collecting = _gc.isenabled()
_gc.disable()
try:
    from pbtools import accessor as _accessor  # noqa: F401  (registers DataFrame.pb)
    from pbtools.errors import InputError
    from pbtools.frames import TrecFormatError, TrecFormatWarning, judge, trec_order
finally:
    if _collecting:
        _gc.enable()
del _gc, _collecting

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
    "read_collection",
    "report",
    "simulate_pool",
    "trec_order",
    "__version__",
]

#: names imported on first use (:pep:`562`): the front door's verbs need the readers, the
#: measures, scipy or the experiments, which ``import pbtools`` does not, so it stays cheap.
#: (``reproduce`` is to join them with the paper scripts' entry point.)
_LAZY = {
    "Comparison": "pbtools.stats.comparison",
    "analyze": "pbtools.experiments.analysis",
    "compare": "pbtools.stats.comparison",
    "correct": "pbtools.experiments.oneline",
    "evaluate": "pbtools.measures.evaluate",
    "read_collection": "pbtools.io.readers",
    "report": "pbtools.toplevel",
    "simulate_pool": "pbtools.toplevel",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pbtools' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
