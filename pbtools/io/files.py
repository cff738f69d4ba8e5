"""From paths to lines: sources, special files, bytes and the byte-level checks of TREC input.

The first stage of reading (used by :mod:`pbtools.io.parse`; the API is :mod:`pbtools.io`):

* **sources** (:func:`expand`): a file, a directory, a glob or a list of those becomes a list of
  regular files. Anything that is not a regular file (a FIFO, a device, a socket, a dangling
  symbolic link, a symbolic link loop, a sub-directory) is named with what it is: refused when
  it was given explicitly, refused (strict) or skipped and reported (lenient) when a directory
  or a glob yielded it. The same file reached twice (given twice, through a symbolic link or a
  hard link) is refused (strict) or read once and reported (lenient).
* **bytes** (:func:`read_bytes`): the file is read in one go and gunzipped when it starts with
  the gzip magic number (:func:`gunzip`: python-isal's ISA-L when installed, the optional
  ``fast`` extra, about 3× less CPU than the standard library's zlib; zlib otherwise, and
  always for the message of a corrupt file), never beyond the limits of
  :mod:`pbtools.io.limits` (a gzip bomb is refused).
* **byte-level checks** (:func:`clean_bytes`), all vectorised (one C-level pass over the bytes):
  a UTF-8 byte-order mark, bare carriage returns (CR-only line ends) and control bytes are
  refused (strict) or repaired and reported (lenient); see :mod:`pbtools.io.readers` for the
  table of the whole input contract.
* **lines** (:func:`split_lines`): one string per physical line, with pyarrow's CSV reader;
  invalid UTF-8 is refused in both modes, at its line.
"""

from __future__ import annotations

import errno
import glob as _glob
import os
import re
import stat
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from pbtools.errors import TrecFormatError
from pbtools.io.limits import GUNZIP_HINT, XML_HINT, Corrupt, TooLong, gunzip_limit, inflate
from pbtools.io.mistakes import check_not_binary
from pbtools.io.repairs import RepairableError, Repairs

BOM = b"\xef\xbb\xbf"
#: bytes refused in TREC files: the C0 controls but TAB, LF and CR, and DEL
CONTROL = bytes(b for b in range(32) if b not in (9, 10, 13)) + b"\x7f"
_CONTROL_NAMES = {0: "NUL", 8: "BS", 11: "VT", 12: "FF", 26: "SUB", 27: "ESC", 127: "DEL"}
_IS_CONTROL = np.zeros(256, dtype=bool)
_IS_CONTROL[list(CONTROL)] = True
_TO_SPACE = bytes(32 if _IS_CONTROL[b] else b for b in range(256))

_DELIM = "\x1f"  # the CSV "delimiter": a control byte, so never in a checked file
_READ = pcsv.ReadOptions(autogenerate_column_names=True, block_size=1 << 24)
_PARSE = pcsv.ParseOptions(
    delimiter=_DELIM, quote_char=False, escape_char=False, ignore_empty_lines=False
)
_CONVERT = pcsv.ConvertOptions(
    column_types={"f0": pa.string()}, strings_can_be_null=False, quoted_strings_can_be_null=False
)


# --------------------------------------------------------------------------------------------
# paths
# --------------------------------------------------------------------------------------------


def path_problem(path) -> str | None:
    """What makes ``path`` unreadable as a TREC file, or None for a regular file or directory.

    Symbolic links are followed. The answer names what the path is: ``"no such file or
    directory"``, ``"a dangling symbolic link (to X)"``, ``"a symbolic link loop"``, ``"a FIFO
    (named pipe), not a regular file"``, ``"a character device, not a regular file"`` …

    Examples
    --------
    >>> path_problem("/dev/null")
    'a character device, not a regular file'
    >>> path_problem("/no/such/file")
    'no such file or directory'
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            return f"a dangling symbolic link (to {os.readlink(path)}, which does not exist)"
        return "no such file or directory"
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a symbolic link loop"
        return f"cannot be accessed ({e.strerror or e})"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    for test, what in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return f"{what}, not a regular file"
    return "not a regular file"


def check_file(path) -> None:
    """Raise unless ``path`` is a regular file (``FileNotFoundError`` when it does not exist,
    :class:`~pbtools.frames.TrecFormatError` naming what it is otherwise)."""
    problem = path_problem(path)
    if problem is None and os.path.isdir(path):
        problem = "a directory, not a file"
    if problem == "no such file or directory":
        raise FileNotFoundError(f"no such file or directory: {path}")
    if problem is not None:
        raise TrecFormatError(problem, path)


def expand(source, *, lenient: bool, entries: str | None = "input.") -> tuple[list[str], Repairs]:
    """The regular files of a source, and the repairs of lenient expansion.

    ``source``: a path or a list of paths; each a regular file, a directory (its entries whose
    name starts with ``entries``, every entry when None; sorted by name) or a glob pattern
    (sorted matches). An explicit path that does not exist raises ``FileNotFoundError``; one
    that is not a regular file or directory raises :class:`TrecFormatError` naming what it is.
    A directory entry or glob match that is not a regular file, and a file reached twice, raise
    a :class:`RepairableError` (strict) or are skipped and recorded (lenient).
    """
    items: list = [source] if isinstance(source, str | os.PathLike) else list(source)
    out: list[str] = []
    repairs = Repairs()

    def odd(path: str, problem: str, where: str) -> None:
        if not lenient:
            raise RepairableError(f"{problem} ({where})", path)
        repairs.add(path, None, f"{problem} ({where})", "skipped (not read)")

    for item in items:
        p = Path(item)
        problem = path_problem(p)
        if problem is None and p.is_dir():
            found = sorted(f for f in p.iterdir() if entries is None or f.name.startswith(entries))
            if not found:
                raise FileNotFoundError(
                    f"no {entries + '* ' if entries else ''}files in directory {p}"
                )
            for f in found:
                fp = path_problem(f)
                if fp is None and f.is_dir():
                    fp = "a directory, not a file"
                if fp is None:
                    out.append(str(f))
                else:
                    odd(str(f), fp, f"in directory {p}")
        elif problem is None:
            out.append(str(p))
        elif problem == "no such file or directory" and _glob.has_magic(str(item)):
            found = sorted(_glob.glob(str(item)))
            if not found:
                raise FileNotFoundError(f"no file matches {item}")
            for f in found:
                fp = path_problem(f)
                if fp is None and os.path.isdir(f):
                    fp = "a directory, not a file"
                if fp is None:
                    out.append(f)
                else:
                    odd(f, fp, f"matched by {item}")
        elif problem == "no such file or directory":
            raise FileNotFoundError(f"no such file or directory: {item}")
        else:
            raise TrecFormatError(problem, str(item))
    return _once(out, lenient, repairs), repairs


def _once(paths: list[str], lenient: bool, repairs: Repairs) -> list[str]:
    """``paths`` without a file reached a second time (same device and inode)."""
    seen: dict[tuple[int, int], str] = {}
    out = []
    for path in paths:
        st = os.stat(path)
        key = (st.st_dev, st.st_ino)
        if key in seen:
            problem = f"the same file as {seen[key]} (given twice)"
            if not lenient:
                raise RepairableError(problem, path)
            repairs.add(path, None, problem, "read once")
            continue
        seen[key] = path
        out.append(path)
    return out


# --------------------------------------------------------------------------------------------
# bytes
# --------------------------------------------------------------------------------------------


def read_bytes(path, *, limit: int | None = None, what: str = "") -> bytes:
    """The file's bytes, gunzipped when they start with the gzip magic number.

    A path that is not a regular file is refused before it is opened (a FIFO would block).
    A gzip file may expand only to :func:`~pbtools.io.limits.gunzip_limit` bytes; ``limit``
    (bytes, the ``desc.xml`` limit) caps the file's size, plain or gunzipped, ``what`` naming
    the kind of file in the refusal.
    """
    check_file(path)
    if limit is not None:
        size = os.stat(path).st_size
        if size > limit:
            raise TrecFormatError(_too_big(what or "the file", size, limit), path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise TrecFormatError(f"cannot read file ({e.strerror or e})", path) from e
    if raw[:2] != b"\x1f\x8b":
        return raw
    return gunzip(raw, path, limit=limit, what=what)


def _too_big(what: str, size: int | str, limit: int) -> str:
    size = f"{size:,}" if isinstance(size, int) else size
    return f"{what} holds {size} bytes, over the limit of {limit:,} bytes; {XML_HINT}"


def fast_gunzip():
    """python-isal's ``isal_zlib.decompressobj`` (the optional ``fast`` extra: ``pip install
    pbtools[fast]``; ISA-L, about 3× less CPU than zlib), or None when it is not installed."""
    try:
        from isal import isal_zlib
    except ImportError:
        return None
    return isal_zlib.decompressobj


#: the fast decompressor :func:`gunzip` tries first (None: the standard library only)
FAST_GUNZIP = fast_gunzip()


def gunzip(raw: bytes, path, *, limit: int | None = None, what: str = "") -> bytes:
    """The decompressed bytes of a gzip file (every member, zero padding between members
    skipped, like :func:`gzip.decompress`), refused beyond a limit.

    Decompression stops after ``limit`` bytes (default :func:`~pbtools.io.limits.gunzip_limit`
    of the compressed size, the smaller of both when ``limit`` is given): a longer output
    refuses the file (a "gzip bomb") with the limit and how to raise it, and no more than the
    limit is ever held in memory (beyond ``limit``, the refusal is that of a file over the
    ``desc.xml`` size limit, ``what`` naming the kind of file). :data:`FAST_GUNZIP` when
    installed (the same output as zlib); when it fails, or is absent, the standard library's
    zlib, whose exception names the problem: a corrupt file is refused with the same message
    either way (:class:`~pbtools.frames.TrecFormatError`, ``corrupt gzip data (...)``).

    Examples
    --------
    >>> import gzip
    >>> gunzip(gzip.compress(b"1 Q0 d1 1 2.5 r\\n"), "input.r.gz")
    b'1 Q0 d1 1 2.5 r\\n'
    """
    cap = gunzip_limit(len(raw))
    if limit is not None:
        cap = limit if cap is None else min(cap, limit)
    try:
        if FAST_GUNZIP is not None:
            try:
                return inflate(raw, FAST_GUNZIP, cap)
            except Corrupt:  # the standard library names the problem, below
                pass
        try:
            return inflate(raw, zlib.decompressobj, cap)
        except Corrupt as e:
            raise TrecFormatError(f"corrupt gzip data ({e.__cause__ or e})", path) from None
    except TooLong:
        if cap == limit:
            problem = _too_big(f"gunzipped {what or 'file'}", "more than", limit)
        else:
            problem = (
                f"gzip data expands to more than {cap:,} bytes ({len(raw):,} compressed); "
                f"refused as a possible gzip bomb; {GUNZIP_HINT}"
            )
        raise TrecFormatError(problem, path) from None


def _line_of(data: bytes, pos) -> np.ndarray:
    """0-based physical line of each byte position (``\\n``-terminated lines)."""
    nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    return np.searchsorted(nl, np.asarray(pos), side="left")


def clean_bytes(data: bytes, path, *, lenient: bool) -> tuple[bytes, Repairs, np.ndarray]:
    """Apply the byte-level rules; returns the bytes to split, the repairs made, and the 0-based
    lines to skip (lines with a control byte, lenient only; one repair each).

    Strict mode raises a :class:`RepairableError` at the line of the first offence:

    * a UTF-8 byte-order mark at the start (lenient: removed; one repair, line 1);
    * a bare carriage return, i.e. CR-only line ends (lenient: every bare CR read as a line
      end; one repair for the file); CRLF line ends are fine in both modes;
    * a control byte (the C0 controls but TAB, LF and CR, and DEL; a NUL in a docno, say)
      (lenient: the line is skipped; one repair per line).

    A file that is not text at all (:func:`pbtools.io.mistakes.binary_kind`) is refused first,
    in both modes, naming what it is.
    """
    check_not_binary(data, path)
    repairs = Repairs()
    if data.startswith(BOM):
        if not lenient:
            raise RepairableError("UTF-8 byte-order mark (BOM) at the start of the file", path, 1)
        data = data[len(BOM) :]
        repairs.add(path, [1], "UTF-8 byte-order mark (BOM) at the start of the file", "removed")
    if b"\r" in data:
        bare = data.count(b"\r") - data.count(b"\r\n")
        if bare:
            if not lenient:
                pos = re.search(rb"\r(?!\n)", data).start()
                raise RepairableError(
                    "bare carriage return (a CR-only line end, not CRLF)",
                    path,
                    int(_line_of(data, [pos])[0]) + 1,
                )
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            repairs.add(
                path,
                None,
                f"{bare} bare carriage return(s) (CR-only line ends)",
                "read as line ends",
            )
        else:
            data = data.replace(b"\r", b" ")
    skip = np.zeros(0, dtype=np.int64)
    if has_control(data):
        buf = np.frombuffer(data, dtype=np.uint8)
        pos = np.flatnonzero(_IS_CONTROL[buf])
        lines = _line_of(data, pos)
        if not lenient:
            raise RepairableError(_control_problem(buf[pos[0]]), path, int(lines[0]) + 1)
        first = np.ones(len(lines), dtype=bool)
        first[1:] = lines[1:] != lines[:-1]
        skip = lines[first].astype(np.int64)
        repairs.add(path, skip + 1, [_control_problem(b) for b in buf[pos[first]]], "skipped")
        data = data.translate(_TO_SPACE)  # the lines are skipped; keep the CSV reader's path
    return data, repairs, skip


def has_control(data: bytes) -> bool:
    """True when ``data`` (CR already handled) holds a byte of :data:`CONTROL`: three counting
    passes of numpy (which release the GIL), cheaper than any per-byte lookup."""
    buf = np.frombuffer(data, dtype=np.uint8)
    low = np.count_nonzero(buf < 32)
    if low and low != np.count_nonzero(buf == 10) + np.count_nonzero(buf == 9):
        return True
    return b"\x7f" in data


def _control_problem(byte) -> str:
    b = int(byte)
    name = _CONTROL_NAMES.get(b, "control character")
    return f"control byte 0x{b:02x} ({name})"


# --------------------------------------------------------------------------------------------
# lines
# --------------------------------------------------------------------------------------------


def split_lines(data: bytes, path) -> pa.Array:
    """One string per physical line of checked bytes (:func:`clean_bytes`): ``\\n``-terminated,
    a CR is blank. Invalid UTF-8 raises :class:`TrecFormatError` at its line."""
    if not data:
        return pa.array([], type=pa.string())
    if not data.endswith(b"\n"):
        data += b"\n"  # the CSV reader cannot infer a column from an unterminated lone line
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),
            read_options=_READ,
            parse_options=_PARSE,
            convert_options=_CONVERT,
        )
    except pa.ArrowInvalid:
        check_utf8(data, path)  # raises with the line of the first invalid byte
        return _split_lines_numpy(data, path)  # anything else the CSV reader refuses
    return table.column(0).combine_chunks()


def _split_lines_numpy(data: bytes, path) -> pa.Array:
    """Fallback line splitter (zero-copy): each value keeps its ``\\n``, trimmed later."""
    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    offsets = np.concatenate([[0], nl + 1]).astype(np.int64)
    if offsets[-1] != len(data):
        offsets = np.append(offsets, len(data))
    arr = pa.LargeStringArray.from_buffers(
        len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data)
    )
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        check_utf8(data, path)
        raise
    return arr.cast(pa.string())


def check_utf8(data: bytes, path) -> None:
    """Raise :class:`TrecFormatError` at the line of the first byte that is not UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise TrecFormatError(f"invalid UTF-8 (byte {e.start})", path, line) from None


def check_paths(paths) -> None:
    """Check command-line style input paths before any reading: each must be a regular file, a
    directory or a glob pattern. Raises ``FileNotFoundError`` for a path that does not exist,
    :class:`TrecFormatError` naming what a path is when it is something else (a FIFO, a
    device, a dangling symbolic link, a link loop).

    Examples
    --------
    >>> check_paths(["/dev/null"])
    Traceback (most recent call last):
    ...
    pbtools.errors.TrecFormatError: /dev/null: a character device, not a regular file
    """
    for p in paths:
        problem = path_problem(p)
        if problem == "no such file or directory":
            if not _glob.has_magic(str(p)):
                raise FileNotFoundError(f"no such file or directory: {p}")
        elif problem is not None:
            raise TrecFormatError(problem, str(p))
