"""Probable mistakes: inputs that are not dirty TREC files but the wrong file.

A qrels file given as a run, a run given as the qrels, a directory of runs where the qrels file
is expected, a binary file, a file none of whose lines is a line of the expected kind: no repair
makes these right, so they are refused in both modes with a message that names the probable
mistake (:class:`~pbtools.frames.TrecFormatError`, never a
:class:`~pbtools.io.repairs.RepairableError`: the command line then gives no ``--lenient`` hint,
since ``--lenient`` would not help). Used by :mod:`pbtools.io.files`, :mod:`pbtools.io.fields`
and :mod:`pbtools.io.readers`; ``docs/input.md`` lists each case.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pbtools.errors import TrecFormatError

__all__ = ["check_not_binary", "binary_kind", "check_field_counts", "check_qrels_source"]

#: the layout of each kind of TREC line
LAYOUT = {
    "run": "qid Q0 docno rank score tag",
    "qrels": "qid iter docno label",
    "sampled qrels": "qid iter docno stratum label",
}
#: the number of fields of each kind
FIELDS = {"run": 6, "qrels": 4, "sampled qrels": 5}

#: leading bytes of binary formats a TREC file is mistaken for, and what to do instead
_DECOMPRESS = "decompress it: pbtools reads plain or gzip-compressed text"
_MAGIC = (
    (b"PAR1", "a Parquet file (read it with pbtools.io.read_parquet)"),
    (b"PK\x03\x04", "a zip archive (unzip it: pbtools reads plain or gzip-compressed text)"),
    (b"\xfd7zXZ\x00", f"an xz-compressed file ({_DECOMPRESS})"),
    (b"\x28\xb5\x2f\xfd", f"a zstd-compressed file ({_DECOMPRESS})"),
    (b"BZh", f"a bzip2-compressed file ({_DECOMPRESS})"),
    (b"\x7fELF", "an executable program or library (ELF)"),
    (b"%PDF", "a PDF document"),
    (b"\xff\xfe", "UTF-16 text (convert it to UTF-8, e.g. iconv -f UTF-16 -t UTF-8)"),
    (b"\xfe\xff", "UTF-16 text (convert it to UTF-8, e.g. iconv -f UTF-16 -t UTF-8)"),
)
_HEAD = 8192


def binary_kind(data: bytes) -> str | None:
    """What a file that is not text is (None for text, however dirty).

    Known leading bytes name the format; otherwise a file is binary when its first 8 KB hold
    NUL bytes and are not UTF-8, or are more than a tenth NUL bytes (a lone NUL in a docno is a
    control byte of a text file, which ``--lenient`` skips with its line).

    Examples
    --------
    >>> binary_kind(b"PAR1\\x15\\x04")
    'a Parquet file (read it with pbtools.io.read_parquet)'
    >>> binary_kind("1 Q0 d1 1 2.5 r\\n".encode("utf-16"))[:11]
    'UTF-16 text'
    >>> binary_kind(b"1 Q0 d\\x001 1 2.5 r\\n") is None
    True
    """
    head = data[:_HEAD]
    for magic, what in _MAGIC:
        if head.startswith(magic) and (magic != b"BZh" or head[4:10] == b"1AY&SY"):
            return what
    if len(data) > 262 and data[257:262] == b"ustar":
        return "a tar archive (extract it: pbtools reads plain or gzip-compressed text)"
    nul = head.count(b"\x00")
    if not nul:
        return None
    if nul * 10 > len(head):
        if head[1::2].count(b"\x00") * 5 > len(head) * 2:  # every other byte NUL: UTF-16LE
            return "UTF-16 text (convert it to UTF-8, e.g. iconv -f UTF-16 -t UTF-8)"
        return "a binary file (NUL bytes)"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:  # not a character cut by the 8 KB boundary
            return "a binary file (NUL bytes, not UTF-8)"
    return None


def check_not_binary(data: bytes, path) -> None:
    """Refuse a file that :func:`binary_kind` finds is not text, naming what it is."""
    what = binary_kind(data)
    if what is not None:
        raise TrecFormatError(f"{what}, not a TREC text file", path)


def check_field_counts(nf: np.ndarray, what: str, path) -> None:
    """Refuse a file none of whose lines can be a ``what`` line, naming the probable mistake.

    ``nf``: the field count of each physical line (0 blank, < 0 skipped for a control byte).
    Refused when every non-blank line has the other kind's field count (a run given as the
    qrels, or qrels given as a run), or when no line has the fields a ``what`` line needs (a
    3-column "run": ``--lenient`` would skip every line).
    """
    counts = nf[nf > 0]
    nfields = FIELDS[what]
    if not len(counts) or (counts == nfields).all():
        return
    line = int(np.flatnonzero(nf > 0)[0]) + 1
    uniform = bool((counts == counts[0]).all())
    other = next((k for k, n in FIELDS.items() if k != what and n == counts[0]), None)
    layout = f"a {what} line is {LAYOUT[what]}"
    if uniform and other is not None:
        given = "the qrels" if what == "qrels" else "a run"
        raise TrecFormatError(
            f"every line has {counts[0]} fields, the layout of a {other} file "
            f"({LAYOUT[other]}), not of {'qrels' if what == 'qrels' else 'a run'} "
            f"({LAYOUT[what]}): a {other} file given as {given}? The qrels come first: "
            "QRELS, then the runs",
            path,
            line,
        )
    if (counts < nfields).all():
        seen = ", ".join(str(int(k)) for k in np.unique(counts))
        raise TrecFormatError(
            f"no line has the {nfields} fields of a {what} line (its lines have {seen}): not a "
            f"TREC {what} file ({layout}); --lenient cannot repair it (it would skip every line)",
            path,
            line,
        )


def check_qrels_source(path) -> None:
    """Refuse a directory given as the qrels that is a directory of runs (``input.*`` files) or
    a whole track (``QRels/`` and ``Runs/``), naming what to give instead."""
    p = Path(path)
    if not p.is_dir():
        return
    if (p / "QRels").is_dir() and (p / "Runs").is_dir():
        raise TrecFormatError(
            "a track directory (QRels/, Runs/) given as the qrels: give the track alone "
            f"(pbtools analyze {p}), or its qrels file ({p / 'QRels'}/…) followed by the runs",
            path,
        )
    if any(f.name.startswith("input.") for f in p.iterdir()):
        raise TrecFormatError(
            "a directory of run files (input.*) given as the qrels: the qrels file comes "
            "first, then the runs (QRELS RUNS_DIR)",
            path,
        )


#: lines read to tell sampled qrels (five fields) from trec_eval's (four)
_SNIFF_LINES = 100


def is_sampled_qrels(path) -> bool:
    """Whether the qrels file ``path`` is a sampled pool's: its first line with fields has five
    (``qid iter docno stratum label``, sample_eval.pl's) rather than trec_eval's four. What
    ``pbtools evaluate`` looks at to score a file with the estimators; a directory or an
    unreadable path is not (the ordinary reader then says why).

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "qrels")
    >>> _ = open(path, "w").write("\\n1 0 d1 1 -1\\n")
    >>> is_sampled_qrels(path)
    True
    """
    import gzip
    import os

    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        with (gzip.open if gz else open)(path, "rb") as f:
            for _, line in zip(range(_SNIFF_LINES), f, strict=False):
                fields = line.split()
                if fields:
                    return len(fields) == 5
    except (OSError, EOFError):
        return False
    return False
