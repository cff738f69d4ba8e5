"""A small, ordered, memory-bounded thread map for the pairwise chunk loops.

The merges of :class:`~pbtools.engine.shared_merges.SharedMerges` (independent chunks of run
pairs) and the blocks of a leave-out experiment
(:func:`~pbtools.experiments.leaveout.experiment_tables`) do their work in numpy calls that
release the GIL (take, sort, cumsum, ufuncs), so a few threads overlap them.
:func:`ordered_map` hands the results back in chunk order — the results are the same whatever
the thread count — and keeps at most ``threads + 1`` chunks (or ``threads``) in flight, so
memory stays bounded.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

from pbtools.threads import max_threads

__all__ = ["MAX_THREADS", "default_threads", "resolve_threads", "ordered_map"]

#: the default thread count is the usable cores, at most this many
MAX_THREADS = 4


def default_threads() -> int:
    """The threads pbtools may use here (:func:`pbtools.threads.max_threads`: the process's
    usable cores, capped by the calling thread's limit and ``PBTOOLS_THREADS``), at most
    :data:`MAX_THREADS`.

    Examples
    --------
    >>> 1 <= default_threads() <= MAX_THREADS
    True
    """
    return max(1, min(max_threads(), MAX_THREADS))


def resolve_threads(threads: int | None) -> int:
    """``threads`` validated (an integer ≥ 1), or :func:`default_threads` when None.

    Examples
    --------
    >>> resolve_threads(1), resolve_threads(None) == default_threads()
    (1, True)
    """
    if threads is None:
        return default_threads()
    if isinstance(threads, bool) or int(threads) != threads or threads < 1:
        raise ValueError(f"threads must be an integer >= 1, got {threads!r}")
    return int(threads)


def ordered_map(fn: Callable, items: Iterable, threads: int = 1, ahead: int = 1) -> Iterator:
    """``fn(item)`` for every item, yielded in the order of ``items``.

    Parameters
    ----------
    fn : callable
        The work on one item (a chunk).
    items : iterable
        The items, consumed lazily.
    threads : int, optional
        Worker threads; 1 (default) runs serially in the caller's thread. At most
        ``threads + ahead`` items are submitted and not yet handed back at any time.
    ahead : int, optional
        How many items beyond one per thread may be in flight (default 1: a thread never
        waits for the caller; 0: the least memory, for large items).

    Yields
    ------
    object
        ``fn(item)``, in item order (an exception raised by ``fn`` is raised here).

    Examples
    --------
    >>> list(ordered_map(lambda x: x * x, range(5), threads=2))
    [0, 1, 4, 9, 16]
    """
    if threads <= 1:
        for item in items:
            yield fn(item)
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        pending: deque = deque()
        for item in items:
            if len(pending) >= threads + max(int(ahead), 0):
                yield pending.popleft().result()
            pending.append(pool.submit(fn, item))
        while pending:
            yield pending.popleft().result()
