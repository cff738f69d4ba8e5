"""The one loader of pbtools' optional compiled code.

``pbtools._tokens`` (``pbtools/_tokens.c``, the tokenizer of clean run files used by
:mod:`pbtools.io.direct`) is built when pbtools is installed with a C compiler at hand; without
one the install still succeeds and pbtools reads run files with pyarrow alone, with the same
results. Setting the environment variable ``PBTOOLS_PURE`` to anything but ``""`` or ``0``
makes pbtools ignore the compiled code (the pure path: for comparing the two, or to rule the
extension out).

Examples
--------
>>> tokens() is None or callable(tokens().run_columns)
True
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType

#: the environment variable that forces the pure (pyarrow) path
PURE_ENV = "PBTOOLS_PURE"


def pure() -> bool:
    """True when ``PBTOOLS_PURE`` asks for the pure path (set, and neither ``""`` nor ``0``).

    Examples
    --------
    >>> isinstance(pure(), bool)
    True
    """
    return os.environ.get(PURE_ENV, "") not in ("", "0")


def tokens() -> ModuleType | None:
    """The compiled tokenizer ``pbtools._tokens``, or None when it is not built or
    ``PBTOOLS_PURE`` is set (read on every call: a test may set it).

    Examples
    --------
    >>> tokens() is None or tokens().run_columns(b"") is None
    True
    """
    return None if pure() else _load()


@functools.cache
def _load() -> ModuleType | None:
    try:
        return importlib.import_module("pbtools._tokens")
    except ImportError:
        return None
