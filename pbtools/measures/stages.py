"""Named points between the stages of an evaluation, for a profiler to time (no-op otherwise).

``pbtools evaluate`` calls :func:`stage` after each of its stages (reading, the coverage check,
the join, the grouping, each measure's kernel, the averages, the tables, writing);
``benchmarks/evaluate_speed.py``'s breakdown installs a recorder with :func:`recording` and
times the command line's own path between them. Without a recorder a call is one global
lookup: nothing is measured or kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["recording", "stage"]

_RECORDER: list[Callable[[str], None]] = []


def stage(name: str) -> None:
    """Mark the end of the stage ``name`` (the recorder's, if one is installed).

    Examples
    --------
    >>> seen = []
    >>> with recording(seen.append):
    ...     stage("judge")
    >>> stage("not recorded"); seen
    ['judge']
    """
    if _RECORDER:
        _RECORDER[-1](name)


@contextmanager
def recording(mark: Callable[[str], None]) -> Iterator[None]:
    """Call ``mark(name)`` at every :func:`stage` inside the block."""
    _RECORDER.append(mark)
    try:
        yield
    finally:
        _RECORDER.pop()
