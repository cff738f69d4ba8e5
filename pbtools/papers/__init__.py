"""The four papers pbtools reproduces, as part of the package (issue 27).

One module per paper (:mod:`~pbtools.papers.lipani2015`, :mod:`~pbtools.papers.webber2009`,
:mod:`~pbtools.papers.sakai2008`, :mod:`~pbtools.papers.buckley2006`), built on the library's
public functions, and the machinery they share: :mod:`~pbtools.papers.claims` (claims and their
verdicts) and :mod:`~pbtools.papers.common` (finding and loading tracks, writing outputs).
Each module runs as ``python -m pbtools.papers.<paper> ROOT [-o DIR]``.
"""
