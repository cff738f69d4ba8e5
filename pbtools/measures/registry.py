"""Adding a measure: :func:`register_measure` (its name in the grammar, its kernel in the engine).

A new measure is one module with a kernel and one call::

    from pbtools.measures import register_measure

    def dcg(view, topics, gt, m):            # Σ_{r ≤ n} gain_r / log2(r + 1)
        w = view.gain(m.rel) / np.log2(view.r + 1.0)
        return view.upto(w, m.cutoff), None

    register_measure("DCG", dcg)

after which ``"DCG@10"`` works everywhere a measure name does (``evaluate``, the CLI's ``-m``,
the estimators that support every measure). ``docs/extending.md`` runs this example.
"""

from __future__ import annotations

from collections.abc import Callable

from pbtools.measures.kernels import KERNELS
from pbtools.measures.names import register

__all__ = ["register_measure"]


def register_measure(
    base: str,
    kernel: Callable,
    *,
    cutoff: str = "optional",
    params: tuple[str, ...] = ("rel", "judged_only"),
    summed: bool = False,
    aliases: tuple[str, ...] = (),
) -> None:
    """Register a measure: its name in the grammar (:func:`pbtools.measures.names.register`)
    and its kernel in the engine (:data:`pbtools.measures.kernels.KERNELS`).

    Parameters
    ----------
    base : str
        The measure's name (``"DCG"``); parsed names are ``base(params)@cutoff``.
    kernel : callable
        ``kernel(view, topics, gt, measure) -> (values, residuals or None)``: per-group values
        from the rankings (:class:`~pbtools.measures.kernels.View`), the relevance sets
        (:class:`~pbtools.measures.kernels.Topics`), each group's topic ``gt`` and the parsed
        :class:`~pbtools.measures.names.Measure`.
    cutoff : {"optional", "required", "none"}
        Whether the name takes ``@n``.
    params : tuple of str
        Accepted parameters among ``rel``, ``judged_only``, ``p``, ``beta``.
    summed : bool
        Summed rather than averaged over topics (trec_eval's counts).
    aliases : tuple of str
        Other spellings accepted by the parser.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from pbtools import measures
    >>> def hits(view, topics, gt, m):          # relevant documents in the top n
    ...     return view.upto(view.rel(m.rel), m.cutoff), None
    >>> register_measure("Hits", hits, cutoff="required")
    >>> runs = pd.DataFrame({"name": "r", "qid": "1", "docno": ["a", "b"], "score": [2., 1.]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "label": [1, 1]})
    >>> measures.evaluate(runs, qrels, ["Hits@5"])["value"].tolist()
    [2.0]
    """
    register(base, cutoff, params, summed=summed, aliases=aliases)
    KERNELS[base] = kernel
