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

__all__ = ["table_text"]


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
    import numpy as np

    simple = len(df) and df.columns.nlevels == 1
    cols = [_cells(df.iloc[:, i]) for i in range(df.shape[1])] if simple else [None]
    if any(c is None for c in cols):
        return df.to_string(index=False, float_format=lambda v: f"{v:.4f}") + "\n"
    lines = None
    header = []
    for name, dtype, (uniq, codes, width) in zip(df.columns, df.dtypes, cols, strict=True):
        title = (" " if dtype.kind in "fiu" else "") + str(name)  # pandas: numbers' headers
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
    if dtype.kind == "f" and isinstance(dtype, np.dtype):
        value = column.to_numpy()
        uniq, inv = np.unique(value, return_inverse=True)  # NaNs: one entry, last
        text = np.array(["NaN" if v != v else f"{v:.4f}" for v in uniq.tolist()], dtype=object)
        return _strings(text, inv.ravel())
    if dtype.kind in "iu" and isinstance(dtype, np.dtype):
        uniq, inv = np.unique(column.to_numpy(), return_inverse=True)
        return _strings(np.array([str(v) for v in uniq.tolist()], dtype=object), inv.ravel())
    return None


def _strings(uniq: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, int] | None:
    import numpy as np

    if any(("\t" in s or "\n" in s or "\r" in s) for s in uniq.tolist()):  # pandas escapes them
        return None
    used = np.zeros(len(uniq), dtype=bool)
    used[codes] = True
    width = max((len(s) for s in uniq[used].tolist()), default=0)
    return uniq, codes, width
