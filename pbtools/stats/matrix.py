"""Per-topic results → a dense runs × topics score matrix, shared by the statistics in
:mod:`pbtools.stats`.

Every paired statistic (Tukey HSD, bootstrap/t/randomisation tests, G-theory) needs the same
balanced design: each run scored on the same topics. :func:`score_matrix` builds it with one
scatter into a numpy array and fails loudly on anything else.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pandas as pd

from pbtools.errors import InputError
from pbtools.frames import require_columns

RESULT_COLUMNS = ("name", "qid", "value")


@dataclass(frozen=True)
class ScoreMatrix:
    """A balanced runs × topics design: ``values[i, j]`` is run ``names[i]`` on ``qids[j]``.

    Parameters
    ----------
    names, qids : numpy.ndarray
        Run names and topic ids (object arrays, sorted as strings).
    values : numpy.ndarray
        float64, shape (k, t); ``k`` and ``t`` are properties.

    Examples
    --------
    >>> import numpy as np
    >>> sm = ScoreMatrix(np.array(["a", "b"]), np.array(["1"]), np.array([[0.5], [0.2]]))
    >>> sm.k, sm.t
    (2, 1)
    """

    names: np.ndarray
    qids: np.ndarray
    values: np.ndarray

    @property
    def k(self) -> int:
        return self.values.shape[0]

    @property
    def t(self) -> int:
        return self.values.shape[1]


def select_measure(results: pd.DataFrame, measure: str | None) -> pd.DataFrame:
    """Filter a tidy per-topic frame to one measure; ``measure=None`` needs a single measure.

    Parameters
    ----------
    results : DataFrame
        ``name``, ``qid``, ``value`` [, ``measure``].
    measure : str, optional

    Returns
    -------
    DataFrame
        The rows of ``measure`` (``results`` itself when there is nothing to filter).

    Examples
    --------
    >>> import pandas as pd
    >>> res = pd.DataFrame({"name": "a", "qid": "1", "measure": ["AP", "P@10"], "value": [.3, .5]})
    >>> select_measure(res, "P@10")["value"].tolist()
    [0.5]
    """
    require_columns(results, RESULT_COLUMNS, "per-topic results")
    if "measure" not in results.columns:
        if measure is not None:
            raise InputError(f"measure={measure!r} given but the results have no 'measure' column")
        return results
    present = pd.unique(results["measure"].astype(str))
    if measure is None:
        if len(present) > 1:
            raise InputError(f"results hold several measures {sorted(present)}; pass measure=")
        return results
    out = results[results["measure"].astype(str) == str(measure)]
    if out.empty:
        raise InputError(f"measure {measure!r} not in results (it has {sorted(present)})")
    return out


def score_matrix(
    results: pd.DataFrame, measure: str | None = None, missing: bool = False
) -> ScoreMatrix:
    """Pivot ``name``, ``qid``, ``value`` (optionally filtered on ``measure``) to a dense matrix.

    Runs and topics are sorted as strings. Raises ``ValueError`` for fewer than 2 runs, duplicate
    (name, qid) rows, missing values, or an unbalanced design (the message names the runs and the
    topics they lack) unless ``missing=True``, which leaves a cell without a row NaN.

    Parameters
    ----------
    results : DataFrame
        ``name``, ``qid``, ``value`` [, ``measure``].
    measure : str, optional
    missing : bool
        Accept an unbalanced design (the absent cells NaN).

    Returns
    -------
    ScoreMatrix

    Examples
    --------
    >>> import pandas as pd
    >>> res = pd.DataFrame({"name": list("bbaa"), "qid": list("2121"), "value": [4, 3, 2, 1]})
    >>> score_matrix(res).values.tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    df = select_measure(results, measure)
    name_codes, names = pd.factorize(df["name"].astype(str), sort=True)
    qid_codes, qids = pd.factorize(df["qid"].astype(str), sort=True)
    k, t = len(names), len(qids)
    if k < 2:
        raise InputError(f"need at least 2 runs, got {k}: {list(names)}")
    values = df["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    if np.isnan(values).any():
        bad = df.loc[np.isnan(values), ["name", "qid"]].head(5).to_records(index=False).tolist()
        raise InputError(f"missing values for (name, qid) such as {bad}")
    flat = name_codes.astype(np.int64) * t + qid_codes
    counts = np.bincount(flat, minlength=k * t)
    if (counts > 1).any():
        dup = np.flatnonzero(counts > 1)[:5]
        pairs = [(names[i // t], qids[i % t]) for i in dup]
        raise InputError(f"duplicate (name, qid) rows, e.g. {pairs}")
    if (counts == 0).any() and not missing:
        missing = (counts == 0).reshape(k, t)
        bad_runs = np.flatnonzero(missing.any(axis=1))
        detail = "; ".join(f"{names[i]} lacks {list(qids[missing[i]][:10])}" for i in bad_runs[:5])
        raise InputError(
            f"unbalanced design: runs must be scored on the same topics (aligned on qid); "
            f"{len(bad_runs)} run(s) lack topics: {detail}"
        )
    mat = np.full(k * t, np.nan, dtype=np.float64)
    mat[flat] = values
    return ScoreMatrix(
        np.asarray(names, dtype=object), np.asarray(qids, dtype=object), mat.reshape(k, t)
    )


def pair_indices(k: int) -> tuple[np.ndarray, np.ndarray]:
    """All unordered pairs ``(a, b)``, ``a < b``, of ``k`` runs: ``k(k-1)/2`` index pairs.

    Parameters
    ----------
    k : int

    Returns
    -------
    a, b : numpy.ndarray

    Examples
    --------
    >>> [x.tolist() for x in pair_indices(3)]
    [[0, 0, 1], [1, 2, 2]]
    """
    return np.triu_indices(k, 1)


def pair_names(names, a, b, categorical: bool = False):
    """The ``name_a``, ``name_b`` columns of the pairs ``(a, b)`` of ``names`` (sorted, unique):
    strings, or with ``categorical`` dictionary codes into ``names`` (2 bytes a row below
    32,768 runs, instead of a string each).

    Examples
    --------
    >>> a, b = pair_names(np.array(["x", "y", "z"]), *pair_indices(3), categorical=True)
    >>> a.tolist(), b.tolist(), str(a.codes.dtype)
    (['x', 'x', 'y'], ['y', 'z', 'z'], 'int8')
    """
    if categorical:
        dtype = pd.CategoricalDtype(pd.Index(np.asarray(names, dtype=object), dtype="str"))
        return tuple(pd.Categorical.from_codes(x, dtype=dtype) for x in (a, b))
    return pd.array(names[a], dtype="str"), pd.array(names[b], dtype="str")


#: pairs of runs a pair test computes at once (:func:`pair_table`): its temporaries are bounded
#: whatever the number of runs
PAIR_BLOCK = 1 << 18


def pair_slice(k: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``lo`` to ``hi - 1`` of :func:`pair_indices` (``k``): a block of them, without the
    ``k(k-1)/2`` pairs.

    Examples
    --------
    >>> [x.tolist() for x in pair_slice(4, 2, 5)], [x[2:5].tolist() for x in pair_indices(4)]
    ([[0, 1, 1], [3, 2, 3]], [[0, 1, 1], [3, 2, 3]])
    """
    first = np.arange(k, dtype=np.int64)
    start = first * (2 * k - first - 1) // 2  # the position of (a, a + 1)
    pos = np.arange(lo, hi, dtype=np.int64)
    a = np.searchsorted(start, pos, side="right") - 1
    return a, pos - start[a] + a + 1


def code_dtype(n: int) -> np.dtype:
    """The integer type pandas keeps the codes of ``n`` categories in (int8 below 127 …).

    Examples
    --------
    >>> str(code_dtype(100)), str(code_dtype(2000))
    ('int8', 'int16')
    """
    for dtype in (np.int8, np.int16, np.int32):
        if n < np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


class TableBlocks:
    """A table given as blocks of rows — the same columns and dtypes in every block — computed
    as they are read, and read once (a table of runs² pairs that is never held whole: issue 30
    item 4). :func:`pair_blocks` gives one, :meth:`of_frame` views a frame so.

    ``dtypes`` holds the :class:`~pandas.CategoricalDtype` of each categorical column (its
    dictionary, known before any block); ``rows`` the rows of all the blocks. ``sink``, when
    set, is called with each block as it is read (a writer of the table, block by block);
    :meth:`drain` reads the blocks left.

    Examples
    --------
    >>> t = TableBlocks.of_frame(pd.DataFrame({"x": [1, 2, 3]}), 2)
    >>> seen = []
    >>> t.sink = seen.append
    >>> [len(b) for b in t], len(t), [len(b) for b in seen]
    ([2, 1], 3, [2, 1])
    """

    def __init__(self, columns, dtypes: dict, rows: int, blocks):
        self.columns = pd.Index(list(columns))
        self.dtypes, self.rows, self._blocks, self.sink = dict(dtypes), int(rows), blocks, None
        self._stream = None
        #: the whole table when the blocks are a frame's (:meth:`of_frame`), else None
        self.frame: pd.DataFrame | None = None

    def __len__(self) -> int:
        return self.rows

    def __iter__(self):
        if self._stream is not None:
            raise RuntimeError("a table of blocks is read once")
        self._stream = self._read()
        return self._stream

    def _read(self):
        for block in self._blocks:
            if self.sink is not None:
                self.sink(block)
            yield block

    def drain(self) -> None:
        """Read the blocks not read yet (each handed to :attr:`sink`)."""
        for _ in self._stream if self._stream is not None else self:
            pass

    @classmethod
    def of_frame(cls, df: pd.DataFrame, rows: int) -> TableBlocks:
        """``df`` as blocks of ``rows`` rows (:attr:`frame` is ``df``: a reader may take its
        dictionaries from the whole columns)."""
        dtypes = {c: t for c, t in df.dtypes.items() if isinstance(t, pd.CategoricalDtype)}
        parts = (df.iloc[a : a + rows] for a in range(0, len(df), max(1, rows)))
        out = cls(df.columns, dtypes, len(df), parts)
        out.frame = df
        return out


def _pair_plan(results: pd.DataFrame, by: list[str], prepare) -> SimpleNamespace:
    """The groups of a table of pairs (:func:`pair_table`): their keys, runs, pairs, fits
    (a generator, the first one computed), the union of their names and the keys' dtypes."""
    if by:
        grouped = results.groupby(list(by), sort=True, observed=True)
        counts = grouped["name"].nunique()
        keys = [k if isinstance(k, tuple) else (k,) for k in counts.index]
        runs = counts.to_numpy(dtype=np.int64)
        fits = (prepare(g) for _, g in grouped)
        every = results[results[list(by)].notna().all(axis=1)]["name"]
        union = pd.Index(sorted(set(every.astype(str))), dtype="str")
    else:
        only = prepare(results)
        keys, runs, fits = [()], np.array([len(only.names)], dtype=np.int64), iter([only])
        union = pd.Index(np.asarray(only.names, dtype=object), dtype="str")
    first = next(fits, None)  # the test's columns, before any pair
    fits = iter(()) if first is None else itertools.chain([first], fits)
    return SimpleNamespace(
        keys=keys,
        runs=runs,
        sizes=runs * (runs - 1) // 2,
        fits=fits,
        columns=tuple(first.columns) if first is not None else (),
        union=union,
        key_dtypes=[pd.Categorical(pd.Series([k[c] for k in keys])) for c in range(len(by))],
    )


def _pair_parts(plan: SimpleNamespace):
    """``(group, first row, codes a, codes b, {column: values})`` a block of pairs at a time."""
    at = 0
    for g, (n, k, fit) in enumerate(zip(plan.sizes, plan.runs, plan.fits, strict=True)):
        if len(fit.names) != k:  # the groups' names counted unlike the test's: a bug
            raise RuntimeError(f"pair_table: {len(fit.names)} runs fitted, {k} counted")
        to = plan.union.get_indexer(pd.Index(np.asarray(fit.names, dtype=object), dtype="str"))
        for lo in range(0, int(n), fit.block):
            hi = min(int(n), lo + fit.block)
            a, b = pair_slice(int(k), lo, hi)
            yield g, at + lo, to[a], to[b], fit.pairs(a, b)
        at += int(n)


def pair_table(results: pd.DataFrame, by: list[str], prepare, categorical: bool = False):
    """A pair test within each group of the ``by`` keys (sorted groups, the keys leading),
    written a block of pairs at a time straight into the table's columns: besides the table,
    memory of one group's fit and one block (issue 25 item 4), never the pairs of a group twice.

    ``prepare(group)`` fits the test on a group's rows and returns an object with ``names``
    (the group's runs, sorted), ``columns`` (the test's columns, in order), ``block`` (pairs
    at once) and ``pairs(a, b)`` → {column: values} for index pairs into ``names``
    (e.g. :class:`pbtools.stats.hsd.HsdFit`). ``name_a`` and ``name_b`` are strings, or
    with ``categorical`` codes into the union of the groups' names (the keys categorical too,
    as they must be with ``by``). :func:`pair_blocks` gives the same table as blocks, never
    whole.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> res = pd.DataFrame({"m": ["x", "x", "y", "y", "y"], "name": list("ababc"),
    ...                     "value": [1.0, 2.0, 3.0, 5.0, 4.0]})
    >>> def prepare(g):
    ...     v = g.groupby("name")["value"].first()
    ...     return SimpleNamespace(names=v.index.to_numpy(), columns=("diff",), block=2,
    ...                            pairs=lambda a, b: {"diff": v.to_numpy()[a] - v.to_numpy()[b]})
    >>> pair_table(res, ["m"], prepare, categorical=True).to_numpy().tolist()
    [['x', 'a', 'b', -1.0], ['y', 'a', 'b', -2.0], ['y', 'a', 'c', -1.0], ['y', 'b', 'c', 1.0]]
    """
    if by and not categorical:
        raise ValueError("pair_table: a grouped table is categorical (by_groups otherwise)")
    plan = _pair_plan(results, by, prepare)
    total = int(plan.sizes.sum())
    code_a, code_b = (np.empty(total, dtype=code_dtype(len(plan.union))) for _ in range(2))
    cols: dict = dict.fromkeys(plan.columns)
    for _g, at, a, b, values in _pair_parts(plan):
        part = slice(at, at + len(a))
        code_a[part], code_b[part] = a, b
        for c, v in values.items():
            if cols.get(c) is None:
                cols[c] = np.empty(total, dtype=v.dtype)
            cols[c][part] = v
    out: dict = {}
    for name, cat in zip(by, plan.key_dtypes, strict=True):
        out[name] = pd.Categorical.from_codes(np.repeat(cat.codes, plan.sizes), dtype=cat.dtype)
    out["name_a"], out["name_b"] = pair_names(
        plan.union.to_numpy(dtype=object), code_a, code_b, categorical
    )
    out.update(cols)
    return pd.DataFrame(out, copy=False)


def pair_blocks(results: pd.DataFrame, by: list[str], prepare) -> TableBlocks:
    """The categorical table of :func:`pair_table` as :class:`TableBlocks`: each block of
    pairs a frame of its own (the keys, ``name_a`` and ``name_b`` categorical on the whole
    table's dictionaries), computed when it is read — never the table of every pair.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> res = pd.DataFrame({"m": ["x", "x", "y", "y", "y"], "name": list("ababc"),
    ...                     "value": [1.0, 2.0, 3.0, 5.0, 4.0]})
    >>> def prepare(g):
    ...     v = g.groupby("name")["value"].first()
    ...     return SimpleNamespace(names=v.index.to_numpy(), columns=("diff",), block=2,
    ...                            pairs=lambda a, b: {"diff": v.to_numpy()[a] - v.to_numpy()[b]})
    >>> t = pair_blocks(res, ["m"], prepare)
    >>> len(t), [b.to_numpy().tolist() for b in t]
    (4, [[['x', 'a', 'b', -1.0]], [['y', 'a', 'b', -2.0], ['y', 'a', 'c', -1.0]], \
[['y', 'b', 'c', 1.0]]])
    """
    plan = _pair_plan(results, by, prepare)
    names = pd.CategoricalDtype(plan.union)
    dtypes = {n: cat.dtype for n, cat in zip(by, plan.key_dtypes, strict=True)}
    dtypes.update(name_a=names, name_b=names)

    def blocks():
        for g, at, a, b, values in _pair_parts(plan):
            n = len(a)
            out = {
                name: pd.Categorical.from_codes(np.full(n, cat.codes[g]), dtype=cat.dtype)
                for name, cat in zip(by, plan.key_dtypes, strict=True)
            }
            out["name_a"] = pd.Categorical.from_codes(a, dtype=names)
            out["name_b"] = pd.Categorical.from_codes(b, dtype=names)
            out.update(values)
            yield pd.DataFrame(out, index=pd.RangeIndex(at, at + n), copy=False)

    columns = [*by, "name_a", "name_b", *plan.columns]
    return TableBlocks(columns, dtypes, int(plan.sizes.sum()), blocks())


def by_groups(results: pd.DataFrame, by: list[str], test) -> pd.DataFrame:
    """``test(group)`` (a frame of pairs) within each group of the ``by`` keys, the keys
    leading the output (sorted groups); ``by=[]``: ``test(results)``. (A compact table of
    runs² pairs is written without stacking the groups' tables: :func:`pair_table`.)

    Examples
    --------
    >>> import pandas as pd
    >>> res = pd.DataFrame({"measure": ["AP", "AP", "P@5"], "value": [1, 2, 3]})
    >>> by_groups(res, ["measure"], lambda g: pd.DataFrame({"n": [len(g)]}))
      measure  n
    0      AP  2
    1     P@5  1
    """
    if not by:
        return test(results)
    parts, keys = [], []
    for key, grp in results.groupby(list(by), sort=True, observed=True):
        parts.append(test(grp))
        keys.append(key if isinstance(key, tuple) else (key,))
    sizes = [len(p) for p in parts]
    out = pd.concat(parts, ignore_index=True)
    for c in reversed(range(len(by))):  # the keys lead, one insert per key column
        vals = pd.Series([k[c] for k in keys])  # inferred as a scalar key inserted would be
        out.insert(0, by[c], vals.iloc[np.repeat(np.arange(len(keys)), sizes)].to_numpy())
    return out
