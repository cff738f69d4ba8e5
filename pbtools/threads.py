"""How many threads pbtools' own thread pools use: one place for "the usable cores".

pbtools runs some NumPy and Arrow work, which releases the GIL, on small thread pools: the
parse of many files (:mod:`pbtools.io.parse`), the union and recoding of their id
dictionaries (:mod:`pbtools.ids`), the merges of Lipani's estimator
(:mod:`pbtools.engine.parallel`). Each asks :func:`threads_for`. The usable cores are the
process's CPU affinity (``os.sched_getaffinity``; ``os.cpu_count`` elsewhere), capped by

* :func:`limit_threads` / :func:`limited_threads`, for the calling thread — the worker
  processes and Dask tasks of :func:`pbtools.grid.run_grid` set 1, so that N workers on N
  cores do not run N × cores threads;
* the environment variable ``PBTOOLS_THREADS`` (an integer ≥ 1), for a user who shares the
  machine.

Results never depend on the thread count, only the time does.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from pbtools.errors import InputError

__all__ = [
    "ENV",
    "usable_cores",
    "limit_threads",
    "limited_threads",
    "max_threads",
    "threads_for",
    "cores_for",
    "env_cap",
]

#: the environment variable that caps pbtools' threads in a process
ENV = "PBTOOLS_THREADS"

_local = threading.local()  # .limit: the calling thread's cap (None or absent: no cap)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system reports one).

    Examples
    --------
    >>> usable_cores() >= 1
    True
    """
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    return max(n, 1)


def limit_threads(n: int | None) -> None:
    """Cap at ``n`` the threads of the pools that the calling thread starts (None: no cap).

    Examples
    --------
    >>> limit_threads(1); max_threads()
    1
    >>> limit_threads(None)
    """
    if n is not None and (isinstance(n, bool) or int(n) != n or n < 1):
        raise ValueError(f"the thread limit must be an integer >= 1 or None, got {n!r}")
    _local.limit = None if n is None else int(n)


@contextmanager
def limited_threads(n: int | None) -> Iterator[None]:
    """:func:`limit_threads` for the duration of a ``with`` block (the previous cap after it).

    Examples
    --------
    >>> with limited_threads(1):
    ...     max_threads()
    1
    """
    before = getattr(_local, "limit", None)
    limit_threads(n)
    try:
        yield
    finally:
        _local.limit = before


def max_threads() -> int:
    """:func:`usable_cores`, capped by :func:`limit_threads` and ``PBTOOLS_THREADS``.

    Raises
    ------
    ValueError
        ``PBTOOLS_THREADS`` is set to anything but an integer ≥ 1.
    """
    n = usable_cores()
    limit = getattr(_local, "limit", None)
    if limit is not None:
        n = min(n, limit)
    cap = env_cap()
    return n if cap is None else min(n, cap)


def env_cap() -> int | None:
    """``PBTOOLS_THREADS`` as an integer (None when unset or blank).

    Raises
    ------
    ValueError
        It is set to anything but an integer ≥ 1.
    """
    env = os.environ.get(ENV, "").strip()
    if not env:
        return None
    try:
        cap = int(env)
    except ValueError:
        cap = 0
    if cap < 1:
        raise InputError(f"{ENV} must be an integer >= 1, got {env!r}")
    return cap


def threads_for(n_items: int, cap: int | None = None) -> int:
    """The threads a pool of ``n_items`` independent items should use: :func:`max_threads`,
    at most ``cap`` and at most ``n_items``, at least 1.

    Examples
    --------
    >>> threads_for(1), threads_for(0), threads_for(100, cap=1)
    (1, 1, 1)
    """
    n = max_threads()
    if cap is not None:
        n = min(n, cap)
    return max(1, min(n, n_items))


def cores_for(jobs: int | None, available: int | None = None) -> tuple[int, str | None]:
    """The cores a ``--jobs`` request gets here, and why fewer than asked, if fewer.

    ``jobs`` None or 0 asks for every core ``available`` (default :func:`max_threads`: the
    usable cores, capped by the caller's :func:`limit_threads` and ``PBTOOLS_THREADS``); an
    integer ≥ 1 asks for that many, granted up to ``available``. Returns ``(n, note)``:
    ``note`` is None when ``n`` is what was asked (or every core), else a short sentence.
    :func:`pbtools.grid.plan_jobs` asks the same for worker processes (``available``: the
    usable cores).

    Raises
    ------
    ValueError
        ``jobs`` is negative or not an integer.

    Examples
    --------
    >>> cores_for(1)
    (1, None)
    >>> cores_for(None)[0] == cores_for(0)[0] == max_threads()
    True
    >>> cores_for(8, available=2)
    (2, 'only 2 usable cores')
    """
    if isinstance(jobs, bool) or (jobs is not None and (int(jobs) != jobs or jobs < 0)):
        raise InputError(f"jobs must be an integer >= 1 (0 or None: every core), got {jobs!r}")
    n = max_threads() if available is None else int(available)
    if not jobs:
        return n, None
    if jobs <= n:
        return int(jobs), None
    why = f" ({ENV}={n})" if available is None and env_cap() == n else ""
    return n, f"only {n} usable core{'s' if n != 1 else ''}{why}"
