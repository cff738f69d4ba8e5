"""The ``repairs`` frame of lenient reading: how it is collected, kept and reported.

Every repair that ``lenient=True`` makes to dirty TREC input (a skipped line, a dropped duplicate,
extra fields, an unlisted run tag) is one row ``file``, ``line`` (1-based, NA for a whole file),
``problem``, ``action``. :class:`Repairs` collects them as column chunks, :func:`warn` issues one
:class:`~pbtools.frames.TrecFormatWarning` per file, attributed to the caller's line, and the
frame itself is an :class:`AttrsFrame`, safe to keep in another frame's ``attrs``. Private: the
API is :mod:`pbtools.io`.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
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


class AttrsFrame(pd.DataFrame):
    """A DataFrame that is safe to keep in another frame's ``attrs`` (the repairs frame).

    pandas deep-copies ``attrs`` on nearly every operation and compares them with ``==`` when it
    concatenates (``pd.concat``, ``df.astype`` …); with a plain DataFrame in ``attrs`` that
    comparison raises "truth value of a DataFrame is ambiguous". An ``AttrsFrame`` is shared, not
    copied, by ``deepcopy`` (treat it as read-only), and ``==`` with another DataFrame returns
    one bool (``equals``); anything derived from it (slices, ``concat``) is a plain DataFrame.
    """

    @property
    def _constructor(self):
        return pd.DataFrame

    def __deepcopy__(self, memo=None):
        return self

    def __eq__(self, other):
        if isinstance(other, pd.DataFrame):
            return bool(pd.DataFrame(self).equals(pd.DataFrame(other)))
        return super().__eq__(other)

    def __ne__(self, other):
        if isinstance(other, pd.DataFrame):
            return not self.__eq__(other)
        return super().__ne__(other)

    __hash__ = None


@dataclass
class Repairs:
    """Collects lenient repairs as column chunks; :meth:`frame` gives the ``repairs`` frame."""

    parts: list[pd.DataFrame] = field(default_factory=list)

    def add(self, file, lines, problem, action) -> None:
        """Record repairs: ``lines`` an int array (or None for a file-level repair);
        ``problem`` and ``action`` a string or one string per line."""
        n = 1 if lines is None else len(lines)
        if n == 0:
            return
        line = pd.array(
            [pd.NA] if lines is None else np.asarray(lines, dtype=np.int64), dtype="Int64"
        )
        self.parts.append(
            pd.DataFrame(
                {
                    "file": pd.array([str(file)] * n, dtype="str"),
                    "line": line,
                    "problem": pd.array(_broadcast(problem, n), dtype="str"),
                    "action": pd.array(_broadcast(action, n), dtype="str"),
                }
            )
        )

    def extend(self, other: Repairs) -> None:
        self.parts.extend(other.parts)

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def frame(self) -> pd.DataFrame:
        """The repairs as one frame: ``file`` (str), ``line`` (Int64, NA for a whole file),
        ``problem`` (str), ``action`` (str), in the order they were made."""
        if not self.parts:
            return empty_repairs()
        return AttrsFrame(pd.concat(self.parts, ignore_index=True))


def empty_repairs() -> pd.DataFrame:
    return AttrsFrame(
        {
            "file": pd.array([], dtype="str"),
            "line": pd.array([], dtype="Int64"),
            "problem": pd.array([], dtype="str"),
            "action": pd.array([], dtype="str"),
        }
    )


def _broadcast(v, n: int) -> list[str]:
    if isinstance(v, str):
        return [v] * n
    v = list(v)
    if len(v) != n:
        raise ValueError("repair problem/action length mismatch")
    return v


def caller_level() -> int:
    """The ``stacklevel`` of the first frame outside the pbtools package, so that a warning
    names the user's line rather than pbtools' own."""
    pkg = str(Path(__file__).resolve().parents[1])
    frame, level = sys._getframe(1), 1
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(pkg):
        frame, level = frame.f_back, level + 1
    return level


def warn(repairs: pd.DataFrame, stacklevel: int | None = None) -> None:
    """One TrecFormatWarning per file summarising its repairs, attributed to the caller's line
    outside pbtools (``stacklevel`` overrides)."""
    if len(repairs) == 0:
        return
    if stacklevel is None:
        stacklevel = caller_level()
    kinds = problem_kinds(repairs["problem"])
    for file, rows in repairs.groupby("file", sort=False, observed=True).indices.items():
        counts = Counter(kinds[rows].tolist())
        summary = ", ".join(f"{n} × {k}" for k, n in counts.items())
        warnings.warn(
            TrecFormatWarning(f"{file}: {len(rows)} repair(s): {summary} (see the repairs frame)"),
            stacklevel=stacklevel,
        )


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


def problem_kinds(problems: pd.Series) -> np.ndarray:
    """:func:`problem_kind` of every problem (an object array), matched with Arrow's regular
    expressions, one pass per kind (a dirty track has tens of thousands of repairs).

    Examples
    --------
    >>> problem_kinds(pd.Series(["blank line", "7 fields, expected 6", "odd"], dtype="str"))
    array(['blank line', 'wrong field count', 'odd'], dtype=object)
    """
    text = pa.array(pd.Series(problems).astype("str").array)
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


def sort_repairs(rep: pd.DataFrame, paths: Sequence[str]) -> pd.DataFrame:
    """Repairs in file order (as listed in ``paths``), then line order (file-level first)."""
    if len(rep) == 0:
        return rep
    pos = {p: i for i, p in enumerate(paths)}
    fkey = rep["file"].map(pos).fillna(len(pos)).to_numpy(dtype=np.int64)
    lkey = rep["line"].fillna(0).to_numpy(dtype=np.int64)
    order = np.lexsort((lkey, fkey))
    return AttrsFrame(rep.iloc[order].reset_index(drop=True))
