"""pbtools — pool-bias tools for IR test collections.

Load TREC runs and qrels into long, Arrow-backed pandas frames (:mod:`pbtools.io`), score them with
trec_eval-exact measures (:mod:`pbtools.measures`), simulate pools (:mod:`pbtools.pooling`), correct
the scores of unpooled runs (:mod:`pbtools.corrections`) and compare estimators
(:mod:`pbtools.stats`). :func:`pbtools.compare` compares runs with paired tests and renders
Markdown and LaTeX tables; :func:`pbtools.correct` corrects a new run's scores against a
collection in one call, with bootstrap confidence intervals. See README.md.
"""

from pbtools import accessor as _accessor  # noqa: F401  (registers DataFrame.pb)
from pbtools.experiments.oneline import correct
from pbtools.frames import TrecFormatError, TrecFormatWarning, judge, trec_order
from pbtools.stats.comparison import Comparison, compare

__version__ = "0.1.0"

__all__ = [
    "Comparison",
    "TrecFormatError",
    "TrecFormatWarning",
    "compare",
    "correct",
    "judge",
    "trec_order",
    "__version__",
]
