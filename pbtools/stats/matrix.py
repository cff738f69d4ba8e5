"""Per-topic results → a dense runs × topics score matrix, shared by the statistics in
:mod:`pbtools.stats`.

Every paired statistic (Tukey HSD, bootstrap/t/randomisation tests, G-theory) needs the same
balanced design: each run scored on the same topics. :func:`score_matrix` builds it with one
scatter into a numpy array and fails loudly on anything else.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def _stack_categorical(parts: list, col: str) -> pd.Categorical:
    """The categorical column ``col`` of ``parts`` stacked over the union of their categories."""
    cats = [p[col].cat.categories for p in parts]
    union = pd.Index(sorted(set().union(*(c.astype(str) for c in cats))), dtype="str")
    dtype = pd.CategoricalDtype(union)
    codes = []
    for p, c in zip(parts, cats, strict=True):
        m = union.get_indexer(c.astype(str))
        code = p[col].cat.codes.to_numpy()
        codes.append(np.where(code >= 0, m[code], -1))
    return pd.Categorical.from_codes(np.concatenate(codes), dtype=dtype)


def by_groups(
    results: pd.DataFrame, by: list[str], test, categorical: bool = False
) -> pd.DataFrame:
    """``test(group)`` (a frame of pairs) within each group of the ``by`` keys, the keys
    leading the output (sorted groups); ``by=[]``: ``test(results)``.

    ``categorical``: the keys are categorical, and so are the groups' categorical columns
    (over the union of their categories), the output built a column at a time (each group's
    column freed as it is stacked): a table of runs² pairs is held about once, not twice.

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
    if categorical and parts:
        group = np.repeat(np.arange(len(keys)), sizes)
        cols: dict = {}
        for c, name in enumerate(by):
            cat = pd.Categorical(pd.Series([k[c] for k in keys]))
            cols[name] = pd.Categorical.from_codes(cat.codes[group], dtype=cat.dtype)
        for col in list(parts[0].columns):
            if isinstance(parts[0][col].dtype, pd.CategoricalDtype):
                cols[col] = _stack_categorical(parts, col)
            else:
                cols[col] = np.concatenate([p[col].to_numpy() for p in parts])
            for p in parts:
                del p[col]
        return pd.DataFrame(cols)
    out = pd.concat(parts, ignore_index=True)
    for c in reversed(range(len(by))):  # the keys lead, one insert per key column
        vals = pd.Series([k[c] for k in keys])  # inferred as a scalar key inserted would be
        out.insert(0, by[c], vals.iloc[np.repeat(np.arange(len(keys)), sizes)].to_numpy())
    return out
