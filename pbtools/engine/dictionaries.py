"""The id dictionaries of a dense encoding (:class:`pbtools.engine.dense.DenseRuns`): unions
of encoded columns' dictionaries and the maps of each column's codes into them, the runs'
slots, and the rows of a run frame an encoding reads (without copying the frame).

Each map is an int64 array indexed by a column's own codes (None: the codes are the union's
already), so that an encoding can turn its entries into union codes a chunk of rows at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.ids import code_map, encode, index_in  # code_map: re-exported

__all__ = [
    "code_map",
    "map_codes",
    "pooled_rows",
    "slot_maps",
    "slot_rows",
    "union_codes",
    "union_index",
]


def union_index(indexes: Sequence[pd.Index], sort: bool) -> pd.Index:
    """The union of ``indexes`` in first-occurrence order (sorted when ``sort``); the first
    index itself when they are all equal.

    Examples
    --------
    >>> union_index([pd.Index(["b", "a"]), pd.Index(["c", "a"])], sort=True).tolist()
    ['a', 'b', 'c']
    """
    first = indexes[0]
    if all(ix is first or ix.equals(first) for ix in indexes[1:]):
        return first
    out = first.append(list(indexes[1:])).unique()
    return out.sort_values() if sort else out


def union_codes(
    cols: Sequence[pd.Series], first: pd.Index | None = None, known: Sequence = ()
) -> tuple[pd.Index, list]:
    """The union of encoded id columns' dictionaries, in first-occurrence order (the first
    column's categories, then the others' new ids in order, as ``append(...).unique()``), and
    each dictionary with its map into the union (None: identity; a column's codes in the
    union: :func:`map_codes`).

    Only the other dictionaries are looked up in the first (the big side: the runs'
    documents); the first column's codes are used as they are. ``first``: a dictionary the
    union starts with instead (an encoding's documents, :meth:`DenseRuns.extended`), with
    ``known`` its ``(dictionary, map)`` pairs: a column with one of those dictionaries (the
    same object: runs of one collection share it) is mapped without a lookup.

    Examples
    --------
    >>> a, b = encode(pd.Series(["x", "y"])), encode(pd.Series(["z", "x"]))
    >>> union, maps = union_codes([a, b])
    >>> union.tolist(), maps[0][1], maps[1][1].tolist()
    (['x', 'y', 'z'], None, [0, 2])
    """
    cats = [s.cat.categories for s in cols]
    first = cats[0] if first is None else first
    extra = first[:0]
    maps: list[np.ndarray | None] = []
    for c in cats:
        if c is first or c.equals(first):
            maps.append(None)
            continue
        seen = [m for k, m in known if k is c]
        if seen:
            maps.append(seen[0])
            continue
        m = index_in(c, first)  # hashed in Arrow (pandas would rebuild its table)
        miss = m < 0
        if miss.any():
            new = c[miss]
            extra = extra.append(new[extra.get_indexer(new) < 0])
            m[miss] = len(first) + extra.get_indexer(new)
        maps.append(m)
    union = first.append(extra) if len(extra) else first
    return union, list(zip(cats, maps, strict=True))


def map_codes(col: pd.Series, m: np.ndarray | None) -> np.ndarray:
    """An encoded column's codes through its dictionary's map ``m`` (None: identity), int64.

    Examples
    --------
    >>> map_codes(encode(pd.Series(["b", "a", "b"])), np.array([5, 7])).tolist()
    [7, 5, 7]
    """
    raw = col.cat.codes.to_numpy()
    return raw.astype(np.int64) if m is None else m[raw]


def slot_maps(names: Sequence[pd.Series], start: int) -> tuple[list, list, list]:
    """Slots of the runs of encoded name columns, numbered from ``start`` (each column's
    names in sorted order): their names, each column's slot numbers, each column's slot by
    name code (−1: a name no row has).

    Examples
    --------
    >>> names, slots, locs = slot_maps([encode(pd.Series(["b", "a", "b"]))], 3)
    >>> names, slots[0].tolist(), locs[0].tolist()
    (['a', 'b'], [3, 4], [3, 4])
    """
    slot_names: list = []
    slots, locs = [], []
    for s in names:
        c = s.cat.codes.to_numpy()
        used = np.flatnonzero(np.bincount(c, minlength=len(s.cat.categories)))
        loc = np.full(len(s.cat.categories), -1, dtype=np.int64)
        loc[used] = start + len(slot_names) + np.arange(len(used))
        slots.append(loc[used])
        slot_names.extend(np.asarray(s.cat.categories)[used].tolist())
        locs.append(loc)
    return slot_names, slots, locs


def slot_rows(names: Sequence[pd.Series], start: int) -> tuple[list, list, np.ndarray]:
    """:func:`slot_maps`, with every row's slot instead of the maps.

    Examples
    --------
    >>> slot_rows([encode(pd.Series(["b", "a", "b"]))], 0)[2].tolist()
    [1, 0, 1]
    """
    slot_names, slots, locs = slot_maps(names, start)
    rows = [loc[s.cat.codes.to_numpy()] for s, loc in zip(names, locs, strict=True)]
    return slot_names, slots, np.concatenate(rows) if rows else np.zeros(0, np.int64)


def pooled_rows(runs: pd.DataFrame, keep: np.ndarray) -> pd.DataFrame:
    """The columns :class:`~pbtools.engine.dense.DenseRuns` reads (``name``, ``qid``,
    ``docno``, ``rank``) of the rows ``keep`` (a boolean mask) of ``runs``: only their codes
    and ranks copied, the ids' dictionaries shared — not a copy of the whole frame (its
    scores, other columns).

    Examples
    --------
    >>> runs = pd.DataFrame({"name": ["a", "b", "b"], "qid": "1", "docno": ["x", "y", "x"],
    ...                      "score": 1.0, "rank": [1, 1, 2]})
    >>> sub = pooled_rows(runs, np.array([False, True, True]))
    >>> sub["docno"].tolist(), sub["rank"].tolist(), sub["name"].cat.categories.tolist()
    (['y', 'x'], [1, 2], ['a', 'b'])
    """
    out = {}
    for c in ("name", "qid", "docno"):
        s = encode(runs[c])
        codes = s.cat.codes.to_numpy()[keep]
        out[c] = pd.Categorical.from_codes(codes, dtype=s.dtype, validate=False)
    out["rank"] = runs["rank"].to_numpy()[keep]
    return pd.DataFrame(out, copy=False)
