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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "MAX_WORDS",
    "KEY_WORDS",
    "words",
    "string_order",
    "encode",
    "compact",
    "COMPACT_ROWS",
    "sort_order",
    "union",
    "unpack",
]

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


#: longest id (in 8-byte words) that :func:`encode` packs; longer ones are hashed by Arrow
KEY_WORDS = 2


def encode(strings: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """Dictionary-encode strings of up to 16 bytes by integer sorts: ``(keys, indices)``, the
    distinct strings as sorted packed keys (one word each, shape ``(n,)``, when every string
    fits 8 bytes; else two, shape ``(n, 2)``) and each string's position among them (int32),
    or None when a string is longer, holds a NUL byte, or two-word keys cannot be compacted
    into one word (:func:`compact`).

    Examples
    --------
    >>> keys, idx = encode(pa.array(["b", "a", "b"]))
    >>> unpack(keys).to_pylist(), idx.tolist()
    (['a', 'b'], [1, 0, 1])
    >>> keys, idx = encode(pa.array(["WSJ870324-0002", "AP880212-0001", "WSJ870324-0002"]))
    >>> keys.shape, unpack(keys).to_pylist(), idx.tolist()
    ((2, 2), ['AP880212-0001', 'WSJ870324-0002'], [1, 0, 1])
    """
    packed = words(strings, max_words=KEY_WORDS)
    if packed is None:
        return None
    order = sort_order(packed)
    if order is None:
        return None
    sk = [w[order] for w in packed]
    new = np.empty(len(order), dtype=bool)
    new[0] = True
    np.not_equal(sk[0][1:], sk[0][:-1], out=new[1:])
    for w in sk[1:]:
        new[1:] |= w[1:] != w[:-1]
    indices = np.empty(len(order), dtype=np.int32)
    indices[order] = np.cumsum(new, dtype=np.int32) - 1
    keys = sk[0][new] if len(sk) == 1 else np.stack([w[new] for w in sk], axis=1)
    return keys, indices


def compact(packed: Sequence[np.ndarray], spare: int) -> np.ndarray | None:
    """Packed keys (:func:`words`) rewritten as one order-preserving 64-bit number each, with
    ``spare`` low bits left zero, or None when they need more than ``64 - spare`` bits.

    Each 16-bit pair of bytes is replaced by its rank among the pairs present at its place, and
    the ranks read as the digits of a mixed-radix number: the 7-digit passage ids of MS MARCO
    need 23 bits, the 205,491 distinct 13- and 14-byte docnos of TREC-2's runs
    (``WSJ870324-0001``) 38.

    Examples
    --------
    >>> compact([np.array([30, 10, 20, 10], dtype=np.uint64)], spare=0).tolist()
    [2, 0, 1, 0]
    """
    n = len(packed[0])
    value = np.zeros(n, dtype=np.uint64)
    room = 1 << (64 - spare)
    for word in packed:
        pairs = word.view(np.uint16).reshape(n, 4)  # little-endian: column 3 is the first pair
        for col in (3, 2, 1, 0):
            pair = pairs[:, col]
            present = np.bincount(pair, minlength=1 << 16) > 0
            base = int(np.count_nonzero(present))
            if base == 1:
                continue
            room //= base
            if room == 0:
                return None
            value *= np.uint64(base)
            value += (np.cumsum(present, dtype=np.uint64) - np.uint64(1))[pair]
    if spare:
        value <<= np.uint64(spare)
    return value


#: keys from which one-word keys are compacted before their sort (:func:`sort_order`): below,
#: the tables of 65,536 pair values cost more than ``np.argsort`` saves (127 files of 34,000
#: rows: 0.45 s CPU against 0.33 s)
COMPACT_ROWS = 1 << 17


def sort_order(packed: Sequence[np.ndarray]) -> np.ndarray | None:
    """A permutation that sorts packed keys (:func:`words`; ties in any order), or None for
    keys of several words that do not compact (:func:`compact`) with room for the row number.

    When they do, the row number goes in the low bits of the compacted keys and one
    ``np.sort`` of those words (SIMD sorting) gives the order: 1 M MS MARCO passage ids
    ~0.05 s CPU against 0.07–0.10 s for ``np.argsort`` of the packed keys, which one-word
    keys that do not compact get, and fewer than :data:`COMPACT_ROWS` (an LSD radix argsort
    compiled with numba took 0.09 s).

    Examples
    --------
    >>> sort_order([np.array([30, 10, 20], dtype=np.uint64)]).tolist()
    [1, 2, 0]
    """
    n = len(packed[0])
    if len(packed) == 1 and n < COMPACT_ROWS:
        return np.argsort(packed[0])
    low = max((n - 1).bit_length(), 1)  # bits of the row number
    value = compact(packed, low)
    if value is None:
        return np.argsort(packed[0]) if len(packed) == 1 else None
    value |= np.arange(n, dtype=np.uint64)
    value.sort()
    value &= np.uint64((1 << low) - 1)
    return value.astype(np.intp)


def union(keys: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """The sorted union of sorted distinct packed keys (:func:`encode`; one-word keys are
    taken as two-word keys with an empty second word where others have two) and, for each
    input, the position of every one of its keys in the union (int32); None when two-word keys
    do not compact into one word (:func:`compact`).

    One stable argsort of all the keys merges the sorted inputs (timsort finds them as runs:
    10 inputs of 350,000 keys, 0.10 s CPU against 0.33 s for a sort and one binary search per
    input, whose needles miss the cache); each key's position is then scattered back.

    Examples
    --------
    >>> u, lookups = union([np.array([1, 5], np.uint64), np.array([2, 5], np.uint64)])
    >>> u.tolist(), [lk.tolist() for lk in lookups]
    ([1, 2, 5], [[0, 2], [1, 2]])
    """
    if all(k.ndim == 1 for k in keys):
        merged = np.concatenate(keys)
        value = merged
    else:
        merged = np.concatenate([k if k.ndim == 2 else _two_words(k) for k in keys])
        value = compact([merged[:, 0].copy(), merged[:, 1].copy()], 0)
        if value is None:
            return None
    order = np.argsort(value, kind="stable")
    value = value[order]
    new = np.empty(len(value), dtype=bool)
    new[:1] = True
    np.not_equal(value[1:], value[:-1], out=new[1:])
    position = np.empty(len(value), dtype=np.int32)
    position[order] = np.cumsum(new, dtype=np.int32) - 1
    lookups = np.split(position, np.cumsum([len(k) for k in keys])[:-1])
    return merged[order[new]], lookups


def _two_words(keys: np.ndarray) -> np.ndarray:
    return np.stack([keys, np.zeros_like(keys)], axis=1)


def unpack(keys: np.ndarray) -> pa.Array:
    """The strings of packed keys (:func:`encode`), as an Arrow string array.

    Examples
    --------
    >>> unpack(encode(pa.array(["id7", "x"]))[0]).to_pylist()
    ['id7', 'x']
    """
    width = 8 * (keys.shape[1] if keys.ndim == 2 else 1)
    text = np.ascontiguousarray(keys.astype(">u8")).view(f"S{width}").ravel()
    return pa.array(text, type=pa.binary()).cast(pa.string())  # numpy drops the padding zeros
