"""Id dictionaries as Arrow arrays: the encoding of :mod:`pbtools.ids` without pandas.

An id column is dictionary-encoded: integer codes over a dictionary of distinct strings sorted in
byte (``strcmp``) order. Here the dictionary is a :class:`Dictionary` (a ``pyarrow`` string array)
and the codes a numpy array; :mod:`pbtools.ids` makes pandas ``Categorical`` columns of the same
codes and strings (its ``categorical_from_arrow``, ``sorted_union``, ``unify``, ``codes_into``,
``code_map`` and ``index_in`` are adapters of :func:`encode_strings`, :func:`union_dictionary`,
:func:`merge_dictionaries`, :func:`map_into` and :func:`index_in`; :mod:`pbtools.measures.encoded`
uses the same functions on the readers' dictionaries). The
readers' pandas-free core (:mod:`pbtools.io.reading`) uses these.

Nothing here imports pandas.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pbtools.packed import string_order
from pbtools.threads import threads_for

__all__ = [
    "Dictionary",
    "Encoded",
    "encode_strings",
    "union_dictionary",
    "merge_dictionaries",
    "index_in",
    "map_into",
    "sorted_dictionary",
    "code_dtype",
]


class Dictionary:
    """Distinct id strings in ``strcmp`` order, held as a ``pyarrow`` string array
    (:attr:`strings`).

    It answers what the readers ask of pandas' categories: ``len(d)``, ``d[i]`` (a Python
    ``str``), ``d.take(positions)``, ``d.tolist()``; :attr:`categories` is the dictionary itself
    (the name a pandas dtype gives its strings), so code written against a
    ``pd.CategoricalDtype`` reads either.

    Examples
    --------
    >>> d = Dictionary(pa.array(["a", "b", "c"]))
    >>> len(d), d[1], d.take([2, 0]).tolist(), d.categories is d
    (3, 'b', ['c', 'a'], True)
    """

    __slots__ = ("strings",)

    def __init__(self, strings: pa.Array):
        self.strings = strings

    @property
    def categories(self) -> Dictionary:
        return self

    def __len__(self) -> int:
        return len(self.strings)

    def __getitem__(self, i) -> str:
        return self.strings[int(i)].as_py()

    def take(self, positions) -> Dictionary:
        return Dictionary(self.strings.take(pa.array(np.asarray(positions, dtype=np.int64))))

    def tolist(self) -> list[str]:
        return self.strings.to_pylist()

    def __repr__(self) -> str:
        return f"Dictionary({len(self)} ids)"


@dataclass
class Encoded:
    """An id column: ``codes`` (int32) into ``categories`` (a :class:`Dictionary`), as a pandas
    ``Categorical`` holds them (``codes``, ``categories``)."""

    codes: np.ndarray
    categories: Dictionary

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i) -> str:
        """The id of row ``i``."""
        return self.categories[self.codes[int(i)]]


def encode_strings(arrays) -> Encoded:
    """Dictionary-encode Arrow string array(s) into codes over one sorted dictionary, without
    Python objects (what :func:`pbtools.ids.categorical_from_arrow` turns into a pandas
    ``Categorical``).

    ``arrays``: a ``pa.Array``, a ``pa.ChunkedArray`` or a sequence of string arrays (one hash
    pass over their concatenation — faster than encoding chunks and unifying dictionaries), or
    a sequence of dictionary arrays (``pc.dictionary_encode`` of each chunk, made where the
    chunks are, in parallel: only their dictionaries are hashed again here).

    Examples
    --------
    >>> chunks = [pa.array(["b", "a", "b"]), pa.array(["c", "a"])]
    >>> e = encode_strings(chunks)
    >>> e.codes.tolist(), e.categories.tolist(), e[3]
    ([1, 0, 1, 2, 0], ['a', 'b', 'c'], 'c')
    >>> encode_strings([pc.dictionary_encode(c) for c in chunks]).codes.tolist()
    [1, 0, 1, 2, 0]
    """
    if not isinstance(arrays, pa.Array | pa.ChunkedArray):
        arrays = list(arrays)
        if arrays and all(isinstance(a, pa.DictionaryArray) for a in arrays):
            return _from_dictionaries(arrays)
    if isinstance(arrays, pa.ChunkedArray):
        arr = arrays.combine_chunks()
    elif isinstance(arrays, pa.Array):
        arr = arrays
    else:
        arr = pa.chunked_array(list(arrays), type=pa.string()).combine_chunks()
    enc = pc.dictionary_encode(arr)
    dic, idx = enc.dictionary, np.asarray(enc.indices)
    order = np.asarray(pc.array_sort_indices(dic))
    remap = np.empty(len(dic), dtype=np.int32)
    remap[order] = np.arange(len(dic), dtype=np.int32)
    return Encoded(remap[idx], sorted_dictionary(dic, order))


def _from_dictionaries(arrays: list[pa.DictionaryArray]) -> Encoded:
    """:func:`encode_strings` of dictionary-encoded chunks: their dictionaries merged
    (:func:`union_dictionary`), then each chunk's indices mapped into the sorted union."""
    dictionary, lookups = union_dictionary([a.dictionary for a in arrays])
    starts = np.cumsum([0] + [len(a) for a in arrays])
    codes = np.empty(starts[-1], dtype=np.int32)

    def chunk(i: int) -> None:
        np.take(lookups[i], np.asarray(arrays[i].indices), out=codes[starts[i] : starts[i + 1]])

    workers = threads_for(len(arrays))
    if workers > 1 and starts[-1] >= (1 << 20):
        with ThreadPoolExecutor(workers) as ex:
            list(ex.map(chunk, range(len(arrays))))
    else:
        for i in range(len(arrays)):
            chunk(i)
    return Encoded(codes, dictionary)


def union_dictionary(dictionaries: Sequence[pa.Array]) -> tuple[Dictionary, list[np.ndarray]]:
    """The sorted union of several Arrow string dictionaries (distinct strings each) and, for
    each dictionary, the code of every one of its entries in that union (int32).

    One hash pass over the dictionaries, one sort of the union; what the readers use to merge
    the id dictionaries of many files without hashing their rows again.

    Examples
    --------
    >>> union, lookups = union_dictionary([pa.array(["b", "a"]), pa.array(["c", "b"])])
    >>> union.tolist(), [lk.tolist() for lk in lookups]
    (['a', 'b', 'c'], [[1, 0], [2, 1]])
    """
    dic, idx = _union(list(dictionaries))
    order = string_order(dic)  # integer sorts of the packed ids (pbtools.packed)
    remap = np.empty(len(dic), dtype=np.int32)
    remap[order] = np.arange(len(dic), dtype=np.int32)
    return sorted_dictionary(dic, order), [remap[i] for i in idx]


def merge_dictionaries(
    dictionaries: Sequence[pa.Array],
) -> tuple[Dictionary, list[np.ndarray] | None]:
    """One sorted dictionary of several sorted Arrow string dictionaries and each one's map
    into it (int32): :func:`union_dictionary`, but None for the maps when every dictionary is
    the first one (their codes are the codes of the union as they are). What
    :func:`pbtools.ids.unify` does to pandas columns and :mod:`pbtools.measures.encoded` to the
    runs' and qrels' topics.

    Examples
    --------
    >>> union, maps = merge_dictionaries([pa.array(["a", "c"]), pa.array(["b", "c"])])
    >>> union.tolist(), [m.tolist() for m in maps]
    (['a', 'b', 'c'], [[0, 2], [1, 2]])
    >>> merge_dictionaries([pa.array(["a"]), pa.array(["a"])])[1] is None
    True
    """
    strings = [_plain_strings(d) for d in dictionaries]
    if all(d.equals(strings[0]) for d in strings[1:]):
        return Dictionary(strings[0]), None
    return union_dictionary(strings)


def index_in(values: pa.Array, dictionary: pa.Array) -> np.ndarray:
    """The position of each of ``values`` in the distinct strings ``dictionary`` (−1 where
    absent), int64, hashed by Arrow.

    Examples
    --------
    >>> index_in(pa.array(["c", "x", "a"]), pa.array(["a", "b", "c"])).tolist()
    [2, -1, 0]
    """
    if len(dictionary) == 0:
        return np.full(len(values), -1, dtype=np.int64)
    if values.type != dictionary.type:
        values, dictionary = _plain_strings(values), _plain_strings(dictionary)
    pos = pc.index_in(values, value_set=dictionary)
    return np.asarray(pos.fill_null(-1), dtype=np.int64)


def map_into(small: pa.Array, big: pa.Array) -> np.ndarray:
    """Each id of the dictionary ``small``'s place in the dictionary ``big`` (−1: absent),
    int64: :func:`index_in`, but when ``big`` is more than 4× larger (a run's documents against
    the judged ones) ``big``'s ids are looked up among ``small``'s (a hash table of the small
    dictionary) and the map inverted: the same map (an MS MARCO-like track, 1.8 M documents
    against 4,000 judged: 0.05 s instead of 0.47 s). :func:`pbtools.ids.codes_into`'s rule.

    Examples
    --------
    >>> big = pa.array([f"d{i}" for i in range(10)])
    >>> map_into(pa.array(["d3", "x", "d0"]), big).tolist()
    [3, -1, 0]
    """
    if len(big) > 4 * len(small):
        pos = index_in(big, small)  # each of big's ids' place among small's
        hit = np.flatnonzero(pos >= 0)
        mapping = np.full(len(small), -1, dtype=np.int64)
        mapping[pos[hit]] = hit
        return mapping
    return index_in(small, big)


def _plain_strings(arr: pa.Array) -> pa.Array:
    """``arr`` as Arrow ``string`` (a :class:`Dictionary`'s strings, a ``large_string`` array)."""
    arr = arr.strings if isinstance(arr, Dictionary) else arr
    return arr if arr.type == pa.string() else arr.cast(pa.string())


def sorted_dictionary(dictionary: pa.Array, order: np.ndarray) -> Dictionary:
    """An Arrow dictionary of distinct strings taken in ``order`` (its sort).

    Examples
    --------
    >>> sorted_dictionary(pa.array(["b", "a"]), np.array([1, 0])).tolist()
    ['a', 'b']
    """
    return Dictionary(dictionary.take(pa.array(order)))


def code_dtype(n: int) -> np.dtype:
    """The smallest signed integer type for codes below ``n``: the one pandas keeps a
    ``Categorical``'s codes in (so codes made in it are not copied into a frame).

    Examples
    --------
    >>> code_dtype(100), code_dtype(1000), code_dtype(100_000)
    (dtype('int8'), dtype('int16'), dtype('int32'))
    """
    for t in (np.int8, np.int16, np.int32):
        if n < np.iinfo(t).max:
            return np.dtype(t)
    return np.dtype(np.int64)


#: total entries from which :func:`_union` hashes the two halves of the dictionaries at once
PARALLEL_UNION = 1 << 19


def _union(dictionaries: list[pa.Array]) -> tuple[pa.Array, list[np.ndarray]]:
    """The distinct strings of ``dictionaries`` (first-seen order) and each one's positions
    there.

    Many large dictionaries (TREC-2: 38 files, 1.4 M docnos, 205 k distinct) are split in two
    halves, each hashed on its own thread (Arrow releases the GIL), and the two results are
    hashed together: the same strings in the same first-seen order (a half's new strings
    follow the first half's), about 0.2 s less of a TREC-2 ``evaluate`` process, where these
    allocations are fresh pages.
    """
    total = sum(len(d) for d in dictionaries)
    if len(dictionaries) >= 4 and total >= PARALLEL_UNION and threads_for(2) > 1:
        half = len(dictionaries) // 2
        with ThreadPoolExecutor(2) as ex:
            (da, ia), (db, ib) = ex.map(_hash_union, [dictionaries[:half], dictionaries[half:]])
        dic, (ja, jb) = _hash_union([da, db])
        return dic, [ja[i] for i in ia] + [jb[i] for i in ib]
    return _hash_union(dictionaries)


def _hash_union(dictionaries: list[pa.Array]) -> tuple[pa.Array, list[np.ndarray]]:
    """:func:`_union` in one hash pass."""
    # one array, not chunks: Arrow gives every chunk of a chunked input its own copy of the
    # dictionary seen so far (quadratic in the number of files)
    enc = pc.dictionary_encode(pa.chunked_array(dictionaries, type=pa.string()).combine_chunks())
    bounds = np.cumsum([0] + [len(d) for d in dictionaries])
    idx = np.asarray(enc.indices)
    return enc.dictionary, [idx[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
