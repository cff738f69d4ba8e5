"""Several collections analysed as one grid: :func:`analyze_tracks` (serial, processes, Dask)."""

from __future__ import annotations

from collections.abc import Sequence

from pbtools.experiments.analysis import analyze

__all__ = ["analyze_tracks"]


def analyze_tracks(sources: Sequence, *, jobs: int = 1, dask=None, progress=None, **options):
    """:func:`analyze` of several collections as one grid: one task per collection, run
    serially, on ``jobs`` processes or on a Dask cluster (``dask``: an address such as
    ``"tcp://scheduler:8786"``, a ``distributed.Client`` or ``"local"``), with identical
    results (:func:`pbtools.grid.run_grid`).

    Parameters
    ----------
    sources : sequence
        Track directories (or any ``source`` of :func:`analyze`); on a remote cluster the paths
        must be readable by the workers.
    jobs, dask, progress
        As :func:`pbtools.grid.run_grid`; each collection is analysed serially inside its task.
    **options
        Keyword arguments of :func:`analyze` (``measures``, ``leave_out``, ``protocol``, …).

    Returns
    -------
    list of Analysis
        One per source, in order (``frames`` is None: the frames stay on the workers).

    Examples
    --------
    >>> import tempfile
    >>> from pbtools import synth
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     tracks = [
    ...         synth.generate(topics=5, docs=50, runs=6, orgs=3, run_length=30, depth=10,
    ...                        seed=s).write(f"{tmp}/TREC-X/t{s}")
    ...         for s in (2, 3)
    ...     ]
    ...     out = analyze_tracks(tracks, measures=["P@5"], run_sets=["all"], progress=False)
    >>> [a.params["collection"] for a in out], [len(a.scores) for a in out]
    (['TREC-X/t2', 'TREC-X/t3'], [24, 24])
    """
    from pbtools.grid import run_grid

    return run_grid(
        _track_task,
        [{"source": s} for s in sources],
        jobs=jobs,
        dask=dask,
        progress=progress,
        desc="tracks",
        shared=options,
    )


def _track_task(source, **options):
    """One collection's analysis (a grid task of :func:`analyze_tracks`), without its frames."""
    result = analyze(source, progress=False, **options)
    result.frames = None
    return result
