"""pbtools — pool-bias tools for IR test collections.

Load TREC runs and qrels into long, Arrow-backed pandas frames (:mod:`pbtools.io`), score them with
trec_eval-exact measures (:mod:`pbtools.measures`), simulate pools (:mod:`pbtools.pooling`), correct
the scores of unpooled runs (:mod:`pbtools.corrections`) and compare estimators
(:mod:`pbtools.stats`). :func:`pbtools.compare` compares runs with paired tests and renders
Markdown and LaTeX tables; :func:`pbtools.correct` corrects a new run's scores against a
collection in one call, with bootstrap confidence intervals. See README.md.
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
    "compare",
    "correct",
    "judge",
    "reproduce",
    "trec_order",
    "__version__",
]

#: names imported on first use (:pep:`562`): ``pbtools.compare`` and ``pbtools.correct`` need
#: scipy and the experiments, which the command line and the readers do not, so ``import
#: pbtools`` (and ``pbtools evaluate``) stays cheap
_LAZY = {
    "Comparison": "pbtools.stats.comparison",
    "compare": "pbtools.stats.comparison",
    "correct": "pbtools.experiments.oneline",
    "reproduce": "pbtools.papers.reproduce",
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
