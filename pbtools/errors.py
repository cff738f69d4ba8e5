"""The one exception type of refused input: :class:`InputError`.

pbtools tells a refusal of what the user gave (a malformed file, a path that is the wrong kind of
thing, an unknown measure, an argument out of range) from a bug of its own by the type of the
exception: every refusal is an :class:`InputError` (a ``ValueError``, so ``except ValueError``
in a caller still catches it), and the command line leaves with status 2 and its one-line
message; any other exception is a bug (status 1). :class:`~pbtools.frames.TrecFormatError`
(a file's content, with file and line) is the kind most refusals are.
"""

from __future__ import annotations

__all__ = ["InputError"]


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
