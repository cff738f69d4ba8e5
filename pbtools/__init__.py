"""pbtools — pool-bias tools for IR test collections.

Load TREC runs and qrels into long, Arrow-backed pandas frames (:mod:`pbtools.io`), score them with
trec_eval-exact measures (:mod:`pbtools.measures`), simulate pools (:mod:`pbtools.pooling`), correct
the scores of unpooled runs (:mod:`pbtools.corrections`) and compare estimators
(:mod:`pbtools.stats`). :func:`pbtools.compare` compares runs with paired tests and renders
Markdown and LaTeX tables. See README.md.
"""

from pbtools import accessor as _accessor  # noqa: F401  (registers DataFrame.pb)
from pbtools.frames import TrecFormatError, TrecFormatWarning, judge, trec_order
from pbtools.stats.comparison import Comparison, compare

__version__ = "0.1.0"

__all__ = [
    "Comparison",
    "TrecFormatError",
    "TrecFormatWarning",
    "compare",
    "judge",
    "trec_order",
    "__version__",
]
