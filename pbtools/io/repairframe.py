"""The ``repairs`` frame (pandas) of :class:`pbtools.io.repairs.Repairs`, and
:class:`AttrsFrame`, the frame that is safe to keep in another frame's ``attrs``.

:mod:`pbtools.io.repairs` collects, sorts and words the repairs without pandas; this module is
their frame form (``df.attrs["repairs"]``, ``Collection.repairs``).
"""

from __future__ import annotations

import pandas as pd


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


def repairs_frame(repairs) -> AttrsFrame:
    """The repairs of a :class:`pbtools.io.repairs.Repairs` as one frame: ``file`` (str),
    ``line`` (Int64, NA for a whole file), ``problem`` (str), ``action`` (str), in the order
    they are held (:meth:`~pbtools.io.repairs.Repairs.frame`).

    Examples
    --------
    >>> from pbtools.io.repairs import Repairs
    >>> r = Repairs()
    >>> r.add("f", [2], "blank line", "skipped")
    >>> r.add("f", None, "empty file", "skipped")
    >>> repairs_frame(r)["line"].tolist()
    [2, <NA>]
    """
    if not repairs.chunks:
        return empty_repairs()
    line = pd.arrays.IntegerArray(repairs.column("line"), repairs.column("line_na"))
    return AttrsFrame(
        {
            "file": pd.array(repairs.column("file"), dtype="str"),
            "line": line,
            "problem": pd.array(repairs.column("problem"), dtype="str"),
            "action": pd.array(repairs.column("action"), dtype="str"),
        }
    )


def empty_repairs() -> AttrsFrame:
    """The repairs frame of no repair (its four columns, typed)."""
    return AttrsFrame(
        {
            "file": pd.array([], dtype="str"),
            "line": pd.array([], dtype="Int64"),
            "problem": pd.array([], dtype="str"),
            "action": pd.array([], dtype="str"),
        }
    )
