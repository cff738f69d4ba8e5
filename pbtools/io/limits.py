"""Limits on hostile input: how far a gzip file may expand, how large ``desc.xml`` may be.

A run or qrels file is text that gzip shrinks 3.4–6.0× (TREC-2's 38 runs and its qrels); a
"gzip bomb" of 2 MB expands to gigabytes. ``desc.xml`` is a few kilobytes (TREC-2: 4 KB for 38
runs). The readers refuse, naming the file, input beyond these limits
(:class:`~pbtools.frames.TrecFormatError`; exit status 2 on the command line):

* **gunzip**: a gzip file may expand to ``gunzip_ratio`` × its compressed size
  (default :data:`GUNZIP_RATIO` = 50, over 8× the highest ratio of TREC-2), and always to
  :data:`GUNZIP_FLOOR` (64 MiB) at least, so small files never meet the limit; decompression
  stops at the limit, so memory stays bounded by it;
* **XML**: ``desc.xml`` may hold ``xml_limit`` bytes (default :data:`XML_LIMIT` = 16 MiB,
  about 130,000 runs of TREC-2's entries), plain or after gunzip.

:func:`inflate` is the capped decompression (:func:`pbtools.io.files.gunzip` uses it).
Raise (or lift: ``0`` = no limit) them for one block of code with :func:`input_limits`, for a
process with the environment variables ``PBTOOLS_GUNZIP_RATIO`` and ``PBTOOLS_XML_LIMIT``
(bytes), and on the command line with ``--gunzip-ratio N`` and ``--xml-limit BYTES``.
:func:`input_limits` wins over the environment, the environment over the defaults.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from pbtools.errors import InputError

__all__ = [
    "GUNZIP_RATIO",
    "GUNZIP_FLOOR",
    "XML_LIMIT",
    "input_limits",
    "gunzip_limit",
    "xml_limit",
    "GUNZIP_HINT",
    "XML_HINT",
    "inflate",
    "Corrupt",
    "TooLong",
]

#: default: a gzip file may expand to this many times its compressed size
GUNZIP_RATIO = 50.0
#: a gzip file may always expand to this many bytes, whatever its compressed size
GUNZIP_FLOOR = 64 << 20
#: default: the largest ``desc.xml`` (bytes, plain or gunzipped)
XML_LIMIT = 16 << 20

#: how to raise the limits (the command line shows its flags instead: ``cli.CLI_WORDS``)
GUNZIP_HINT = "raise the limit with input_limits(gunzip_ratio=N) or PBTOOLS_GUNZIP_RATIO=N"
XML_HINT = "raise the limit with input_limits(xml_limit=BYTES) or PBTOOLS_XML_LIMIT=BYTES"

_SET: dict[str, float | None] = {"gunzip_ratio": None, "xml_limit": None}


def _number(name: str, value, env: str) -> float:
    """``value`` as a number ≥ 0, or a ValueError naming ``name`` (``env`` when read there)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not number >= 0 or number == float("inf"):
        where = f"the environment variable {env}" if env else name
        raise InputError(f"{where} must be a number >= 0 (0: no limit), not {value!r}")
    return number


def _setting(name: str, env: str, default: float) -> float:
    if _SET[name] is not None:
        return _SET[name]
    raw = os.environ.get(env)
    return default if raw in (None, "") else _number(name, raw, env)


@contextmanager
def input_limits(
    *, gunzip_ratio: float | None = None, xml_limit: float | None = None
) -> Iterator[None]:
    """Use other limits on hostile input inside the ``with`` block (None: leave as is; 0: no limit).

    The limits are the process's (every thread reads them), restored on leaving the block.

    Examples
    --------
    >>> with input_limits(gunzip_ratio=200):
    ...     gunzip_limit(1 << 20) == 200 << 20
    True
    >>> gunzip_limit(1 << 20) == 64 << 20   # the default: max(50 × 1 MiB, 64 MiB)
    True
    """
    given = {"gunzip_ratio": gunzip_ratio, "xml_limit": xml_limit}
    before = dict(_SET)
    for name, value in given.items():
        if value is not None:
            _SET[name] = _number(name, value, "")
    try:
        yield
    finally:
        _SET.update(before)


def gunzip_limit(compressed: int) -> int | None:
    """The most bytes a gzip file of ``compressed`` bytes may expand to (None: no limit).

    Examples
    --------
    >>> gunzip_limit(10 << 20) == 500 << 20
    True
    """
    ratio = _setting("gunzip_ratio", "PBTOOLS_GUNZIP_RATIO", GUNZIP_RATIO)
    if ratio == 0:
        return None
    return max(int(ratio * compressed), GUNZIP_FLOOR)


def xml_limit() -> int | None:
    """The most bytes a ``desc.xml`` may hold (None: no limit).

    Examples
    --------
    >>> xml_limit() == 16 << 20
    True
    """
    limit = _setting("xml_limit", "PBTOOLS_XML_LIMIT", XML_LIMIT)
    return None if limit == 0 else int(limit)


class Corrupt(Exception):
    """A gzip stream that cannot be decompressed (its cause: the decompressor's error)."""


class TooLong(Exception):
    """A gzip stream that expands beyond its limit."""


def inflate(raw: bytes, decompressobj, cap: int | None) -> bytes:
    """Every gzip member of ``raw`` with ``decompressobj`` (zlib's or ISA-L's), stopping after
    ``cap`` bytes (None: no limit): :class:`TooLong` beyond it, :class:`Corrupt` for a
    damaged stream. No more than ``cap`` bytes are produced, whatever the input; zero padding
    between members is skipped, as :func:`gzip.decompress` does.

    Examples
    --------
    >>> import gzip, zlib
    >>> inflate(gzip.compress(b"ab") * 2, zlib.decompressobj, 4)
    b'abab'
    >>> inflate(gzip.compress(b"ab") * 2, zlib.decompressobj, 3)
    Traceback (most recent call last):
    ...
    pbtools.io.limits.TooLong
    """
    out: list[bytes] = []
    total = 0
    data = raw
    while data:
        room = -1 if cap is None else cap - total + 1
        try:
            d = decompressobj(wbits=31)  # a gzip member: header, CRC and length checked
            chunk = d.decompress(data, room) if room >= 0 else d.decompress(data)
        except Exception as e:
            raise Corrupt(str(e)) from e
        total += len(chunk)
        if cap is not None and total > cap:
            raise TooLong
        if not d.eof:
            raise Corrupt("compressed file ended before the end-of-stream marker was reached")
        out.append(chunk)
        data = d.unused_data.lstrip(b"\0")
    return out[0] if len(out) == 1 else b"".join(out)
