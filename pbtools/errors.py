"""The one exception type of refused input: :class:`InputError`.

pbtools tells a refusal of what the user gave (a malformed file, a path that is the wrong kind of
thing, an unknown measure, an argument out of range) from a bug of its own by the type of the
exception: every refusal is an :class:`InputError` (a ``ValueError``, so ``except ValueError``
in a caller still catches it), and the command line leaves with status 2 and its one-line
message; any other exception is a bug (status 1). :class:`TrecFormatError`
(a file's content, with file and line) is the kind most refusals are.
"""

from __future__ import annotations

__all__ = ["InputError", "TrecFormatError", "TrecFormatWarning", "warn_deprecated"]


class InputError(ValueError):
    """Refused input or arguments: the message names what was refused (the file and line, the
    flag or parameter), the problem, and the fix when there is one.

    Examples
    --------
    >>> try:
    ...     raise InputError("-m Pfoo@5: unknown measure")
    ... except ValueError as err:
    ...     print(type(err).__name__, err)
    InputError -m Pfoo@5: unknown measure
    """


class TrecFormatError(InputError):
    """Malformed TREC input: names the file, the 1-based line (when known) and the problem.

    ``str(err)`` reads ``"<file>:<line>: <problem>"`` like a compiler message, so a user can jump
    to the line. The parts are available as ``err.file``, ``err.line`` and ``err.problem``.
    """

    def __init__(self, problem: str, file: str | None = None, line: int | None = None):
        self.problem = problem
        self.file = None if file is None else str(file)
        self.line = line
        where = self.file or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {problem}")


class TrecFormatWarning(UserWarning):
    """A repair made to dirty TREC input under ``lenient=True`` (file, line and what was done)."""


def warn_deprecated(old: str, new: str) -> None:
    """Warn (``DeprecationWarning``) that the spelling ``old`` is now ``new``, attributed to the
    caller's line outside pbtools (so Python's default filters show it in a user's script).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     warn_deprecated("all_topics=True", 'topics="all"')
    >>> print(seen[0].category.__name__, seen[0].message)
    DeprecationWarning all_topics=True is deprecated: use topics="all"
    """
    import sys
    import warnings

    level, frame = 2, sys._getframe(1)  # level 2: the caller of this function
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "pbtools":
        frame, level = frame.f_back, level + 1
    warnings.warn(f"{old} is deprecated: use {new}", DeprecationWarning, stacklevel=level)
