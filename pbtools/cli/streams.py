"""Standard output as an output: a failure to write it is an error, not a silent loss.

A command writes its table to standard output through :class:`StandardOutput`, which
:func:`pbtools.cli.main` puts in place of ``sys.stdout`` while the command runs (and flushes
before it reports success). A write or flush that fails — a full disk (``> out.tsv``), a
standard output closed by the caller (``>&-``), an I/O error — raises
:class:`StandardOutputError` (the command line: ``cannot write standard output: …``, exit
status 2); only a reader that stopped early (``pbtools … | head``: ``BrokenPipeError``) ends the
command quietly, which :attr:`StandardOutput.reader_gone` tells apart.
"""

from __future__ import annotations

import errno
import os

__all__ = ["StandardOutput", "StandardOutputError", "quiet_broken_pipe"]


class StandardOutputError(OSError):
    """Writing standard output failed (not a reader that stopped early); ``str(err)`` reads
    ``cannot write standard output: <reason>``."""

    def __str__(self) -> str:
        return f"cannot write standard output: {self.strerror or 'failed'}"


class StandardOutput:
    """A text stream that passes writes to ``stream`` (``None``: standard output was closed when
    the process started) and turns their failures into :class:`StandardOutputError`, except a
    ``BrokenPipeError``, re-raised as it is after setting :attr:`reader_gone`.

    Examples
    --------
    >>> import io
    >>> out = StandardOutput(io.StringIO())
    >>> out.write("ok\\n"), out.getvalue()
    (3, 'ok\\n')
    >>> StandardOutput(None).write("x")
    Traceback (most recent call last):
    ...
    pbtools.cli.streams.StandardOutputError: cannot write standard output: it is closed
    """

    def __init__(self, stream):
        self.stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        return self._do("write", text)

    def flush(self) -> None:
        if self.stream is not None:  # nothing written, nothing lost
            self._do("flush")

    def _do(self, method: str, *args):
        if self.stream is None:
            raise StandardOutputError(errno.EBADF, "it is closed")
        try:
            return getattr(self.stream, method)(*args)
        except BrokenPipeError:
            self.reader_gone = True
            raise
        except (OSError, ValueError) as err:  # ValueError: "I/O operation on closed file"
            code = getattr(err, "errno", None) or errno.EIO
            reason = getattr(err, "strerror", None) or str(err)
            raise StandardOutputError(code, reason) from err

    def __getattr__(self, name):  # isatty, fileno, encoding, buffer …
        if self.stream is None:
            raise AttributeError(name)
        return getattr(self.stream, name)


def quiet_broken_pipe(stream) -> None:
    """After a reader stopped early: point ``stream``'s file descriptor at ``/dev/null`` so the
    output still buffered is dropped without a second error when the interpreter exits."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a closed stream, a capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
