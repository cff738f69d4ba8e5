"""Big plain files mapped rather than read (:func:`mapped`), for readers that only read them.

Used by :mod:`pbtools.io.parse` for the compiled tokenizer (:func:`pbtools.io.direct.read_tokens`):
a plain run file of :data:`MAP_BYTES` or more is tokenized straight from the page cache, with no
copy of its bytes; anything else, or a file the tokenizer leaves, is read by
:func:`pbtools.io.files.read_bytes`, which gives every refusal.
"""

from __future__ import annotations

import mmap
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from pbtools.io.files import path_problem

#: plain files from this size are mapped (:func:`mapped`) where their bytes are only read
MAP_BYTES = 1 << 22


@contextmanager
def mapped(path, *, min_size: int | None = None) -> Iterator[mmap.mmap | None]:
    """A read-only mapping of a plain (not gzipped) regular file of at least ``min_size`` bytes
    (default :data:`MAP_BYTES`), closed on leaving the block; None for anything else
    (:func:`~pbtools.io.files.read_bytes` then reads the file and gives its refusals: not a
    regular file, unreadable, gzip, and an empty file, which cannot be mapped).

    A mapping costs nothing up front: its pages are the page cache's, where ``read_bytes``
    copies the file into fresh memory (about 0.1–0.2 s of system CPU for 130 MB on the
    benchmark machine). For readers that take the bytes through the buffer protocol and keep
    no reference to them (the compiled tokenizer).

    Examples
    --------
    >>> with mapped(__file__, min_size=1) as view:
    ...     len(view) == os.path.getsize(__file__)
    True
    """
    view = _map(path, MAP_BYTES if min_size is None else min_size)
    try:
        yield view
    finally:
        if view is not None:
            try:
                view.close()
            except BufferError:  # something still holds the buffer: it closes when freed
                pass


def _map(path, min_size: int) -> mmap.mmap | None:
    if path_problem(path) is not None:
        return None
    try:
        with open(path, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            size = os.fstat(f.fileno()).st_size
            if size < max(min_size, 1):
                return None
            view = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    if view[:2] == b"\x1f\x8b":
        view.close()
        return None
    return view
