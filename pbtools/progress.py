"""Progress bars (tqdm) for long computations, shown only where someone is watching.

``progress=None`` (the default everywhere) shows a bar when tqdm is installed (the optional
``progress`` extra) and standard error is a terminal; ``True`` forces it (if tqdm is
installed), ``False`` turns it off. Bars go to standard error and leave no line behind.

* :func:`progress_bar` — a bar over counted steps (:func:`pbtools.grid.run_grid`, the
  leave-one-out configurations);
* :class:`StageProgress` — a bar over the named stages of a long computation ("reading",
  "pool inference", …) with the elapsed time; :func:`staged` wraps a function in one and
  :func:`stage`, called inside it, announces each stage
  (:func:`pbtools.experiments.analysis.analyze` uses them).
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import sys
import threading

__all__ = ["progress_bar", "StageProgress", "staged", "stage", "write"]


def progress_bar(
    total: int, progress: bool | None = None, desc: str | None = None, bar_format=None
):
    """A tqdm progress bar, or None: ``progress`` False, tqdm not installed, or (``None``, auto)
    standard error not a terminal. Call ``.update(1)`` per step and ``.close()`` at the end.
    ``bar_format``: tqdm's, for a bar that is not the default one."""
    if progress is False or total == 0:
        return None
    if progress is None and not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, file=sys.stderr, leave=False, bar_format=bar_format)


def write(message: str) -> None:
    """Print ``message`` on standard error without breaking the open progress bars (through
    ``tqdm.write`` while any bar is open)."""
    tqdm = sys.modules.get("tqdm")
    if tqdm is not None and len(getattr(tqdm.tqdm, "_instances", ())):
        tqdm.tqdm.write(message, file=sys.stderr)
    else:
        print(message, file=sys.stderr)


class StageProgress:
    """A progress bar over the named stages of a long computation (tqdm; see
    :func:`progress_bar` for when it shows): ``stages("reading")`` announces that a stage begins,
    the bar shows its name, how many stages are done and the elapsed time (refreshed every
    second while a stage runs). Use it as a context manager, or call :meth:`close`.

    Examples
    --------
    >>> with StageProgress(["reading", "scoring"], progress=False) as stages:
    ...     stages("reading")
    ...     stages("scoring")
    >>> stages.current
    'scoring'
    """

    def __init__(self, names, progress: bool | None = None, desc: str | None = None):
        self.names = list(names)
        self.desc = desc
        self.current: str | None = None
        self.bar = progress_bar(
            len(self.names),
            progress,
            f"{desc}: " if desc else None,
            bar_format="{desc}stage {n_fmt}/{total_fmt} ({elapsed})",
        )
        self._stop = threading.Event()
        self._ticker = None
        if self.bar is not None:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            self.bar.refresh()

    def __call__(self, name: str) -> None:
        """Stage ``name`` (one of ``names``) begins: the stages before it are done."""
        if name not in self.names:
            raise ValueError(f"unknown stage {name!r}; the stages are {self.names}")
        self.current = name
        if self.bar is not None:
            self.bar.n = self.names.index(name) + 1
            self.bar.set_description(f"{self.desc}: {name}" if self.desc else name)

    def close(self) -> None:
        """Stop the bar (it leaves no line behind)."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self.bar is not None:
            self.bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_STAGES: contextvars.ContextVar = contextvars.ContextVar("pbtools_stages", default=None)


def stage(name: str) -> None:
    """Announce that stage ``name`` begins, to the :func:`staged` function that runs this code
    (nothing happens outside one)."""
    current = _STAGES.get()
    if current is not None:
        current(name)


def staged(*names: str, desc: str | None = None):
    """Decorator: while the function runs, a :class:`StageProgress` over ``names`` shows (its
    ``progress`` argument decides whether, as in :func:`progress_bar`); inside it,
    :func:`stage` announces each stage. The bar is closed however the function ends.

    Examples
    --------
    >>> @staged("first", "second", desc="demo")
    ... def work(progress=None):
    ...     stage("first")
    ...     stage("second")
    ...     return 2
    >>> work(progress=False)
    2
    """

    def wrap(fn):
        sig = inspect.signature(fn)
        default = sig.parameters["progress"].default

        @functools.wraps(fn)
        def run(*args, **kwargs):
            progress = sig.bind_partial(*args, **kwargs).arguments.get("progress", default)
            with StageProgress(names, progress, desc or fn.__name__) as stages:
                token = _STAGES.set(stages)
                try:
                    return fn(*args, **kwargs)
                finally:
                    _STAGES.reset(token)

        return run

    return wrap
