"""pbtools.ids: id dictionaries in strcmp order, shared between frames, and lookups in them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pbtools import ids


def test_encode_sorts_in_byte_order_and_makes_numbers_strings():
    s = ids.encode(pd.Series([10, "9", "B", "a", 9], name="qid"))
    assert s.cat.categories.tolist() == ["10", "9", "B", "a"]  # strcmp: digits < upper < lower
    assert s.cat.codes.tolist() == [0, 1, 2, 3, 1]
    assert ids.encode(s) is s  # already encoded: returned as it is
    with pytest.raises(ValueError, match="'qid' has missing values"):
        ids.encode(pd.Series(["a", None], name="qid"))
    # a Categorical with unsorted categories is re-encoded, its values kept
    raw = pd.Series(pd.Categorical(["b", "a"], categories=["b", "a"]))
    assert ids.encode(raw).cat.categories.tolist() == ["a", "b"]
    assert ids.encode(raw).astype(str).tolist() == ["b", "a"]


def test_categorical_from_arrow_of_strings_and_of_dictionary_chunks_agree():
    chunks = [pa.array(["z", "b", "z"]), pa.array(["a", "b"]), pa.array([], pa.string())]
    plain = ids.categorical_from_arrow(chunks)
    dicts = ids.categorical_from_arrow([pc.dictionary_encode(c) for c in chunks])
    chunked = ids.categorical_from_arrow(pa.chunked_array(chunks))
    for cat in (plain, dicts, chunked):
        assert list(cat.categories) == ["a", "b", "z"]
        assert list(cat.astype(str)) == ["z", "b", "z", "a", "b"]


def test_sorted_union_maps_every_dictionary_into_the_union():
    dicts = [pa.array(["q", "c"]), pa.array(["c", "a", "x"])]
    dtype, lookups = ids.sorted_union(dicts)
    cats = list(dtype.categories)
    assert cats == ["a", "c", "q", "x"]
    for d, lk in zip(dicts, lookups, strict=True):
        assert [cats[i] for i in lk] == d.to_pylist()


def test_unify_and_codes_into_give_comparable_codes():
    a = ids.encode(pd.Series(["x", "y"]))
    b = ids.encode(pd.Series(["y", "z", "y"]))
    ua, ub = ids.unify(a, b)
    assert ua.cat.categories.equals(ub.cat.categories)
    assert ua.cat.codes.iloc[1] == ub.cat.codes.iloc[0]  # "y" == "y" as integers
    ca, cb, n = ids.codes_into(a, b)
    assert n == 2 and ca.tolist() == [0, 1] and cb.tolist() == [1, -1, 1]  # "z": not in a
    same = ids.unify(a, a)
    assert same[0].cat.categories.equals(a.cat.categories)


def test_used_and_mapped_codes():
    wide = pd.Index(["a", "b", "c", "d"], dtype="str")
    col = ids.encode(pd.Series(["b", "d"])).cat.set_categories(wide)
    assert ids.encode(col) is col  # a sorted dictionary wider than the ids used
    codes, used = ids.used_codes(col)
    assert codes.tolist() == [0, 1] and used.tolist() == ["b", "d"]
    cats = pd.Index(["d", "e"], dtype="str")
    assert ids.mapped_codes(col, cats).tolist() == [-1, 0]
    empty_codes, empty_used = ids.used_codes(ids.encode(pd.Series([], dtype="str")))
    assert len(empty_codes) == 0 and len(empty_used) == 0


def test_index_in_for_arrow_and_object_indexes():
    cats = pd.Index(["a", "b", "c"], dtype="str")
    assert ids.index_in(pd.Index(["c", "q"], dtype="str"), cats).tolist() == [2, -1]
    assert ids.index_in(
        pd.Index(["b"], dtype=object), pd.Index(["a", "b"], dtype=object)
    ).tolist() == [1]
    assert ids.index_in(pd.Index(["b"], dtype="str"), cats[:0]).tolist() == [-1]


def test_is_sorted_compares_bytes():
    assert ids.is_sorted(pd.Index(["A", "a", "b"], dtype="str"))
    assert not ids.is_sorted(pd.Index(["a", "A"], dtype="str"))
    assert ids.is_sorted(pd.Index([], dtype="str"))


@pytest.mark.parametrize("space", [8, 10**12])  # a direct table, then a binary search
def test_positions_in_both_ways(space):
    rng = np.random.default_rng(1)
    sorted_keys = np.unique(rng.integers(0, 8, 5)) * (space // 8)
    keys = rng.integers(0, 8, 20) * (space // 8)
    got = ids.positions_in(sorted_keys, keys, space)
    want = [int(np.flatnonzero(sorted_keys == k)[0]) if k in sorted_keys else -1 for k in keys]
    assert got.tolist() == want
    assert ids.positions_in(np.array([], np.int64), keys, space).tolist() == [-1] * len(keys)


def test_one_array_engine_under_unify_codes_into_and_the_encoded_scorer():
    from pbtools import idarrays
    from pbtools.measures.encoded import sorted_union

    rng = np.random.default_rng(7)
    big = pa.array(sorted({f"d{i}" for i in rng.integers(0, 500, 200)}))
    small = pa.array(sorted({f"d{i}" for i in rng.integers(0, 600, 20)} | {"zz"}))
    assert len(big) > 4 * len(small)  # the inverted lookup ...
    inverted = idarrays.map_into(small, big)
    assert inverted.tolist() == idarrays.index_in(small, big).tolist()  # ... finds the same
    assert (inverted >= 0).any() and (inverted == -1).any()
    assert [big[int(i)].as_py() for i in inverted if i >= 0] == [
        s for s in small.to_pylist() if s in set(big.to_pylist())
    ]
    # unify (pandas) and sorted_union (arrays) are the one union: same sorted strings and codes
    a = ids.encode(pd.Series(small.to_pylist()))
    b = ids.encode(pd.Series(big.to_pylist()[::-1]))
    ua, ub = ids.unify(a, b)
    union, ma, mb = sorted_union(small, big)
    assert ua.cat.categories.tolist() == union == sorted(set(union))
    assert ua.cat.codes.tolist() == ma.tolist()
    assert ub.astype(str).tolist() == big.to_pylist()[::-1]
    assert ua.dtype == ids.id_dtype(union) and ub.cat.codes.dtype == np.int16
    assert sorted_union(small, small)[1:] == (None, None)
    # codes_into: the other's ids among the column's, either way round the 4x rule
    for col, other in ((b, a), (a, b)):
        cc, oc, n = ids.codes_into(col, other)
        cats = col.cat.categories.tolist()
        want = [cats.index(x) if x in cats else -1 for x in other.astype(str).tolist()]
        assert n == len(cats) and oc.tolist() == want
