"""The four papers pbtools reproduces, as part of the package (issue 27).

``pbtools reproduce PAPER TRACK_OR_ROOT... [-o DIR] [paper options]`` and
:func:`pbtools.reproduce` (:mod:`~pbtools.papers.reproduce`) run a paper of the registry
(:data:`pbtools.papers.reproduce.PAPERS`: ``lipani2015``, ``webber2009``, ``sakai2008``,
``buckley2006``) on one collection or several. Shared machinery:
:mod:`~pbtools.papers.claims` (declared claims and their verdicts, the one reading of
"generally"), :mod:`~pbtools.papers.reading` (run identity and the repairs, shown),
:mod:`~pbtools.papers.common` (tracks, the result set with its provenance, figures) and
:mod:`~pbtools.papers.summary` (the README's claims block).

The contract every paper module follows
---------------------------------------
``TITLE``
    the paper, as ``claims.md`` is headed.
``CLAIMS``
    the paper's claims, a :func:`~pbtools.papers.claims.declared` catalogue of
    :class:`~pbtools.papers.claims.Claim` objects written from the paper alone (quote, section,
    quantity, criterion; ``min_collections`` for claims about several collections,
    ``extension=True`` for what the paper does not claim).
``DEFAULTS``
    the paper's parameters (``dict``); each is a keyword of ``run`` and ``reproduce`` and a flag
    of ``pbtools reproduce PAPER`` (``cutoffs`` → ``--cutoffs 5 10``; ``synthetic`` →
    ``--synthetic``; ``lenient`` → ``--strict``). ``run_id`` (``auto``/``file``/``tag``) is
    accepted by every paper. ``OPTIONS`` (optional): ``{parameter: help text}``.
``run(root, out=None, *, jobs=None, dask=None, progress=None, **DEFAULTS)``
    every track under ``root`` (a path or a list of paths); returns the frames by name, always
    with ``claims`` (per track, plus the multi-collection claims checked across the tracks) and
    ``reading`` (one row per track: run identity, repairs by kind); with ``out``, writes them as
    one result set (:func:`pbtools.papers.common.write_outputs`: Parquet with the provenance,
    ``claims.md`` headed by how the data were read, documents, figures; all or nothing).
``report(result) -> str``
    the paper's tables and the claims for the terminal.
``figures(result, directory)``
    draws the figures (PNG, SVG, PDF) into ``directory``.
``main(argv)``
    ``python -m pbtools.papers.<paper>``.
"""
