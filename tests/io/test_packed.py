"""Ids as packed 64-bit words (pbtools.packed) and the readers' paths that use them; the start-up
of the command line without pandas (issue 30)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pbtools import TrecFormatError, TrecFormatWarning, packed

ROOT = Path(__file__).resolve().parents[2]


def random_strings(rng, n: int, longest: int, alphabet: str) -> list[str]:
    letters = np.array(list(alphabet))
    return sorted(
        {"".join(rng.choice(letters, size=k)) for k in rng.integers(1, longest + 1, size=n)}
    )


@pytest.mark.parametrize("longest", [3, 8, 9, 16, 31, 33, 60])
def test_string_order_is_arrows_byte_order(longest):
    """Every length (one word, several, beyond MAX_WORDS: Arrow's sort), multi-byte UTF-8,
    blanks and a slice with an offset: the same permutation as array_sort_indices."""
    rng = np.random.default_rng(longest)
    words = random_strings(rng, 6000, longest, "ab0Z-_ \té\u00ff\u4e2d")
    for arr in (pa.array(rng.permutation(words)), pa.array(rng.permutation(words)).slice(7)):
        expected = np.asarray(pc.array_sort_indices(arr))
        assert np.array_equal(packed.string_order(arr), expected)


def test_string_order_of_prefixes_and_shared_words():
    # a string sorts before its extensions; equal first words are told apart by the next ones
    base = [f"WSJ870324-{i:04d}" for i in range(3000)] + ["WSJ", "WSJ8703", "WSJ87032"]
    base += [f"{w}x" for w in base[:2000]]
    arr = pa.array(np.random.default_rng(0).permutation(base))
    order = packed.string_order(arr)
    assert arr.take(pa.array(order)).to_pylist() == sorted(base)


def test_encode_unpack_union():
    rng = np.random.default_rng(3)
    ids = random_strings(rng, 500, 8, "0123456789abc")
    files = [pa.array(rng.choice(ids, size=2000)) for _ in range(4)]
    encoded = [packed.encode(f) for f in files]
    for f, (keys, idx) in zip(files, encoded, strict=True):
        d = packed.unpack(keys)
        assert d.to_pylist() == sorted(set(f.to_pylist()))
        assert d.take(pa.array(idx)).to_pylist() == f.to_pylist()
    merged, lookups = packed.union([k for k, _ in encoded])
    assert packed.unpack(merged).to_pylist() == sorted(set().union(*(f.to_pylist() for f in files)))
    for (keys, _), lk in zip(encoded, lookups, strict=True):
        assert np.array_equal(merged[lk], keys)
    # what two words cannot hold is left to the hash encoding
    assert packed.encode(pa.array(["12345678901234567"])) is None  # 17 bytes
    assert packed.encode(pa.array(["a\x00b"])) is None
    assert packed.encode(pa.array(["é" * 9])) is None  # 18 bytes


def check_encoding(strings: pa.Array, keys: np.ndarray, idx: np.ndarray) -> None:
    d = packed.unpack(keys)
    assert d.to_pylist() == sorted(set(strings.to_pylist()))
    assert d.take(pa.array(idx)).to_pylist() == strings.to_pylist()


@pytest.mark.parametrize("alphabet", ["0123456789", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123-_"])
def test_sort_order_compacted_and_not(alphabet, monkeypatch):
    """Keys that compact (the row number fits beside them) and keys that do not (np.argsort;
    two-word keys: None) sort and encode alike."""
    rng = np.random.default_rng(len(alphabet))
    ids = random_strings(rng, 3000, 8, alphabet)
    arr = pa.array(rng.choice(ids, size=5000))
    key = packed.words(arr, max_words=1)
    assert packed.compact(key, 13) is not None
    monkeypatch.setattr(packed, "COMPACT_ROWS", 1)  # compacted, not np.argsort
    order = packed.sort_order(key)
    assert np.all(np.diff(key[0][order].astype(np.float64)) >= 0)
    assert np.array_equal(key[0][order], np.sort(key[0]))
    check_encoding(arr, *packed.encode(arr))
    # 20,000 random 64-bit keys do not compact (4 pairs of ~14 bits, and 15 for the rows)
    wide = [np.random.default_rng(1).integers(0, 2**63, 20000, dtype=np.int64).view(np.uint64)]
    assert packed.compact(wide, 15) is None
    assert np.array_equal(wide[0][packed.sort_order(wide)], np.sort(wide[0]))
    assert packed.sort_order([wide[0], wide[0]]) is None
    monkeypatch.setattr(packed, "COMPACT_ROWS", 1 << 20)  # np.argsort: the same encoding
    check_encoding(arr, *packed.encode(arr))


def test_two_word_keys_and_mixed_union():
    """Docnos of 9 to 16 bytes (TREC-2's ``WSJ870324-0001``) take two words; a union of
    one- and two-word keys is the sorted union of the strings; two-word keys that do not
    compact are refused (None), not mis-sorted."""
    rng = np.random.default_rng(8)
    long = [
        f"{p}{rng.integers(0, 10**6):06d}-{i:04d}"
        for p in ("WSJ87", "AP8", "FR")
        for i in range(900)
    ]
    short = [f"{c}{i}" for c in "AWZ" for i in range(700)]  # one word
    files = [pa.array(rng.choice(long, 4000)), pa.array(rng.choice(short + long[:50], 3000))]
    encoded = [packed.encode(f) for f in files]
    assert [k.ndim for k, _ in encoded] == [2, 2]
    for f, (keys, idx) in zip(files, encoded, strict=True):
        check_encoding(f, keys, idx)
    short_keys, _ = packed.encode(pa.array(short))
    assert short_keys.ndim == 1
    merged, lookups = packed.union([encoded[0][0], short_keys, encoded[1][0]])
    strings = [set(files[0].to_pylist()), set(short), set(files[1].to_pylist())]
    assert packed.unpack(merged).to_pylist() == sorted(set().union(*strings))
    assert packed.unpack(merged[lookups[1]]).to_pylist() == sorted(short)
    assert np.array_equal(merged[lookups[2]], encoded[1][0])
    # 16 random bytes: too many pair values for one word
    noise = np.random.default_rng(2).integers(97, 123, size=(3000, 16)).astype(np.uint8)
    wide = pa.array([r.tobytes().decode() for r in noise])
    assert packed.encode(wide) is None
    two = np.stack(packed.words(wide, max_words=2), axis=1)  # 8 pairs of 676 values: 75 bits
    assert packed.union([two[:1500], two[1500:]]) is None


def test_file_order_moves_topic_blocks_like_a_full_sort():
    from pbtools.frames import trec_sort_order
    from pbtools.io.assemble import file_order, topic_blocks

    rng = np.random.default_rng(5)
    for _ in range(500):
        sizes = rng.integers(1, 7, size=rng.integers(1, 6))
        q = np.repeat(rng.permutation(len(sizes)), sizes).astype(np.int32)
        score = np.concatenate([np.sort(rng.integers(0, 3, size=k))[::-1] for k in sizes])
        score = score.astype(float)
        if rng.random() < 0.2:
            score = rng.permutation(score)  # not ranked: the full sort
        d = rng.permutation(50)[: len(q)].astype(np.int32)
        o = file_order(q, score, d)
        got = np.arange(len(q)) if o is None else o
        ref = trec_sort_order([q], score, d)
        assert np.array_equal(q[got], q[ref]) and np.array_equal(d[got], d[ref])
    # a topic in two blocks is not a block move
    q = np.array([1, 0, 1], dtype=np.int32)
    assert topic_blocks(q, q[1:] == q[:-1]) is None


def write_run(path: Path, topics: list[int], docs_per_topic: int, rng, prefix: str = "") -> None:
    lines = []
    for t in topics:  # numeric topic order, which is not the ids' string order
        docs = rng.choice(10**7, size=docs_per_topic, replace=False)
        scores = np.round(np.sort(rng.random(docs_per_topic))[::-1] * 10, 2)  # ties
        lines += [
            f"{t} Q0 {prefix}{d} {r} {s} {path.name}"
            for r, (d, s) in enumerate(zip(docs, scores, strict=True), 1)
        ]
    path.write_text("\n".join(lines) + "\n")


def test_read_runs_packed_path_gives_the_hashed_frame(tmp_path, monkeypatch):
    """A run read with packed docnos (any file of PACKED_ROWS rows or more) is the frame of
    the dictionary-encoded path: same categories, codes, order and ranks."""
    from pbtools.io import parse, read_runs

    rng = np.random.default_rng(11)
    for name, topics in (("a", [2, 9, 10, 100, 11]), ("b", [1, 2, 10, 30])):
        write_run(tmp_path / f"input.{name}", topics, 60, rng)
    monkeypatch.setattr(parse, "PACKED_ROWS", 1)
    fast = read_runs(tmp_path)
    monkeypatch.setattr(parse, "PACKED_ROWS", 1 << 60)
    slow = read_runs(tmp_path)
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    for c in ("name", "qid", "docno"):
        assert fast[c].cat.categories.equals(slow[c].cat.categories)
    # one packed file with a repeated document is refused as before
    with open(tmp_path / "input.a", "a") as f:
        f.write(f"{fast['qid'].iloc[0]} Q0 {fast['docno'].iloc[0]} 61 0.0 input.a\n")
    monkeypatch.setattr(parse, "PACKED_ROWS", 1)
    with pytest.raises(TrecFormatError, match="duplicate document"):
        read_runs(tmp_path)
    # lenient, with a short line (the general path): the same frame and repairs either way
    with open(tmp_path / "input.b", "a") as f:
        f.write("2 Q0 short\n")
    with pytest.warns(TrecFormatWarning):
        fast = read_runs(tmp_path, lenient=True)
    monkeypatch.setattr(parse, "PACKED_ROWS", 1 << 60)
    with pytest.warns(TrecFormatWarning):
        slow = read_runs(tmp_path, lenient=True)
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    pd.testing.assert_frame_equal(fast.attrs["repairs"], slow.attrs["repairs"])
    assert len(fast.attrs["repairs"]) == 2


@pytest.mark.parametrize("packed_rows", [1, 250])
def test_read_runs_two_word_docnos_give_the_hashed_frame(tmp_path, monkeypatch, packed_rows):
    """Docnos of 9 to 16 bytes, every file packed (two-word keys) or only the large ones (the
    small files' dictionaries packed at the union): the frame of the dictionary-encoded path."""
    from pbtools.io import parse, read_runs

    rng = np.random.default_rng(12)
    write_run(tmp_path / "input.a", [2, 9, 10, 100, 11], 60, rng, prefix="WSJ870324-")
    write_run(tmp_path / "input.b", [1, 2, 10], 50, rng, prefix="AP")
    write_run(tmp_path / "input.c", [3, 30], 40, rng, prefix="FR88-")
    monkeypatch.setattr(parse, "PACKED_ROWS", packed_rows)
    fast = read_runs(tmp_path)
    assert isinstance(parse.encode_ids(pa.array(["WSJ870324-1"] * 300)), parse.PackedIds)
    monkeypatch.setattr(parse, "PACKED_ROWS", 1 << 60)
    slow = read_runs(tmp_path)
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    for c in ("name", "qid", "docno"):
        assert fast[c].cat.categories.equals(slow[c].cat.categories)


def test_policy_names_are_the_rules():
    from pbtools import policynames
    from pbtools.pooling import inference

    assert tuple(inference.POLICIES) == policynames.POLICY_NAMES
    assert set(inference.ALIASES.values()) <= set(inference.POLICIES)
    assert inference.DEFAULT_POLICY in inference.POLICIES


def test_help_and_version_import_no_pandas():
    """`pbtools --help` / `--version` and `import pbtools` leave numpy and pandas unimported
    (start-up time, benchmarks/startup.py); a command imports them once it runs."""
    code = (
        "import sys, contextlib, io\n"
        "import pbtools.cli as cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    codes = [cli.main(['--help']), cli.main(['--version'])]\n"
        "print(codes, sorted(m for m in ('numpy', 'pandas', 'pyarrow', 'scipy')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[0, 0] []"


def test_encode_topics_is_dictionary_encode():
    """Topics in blocks (encoded by their first rows), a topic in two blocks, no blocks at
    all, one row: the dictionary and indices of pc.dictionary_encode."""
    from pbtools.io.parse import encode_topics

    rng = np.random.default_rng(4)
    topics = [str(t) for t in rng.permutation(300)]
    cases = [
        np.repeat(topics[:40], rng.integers(5, 30, size=40)),
        np.repeat(topics[:20] + topics[:5], 12),  # a topic seen again later
        rng.choice(topics, size=2000),  # no blocks: the plain encoding
        np.array(["7"]),
    ]
    for q in cases:
        arr = pa.array(q.tolist()).slice(0)
        got, ref = encode_topics(arr), pc.dictionary_encode(arr)
        assert got.dictionary.equals(ref.dictionary)
        assert got.indices.equals(ref.indices)
