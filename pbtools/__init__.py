"""pbtools — pool-bias tools for IR test collections.

Load TREC runs and qrels into long, Arrow-backed pandas frames (:mod:`pbtools.io`), score them with
trec_eval-exact measures (:mod:`pbtools.measures`), simulate pools (:mod:`pbtools.pooling`), correct
the scores of unpooled runs (:mod:`pbtools.corrections`) and compare estimators
(:mod:`pbtools.stats`). :func:`pbtools.compare` compares runs with paired tests and renders
Markdown and LaTeX tables; :func:`pbtools.correct` corrects a new run's scores against a
collection in one call, with bootstrap confidence intervals. See README.md.
"""

import sys as _sys

from pbtools.errors import InputError

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

#: names imported on first use (:pep:`562`): ``import pbtools`` imports neither pandas nor
#: numpy, so ``pbtools --help`` and ``--version`` start in a fraction of pandas' own import
#: time (``benchmarks/startup.py``); ``pbtools.compare`` and ``pbtools.correct`` need scipy
#: and the experiments, which the command line and the readers do not
_LAZY = {
    "TrecFormatError": "pbtools.frames",
    "TrecFormatWarning": "pbtools.frames",
    "judge": "pbtools.frames",
    "trec_order": "pbtools.frames",
    "Comparison": "pbtools.stats.comparison",
    "compare": "pbtools.stats.comparison",
    "correct": "pbtools.experiments.oneline",
    "reproduce": "pbtools.papers.reproduce",
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
    does it when pandas is already imported, and so do ``import pbtools.io``, the command line
    and the first use of a name of ``pbtools`` (``pbtools.judge``); else ``import
    pbtools.accessor``."""
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
