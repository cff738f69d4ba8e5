"""Result sets: a directory of Parquet tables written all or nothing, with a manifest.

:func:`write_results` builds the set in a sibling temporary directory
(``.DIR.XXXXXXXX.pbtools-new``): every table through :func:`pbtools.io.write_parquet` (page
checksums), then ``manifest.json`` last — each file's name, row count, size and SHA-256, the
pbtools version and the run's parameters. The finished set then replaces ``DIR`` in one step:
``rename(2)`` when ``DIR`` does not exist or is empty, an atomic exchange
(``renameat2(RENAME_EXCHANGE)``, Linux) over an earlier result set, whose files — only those
its manifest lists — are then removed. A reader sees the old set or the new one, never a mix.
Where the exchange is unavailable the old set is first renamed aside (``.DIR.XXXXXXXX.pbtools-
old``): a crash between the two renames leaves no ``DIR`` and both complete sets beside it.

An existing ``DIR`` that is neither empty nor a pbtools result set (files its manifest does not
list, or no manifest and files other than the tables' names) is refused before any work
(:func:`check_result_dir`). A second run into a ``DIR`` that another run is writing is refused
at once: the writer holds an exclusive ``flock`` on ``DIR.lock`` (:func:`hold`) from before
its analysis to the swap.

:func:`read_results` checks a set against its manifest and refuses a missing, extra or changed
file (:class:`ResultSetError`, exit status 2 on the command line).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pandas as pd

from pbtools.errors import InputError
from pbtools.io.atomic import (
    HeldSignals,
    PathLike,
    UnsafeOutputError,
    fault_point,
    fsync_dir,
    sha256_file,
    write_text,
)

MANIFEST = "manifest.json"
#: the manifest's format version
FORMAT = 1
#: the locks this process holds (a writer inside :func:`hold` does not lock twice)
_HELD: dict[str, int] = {}


class ResultSetError(InputError):
    """A result directory refused: incomplete, changed, not pbtools', or being written."""


def _lock_path(target: Path) -> Path:
    return target.parent / f"{target.name}.lock"


def _real(path: PathLike) -> Path:
    return Path(os.path.realpath(path))


@contextlib.contextmanager
def hold(path: PathLike) -> Iterator[Path]:
    """Hold the writer's lock of the result directory ``path`` (``path.lock``, next to it).

    Refuses at once (:class:`ResultSetError` naming the holder's pid) when another process
    holds it; the lock file is removed when the block ends. Re-entrant within a process.
    """
    target = _real(path)
    key = str(target)
    if key in _HELD:
        yield target
        return
    lock = _lock_path(target)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            if e.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            raise ResultSetError(
                f"{path}: another pbtools run (pid {holder}) is writing this directory "
                f"(lock {lock}); wait for it to finish or choose another -o"
            ) from None
        try:  # the file locked is still the one at `lock` (not removed by a finishing holder)
            same = os.path.samestat(os.fstat(fd), os.stat(lock))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD[key] = fd
    try:
        yield target
    finally:
        del _HELD[key]
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
        os.close(fd)


def _manifest_of(target: Path) -> dict | None:
    try:
        with open(target / MANIFEST, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError) as e:
        raise ResultSetError(f"{target / MANIFEST}: not a readable manifest ({e})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise ResultSetError(f"{target / MANIFEST}: not a pbtools manifest (no 'files')")
    return manifest


def check_result_dir(path: PathLike, tables: tuple = ()) -> None:
    """Refuse, before any work, an output directory pbtools must not replace.

    ``path`` may not exist yet, be empty, or hold a pbtools result set: the files its manifest
    lists, or — without a manifest, as written before manifests — only files named
    ``<table>.parquet`` for ``tables``. Anything else (a file, a device, a directory of other
    files) raises :class:`UnsafeOutputError` / :class:`ResultSetError`.
    """
    target = Path(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        raise UnsafeOutputError(
            f"{path}: exists and is not a directory (a result directory is expected)"
        )
    names = {p.name for p in target.iterdir()}
    if not names:
        return
    manifest = _manifest_of(target)
    listed = manifest["files"] if manifest else {}
    # a set's files may lie in sub-directories (a track): its top-level names are theirs
    known = {n.split("/")[0] for n in listed} | {MANIFEST} if manifest else set()
    known = known or {f"{t}.parquet" for t in tables}
    other = sorted(names - known)
    if other:
        raise ResultSetError(
            f"{path}: is not a pbtools result set (it holds {', '.join(other[:3])}"
            f"{' …' if len(other) > 3 else ''}); pbtools replaces only an empty directory or "
            "its own results: choose a new or empty directory"
        )


def _renameat2_exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    res = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if res == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _remove_set(old: Path, names) -> None:
    """Remove an old result set: the files it lists and the directory (left if anything else
    appeared in it)."""
    subdirs = set()
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            (old / name).unlink()
        parts = name.split("/")[:-1]
        subdirs.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    for sub in sorted(subdirs, key=lambda d: -d.count("/")):  # the deepest first
        with contextlib.suppress(OSError):
            (old / sub).rmdir()
    with contextlib.suppress(OSError):
        old.rmdir()


def _swap(new: Path, target: Path, tables: tuple) -> None:
    """Put the complete set ``new`` at ``target`` in one step (module docstring)."""
    fault_point("swap", target)
    if not target.exists() or not any(target.iterdir()):
        os.rename(new, target)  # over an empty directory too: one atomic step
        fsync_dir(target.parent)
        return
    check_result_dir(target, tables)  # still pbtools' own set, still ours to replace
    old = _manifest_of(target)
    old_names = [*old["files"], MANIFEST] if old else [f"{t}.parquet" for t in tables]
    if _renameat2_exchange(new, target):
        fsync_dir(target.parent)
        _remove_set(new, old_names)  # `new` now holds the old set
        return
    aside = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old"))
    os.rename(target, aside / "set")
    os.rename(new, target)
    fsync_dir(target.parent)
    _remove_set(aside / "set", old_names)
    with contextlib.suppress(OSError):
        aside.rmdir()


@contextlib.contextmanager
def _staged(path: PathLike, tables: tuple = ()) -> Iterator[Path]:
    """Build a set for ``path`` in a sibling temporary directory, yielded, and swap it in.

    ``path`` is checked before any work (:func:`check_result_dir`, ``tables`` the names an
    older set without a manifest may hold) and its lock held throughout (:func:`hold`); the
    temporary directory gets the permissions of a new directory (the umask's). When the block
    ends normally — it has written the files and the manifest (:func:`_write_manifest`) — the
    set replaces ``path`` in one step; on any failure (an interrupt included: HeldSignals) the
    temporary directory is removed and ``path`` is left as it was."""
    target = Path(path)
    check_result_dir(target, tables)
    if not target.parent.is_dir():
        raise FileNotFoundError(f"{path}: the directory {target.parent} does not exist")
    with hold(target) as real:
        held, new = HeldSignals(), None  # an interrupt cannot fall between creation and `new`
        try:
            new = Path(tempfile.mkdtemp(dir=real.parent, prefix=f".{real.name}.", suffix=".new"))
            held.release()
            os.umask(umask := os.umask(0))
            os.chmod(new, 0o777 & ~umask)
            yield new
            _swap(new, real, tables)
        except BaseException:
            if new is not None and new.exists():
                shutil.rmtree(new, ignore_errors=True)  # created above: pbtools' own
            held.release()
            raise


def _write_manifest(new: Path, files: dict, params: dict | None) -> None:
    """``manifest.json`` of the set being built in ``new``: written last."""
    import pbtools

    manifest = {
        "format": FORMAT,
        "pbtools_version": pbtools.__version__,
        "files": files,
        "parameters": params or {},
    }
    write_text(new / MANIFEST, json.dumps(manifest, indent=2, default=str) + "\n")


def _entry(file: Path, **more) -> dict:
    return {**more, "bytes": file.stat().st_size, "sha256": sha256_file(file)}


class ResultBuilder:
    """A result set being built in its temporary directory :attr:`dir` (:func:`building`):
    tables written whole (:meth:`table`) or block by block (:meth:`blocks`, then
    :meth:`close_blocks`); :attr:`params` go to the manifest."""

    def __init__(self, new: Path):
        self.dir, self.params, self.files, self._open = new, None, {}, {}

    def table(self, name: str, df: pd.DataFrame, metadata: dict | None = None) -> Path:
        """Write ``df`` as ``<name>.parquet`` (:func:`pbtools.io.write_parquet`)."""
        from pbtools.io.parquet import write_parquet

        file = self.dir / f"{name}.parquet"
        write_parquet(df, file, metadata=metadata)
        self.files[file.name] = _entry(file, rows=len(df))
        return file

    def blocks(self, name: str):
        """A :class:`pbtools.io.parquet.ParquetBlocks` writing ``<name>.parquet`` a block at a
        time (``write(block)``); the table joins the set at :meth:`close_blocks`."""
        from pbtools.io.parquet import ParquetBlocks

        if name in self._open:
            raise ValueError(f"table {name!r} is already being written")
        writer = self._open[name] = ParquetBlocks(self.dir / f"{name}.parquet")
        return writer

    def close_blocks(self, name: str, metadata: dict | None = None) -> Path:
        """Finish the table of :meth:`blocks` (with ``metadata``) and add it to the set."""
        rows = self._open.pop(name).close(metadata=metadata)
        file = self.dir / f"{name}.parquet"
        self.files[file.name] = _entry(file, rows=rows)
        return file


@contextlib.contextmanager
def building(path: PathLike, tables: tuple = ()) -> Iterator[ResultBuilder]:
    """Build the result set ``path`` through the :class:`ResultBuilder` yielded, all or
    nothing, as :func:`write_results` does (``tables``: the names an older set without a
    manifest may hold); ``manifest.json`` is written when the block ends. A table written
    block by block is never held whole (``analyze -o``'s significance table, issue 30).

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> d = tempfile.mkdtemp()
    >>> with building(f"{d}/out") as out:
    ...     out.blocks("t").write(pd.DataFrame({"x": [1, 2]}))
    ...     _ = out.close_blocks("t")
    >>> read_results(f"{d}/out")["t"]["x"].tolist()
    [1, 2]
    """
    with _staged(path, tables) as new:
        builder = ResultBuilder(new)
        try:
            yield builder
            if builder._open:
                raise RuntimeError(f"{path}: tables not finished: {sorted(builder._open)}")
        except BaseException:
            for writer in builder._open.values():  # their temporary files removed
                writer.abort()
            raise
        _write_manifest(new, builder.files, builder.params)


def write_results(
    path: PathLike,
    tables: Mapping[str, pd.DataFrame],
    *,
    params: dict | None = None,
    metadata: dict | None = None,
    extra: Callable[[Path], None] | None = None,
) -> list[Path]:
    """Write ``tables`` (name → frame) as the result set ``path`` — all or nothing.

    Each table goes to ``<name>.parquet`` (:func:`pbtools.io.write_parquet`, with
    ``metadata``); ``extra(directory)``, when given, then writes further files (figures,
    Markdown) into the set being built; ``manifest.json`` is written last (each file's rows —
    None for a file that is not a table —, bytes and SHA-256, the pbtools version,
    ``params``); the set then replaces ``path`` in one step (module docstring). Holds the lock
    of ``path`` (:func:`hold`) while it writes. Returns the paths of the tables written.

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> d = tempfile.mkdtemp()
    >>> paths = write_results(f"{d}/out", {"t": pd.DataFrame({"x": [1, 2]})}, params={"a": 1})
    >>> res = read_results(f"{d}/out")
    >>> res["t"]["x"].tolist(), res.manifest["files"]["t.parquet"]["rows"]
    ([1, 2], 2)
    """
    names = tuple(tables)
    with building(path, names) as out:
        for name, df in tables.items():
            out.table(name, df, metadata=metadata)
        if extra is not None:
            extra(out.dir)
            for file in sorted(p for p in out.dir.iterdir() if p.is_file()):
                if file.name not in out.files and file.name != MANIFEST:
                    out.files[file.name] = _entry(file, rows=None)
        out.params = params
    return [Path(path) / f"{name}.parquet" for name in names]


def write_directory(path: PathLike, build, *, params: dict | None = None) -> Path:
    """Write a directory of files (sub-directories allowed) as one set, all or nothing.

    ``build(tmp)`` writes the files into ``tmp``, a sibling temporary directory of ``path``;
    ``manifest.json`` (each file's relative path, bytes and SHA-256, the pbtools version,
    ``params``) is written last and the set replaces ``path`` in one step, as
    :func:`write_results` does: ``path`` may not exist, be empty or hold an earlier set of
    pbtools; anything else is refused before any work. On any failure the temporary directory
    is removed and ``path`` is left as it was. Returns ``path``.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> def build(tmp):
    ...     (tmp / "a").mkdir()
    ...     _ = (tmp / "a" / "x").write_text("1")
    >>> out = write_directory(f"{d}/t", build)
    >>> sorted(read_manifest(out)["files"])
    ['a/x']
    """
    with _staged(path) as new:
        build(new)
        files = {
            f.relative_to(new).as_posix(): _entry(f) for f in sorted(new.rglob("*")) if f.is_file()
        }
        _write_manifest(new, files, params)
    return Path(path)


def read_manifest(path: PathLike) -> dict:
    """The manifest of the result set or directory ``path`` (:class:`ResultSetError` when it
    has none)."""
    manifest = _manifest_of(Path(path))
    if manifest is None:
        raise ResultSetError(f"{path}: has no {MANIFEST}: not a complete pbtools set")
    return manifest


class ResultSet(dict):
    """The tables of a result set (name → frame), with its checked :attr:`manifest`."""

    manifest: dict


def read_results(path: PathLike) -> ResultSet:
    """Read a result set written by :func:`write_results`, checked against its manifest.

    Refuses (:class:`ResultSetError`, naming the file) a directory without a manifest, a file
    the manifest lists that is missing, a file it does not list, a file whose size or SHA-256
    differs, and a table whose row count differs; each table is then read with
    :func:`pbtools.io.read_parquet` (page checksums and pbtools' metadata verified).
    """
    from pbtools.io.parquet import read_parquet

    target = Path(path)
    if not target.is_dir():
        raise ResultSetError(f"{path}: no such result directory")
    manifest = _manifest_of(target)
    if manifest is None:
        raise ResultSetError(
            f"{path}: has no {MANIFEST}: not a complete pbtools result set (an interrupted "
            "or older run); write it again"
        )
    listed = manifest["files"]
    present = {p.name for p in target.iterdir()} - {MANIFEST}
    missing, extra = sorted(set(listed) - present), sorted(present - set(listed))
    if missing:
        raise ResultSetError(f"{target / missing[0]}: listed in {MANIFEST} but missing")
    if extra:
        raise ResultSetError(f"{target / extra[0]}: not listed in {MANIFEST} (not of this run)")
    out = ResultSet()
    for name, entry in listed.items():
        file = target / name
        if file.stat().st_size != entry.get("bytes") or sha256_file(file) != entry.get("sha256"):
            raise ResultSetError(f"{file}: changed since it was written (size or SHA-256 differs)")
        if not name.endswith(".parquet"):  # a figure or a text of the set: checked, not read
            continue
        df = read_parquet(file)
        if len(df) != entry.get("rows"):
            raise ResultSetError(f"{file}: {len(df)} rows, the manifest says {entry.get('rows')}")
        out[name.removesuffix(".parquet")] = df
    out.manifest = manifest
    return out
