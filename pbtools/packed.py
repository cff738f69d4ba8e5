"""Short strings as big-endian integers: ids sorted and encoded without string comparisons
(used by :mod:`pbtools.ids` and the run readers).

A string of up to 8 bytes without NUL bytes is one 64-bit word: its bytes, big-endian, padded
with zeros. Two such words compare as the strings do in byte (``strcmp``) order (a shorter
string, padded with zeros, sorts before its extensions; ids hold no NUL byte), so a sort of
the words is a sort of the strings. Longer strings are a few words, sorted from the last word
to the first by stable integer sorts.

Why: hashing or comparison-sorting millions of distinct strings is bound by cache misses
(Arrow's ``dictionary_encode`` of an MS MARCO-sized run file, 3.5 M rows and 2.9 M distinct
passage ids: ~1.3 s CPU; ``array_sort_indices`` of its dictionary ~1.6 s), where integer sorts
of the same ids take a fraction of that (``benchmarks/parse_floor.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pbtools.threads import threads_for

__all__ = ["MAX_WORDS", "words", "string_order", "encode", "union", "unpack"]

#: longest string (in 8-byte words) sorted by packed words; longer ones use Arrow's sort
MAX_WORDS = 4

#: ``_BYTE_MASK[k]``: the first ``k`` bytes of a big-endian 64-bit word
_BYTE_MASK = np.array([((1 << (8 * k)) - 1) << (8 * (8 - k)) for k in range(9)], dtype=np.uint64)


def words(strings: pa.Array, max_words: int = MAX_WORDS) -> list[np.ndarray] | None:
    """The packed 64-bit words of every string (``words[w][i]``: bytes ``8w..8w+7`` of string
    ``i``), or None when a string is longer than ``max_words`` words, holds a NUL byte, or is
    null, or ``strings`` is empty.

    Examples
    --------
    >>> [hex(w) for w in words(pa.array(["a", "ab"]))[0]]
    ['0x6100000000000000', '0x6162000000000000']
    """
    n = len(strings)
    if not isinstance(strings, pa.Array) or strings.type != pa.string():
        return None  # chunks, large strings: left to Arrow
    if n == 0 or strings.null_count:
        return None
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[
        strings.offset : strings.offset + n + 1
    ]
    lengths = np.diff(offsets)
    count = -(-int(lengths.max()) // 8)
    start, end = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(strings.buffers()[2], dtype=np.uint8)[start:end]
    if count > max_words or count == 0 or not data.all():
        return None
    padded = np.zeros(len(data) + 8 * count, dtype=np.uint8)
    padded[: len(data)] = data
    # every 8-byte window of the bytes as one big-endian integer (a view, no copy)
    window = np.ndarray((len(padded) - 7,), dtype=">u8", buffer=padded, strides=(1,))
    first = offsets[:-1] - start
    out = []
    for w in range(count):
        word = window[first + 8 * w].astype(np.uint64)
        word &= _BYTE_MASK[np.clip(lengths - 8 * w, 0, 8)]
        out.append(word)
    return out


def string_order(strings: pa.Array) -> np.ndarray:
    """The permutation that sorts distinct strings in byte order, as
    ``pyarrow.compute.array_sort_indices`` gives it (which it uses for small arrays and for
    strings :func:`words` cannot pack).

    Examples
    --------
    >>> string_order(pa.array(["b", "ab", "a", "abcdefghi", "abcdefgh"] * 1000)[:5]).tolist()
    [2, 1, 4, 3, 0]
    """
    packed = words(strings) if len(strings) >= 4096 else None
    if packed is None:
        return np.asarray(pc.array_sort_indices(strings))
    order = np.argsort(packed[-1])  # need not be stable: its ties are broken by the next words
    for word in reversed(packed[:-1]):
        order = order[np.argsort(word[order], kind="stable")]
    return order


def encode(strings: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """Dictionary-encode strings of up to 8 bytes by one integer sort: ``(keys, indices)``,
    the distinct strings as sorted packed words and each string's position among them (int32),
    or None when a string does not fit one word (:func:`words`).

    Examples
    --------
    >>> keys, idx = encode(pa.array(["b", "a", "b"]))
    >>> unpack(keys).to_pylist(), idx.tolist()
    (['a', 'b'], [1, 0, 1])
    """
    packed = words(strings, max_words=1)
    if packed is None:
        return None
    key = packed[0]
    order = np.argsort(key)
    sk = key[order]
    new = np.empty(len(sk), dtype=bool)
    new[0] = True
    np.not_equal(sk[1:], sk[:-1], out=new[1:])
    indices = np.empty(len(key), dtype=np.int32)
    indices[order] = np.cumsum(new, dtype=np.int32) - 1
    return sk[new], indices


def union(keys: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The sorted union of sorted distinct packed keys (:func:`encode`) and, for each input,
    the position of every one of its keys in the union (int32): one integer sort of all the
    keys, one binary search per input (the needles are sorted, so the search walks forward;
    the inputs' searches on the cores, for a union of a million keys or more).

    Examples
    --------
    >>> u, lookups = union([np.array([1, 5], np.uint64), np.array([2, 5], np.uint64)])
    >>> u.tolist(), [lk.tolist() for lk in lookups]
    ([1, 2, 5], [[0, 2], [1, 2]])
    """
    merged = np.concatenate(keys)
    merged.sort()
    new = np.empty(len(merged), dtype=bool)
    new[:1] = True
    np.not_equal(merged[1:], merged[:-1], out=new[1:])
    merged = merged[new]

    def lookup(k: np.ndarray) -> np.ndarray:
        return np.searchsorted(merged, k).astype(np.int32)

    if len(keys) > 1 and len(merged) >= (1 << 20) and threads_for(len(keys)) > 1:
        with ThreadPoolExecutor(threads_for(len(keys))) as ex:  # numpy releases the GIL
            return merged, list(ex.map(lookup, keys))
    return merged, [lookup(k) for k in keys]


def unpack(keys: np.ndarray) -> pa.Array:
    """The strings of packed one-word keys (:func:`encode`), as an Arrow string array.

    Examples
    --------
    >>> unpack(encode(pa.array(["id7", "x"]))[0]).to_pylist()
    ['id7', 'x']
    """
    text = keys.astype(">u8").view("S8")  # numpy drops the padding zeros
    return pa.array(text, type=pa.binary()).cast(pa.string())
