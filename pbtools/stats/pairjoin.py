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
from pbtools.stats.matrix import TableBlocks

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
    pairs = [_dictionary(c) for c in columns]
    maps, size = _joint([values for _, values in pairs], as_str)
    return list(zip([codes for codes, _ in pairs], maps, strict=True)), size


def _dictionary(c: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, values)`` of a column: a categorical's own codes (a view: ``.cat.codes``
    copies them, a runs² table's column) and categories, a missing value (code −1) reading an
    entry appended last; another column factorized."""
    if isinstance(c.dtype, pd.CategoricalDtype):
        code = c.array.codes
        values = np.asarray(c.cat.categories, dtype=object)
        if len(code) and code.min() < 0:
            values = np.append(values, np.nan)
        return code, values
    code, values = pd.factorize(c.to_numpy(), use_na_sentinel=False)
    return code, np.asarray(values, dtype=object)


def _joint(dicts: list[np.ndarray], as_str: bool) -> tuple[list[np.ndarray], int]:
    """Each dictionary's entries mapped to codes of one shared dictionary, and its size."""
    dicts = [d.astype(str).astype(object) if as_str else d for d in dicts]
    every = pd.Series(np.concatenate(dicts) if dicts else [], dtype=object)
    joint, uniq = pd.factorize(every, use_na_sentinel=False)
    bounds = np.cumsum([0, *(len(d) for d in dicts)])
    maps = [joint[a:b].astype(np.int64) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return maps, len(uniq)


def _table_codes(significance, columns: list[str]):
    """``(dictionaries, blocks)`` of a significance table — a frame or
    :class:`~pbtools.stats.matrix.TableBlocks` — for ``columns``: each column's dictionary,
    and the table read :data:`SIG_ROWS` rows (or a block) at a time as ``(codes of each
    column, the block's frame)``."""
    frame = significance.frame if isinstance(significance, TableBlocks) else significance
    if frame is None:  # blocks computed as they are read: the dictionaries of their dtypes
        dicts = [np.asarray(significance.dtypes[c].categories, dtype=object) for c in columns]

        def blocks():
            for block in significance:
                codes = [block[c].array.codes for c in columns]
                if any(len(x) and x.min() < 0 for x in codes):
                    raise ValueError("significance: a block has missing names or keys")
                yield codes, block

        return dicts, blocks()
    pairs = [_dictionary(frame[c]) for c in columns]
    if isinstance(significance, TableBlocks):  # a frame's blocks, read (a writer sees them)
        parts = iter(significance)
    else:
        parts = (frame.iloc[a : a + SIG_ROWS] for a in range(0, len(frame), SIG_ROWS))

    def slices():
        at = 0
        for block in parts:
            yield [codes[at : at + len(block)] for codes, _ in pairs], block
            at += len(block)

    return [values for _, values in pairs], slices()


def _ordered(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Element-wise (min, max): the unordered pair's key."""
    first = a <= b
    return np.where(first, a, b), np.where(first, b, a)


def crossed_rejects(df: pd.DataFrame, i, j, significance: pd.DataFrame, keys, alpha: float):
    """Whether each crossed pair (rows ``i``, ``j`` of ``df``) is significant in
    ``significance`` (``name_a``, ``name_b``, ``reject`` or ``p_value``: reject = p < alpha):
    a frame, read :data:`SIG_ROWS` rows at a time, or a table of blocks
    (:class:`~pbtools.stats.matrix.TableBlocks`, e.g. SRE*'s tests streamed by
    :func:`pbtools.stats.sre_significance` with ``blocks=True``), read once, block by block.

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
    require_columns(significance, ("name_a", "name_b"), "significance")  # a frame or blocks
    columns = significance.columns
    if "reject" not in columns and "p_value" not in columns:
        raise ValueError("significance needs a 'reject' or a 'p_value' column")
    join_keys = [k for k in keys if k in columns]
    dicts, blocks = _table_codes(significance, ["name_a", "name_b", *join_keys])
    run_code, run_dict = _dictionary(df["name"])
    (run_map, a_map, b_map), n_names = _joint([run_dict, dicts[0], dicts[1]], as_str=True)
    run = run_map[run_code]
    p_lo, p_hi = _ordered(run[i], run[j])
    pkey = np.zeros(len(i), dtype=np.int64)
    sides = []
    for k, k_dict in zip(join_keys, dicts[2:], strict=True):
        k_code, df_dict = _dictionary(df[k])
        (dk, sk), n = _joint([df_dict, k_dict], as_str=False)
        pkey = pkey * n + dk[k_code][i]
        sides.append((sk, n))
    pkey = (pkey * n_names + p_lo) * n_names + p_hi
    uq, inv = np.unique(pkey, return_inverse=True)
    count = np.zeros(len(uq), dtype=np.int64)
    rej = np.zeros(len(uq), dtype=bool)
    na = np.zeros(len(uq), dtype=bool)
    for codes, block in blocks:
        if not len(uq):
            continue  # nothing to look up (the blocks are still read: a writer may see them)
        skey = np.zeros(len(block), dtype=np.int64)
        for (mapping, n), kc in zip(sides, codes[2:], strict=True):
            skey = skey * n + mapping[kc]
        s_lo, s_hi = _ordered(a_map[codes[0]], b_map[codes[1]])
        skey = (skey * n_names + s_lo) * n_names + s_hi
        pos = np.minimum(np.searchsorted(uq, skey), len(uq) - 1)
        hit = np.flatnonzero(uq[pos] == skey)
        if not len(hit):
            continue
        at = pos[hit]
        count += np.bincount(at, minlength=len(uq))
        if "reject" in columns:
            r = block["reject"].iloc[hit]
            na[at] = r.isna().to_numpy()
            rej[at] = r.fillna(False).to_numpy().astype(bool)
        else:
            rej[at] = block["p_value"].to_numpy(float)[hit] < alpha
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
