"""Memory handed back to the system between the big steps of a command (Arrow's pool and the C
library's heap)."""

from __future__ import annotations

import ctypes

import pyarrow as pa


def release_memory() -> None:
    """Hand the freed pages of the last big step back to the system: Arrow's pool
    (``release_unused``) and the C library's heap (``malloc_trim``, glibc only), where NumPy's
    arrays live.

    Reading many files, or judging a run frame, frees far more than it keeps; the allocators
    keep those pages for reuse, so the resident set of a command would otherwise stay near the
    peak of every step (TREC-2 ``evaluate``: ~40 MB after the parse, ~40 MB after judging).
    One call costs about a millisecond; not for a loop.
    """
    pa.default_memory_pool().release_unused()
    if _TRIM is not None:
        _TRIM(0)


def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_TRIM = _malloc_trim()
