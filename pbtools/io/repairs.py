"""The ``repairs`` frame of lenient reading: how it is collected, kept and reported.

Every repair that ``lenient=True`` makes to dirty TREC input (a skipped line, a dropped duplicate,
extra fields, an unlisted run tag) is one row ``file``, ``line`` (1-based, NA for a whole file),
``problem``, ``action``. :class:`Repairs` collects them as plain columns (no pandas: the
command line's reading never imports it), sorts them and words each file's warning;
:func:`warn` issues one :class:`~pbtools.frames.TrecFormatWarning` per file, attributed to the
caller's line. The frame itself (:meth:`Repairs.frame`) is an ``AttrsFrame``
(:mod:`pbtools.io.repairframe`), safe to keep in another frame's ``attrs``. Private: the API
is :mod:`pbtools.io`.

Nothing here imports pandas.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pbtools.errors import TrecFormatError, TrecFormatWarning

REPAIR_COLUMNS: tuple[str, ...] = ("file", "line", "problem", "action")


class RepairableError(TrecFormatError):
    """A strict-mode refusal of a problem that ``lenient=True`` repairs and reports.

    Raised, for instance, for a line with a wrong field count, a repeated document, a NaN
    score or a UTF-8 byte-order mark; the command line adds the hint that ``--lenient`` repairs
    it. Problems that lenient reading cannot repair (a non-numeric score, invalid UTF-8, corrupt
    gzip, malformed XML) raise a plain :class:`~pbtools.frames.TrecFormatError`.
    """


def __getattr__(name: str):
    # AttrsFrame lived here: frames pickled before it moved name it here (PEP 562, on first
    # use, so that this module imports no pandas)
    if name == "AttrsFrame":
        from pbtools.io.repairframe import AttrsFrame

        return AttrsFrame
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Repairs:
    """Collects lenient repairs as plain columns (numpy arrays, no pandas): ``file``, ``line``
    (1-based; ``line_na`` marks a repair of a whole file), ``problem``, ``action``, in the
    order they were made. :meth:`sorted` puts them in file then line order, :meth:`summaries`
    gives each file's warning text, :meth:`frame` the ``repairs`` frame (pandas).

    Examples
    --------
    >>> r = Repairs()
    >>> r.add("b.txt", [3, 1], "blank line", "skipped")
    >>> r.add("a.txt", None, "empty file", "skipped (no run read)")
    >>> s = r.sorted(["a.txt", "b.txt"])
    >>> s.column("file").tolist(), s.column("line").tolist(), s.column("line_na").tolist()
    (['a.txt', 'b.txt', 'b.txt'], [0, 1, 3], [True, False, False])
    >>> s.summaries()
    ['a.txt: 1 repair(s): 1 × empty file (see the repairs frame)', \
'b.txt: 2 repair(s): 2 × blank line (see the repairs frame)']
    """

    def __init__(self) -> None:
        #: column chunks, one per :meth:`add`: (file, line, line_na, problem, action)
        self.chunks: list[tuple[np.ndarray, ...]] = []

    def add(self, file, lines, problem, action) -> None:
        """Record repairs: ``lines`` an int array (or None for a file-level repair);
        ``problem`` and ``action`` a string or one string per line."""
        n = 1 if lines is None else len(lines)
        if n == 0:
            return
        if lines is None:
            line, na = np.zeros(1, dtype=np.int64), np.ones(1, dtype=bool)
        else:
            line, na = np.asarray(lines, dtype=np.int64), np.zeros(n, dtype=bool)
        self.chunks.append(
            (
                np.full(n, str(file), dtype=object),
                line,
                na,
                _broadcast(problem, n),
                _broadcast(action, n),
            )
        )

    def extend(self, other: Repairs) -> None:
        self.chunks.extend(other.chunks)

    def __len__(self) -> int:
        return sum(len(c[1]) for c in self.chunks)

    def column(self, name: str) -> np.ndarray:
        """One column over every repair: ``file``, ``problem``, ``action`` (object arrays of
        str), ``line`` (int64; 0 where ``line_na``), ``line_na`` (bool: a whole file)."""
        j = _CHUNK.index(name)
        if not self.chunks:
            return np.zeros(0, dtype={"line": np.int64, "line_na": bool}.get(name, object))
        if len(self.chunks) == 1:
            return self.chunks[0][j]
        return np.concatenate([c[j] for c in self.chunks])

    def sorted(self, paths: Sequence[str]) -> Repairs:
        """The repairs in file order (as listed in ``paths``; files not listed last), then line
        order (file-level repairs first); made in that order, they keep it."""
        out = Repairs()
        if not self.chunks:
            return out
        files = pc.dictionary_encode(pa.array(self.column("file"), type=pa.string()))
        pos = {p: i for i, p in enumerate(paths)}
        at = np.array([pos.get(f, len(pos)) for f in files.dictionary.to_pylist()], np.int64)
        fkey = at[np.asarray(files.indices)]  # each repair's file's place in ``paths``
        order = np.lexsort((self.column("line"), fkey))
        out.chunks.append(tuple(self.column(c)[order] for c in _CHUNK))
        return out

    def summaries(self) -> list[str]:
        """One text per repaired file, in the order the files first appear: how many repairs,
        of which kinds (:func:`problem_kinds`) — the :class:`TrecFormatWarning` of :func:`warn`."""
        if not self.chunks:
            return []
        files = pa.array(self.column("file"), type=pa.string())
        enc = pc.dictionary_encode(files)  # files in first-seen order
        which = np.asarray(enc.indices)
        kinds = problem_kinds(self.column("problem"))
        out = []
        for g, file in enumerate(enc.dictionary.to_pylist()):
            rows = np.flatnonzero(which == g)
            counts = Counter(kinds[rows].tolist())
            summary = ", ".join(f"{n} × {k}" for k, n in counts.items())
            out.append(f"{file}: {len(rows)} repair(s): {summary} (see the repairs frame)")
        return out

    def frame(self):
        """The repairs as one frame (:func:`pbtools.io.repairframe.repairs_frame`): ``file``
        (str), ``line`` (Int64, NA for a whole file), ``problem`` (str), ``action`` (str)."""
        from pbtools.io.repairframe import repairs_frame

        return repairs_frame(self)

    @classmethod
    def from_frame(cls, frame) -> Repairs:
        """The repairs of a ``repairs`` frame (:meth:`frame` turned back)."""
        out = cls()
        if len(frame):
            na = np.asarray(frame["line"].isna().to_numpy(), dtype=bool)
            out.chunks.append(
                (
                    frame["file"].to_numpy(dtype=object),
                    frame["line"].fillna(0).to_numpy(dtype=np.int64),
                    na,
                    frame["problem"].to_numpy(dtype=object),
                    frame["action"].to_numpy(dtype=object),
                )
            )
        return out


_CHUNK = ("file", "line", "line_na", "problem", "action")


def _broadcast(v, n: int) -> np.ndarray:
    if isinstance(v, str):
        return np.full(n, v, dtype=object)
    out = np.empty(n, dtype=object)
    v = list(v)
    if len(v) != n:
        raise ValueError("repair problem/action length mismatch")
    out[:] = v
    return out


def caller_level() -> int:
    """The ``stacklevel`` of the first frame outside the pbtools package, so that a warning
    names the user's line rather than pbtools' own."""
    pkg = str(Path(__file__).resolve().parents[1])
    frame, level = sys._getframe(1), 1
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(pkg):
        frame, level = frame.f_back, level + 1
    return level


def warn(repairs, stacklevel: int | None = None) -> None:
    """One TrecFormatWarning per file summarising its repairs (:meth:`Repairs.summaries`),
    attributed to the caller's line outside pbtools (``stacklevel`` overrides). ``repairs``: a
    :class:`Repairs` or a ``repairs`` frame."""
    if len(repairs) == 0:
        return
    if not isinstance(repairs, Repairs):
        repairs = Repairs.from_frame(repairs)
    if stacklevel is None:
        stacklevel = caller_level()
    for text in repairs.summaries():
        warnings.warn(TrecFormatWarning(text), stacklevel=stacklevel)


#: (pattern at the start of a repair's problem, label of the per-file summary)
REPAIR_KINDS: tuple[tuple[str, str], ...] = (
    (r"blank line", "blank line"),
    (r"\d+ fields, expected \d+", "wrong field count"),
    (r"duplicate document ", "duplicate document"),
    (r"duplicate judgment ", "duplicate judgment"),
    (r"run tag '.*' differs from the first tag", "other run tag in the file"),
    (r"run tag '.*' also carried by ", "run tag shared with another file"),
    (r"run tag '.*' listed twice", "tag listed twice in desc.xml"),
    (r"empty file", "empty file"),
    (r"desc\.xml is missing", "desc.xml missing"),
    (r"desc\.xml lacks run ", "run not in desc.xml"),
    (r"UTF-8 byte-order mark", "byte-order mark"),
    (r"\d+ bare carriage return", "CR-only line ends"),
    (r"control byte ", "control byte"),
    (r"score '.*' is NaN", "NaN score"),
    (r"score '.*' is infinite", "infinite score"),
    (r"score '.*' overflows ", "score overflow"),
    (r"score '.*' underflows ", "score underflow"),
    (r"non-numeric rank ", "non-numeric rank"),
    (r"the same file as ", "file given twice"),
    (r"(a |not a )", "not a regular file"),
)
_KIND_RES = tuple((re.compile(p), k) for p, k in REPAIR_KINDS)


def problem_kind(problem: str) -> str:
    """A short label of a repair's problem, for the per-file warning summary.

    Examples
    --------
    >>> problem_kind("run tag 'x' listed twice (first at line 3)")
    'tag listed twice in desc.xml'
    >>> problem_kind("5 fields, expected 6")
    'wrong field count'
    """
    for rx, kind in _KIND_RES:
        if rx.match(problem):
            return kind
    return problem


def problem_kinds(problems) -> np.ndarray:
    """:func:`problem_kind` of every problem (an object array), matched with Arrow's regular
    expressions, one pass per kind (a dirty track has tens of thousands of repairs).
    ``problems``: strings (a list, an array, a pandas or Arrow column).

    Examples
    --------
    >>> problem_kinds(["blank line", "7 fields, expected 6", "odd"])
    array(['blank line', 'wrong field count', 'odd'], dtype=object)
    """
    text = _arrow_strings(problems)
    which = np.full(len(text), -1, dtype=np.int64)
    for j, (pattern, _) in enumerate(REPAIR_KINDS):
        todo = which < 0
        if not todo.any():
            break
        hit = np.asarray(pc.match_substring_regex(text, f"^(?:{pattern})"), dtype=bool)
        which[todo & hit] = j
    labels = np.array([k for _, k in REPAIR_KINDS], dtype=object)
    out = labels[np.maximum(which, 0)]
    for i in np.flatnonzero(which < 0):  # no kind: the problem itself (problem_kind)
        out[i] = problem_kind(text[i].as_py())
    return out


def _arrow_strings(values) -> pa.Array:
    """Strings as one Arrow string array (a list, a numpy array, a pandas or Arrow column)."""
    if isinstance(values, np.ndarray):
        values = values.tolist()
    arr = values if isinstance(values, pa.Array | pa.ChunkedArray) else pa.array(values)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr.cast(pa.string())
