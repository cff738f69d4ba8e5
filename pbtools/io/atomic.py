"""Atomic files: every file pbtools writes appears whole or not at all.

:func:`atomic_path` (and :func:`atomic_write`, :func:`write_bytes`, :func:`write_text` on top
of it) is the one way pbtools writes a file. The bytes go to a temporary file in the target's
own directory (``.NAME.XXXXXXXX.pbtools-tmp``), which is flushed and ``fsync``'ed, then renamed
over the target (one ``rename(2)``: a reader sees the old file or the new one, never a part),
and the directory is ``fsync``'ed so the rename survives a crash. On any failure — an error of
the writer, a full disk, ``KeyboardInterrupt`` — the temporary file is removed and the target
is left as it was. A ``SIGKILL`` (or a power cut) can leave the temporary file behind; never a
cut target.

The target is checked before any work (:func:`check_target`): it must be a regular file or not
exist yet. A device (``/dev/full``), a FIFO, a socket, a directory or a file under ``/proc``
is refused, so pbtools never truncates, replaces or deletes a path it did not create. A
symbolic link to a regular file is followed: the file it points to is replaced, the link kept.

``PBTOOLS_FAULT_DELAY`` (:func:`fault_point`) is a hook for the fault-injection tests
(``tests/cli/test_faults.py``): ``file=SECONDS`` pauses just before each rename, ``swap=SECONDS``
just before a result set is swapped in (:mod:`pbtools.io.results`), after a line on standard
error saying where, so a test can interrupt a real command at that point.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from pbtools.errors import InputError
from pbtools.io.files import path_problem

PathLike = str | os.PathLike

#: the suffix of pbtools' temporary files (left behind only by a ``SIGKILL`` or a crash)
TMP_SUFFIX = ".pbtools-tmp"
#: the environment variable of :func:`fault_point`
FAULT_ENV = "PBTOOLS_FAULT_DELAY"


class UnsafeOutputError(InputError):
    """An output path pbtools refuses to write (exit status 2): not a regular file."""


def check_target(path: PathLike) -> Path:
    """The file to write for the output ``path``, checked before any work.

    Returns the real path (symbolic links followed). Raises :class:`UnsafeOutputError` when
    ``path`` exists and is not a regular file (a device, a FIFO, a socket, a directory), is on
    a pseudo file system (``/proc``, ``/sys``), or is a dangling symbolic link.

    Examples
    --------
    >>> try:
    ...     check_target("/dev/full")
    ... except UnsafeOutputError as e:
    ...     print(str(e).split(";")[0])
    /dev/full: is a character device, not a regular file
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> check_target(f"{d}/new.tsv").name
    'new.tsv'
    """
    p = Path(path)
    real = Path(os.path.realpath(p))
    for q in (Path(os.path.abspath(p)), real):
        if q.parts[1:2] in (("proc",), ("sys",)):
            raise UnsafeOutputError(
                f"{path}: is under /{q.parts[1]}, a pseudo file system; pbtools writes only "
                "regular files"
            )
    problem = path_problem(p)
    if problem == "no such file or directory":
        return real
    if problem is None and os.path.isdir(real):
        problem = "a directory, not a regular file"
    if problem is not None:
        raise UnsafeOutputError(
            f"{path}: is {problem}; pbtools writes only regular files (it replaces them whole)"
        )
    return real


def fault_point(point: str, what: PathLike) -> None:
    """Pause here when ``PBTOOLS_FAULT_DELAY`` asks: a testing hook.

    ``PBTOOLS_FAULT_DELAY`` is ``POINT=WAIT[,POINT=WAIT]``, ``WAIT`` a number of seconds or
    ``@PATH`` (wait until ``PATH`` exists). Reaching ``point`` is announced on standard error
    as ``pbtools: fault point POINT WHAT`` before the wait.
    """
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    for item in spec.split(","):
        name, _, wait = item.partition("=")
        if name.strip() != point:
            continue
        print(f"pbtools: fault point {point} {what}", file=sys.stderr, flush=True)
        if wait.startswith("@"):
            while not os.path.exists(wait[1:]):
                time.sleep(0.02)
        else:
            time.sleep(float(wait or 0))


def fsync_dir(path: PathLike) -> None:
    """``fsync`` a directory, so that the renames and creations in it are durable."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _new_mode(target: Path) -> int:
    """The mode of the replaced file, or ``0o666`` less the umask for a new one."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_path(path: PathLike) -> Iterator[Path]:
    """Write ``path`` atomically through a temporary file named by this context manager.

    The block writes the temporary path (a Parquet writer, a stream that wants a file name);
    when it ends without an error the file is ``fsync``'ed and renamed over ``path`` (mode kept
    from the file it replaces). On any exception (``KeyboardInterrupt`` included) the temporary
    file is removed and ``path`` is untouched. ``path`` is checked first (:func:`check_target`).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> d = Path(tempfile.mkdtemp())
    >>> with atomic_path(d / "a.txt") as tmp:
    ...     _ = tmp.write_text("whole")
    >>> (d / "a.txt").read_text(), sorted(p.name for p in d.iterdir())
    ('whole', ['a.txt'])
    """
    target = check_target(path)
    held, tmp = HeldSignals(), None  # an interrupt cannot fall between creation and `tmp`
    try:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TMP_SUFFIX)
        os.close(fd)
        tmp = Path(name)
        held.release()
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, _new_mode(target))
        fault_point("file", target)
        os.replace(tmp, target)
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        held.release()
        raise
    fsync_dir(target.parent)


class HeldSignals:
    """``SIGINT`` and ``SIGTERM`` recorded instead of acted on, from creation until
    :meth:`release`, so that an interrupt cannot fall between the creation of a temporary file
    or directory and the statement that records its name for the clean-up: the temporary is
    created and its name stored in between, and the signal, if one came, is acted on at
    :meth:`release` (its handler called there: ``SIGINT``'s raises ``KeyboardInterrupt``).
    Outside the main thread (where handlers cannot be set) nothing is held.

    Examples
    --------
    >>> held = HeldSignals()
    >>> name = "created and recorded here"
    >>> held.release()
    """

    def __init__(self):
        self.pending: list = []
        self.saved: dict = {}
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(sig)
            if handler is not None and handler is not signal.SIG_IGN:
                self.saved[sig] = signal.signal(sig, self._record)

    def _record(self, signum, frame) -> None:
        self.pending.append((signum, frame))

    def release(self) -> None:
        """Put the handlers back and act on a signal received meanwhile (once)."""
        saved, self.saved = self.saved, {}
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        pending, self.pending = self.pending, []
        for signum, frame in pending:
            handler = saved[signum]
            if callable(handler):
                handler(signum, frame)
            else:  # SIG_DFL: the default action (the process ends as it would have)
                signal.raise_signal(signum)


@contextlib.contextmanager
def atomic_set(paths) -> Iterator[list[Path]]:
    """Write several files as one set: every one of them replaced, or none.

    Each target is checked first (:func:`check_target`). The block writes each file under its
    own name in a private directory beside its target (``.NAME.XXXXXXXX.pbtools-tmp/NAME``, so
    a writer that reads the suffix, ``.gz``, sees the target's); when it ends without an error
    every file is ``fsync``'ed, then all are renamed over their targets one after the other.
    On any exception before the renames every staged file is removed and every target is left as
    it was. (A crash between two renames, a window of a few system calls, can leave some files
    new; a ``SIGKILL`` before it leaves only the private directories.)

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> d = Path(tempfile.mkdtemp())
    >>> with atomic_set([d / "a.txt", d / "b.txt"]) as (a, b):
    ...     _ = a.write_text("one"), b.write_text("two")
    >>> sorted(p.name for p in d.iterdir()), (d / "b.txt").read_text()
    (['a.txt', 'b.txt'], 'two')
    """
    targets = [check_target(p) for p in paths]
    if len(set(targets)) < len(targets):
        raise UnsafeOutputError(f"{', '.join(map(str, paths))}: the same file given twice")
    dirs: list[Path] = []
    held = HeldSignals()  # an interrupt cannot fall between a directory's creation and `dirs`
    try:
        for t in targets:
            dirs.append(
                Path(tempfile.mkdtemp(dir=t.parent, prefix=f".{t.name}.", suffix=TMP_SUFFIX))
            )
        held.release()
        staged = [d / t.name for d, t in zip(dirs, targets, strict=True)]
        yield staged
        for s, t in zip(staged, targets, strict=True):
            if not s.is_file():
                raise RuntimeError(f"{t}: the writer of the set did not write it")
            fd = os.open(s, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.chmod(s, _new_mode(t))
        fault_point("set", targets[0])
        for s, t in zip(staged, targets, strict=True):
            os.replace(s, t)
        for t in {t.parent for t in targets}:
            fsync_dir(t)
    finally:
        for d in dirs:  # created above: pbtools' own (empty after the renames)
            for f in d.iterdir() if d.exists() else ():
                with contextlib.suppress(FileNotFoundError):
                    f.unlink()
            with contextlib.suppress(OSError):
                d.rmdir()
        held.release()  # after the clean-up when a creation failed


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "w", encoding: str | None = "utf-8"):
    """An open file (``mode`` ``"w"`` or ``"wb"``) whose content replaces ``path`` atomically
    when the block ends without an error (:func:`atomic_path`); flushed before the rename."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write writes new files: mode 'w' or 'wb', not {mode!r}")
    with atomic_path(path) as tmp:
        kwargs = {"encoding": encoding} if mode == "w" else {}
        with open(tmp, mode, **kwargs) as fh:
            yield fh
            fh.flush()


def write_bytes(path: PathLike, data: bytes) -> Path:
    """Replace ``path`` with ``data`` atomically; return the path written."""
    with atomic_write(path, "wb") as fh:
        fh.write(data)
    return Path(path)


def write_text(path: PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Replace ``path`` with ``text`` atomically; return the path written.

    Examples
    --------
    >>> import tempfile
    >>> p = write_text(f"{tempfile.mkdtemp()}/out.tsv", "a\\tb\\n")
    >>> p.read_text()
    'a\\tb\\n'
    """
    with atomic_write(path, "w", encoding=encoding) as fh:
        fh.write(text)
    return Path(path)


def sha256_file(path: PathLike, chunk: int = 1 << 20) -> str:
    """The SHA-256 hex digest of a file's bytes, read in chunks of ``chunk`` bytes.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(delete=False) as f:
    ...     _ = f.write(b"abc")
    >>> sha256_file(f.name)[:16]
    'ba7816bf8f01cfea'
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()
