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
    "presence",
    "rank_rows",
    "Radix",
    "unpack",
]

#: longest string (in 8-byte words) sorted by packed words; longer ones use Arrow's sort
MAX_WORDS = 4

#: ``_BYTE_MASK[k]``: the first ``k`` bytes of a big-endian 64-bit word
_BYTE_MASK = np.array([((1 << (8 * k)) - 1) << (8 * (8 - k)) for k in range(9)], dtype=np.uint64)


def words(
    strings: pa.Array, max_words: int = MAX_WORDS, uniform: bool = False
) -> list[np.ndarray] | None:
    """The packed 64-bit words of every string (``words[w][i]``: bytes ``8w..8w+7`` of string
    ``i``), or None when a string is longer than ``max_words`` words, holds a NUL byte, or is
    null, or ``strings`` is empty, or (``uniform``) the strings are not all of one length.

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
    if int(lengths.min()) * n == len(data):  # one length (``d0815``, ``001``): no gathers
        return _same_length_words(data, n, count)
    if uniform:
        return None
    # every 8-byte window of the bytes as one big-endian integer (a view, no copy); the
    # windows that would run past the end are read from a padded copy of the last bytes
    tail = min(len(data), 8 * count + 8)
    padded = np.zeros(tail + 8 * count + 8, dtype=np.uint8)
    padded[:tail] = data[len(data) - tail :]
    first = offsets[:-1]
    window = np.ndarray((max(len(data) - 7, 0),), dtype=">u8", buffer=data, strides=(1,))
    pw = np.ndarray((len(padded) - 7,), dtype=">u8", buffer=padded, strides=(1,))
    out = []
    for w in range(count):
        # the strings start in order: the few whose window runs past the end are the last ones
        k = int(np.searchsorted(first, start + len(data) - 8 - 8 * w, "right"))
        word = np.empty(n, dtype=np.uint64)
        # by blocks: the gathers' int64 indexes and masks stay small (no row-sized temporaries)
        for a in range(0, n, WORD_BLOCK):
            b = min(n, a + WORD_BLOCK)
            at = first[a:b] - (start - 8 * w)
            if a < k:
                word[a : min(b, k)] = window[at[: min(b, k) - a]]
            if b > k:
                word[max(a, k) : b] = pw[at[max(a, k) - a :] - (len(data) - tail)]
            keep = lengths[a:b] if count == 1 else np.clip(lengths[a:b] - 8 * w, 0, 8)
            np.bitwise_and(word[a:b], _BYTE_MASK[keep], out=word[a:b])  # bytes in the word
        out.append(word)
    return out


#: rows of :func:`words`' gathers at a time (their temporaries stay in the cache)
WORD_BLOCK = 1 << 16


def _same_length_words(data: np.ndarray, n: int, count: int) -> list[np.ndarray]:
    """:func:`words` of ``n`` strings of one length, whose bytes ``data`` are: each word read
    in place, as big-endian 8-byte windows at a stride of that length (the last rows' windows
    from a zero-padded copy of their bytes), its bytes past the string's end masked (MS
    MARCO-like qids, synthetic docnos ``d0815``: ~1 against ~13 ns a string)."""
    width = len(data) // n
    span = 8 * count
    inside = min(n, max(0, (len(data) - span) // width + 1))  # rows whose windows fit in data
    tail = np.zeros((n - inside) * width + span, dtype=np.uint8)
    tail[: (n - inside) * width] = data[inside * width :]
    out = []
    for w in range(count):
        word = np.empty(n, dtype=np.uint64)
        for buf, a, b in ((data, 0, inside), (tail, inside, n)):
            if b > a:
                window = np.ndarray((b - a,), ">u8", buffer=buf, offset=8 * w, strides=(width,))
                word[a:b] = window
        word &= _BYTE_MASK[min(max(width - 8 * w, 0), 8)]
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


def encode(
    inputs: Sequence[Sequence[np.ndarray]], map_=None, near: int = 0, close: list | None = None
) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """Dictionary-encode the packed ids (:func:`words`, up to :data:`KEY_WORDS` words) of
    several inputs together: ``(keys, codes)``, the distinct ids as sorted packed keys (one
    word each, shape ``(n,)``, or ``(n, words)``) and, for each input, every row's position
    among them (int32); None when the ids and the row numbers need more than 64 bits.

    Each row becomes one 64-bit number, its id's mixed-radix number (:class:`Radix`, from the
    pair tables of all inputs) above its row number; one ``np.sort`` of those numbers puts
    equal ids together in order, and their ranks are the codes (:func:`rank_rows`): no
    comparison of strings, no hash table (whose probes miss the cache once it holds millions
    of ids), no dictionary per input to merge afterwards. ``map_(fn, items)`` (default: the
    built-in ``map``) runs the per-input steps, e.g. in a thread pool (the pair tables in two
    lanes, each with its own table). ``near``, ``close``: :func:`rank_rows`' (rows numbered
    from the first input's first row on, input after input).

    Examples
    --------
    >>> keys, codes = encode([words(pa.array(["b", "a", "b"])), words(pa.array(["WSJ870324-02"]))])
    >>> unpack(keys).to_pylist(), [c.tolist() for c in codes]
    (['WSJ870324-02', 'a', 'b'], [[2, 1, 2], [0]])
    """
    map_ = map_ or (lambda fn, items: list(map(fn, items)))
    inputs = list(inputs)
    places = 4 * max(len(w) for w in inputs)
    start = np.concatenate([[0], np.cumsum([len(w[0]) for w in inputs])]).astype(np.int64)
    n = int(start[-1])
    low = max((n - 1).bit_length(), 1)  # bits of the row number
    lanes = [lane for lane in np.array_split(np.arange(len(inputs)), 2) if len(lane)]

    def tables(lane: np.ndarray) -> np.ndarray:
        out = np.zeros((places, 1 << 16), dtype=bool)
        for i in lane:
            presence(inputs[i], places, out)
        return out

    radix = Radix(np.logical_or.reduce(map_(tables, lanes)))
    if radix.bits > 64 - low:
        return None
    value = np.empty(n, dtype=np.uint64)

    def number(i: int) -> None:
        radix.number(inputs[i], value[start[i] : start[i + 1]], low, row0=int(start[i]))

    map_(number, range(len(inputs)))
    value.sort()
    codes = np.empty(n, dtype=np.int32)
    distinct = rank_rows(value, low, codes, near=near, close=close)
    value = None  # spent: its pages go before the keys are made
    return radix.keys(distinct), np.split(codes, start[1:-1])


def presence(
    packed: Sequence[np.ndarray], places: int | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """Which 16-bit pair values occur at each pair place of packed keys (:func:`words`):
    bool ``(places, 65536)``, the first word's first pair first; ``places`` (a multiple of 4,
    default ``4 * len(packed)``) counts the missing words of shorter keys as zeros. ``out``:
    a table of other keys to add these to (returned).

    Examples
    --------
    >>> np.flatnonzero(presence([np.array([0x6100000000000000], np.uint64)])[0]).tolist()
    [24832]
    """
    n = len(packed[0])
    places = 4 * len(packed) if places is None else places
    if out is None:
        out = np.zeros((places, 1 << 16), dtype=bool)
    for w, word in enumerate(packed):
        pairs = word.view(np.uint16).reshape(n, 4)  # little-endian: column 3 is the first pair
        for j in range(4):
            # a count of each pair, not a scatter of True: no index array the size of the keys
            # (MS MARCO-like, 1 M ids: 18 → 8.5 ms)
            out[4 * w + j] |= np.bincount(pairs[:, 3 - j], minlength=1 << 16).astype(bool)
    if n:
        out[4 * len(packed) :, 0] = True
    return out


#: rows numbered at a time by :meth:`Radix.number`
BLOCK = 1 << 14


class Radix:
    """The mixed-radix numbering of packed keys by their pair places (:func:`compact`): each
    place whose pairs vary is one digit, the rank of its pair among those present there.
    ``present``: :func:`presence` of all the keys (several inputs: their ``|``)."""

    def __init__(self, present: np.ndarray):
        counts = present.sum(axis=1)
        self.present = present
        self.places = [int(p) for p in np.flatnonzero(counts > 1)]
        self.bases = [int(counts[p]) for p in self.places]
        self.ranks = {p: np.cumsum(present[p], dtype=np.uint64) - np.uint64(1) for p in self.places}
        size = 1
        for b in self.bases:
            size *= b
        self.bits = (size - 1).bit_length()  # of the largest number

    def number(
        self, packed: Sequence[np.ndarray], out: np.ndarray, spare: int = 0, row0: int = -1
    ) -> None:
        """Write each key's number, shifted left by ``spare`` bits, into ``out`` (uint64); with
        ``row0 >= 0`` the low bits hold the row numbers ``row0, row0 + 1, ...``.

        Works through the keys in blocks of :data:`BLOCK` rows, whose temporaries stay in the
        cache, in 32-bit arithmetic while the number fits (MS MARCO's passage ids: 23 bits);
        2.6× faster than whole-array 64-bit passes on 3.5 M ids."""
        n = len(out)
        narrow = self.bits <= 32
        dt = np.uint32 if narrow else np.uint64
        ranks = {p: r.astype(dt) for p, r in self.ranks.items()}
        pairs = {
            p: packed[p // 4].view(np.uint16).reshape(n, 4)[:, 3 - p % 4]
            for p in self.places
            if p // 4 < len(packed)  # a missing word: pair 0, rank 0
        }
        acc = np.empty(min(n, BLOCK), dtype=dt)
        tmp = np.empty_like(acc)
        for a in range(0, n, BLOCK):
            m = min(BLOCK, n - a)
            v, t = acc[:m], tmp[:m]
            digits = zip(self.places, self.bases, strict=True)
            if self.places and self.places[0] in pairs:  # the first digit taken, not added
                np.take(ranks[self.places[0]], pairs[self.places[0]][a : a + m], out=v)
                next(digits)
            else:
                v[:] = 0
            for p, base in digits:
                v *= dt(base)
                if p in pairs:
                    np.take(ranks[p], pairs[p][a : a + m], out=t)
                    v += t
            o = out[a : a + m]
            o[:] = v
            if spare:
                o <<= np.uint64(spare)
            if row0 >= 0:
                o |= np.arange(row0 + a, row0 + a + m, dtype=np.uint64)

    def keys(self, number: np.ndarray) -> np.ndarray:
        """The packed keys (one word each, or ``(n, words)``) of numbers :meth:`number` gave."""
        n, words_ = len(number), len(self.present) // 4
        pairs = np.empty((len(self.present), n), dtype=np.uint64)
        for p in range(len(self.present)):
            if p not in self.ranks:
                pairs[p] = np.flatnonzero(self.present[p])[0] if n else 0
        dt = np.uint32 if self.bits <= 32 else np.uint64  # 32-bit divisions: faster
        value = number.astype(dt)
        for p, base in zip(reversed(self.places), reversed(self.bases), strict=True):
            table = np.flatnonzero(self.present[p]).astype(np.uint64)
            pairs[p] = table[value % dt(base)]
            value //= dt(base)
        keys = np.zeros((n, words_), dtype=np.uint64)
        for p in range(len(self.present)):
            keys[:, p // 4] |= pairs[p] << np.uint64(16 * (3 - p % 4))
        return keys[:, 0] if words_ == 1 else keys


def compact(packed: Sequence[np.ndarray], spare: int) -> np.ndarray | None:
    """Packed keys (:func:`words`) rewritten as one order-preserving 64-bit number each, with
    ``spare`` low bits left zero, or None when they need more than ``64 - spare`` bits.

    Each 16-bit pair of bytes is replaced by its rank among the pairs present at its place, and
    the ranks read as the digits of a mixed-radix number (:class:`Radix`): the 7-digit passage
    ids of MS MARCO need 23 bits, the 205,491 distinct 13- and 14-byte docnos of TREC-2's runs
    (``WSJ870324-0001``) 38.

    Examples
    --------
    >>> compact([np.array([30, 10, 20, 10], dtype=np.uint64)], spare=0).tolist()
    [2, 0, 1, 0]
    """
    radix = Radix(presence(packed))
    if radix.bits > 64 - spare:
        return None
    value = np.empty(len(packed[0]), dtype=np.uint64)
    radix.number(packed, value, spare)
    return value


def rank_rows(
    value: np.ndarray,
    low: int,
    codes: np.ndarray,
    chunk: int = 1 << 16,
    near: int = 0,
    close: list | None = None,
) -> np.ndarray:
    """The codes of rows from their sorted numbers: ``value`` holds ``number << low | row``
    sorted (:class:`Radix`, the row in the ``low`` bits); every row's code, the rank of its
    number among the distinct ones, is written into ``codes[row]`` (int32). Returns the
    distinct numbers, sorted. Walks ``value`` in chunks, so its temporaries stay small.

    With ``near > 0``, the rows of equal numbers that lie close are collected on the way:
    every two rows ``a < b`` of one number with no row of that number between them and
    ``b - a < near`` are appended to ``close`` as an ``(k, 2)`` int64 array of ``(a, b)``
    (one per chunk). Any two rows of one number closer than ``near`` are joined by a chain of
    such pairs inside their span: a run file's repeated (qid, docno) with each topic in one
    block of fewer than ``near`` rows shows as one of them
    (:func:`pbtools.io.assemble.docno_codes`), which costs a subtraction a row here instead of
    a sort of the file's pairs.

    Examples
    --------
    >>> codes = np.empty(3, dtype=np.int32)
    >>> value = np.array([(5 << 2) | 1, (5 << 2) | 2, (9 << 2) | 0], np.uint64)
    >>> rank_rows(value, 2, codes).tolist()
    [5, 9]
    >>> codes.tolist()
    [1, 0, 0]
    """
    mask, shift = np.uint64((1 << low) - 1), np.uint64(low)
    distinct, last, base, last_row = [], None, np.int32(-1), 0
    for a in range(0, len(value), chunk):
        v = value[a : a + chunk]
        num = v >> shift
        new = np.empty(len(v), dtype=bool)
        new[0] = last is None or num[0] != last
        np.not_equal(num[1:], num[:-1], out=new[1:])
        code = np.cumsum(new, dtype=np.int32)
        code += base
        v &= mask  # the rows (value is spent)
        rows = v.view(np.int64)
        codes[rows] = code
        if near > 0:
            _close_rows(rows, new, last_row, near, close)
        base, last, last_row = code[-1], num[-1], int(rows[-1])
        distinct.append(num[new])
    return np.concatenate(distinct) if distinct else np.zeros(0, dtype=np.uint64)


def _close_rows(rows: np.ndarray, new: np.ndarray, before: int, near: int, close: list) -> None:
    """:func:`rank_rows`' close pairs of one chunk: ``rows`` in sorted order, ``new[j]``:
    row ``j`` starts a number, ``before``: the row ahead of the chunk (``new[0]`` is True
    when there is none)."""
    gap = np.empty(len(rows), dtype=np.int64)
    gap[0] = rows[0] - before
    np.subtract(rows[1:], rows[:-1], out=gap[1:])
    at = np.flatnonzero((gap < near) & ~new)
    if len(at):
        close.append(np.stack([rows[at] - gap[at], rows[at]], axis=1))


def unpack(keys: np.ndarray, length: int | None = None) -> pa.Array:
    """The strings of packed keys (:func:`encode`), as an Arrow string array; ``length``: the
    strings are all of that many bytes (their first bytes taken as they are, without
    numpy's bytes objects: 2,000 keys ~0.02 against ~0.2 ms).

    Examples
    --------
    >>> unpack(np.stack(words(pa.array(["id7", "x"])), axis=1)).to_pylist()
    ['id7', 'x']
    >>> unpack(words(pa.array(["d07", "d10"]))[0], length=3).to_pylist()
    ['d07', 'd10']
    """
    width = 8 * (keys.shape[1] if keys.ndim == 2 else 1)
    if length is not None:
        k = len(keys)
        data = np.ascontiguousarray(keys.astype(">u8")).view(np.uint8).reshape(k, width)
        data = np.ascontiguousarray(data[:, :length])
        offsets = np.arange(0, (k + 1) * length, length, dtype=np.int32)
        return pa.StringArray.from_buffers(k, pa.py_buffer(offsets), pa.py_buffer(data))
    text = np.ascontiguousarray(keys.astype(">u8")).view(f"S{width}").ravel()
    return pa.array(text, type=pa.binary()).cast(pa.string())  # numpy drops the padding zeros
