"""The aligned text table of the command line, written column by column.

``DataFrame.to_string(index=False, float_format="{:.4f}")`` formats every cell through a chain
of Python calls (``pprint_thing``, escaping, justification): 2.8 s of a 3.0 s ``pbtools
evaluate -q`` on TREC-2 under the profiler, ~0.35 s CPU without it, for 18,000 rows. Here each
distinct value of a column is formatted once (a run name, a topic, a measure, a value) and the
rows are joined by numpy; the text is the same as pandas', byte for byte: each column as wide as
its widest cell or its header, every cell right-justified, columns joined by one space, rows by
a newline (``tests/cli/test_table.py`` compares both on generated frames). A column of another
kind (dates, booleans, mixed objects, strings with tabs or newlines that pandas escapes) and an
empty frame keep pandas' own formatting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `pbtools --help` starts without numpy and pandas
    import numpy as np
    import pandas as pd

__all__ = ["table_text", "Coded", "Columns", "columns_text", "tsv_text"]


class Coded:
    """A dictionary-encoded column of strings without pandas: row ``i`` is
    ``strings[codes[i]]`` (a code of −1 is missing, shown ``NaN``).

    Examples
    --------
    >>> import numpy as np
    >>> Coded(np.array([1, 0, 1]), ["a", "b"]).values().tolist()
    ['b', 'a', 'b']
    """

    def __init__(self, codes, strings):
        import numpy as np

        self.codes = np.asarray(codes)
        self.strings = [str(s) for s in strings]

    def __len__(self) -> int:
        return len(self.codes)

    def take(self, rows) -> Coded:
        """The rows ``rows`` (positions)."""
        return Coded(self.codes[rows], self.strings)

    def values(self):
        """The rows' strings, an object array."""
        import numpy as np

        table = np.array([*self.strings, "NaN"], dtype=object)
        return table[np.where(self.codes < 0, len(self.strings), self.codes)]


class Columns(dict):
    """A table of the command line without pandas: column name → :class:`Coded` (ids), a float
    or integer ndarray, or an object ndarray of strings with ``None`` missing (a ``string``
    column, shown ``<NA>``). :func:`columns_text` prints it as :func:`table_text` prints the
    frame of the same cells, :func:`tsv_text` as ``DataFrame.to_csv(sep="\\t")``.

    Examples
    --------
    >>> import numpy as np
    >>> t = Columns(name=Coded([0, 1], ["a", "run2"]), value=np.array([0.5, np.nan]))
    >>> print(columns_text(t), end="")
    name  value
       a 0.5000
    run2    NaN
    """

    @property
    def columns(self) -> list:
        return list(self)

    def __len__(self) -> int:  # rows, as a frame's
        return len(next(iter(self.values()))) if dict.__len__(self) else 0

    def take(self, rows) -> Columns:
        """The rows ``rows`` (positions) of every column."""
        return Columns(
            {k: v.take(rows) if isinstance(v, Coded) else v[rows] for k, v in self.items()}
        )

    @classmethod
    def from_frame(cls, df: pd.DataFrame) -> Columns:
        """The columns of a results frame: an id column (categorical or strings) as
        :class:`Coded` over its sorted dictionary (:func:`pbtools.ids.encode`), a numeric column
        as its array, any other as an object array of strings, ``None`` missing.

        Examples
        --------
        >>> import pandas as pd
        >>> t = Columns.from_frame(pd.DataFrame({"qid": ["2", "1"], "value": [0.5, 1.0]}))
        >>> t["qid"].codes.tolist(), t["qid"].strings, t["value"].tolist()
        ([1, 0], ['1', '2'], [0.5, 1.0])
        >>> Columns.from_frame(pd.DataFrame({"text": pd.array(["a", None], "string")}))["text"]
        array(['a', None], dtype=object)
        """
        import numpy as np
        import pandas as pd

        from pbtools.ids import ID_COLUMNS, encode

        out = cls()
        for c, col in df.items():
            if c in ID_COLUMNS or isinstance(col.dtype, pd.CategoricalDtype):
                ids = encode(col)
                out[c] = Coded(ids.cat.codes.to_numpy(), ids.cat.categories.tolist())
            elif col.dtype.kind in "fiu" and isinstance(col.dtype, np.dtype):
                out[c] = col.to_numpy()
            else:
                out[c] = col.astype(object).where(col.notna(), None).to_numpy(dtype=object)
        return out

    def frame(self) -> pd.DataFrame:
        """The frame of these columns (:meth:`from_frame`'s inverse): a :class:`Coded` column
        as an id column (:func:`pbtools.ids.encode`: its dictionary kept when sorted), an
        object column as pandas' ``string`` column, numbers as they are.

        Examples
        --------
        >>> import numpy as np
        >>> df = Columns(qid=Coded([1, 0], ["1", "2"]), text=np.array(["a", None])).frame()
        >>> df["qid"].cat.categories.tolist(), df["text"].tolist(), str(df["text"].dtype)
        (['1', '2'], ['a', <NA>], 'string')
        """
        import pandas as pd

        from pbtools.ids import encode

        data = {}
        for c, col in self.items():
            if isinstance(col, Coded):
                cats = pd.Index(col.strings, dtype="str")
                data[c] = encode(pd.Series(pd.Categorical.from_codes(col.codes, cats), name=c))
            elif col.dtype == object:
                data[c] = pd.array(col, dtype="string")
            else:
                data[c] = col
        return pd.DataFrame(data)


def table_text(df: pd.DataFrame) -> str:
    """``df`` as an aligned text table ending with a newline: the text of
    ``df.to_string(index=False, float_format=lambda v: f"{v:.4f}") + "\\n"``.

    Parameters
    ----------
    df : DataFrame
        Any frame; columns of strings (``str``, categorical, object strings), floats (4
        decimals, ``NaN``) and integers are formatted here, any other frame by pandas.

    Returns
    -------
    str
        The table, one line per row under a header line.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"name": ["a", "run2"], "value": [0.5, float("nan")], "n": [3, 10]})
    >>> print(table_text(df), end="")
    name  value  n
       a 0.5000  3
    run2    NaN 10
    >>> table_text(df) == df.to_string(index=False, float_format=lambda v: f"{v:.4f}") + "\\n"
    True
    """
    simple = len(df) and df.columns.nlevels == 1
    cols = [_cells(df.iloc[:, i]) for i in range(df.shape[1])] if simple else [None]
    if any(c is None for c in cols):
        return df.to_string(index=False, float_format=lambda v: f"{v:.4f}") + "\n"
    numeric = [dtype.kind in "fiu" for dtype in df.dtypes]
    return _layout(list(df.columns), numeric, cols)


def columns_text(table: Columns) -> str | None:
    """A :class:`Columns` table as :func:`table_text` prints the frame of the same cells (the
    one layout of both; no pandas).

    Parameters
    ----------
    table : Columns
        At least one row.

    Returns
    -------
    str or None
        None when a cell holds a tab or a line break (pandas escapes them: left to it).
    """
    import numpy as np

    cols, numeric = [], []
    for col in table.values():
        if isinstance(col, Coded):
            cells = _strings(
                np.array([*col.strings, "NaN"], dtype=object),
                np.where(col.codes < 0, len(col.strings), col.codes),
            )
            numeric.append(False)
        elif col.dtype == object:  # a string column: <NA> for a missing cell
            uniq, inv = np.unique(
                np.where(col == None, "<NA>", col).astype(str),  # noqa: E711
                return_inverse=True,
            )
            cells = _strings(uniq.astype(object), inv.ravel())
            numeric.append(False)
        else:
            cells = _numbers(col)
            numeric.append(True)
        if cells is None:
            return None
        cols.append(cells)
    return _layout(list(table), numeric, cols)


def _layout(names: list, numeric: list, cols: list) -> str:
    """The aligned table of columns given as (distinct cells, each row's cell, widest cell)."""
    import numpy as np

    lines = None
    header = []
    for name, number, (uniq, codes, width) in zip(names, numeric, cols, strict=True):
        title = (" " if number else "") + str(name)  # pandas: numbers' headers
        width = max(width, len(title))
        header.append(title.rjust(width))
        # each distinct cell justified once, then one take per row
        pad = np.array([u.rjust(width) for u in uniq.tolist()], dtype=object)
        col = pad[codes]
        lines = col if lines is None else lines + " " + col
    return " ".join(header) + "\n" + "\n".join(lines.tolist()) + "\n"


def _cells(column: pd.Series) -> tuple[np.ndarray, np.ndarray, int] | None:
    """The column's distinct cells (strings), each row's index into them and the widest cell
    used, or ``None`` for a column pandas formats otherwise (see the module)."""
    import numpy as np
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = dtype.categories
        if not (cats.dtype == "str" or isinstance(cats.dtype, pd.StringDtype)):
            return None
        codes = column.cat.codes.to_numpy()
        uniq = np.append(cats.to_numpy(dtype=object), "NaN")  # code -1: missing
        return _strings(uniq, np.where(codes < 0, len(cats), codes))
    if dtype == "str" or isinstance(dtype, pd.StringDtype):
        codes, uniq = pd.factorize(column, use_na_sentinel=True)
        na = "<NA>" if getattr(dtype, "na_value", None) is pd.NA else "NaN"  # as pandas shows it
        uniq = np.append(uniq.to_numpy(dtype=object), na)
        return _strings(uniq, np.where(codes < 0, len(uniq) - 1, codes))
    if dtype.kind in "fiu" and isinstance(dtype, np.dtype):
        return _numbers(column.to_numpy())
    return None


def _numbers(value: np.ndarray) -> tuple[np.ndarray, np.ndarray, int] | None:
    """The cells of a float column (4 decimals, ``NaN``) or an integer column."""
    import numpy as np

    uniq, inv = np.unique(value, return_inverse=True)  # NaNs: one entry, last
    if value.dtype.kind == "f":
        text = np.array(["NaN" if v != v else f"{v:.4f}" for v in uniq.tolist()], dtype=object)
    else:
        text = np.array([str(v) for v in uniq.tolist()], dtype=object)
    return _strings(text, inv.ravel())


def tsv_text(table: Columns) -> str | None:
    """A :class:`Columns` table as ``DataFrame.to_csv(sep="\\t", index=False,
    float_format="%.4f")`` writes the frame of the same cells (missing cells empty); None when
    a cell would need quotes (a tab, a quote or a line break in it: left to pandas).

    Examples
    --------
    >>> import numpy as np
    >>> t = Columns(name=Coded([0], ["a"]), value=np.array([np.nan]), text=np.array([None]))
    >>> tsv_text(t)
    'name\\tvalue\\ttext\\na\\t\\t\\n'
    """
    import numpy as np

    cols = []
    for col in table.values():
        if isinstance(col, Coded):
            uniq = np.array([*col.strings, ""], dtype=object)
            cells = uniq[np.where(col.codes < 0, len(col.strings), col.codes)]
        elif col.dtype == object:
            uniq = np.array([s for s in col.tolist() if s is not None], dtype=object)
            cells = np.where(col == None, "", col).astype(object)  # noqa: E711
        else:
            uniq, inv = np.unique(col, return_inverse=True)
            fmt = "%.4f" if col.dtype.kind == "f" else "%d"
            text = np.array(["" if v != v else fmt % v for v in uniq.tolist()], dtype=object)
            cells = text[inv.ravel()]
        if any(_quoted(s) for s in np.unique(uniq.astype(str)).tolist()):
            return None
        cols.append(cells)
    if any(_quoted(str(c)) for c in table):
        return None
    lines = ["\t".join(str(c) for c in table)]
    if len(table):
        row = cols[0].astype(object)
        for c in cols[1:]:
            row = row + "\t" + c
        lines += row.tolist()
    return "\n".join(lines) + "\n"


def _quoted(cell: str) -> bool:
    """The csv module would quote the cell (QUOTE_MINIMAL, tab-separated)."""
    return any(ch in cell for ch in '\t"\n\r')


def _strings(uniq: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, int] | None:
    import numpy as np

    if any(("\t" in s or "\n" in s or "\r" in s) for s in uniq.tolist()):  # pandas escapes them
        return None
    used = np.zeros(len(uniq), dtype=bool)
    used[codes] = True
    width = max((len(s) for s in uniq[used].tolist()), default=0)
    return uniq, codes, width
