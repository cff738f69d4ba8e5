"""Keep pyarrow from importing pandas where pbtools works without it.

pyarrow imports pandas, when it is installed, as soon as it converts a Python sequence
(``pa.array(list)``), turns a chunked array into numpy (``ChunkedArray.to_numpy()``) or asks
whether an object is a pandas one (``pyarrow.lib._pandas_api``): any pyarrow work would pay
pandas' import (~0.45 s) where no frame is ever made. The pandas-free readers
(:mod:`pbtools.io.reading`) run inside :func:`without_pandas`: while it lasts, ``import pandas``
fails (pyarrow takes that as "no pandas", the answer it gives where pandas is not installed, and
its results are the same); after it, pandas imports as ever, and pyarrow is told when it does.
Nothing changes in a process that has already imported pandas.

Nothing here imports pandas.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
from contextlib import contextmanager

__all__ = ["without_pandas"]

_lock = threading.Lock()
_depth = 0
_watching = False


class _Blocked(importlib.abc.MetaPathFinder):
    """Refuses ``import pandas`` (inside :func:`without_pandas`)."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas":
            raise ImportError("pandas kept out (pbtools.nopandas.without_pandas)")
        return None


class _Watch(importlib.abc.MetaPathFinder):
    """On the first ``import pandas``: lets the import run, then tells pyarrow."""

    def find_spec(self, name, path=None, target=None):
        if name != "pandas":
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            sys.modules.setdefault(name, module)
            _tell_pyarrow()

        loader.exec_module = exec_module  # this spec's own loader (made for this find)
        return spec


def _tell_pyarrow() -> None:
    """pyarrow's pandas check again, now that pandas is there (its strict form re-imports)."""
    import pyarrow as pa

    try:
        pa.lib._pandas_api.pd  # noqa: B018 (the property imports and records pandas)
    except ImportError:
        pass


@contextmanager
def without_pandas():
    """Within the block, pyarrow (and anything else) imports no pandas in this process, unless
    pandas was imported before the block (then nothing changes). Nested blocks and threads
    share one refusal, removed when the last block ends.

    Examples
    --------
    >>> import pyarrow as pa
    >>> with without_pandas():
    ...     n = len(pa.array([1, 2]))
    >>> n
    2
    """
    global _depth, _watching
    with _lock:
        if sys.modules.get("pandas") is not None or _depth:
            active = bool(_depth)
            if active:
                _depth += 1
        else:
            active = True
            _depth = 1
            sys.meta_path.insert(0, _BLOCKED)
            if not _watching:  # pyarrow may record "no pandas": told when pandas comes
                _watching = True
                sys.meta_path.insert(1, _Watch())
    try:
        yield
    finally:
        if active:
            with _lock:
                _depth -= 1
                if _depth == 0:
                    sys.meta_path.remove(_BLOCKED)


_BLOCKED = _Blocked()
