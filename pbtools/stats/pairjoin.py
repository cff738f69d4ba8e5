"""The join behind SRE*: each crossed pair of runs looked up in a significance table of every
pair, a chunk of the table at a time (issue 25 item 4).

A significance table has one row per pair of runs, key and measure (runs² rows); the crossed
pairs of SRE are few. :func:`crossed_rejects` keys both sides on integer codes of one shared
dictionary (:func:`joint_dictionaries`: a categorical column costs its codes, never a Python
string per row) and reads the table :data:`SIG_ROWS` rows at a time against the sorted keys of
the crossed pairs, so its temporaries are bounded whatever the number of runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.frames import require_columns

__all__ = ["SIG_ROWS", "crossed_rejects", "joint_dictionaries"]

#: rows of a significance table keyed at once by :func:`crossed_rejects`
SIG_ROWS = 1 << 18


def joint_dictionaries(*columns: pd.Series, as_str: bool = False):
    """Codes of several columns in one shared dictionary (equal values, equal codes; with
    ``as_str``, equal ``str`` of the values), each as ``(codes, mapping)``: row r's joint code
    is ``mapping[codes[r]]``.

    A categorical column keeps its own codes (a missing value, code −1, reads the mapping's
    last entry); another is factorized. Returns the pairs and the size of the dictionary.

    Examples
    --------
    >>> a = pd.Series(pd.Categorical(["x", "y", "x"]))
    >>> (ca, ma), (cb, mb) = joint_dictionaries(a, pd.Series(["y", "z"]))[0]
    >>> ma[ca].tolist(), mb[cb].tolist()
    ([0, 1, 0], [1, 2])
    """
    dicts, codes = [], []
    for c in columns:
        if isinstance(c.dtype, pd.CategoricalDtype):
            code = c.array.codes  # a view: ``.cat.codes`` copies them (a runs² table's column)
            values = np.asarray(c.cat.categories, dtype=object)
            if len(code) and code.min() < 0:  # missing values: one more entry, last (−1 reads it)
                values = np.append(values, np.nan)
        else:
            code, values = pd.factorize(c.to_numpy(), use_na_sentinel=False)
            values = np.asarray(values, dtype=object)
        dicts.append(values.astype(str).astype(object) if as_str else values)
        codes.append(code)
    every = pd.Series(np.concatenate(dicts) if dicts else [], dtype=object)
    joint, uniq = pd.factorize(every, use_na_sentinel=False)
    bounds = np.cumsum([0, *(len(d) for d in dicts)])
    maps = [joint[a:b].astype(np.int64) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return list(zip(codes, maps, strict=True)), len(uniq)


def _ordered(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Element-wise (min, max): the unordered pair's key."""
    first = a <= b
    return np.where(first, a, b), np.where(first, b, a)


def crossed_rejects(df: pd.DataFrame, i, j, significance: pd.DataFrame, keys, alpha: float):
    """Whether each crossed pair (rows ``i``, ``j`` of ``df``) is significant in
    ``significance`` (``name_a``, ``name_b``, ``reject`` or ``p_value``: reject = p < alpha).

    Joined on the unordered pair of ``name`` plus every column of ``keys`` the table has. A
    crossed pair the table lacks, or has twice, or whose ``reject`` is missing raises
    ValueError.

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["a", "b", "c"]})
    >>> sig = pd.DataFrame({"name_a": ["a", "a", "b"], "name_b": ["b", "c", "c"],
    ...                     "p_value": [0.01, 0.5, 0.02]})
    >>> crossed_rejects(df, np.array([1, 2]), np.array([0, 1]), sig, [], 0.05).tolist()
    [True, True]
    """
    require_columns(significance, ("name_a", "name_b"), "significance")
    if "reject" not in significance.columns and "p_value" not in significance.columns:
        raise ValueError("significance needs a 'reject' or a 'p_value' column")
    join_keys = [k for k in keys if k in significance.columns]
    (run, sa, sb), n_names = joint_dictionaries(
        df["name"], significance["name_a"], significance["name_b"], as_str=True
    )
    run = run[1][run[0]]
    p_lo, p_hi = _ordered(run[i], run[j])
    pkey = np.zeros(len(i), dtype=np.int64)
    sides = []
    for k in join_keys:
        (dk, sk), n = joint_dictionaries(df[k], significance[k])
        pkey = pkey * n + dk[1][dk[0]][i]
        sides.append((sk, n))
    pkey = (pkey * n_names + p_lo) * n_names + p_hi
    uq, inv = np.unique(pkey, return_inverse=True)
    count = np.zeros(len(uq), dtype=np.int64)
    rej = np.zeros(len(uq), dtype=bool)
    na = np.zeros(len(uq), dtype=bool)
    for a in range(0, len(significance) if len(uq) else 0, SIG_ROWS):
        b = min(a + SIG_ROWS, len(significance))
        skey = np.zeros(b - a, dtype=np.int64)
        for (codes, mapping), n in sides:
            skey = skey * n + mapping[codes[a:b]]
        s_lo, s_hi = _ordered(sa[1][sa[0][a:b]], sb[1][sb[0][a:b]])
        skey = (skey * n_names + s_lo) * n_names + s_hi
        pos = np.minimum(np.searchsorted(uq, skey), len(uq) - 1)
        hit = np.flatnonzero(uq[pos] == skey)
        if not len(hit):
            continue
        at = pos[hit]
        count += np.bincount(at, minlength=len(uq))
        if "reject" in significance.columns:
            r = significance["reject"].iloc[a:b].iloc[hit]
            na[at] = r.isna().to_numpy()
            rej[at] = r.fillna(False).to_numpy().astype(bool)
        else:
            rej[at] = significance["p_value"].to_numpy(float)[a:b][hit] < alpha
    on = [*join_keys, "_lo", "_hi"]
    if (count > 1).any():
        raise ValueError(f"significance has duplicate pairs for keys {on[:-2]}")
    bad = ((count == 0) | na)[inv]
    if bad.any():
        names = df["name"].astype(str).to_numpy(dtype=object)
        lo_n, hi_n = _ordered(names[i[bad]], names[j[bad]])
        miss = pd.DataFrame({k: df[k].to_numpy()[i[bad]] for k in join_keys})
        miss["_lo"], miss["_hi"] = lo_n, hi_n
        miss = miss.drop_duplicates().head(5)
        raise ValueError(f"significance lacks crossed pairs (joined on {on[:-2]} + pair):\n{miss}")
    return rej[inv]
