"""The two verbs of ``import pbtools`` that are not already a function of a subpackage.

The front door (:mod:`pbtools`) offers ``read_collection``, ``evaluate``, ``analyze``,
``correct``, ``compare``, ``report`` and ``simulate_pool``; five are the subpackages' own
functions, re-exported. :func:`report` (the HTML page of an analysis, what ``pbtools report``
writes) and :func:`simulate_pool` (a fixed-cost pool replayed against existing judgments) are
here. One vocabulary everywhere: frames in the order ``(runs, qrels)``, the unit withdrawn from
the pool ``leave_out=`` (``"run"``/``"org"``), the averaging mode ``topics=``
(``"judged"``/``"all"``/``"answered"``, :mod:`pbtools.measures.topics`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

__all__ = ["report", "simulate_pool"]


def report(analysis=None, path=None, *, title: str | None = None, **options):
    """The self-contained HTML bias report of a collection (what ``pbtools report`` writes).

    Parameters
    ----------
    analysis : Analysis or source, optional
        The result of :func:`pbtools.analyze`, or anything it analyses (a track directory,
        ``[QRELS, RUNS...]``, ``(runs, qrels, orgs)`` frames; default: the bundled sample),
        analysed with ``options`` first.
    path : str or Path, optional
        Write the page there (atomically, :mod:`pbtools.io.atomic`) and return the path; by
        default the page is returned as a string.
    title : str, optional
        The page title (default: "Pool bias report: <collection>").
    **options
        Keywords of :func:`pbtools.analyze` (only when ``analysis`` is not an analysis).

    Returns
    -------
    str or Path
        The HTML page (inline CSS and SVG, no script, no external resource), or its path.

    Examples
    --------
    Drawing the figures takes seconds, so this example is not run as a doctest (the page is
    :mod:`pbtools.experiments.htmlreport`'s, tested with it; ``tests/test_front_door.py`` runs
    this function):

    >>> import pbtools
    >>> a = pbtools.analyze(measures=["P@10"], leave_out=["org"])  # doctest: +SKIP
    >>> pbtools.report(a, "bias.html")  # doctest: +SKIP
    PosixPath('bias.html')
    >>> pbtools.report(measures=["P@10"]).startswith("<!DOCTYPE html>")  # doctest: +SKIP
    True
    """
    from pbtools.errors import InputError
    from pbtools.experiments.analysis import Analysis, analyze
    from pbtools.experiments.htmlreport import html_report

    if isinstance(analysis, Analysis):
        if options:
            raise InputError(
                f"report(): {', '.join(sorted(options))} apply to the analysis, and an analysis "
                "was given: pass them to pbtools.analyze, or give report() a collection"
            )
    else:
        analysis = analyze(analysis, **options)
    page = html_report(analysis, title=title)
    if path is None:
        return page
    from pbtools.io.atomic import write_text

    return Path(write_text(path, page))


def simulate_pool(
    runs: pd.DataFrame,
    qrels: pd.DataFrame,
    strategy,
    budget: int | None = None,
    *,
    total: int | None = None,
    seed: int = 0,
    pooled: Iterable[str] | None = None,
):
    """A pool built by ``strategy`` from ``runs``, with ``qrels`` as the assessor:
    :meth:`pbtools.pooling.Pool.simulate` (its parameters; ``docs/pooling.md``).

    Parameters
    ----------
    runs, qrels : DataFrame
        The runs and the judgments that answer the simulated assessor.
    strategy : str or Strategy
        ``"depth:10"``, ``"take"``, ``"rbp:0.8"``, … (:func:`pbtools.pooling.strategies.parse`).
    budget, total : int, optional
        Judgments per topic, or in all.
    seed : int
        Seed of the random choices.
    pooled : iterable of str, optional
        The runs the pool is built from (default: every run).

    Returns
    -------
    Pool
        ``qrels`` the judged documents, ``order``, ``budget``; the reductions of
        :class:`pbtools.pooling.Pool` apply to it.

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools.pooling.strategies import from_rankings
    >>> runs = from_rankings({("A", "1"): ["d1", "d2"], ("B", "1"): ["d3", "d1"]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["d1", "d2"], "label": [1, 0]})
    >>> simulate_pool(runs, qrels, "take", budget=2).qrels["docno"].tolist()
    ['d1', 'd3']
    """
    from pbtools.pooling.pool import Pool

    return Pool.simulate(runs, qrels, strategy, budget, total=total, seed=seed, pooled=pooled)
