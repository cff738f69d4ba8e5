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


def check_encoding(inputs: list[pa.Array], keys: np.ndarray, codes: list[np.ndarray]) -> None:
    d = packed.unpack(keys)
    assert d.to_pylist() == sorted(set().union(*(f.to_pylist() for f in inputs)))
    for f, c in zip(inputs, codes, strict=True):
        assert c.dtype == np.int32
        assert d.take(pa.array(c)).to_pylist() == f.to_pylist()


def run_backwards(fn, items):
    """A thread pool stand-in that runs the items last first (the result must not care)."""
    return [fn(x) for x in list(items)[::-1]][::-1]


@pytest.mark.parametrize("alphabet", ["0123456789", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123-_"])
def test_encode_several_inputs(alphabet):
    """One-word ids of several inputs encoded together: the sorted distinct strings and each
    row's position, whatever order the per-input steps run in."""
    rng = np.random.default_rng(len(alphabet))
    ids = random_strings(rng, 3000, 8, alphabet)
    files = [pa.array(rng.choice(ids, size=k)) for k in (5000, 1, 2000)]
    keys, codes = packed.encode([packed.words(f) for f in files])
    assert keys.ndim == 1
    check_encoding(files, keys, codes)
    keys2, codes2 = packed.encode([packed.words(f) for f in files], run_backwards)
    assert np.array_equal(keys, keys2) and all(map(np.array_equal, codes, codes2))


def test_encode_one_and_two_words_and_refusal():
    """Docnos of 9 to 16 bytes (TREC-2's ``WSJ870324-0001``) take two words, mixed with
    one-word ids of another input (a missing second word reads as zeros); keys that with the
    row numbers need more than 64 bits are refused (None), not mis-sorted."""
    rng = np.random.default_rng(8)
    long = [
        f"{p}{rng.integers(0, 10**3):03d}-{i:04d}"
        for p in ("WSJ87", "AP8", "FR")
        for i in range(900)
    ]
    short = [f"{c}{i}" for c in "AWZ" for i in range(700)]  # one word
    files = [pa.array(rng.choice(long, 4000)), pa.array(short), pa.array(short[:9] + long[:50])]
    inputs = [packed.words(f, max_words=2) for f in files]
    assert [len(w) for w in inputs] == [2, 1, 2]
    keys, codes = packed.encode(inputs)
    assert keys.shape[1] == 2
    check_encoding(files, keys, codes)
    # every key's first word the same: the first digit is in the second word, which the
    # one-word input lacks (its digit: pair 0)
    files = [pa.array(["ABCDEFGH"] * 3), pa.array(["ABCDEFGHxy", "ABCDEFGHab", "ABCDEFGH"])]
    keys, codes = packed.encode([packed.words(f, max_words=2) for f in files])
    check_encoding(files, keys, codes)
    # 16 random bytes: 8 pairs of 676 values (75 bits), no room for the rows
    noise = np.random.default_rng(2).integers(97, 123, size=(3000, 16)).astype(np.uint8)
    wide = pa.array([r.tobytes().decode() for r in noise])
    assert packed.encode([packed.words(wide, max_words=2)]) is None
    # what two words cannot hold is not packed
    assert packed.words(pa.array(["12345678901234567"]), max_words=2) is None  # 17 bytes
    assert packed.words(pa.array(["a\x00b"])) is None
    assert packed.words(pa.array(["é" * 9]), max_words=2) is None  # 18 bytes


def test_radix_numbers_keep_the_order_and_decode():
    """Numbers in 32-bit and in 64-bit arithmetic (over 32 bits of pair ranks): in the keys'
    order, equal for equal keys, and decoded back to the keys."""
    rng = np.random.default_rng(4)
    for alphabet, longest in (("0123456789", 7), ("abcdefghijklmnopqrstuvwxyz", 12)):
        ids = pa.array(random_strings(rng, 3000, longest, alphabet))
        w = packed.words(ids, max_words=2)
        radix = packed.Radix(packed.presence(w))
        assert (radix.bits <= 32) == (alphabet == "0123456789")
        number = np.empty(len(ids), dtype=np.uint64)
        radix.number(w, number)
        assert np.all(np.diff(number.astype(np.float64)) > 0)  # ids sorted and distinct
        assert np.array_equal(number, packed.compact(w, 0))
        keys = radix.keys(number)
        assert packed.unpack(keys).to_pylist() == ids.to_pylist()


def test_rank_rows_across_chunks():
    rng = np.random.default_rng(6)
    key = rng.integers(0, 50, size=1000).astype(np.uint64)
    value = np.sort((key << np.uint64(10)) | np.arange(1000, dtype=np.uint64))
    codes = np.empty(1000, dtype=np.int32)
    distinct = packed.rank_rows(value, 10, codes, chunk=7)
    u, inv = np.unique(key, return_inverse=True)
    assert np.array_equal(distinct, u) and np.array_equal(codes, inv)


def test_file_order_moves_topic_blocks_like_a_full_sort():
    from pbtools.frames import trec_sort_order
    from pbtools.order import file_order, topic_blocks

    rng = np.random.default_rng(5)
    for _ in range(500):
        sizes = rng.integers(1, 7, size=rng.integers(1, 6))
        q = np.repeat(rng.permutation(len(sizes)), sizes).astype(np.int32)
        score = np.concatenate([np.sort(rng.integers(0, 3, size=k))[::-1] for k in sizes])
        score = score.astype(float)
        if rng.random() < 0.2:
            score = rng.permutation(score)  # not ranked: the full sort
        if rng.random() < 0.1:
            score[rng.integers(len(score))] = np.nan  # never taken to be in order
        if rng.random() < 0.3:  # long topics, a tie in a few of them
            sizes = np.full(len(sizes), 40)
            q = np.repeat(rng.permutation(len(sizes)), sizes).astype(np.int32)
            grid = rng.choice(np.arange(0, 1000, 0.5), size=(len(sizes), 40))
            score = -np.sort(-grid, axis=1).ravel()  # ranked, a tie in a topic or two
        d = rng.permutation(400)[: len(q)].astype(np.int32)
        o = file_order(q, score, d)
        got = np.arange(len(q)) if o is None else o
        ref = trec_sort_order([q], score, d)
        assert np.array_equal(q[got], q[ref]) and np.array_equal(d[got], d[ref])
    # a topic in two blocks is not a block move
    q = np.array([1, 0, 1], dtype=np.int32)
    assert topic_blocks(q, q[1:] != q[:-1]) is None


def test_slow_rows_come_out_in_trec_order(tmp_path):
    """Runs carried by several files, with repeats (lenient), ties, NaN scores and topics out
    of order: the frame is in trec order (the slow rows' :func:`file_order`, a sort only when
    they are not in it) with ranks 1..n, and the duplicate repairs name the ids as ``repr``."""
    from pbtools.frames import trec_order
    from pbtools.io import read_runs

    rng = np.random.default_rng(8)
    for case in range(12):
        d = tmp_path / str(case)
        d.mkdir()
        for f in range(rng.integers(2, 5)):
            tag = f"t{rng.integers(0, 2)}"
            lines = []
            for q in rng.permutation(4)[: rng.integers(1, 5)]:
                k = int(rng.integers(1, 8))
                docs = rng.choice(["d1", "d'2", "d3", "x\\4", "d5", "d6"], size=k)
                score = np.sort(rng.integers(0, 3, size=k))[::-1].astype(float)
                if rng.random() < 0.3:
                    score = rng.permutation(score)
                if rng.random() < 0.2:
                    score[0] = np.nan
                lines += [f"{q} Q0 {x} 1 {s} {tag}" for x, s in zip(docs, score, strict=True)]
            (d / f"input.f{f}").write_text("\n".join(lines) + "\n")
        with pytest.warns(TrecFormatWarning):
            df = read_runs(d, lenient=True)
        pd.testing.assert_frame_equal(df, trec_order(df).reset_index(drop=True), check_exact=True)
        rep = df.attrs["repairs"]
        dup = rep[rep["problem"].str.startswith("duplicate")]
        for text in dup["problem"]:
            doc = text.split(" for topic ")[0].removeprefix("duplicate document ")
            assert doc in {repr(x) for x in ("d1", "d'2", "d3", "x\\4", "d5", "d6")}


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


@pytest.mark.parametrize("packed_rows", [1, 250, "refused"])
def test_read_runs_two_word_docnos_give_the_hashed_frame(tmp_path, monkeypatch, packed_rows):
    """Docnos of 9 to 16 bytes, every file packed (two-word keys) or only the large ones (the
    small files' dictionaries packed with them), or packed and then refused by the encoding
    (too many bits: the packed files unpacked and hashed): the frame of the
    dictionary-encoded path."""
    from pbtools.io import parse, read_runs

    if packed_rows == "refused":
        monkeypatch.setattr(packed, "encode", lambda *a: None)
        packed_rows = 1

    rng = np.random.default_rng(12)
    write_run(tmp_path / "input.a", [2, 9, 10, 100, 11], 60, rng, prefix="WSJ870324-")
    write_run(tmp_path / "input.b", [1, 2, 10], 50, rng, prefix="AP")
    write_run(tmp_path / "input.c", [3, 30], 40, rng, prefix="FR88-")
    monkeypatch.setattr(parse, "PACKED_ROWS", packed_rows)
    fast = read_runs(tmp_path)
    assert isinstance(
        parse.encode_ids(pa.array([f"WSJ870324-{i}" for i in range(300)])), parse.PackedIds
    )
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
        # one length (``001``), compared as packed words: blocks, a topic seen again later
        np.repeat([f"{t:03d}" for t in rng.permutation(60)], rng.integers(20, 40, size=60)),
        np.repeat([f"{t:03d}" for t in (5, 7, 5, 9)] * 10, 40),
    ]
    for q in cases:
        arr = pa.array(["x", *q.tolist()]).slice(1)  # an offset into the buffers
        ref = pc.dictionary_encode(arr)
        # the direct read gives chunked columns (several chunks above its block size)
        chunked = pa.chunked_array([arr[:7], arr[7:]]) if len(arr) > 7 else arr
        for given in (arr, chunked):
            got = encode_topics(given)
            assert got.dictionary.equals(ref.dictionary)
            assert got.indices.to_pylist() == ref.indices.to_pylist()
    # topics in blocks: 16-bit codes
    assert encode_topics(pa.array(cases[0].tolist())).indices.type == pa.int16()


def test_rank_rows_collects_close_rows_of_one_number():
    """The close pairs: every two neighbouring rows of one number less than ``near`` apart,
    across chunks, and no other pair."""
    rng = np.random.default_rng(21)
    key = rng.integers(0, 40, size=600).astype(np.uint64)
    value = np.sort((key << np.uint64(10)) | np.arange(600, dtype=np.uint64))
    for near in (1, 9, 30):
        close: list = []
        packed.rank_rows(value.copy(), 10, np.empty(600, np.int32), chunk=7, near=near, close=close)
        got = {tuple(p) for c in close for p in c.tolist()}
        want = set()
        for k in np.unique(key):
            rows = np.flatnonzero(key == k)
            pairs = zip(rows[:-1], rows[1:], strict=True)
            want |= {(int(a), int(b)) for a, b in pairs if b - a < near}
        assert got == want and (near > 1 or not got)


def _lines(name: str, blocks: list[tuple[int, list[str]]]) -> str:
    return "".join(
        f"{q} Q0 {d} {r} {100 - r} {name}\n" for q, docs in blocks for r, d in enumerate(docs, 1)
    )


def test_repeats_of_packed_files_found_by_their_encoding(tmp_path, monkeypatch):
    """Packed files whose topics are one block each are checked for a repeated (qid, docno)
    by the docnos' encoding (no ``no_repeats``): a repeat at the two ends of the longest block
    is found, a docno in two neighbouring topics is not a repeat, a file with a topic in two
    blocks is left to ``no_repeats``; the frames and refusals are the hashed path's."""
    from pbtools.io import assemble, parse, read_runs

    docs = [f"D{i:06d}" for i in range(40)]
    files = {
        "input.a": [(1, docs[0:5]), (2, docs[5:9]), (3, docs[8:12])],  # D000008 in 2 and 3
        "input.b": [(1, docs[12:14]), (2, [docs[14], *docs[15:18], docs[14]]), (3, docs[18:20])],
        "input.c": [(1, docs[20:24]), (2, docs[24:26]), (1, docs[26:28])],  # topic 1 twice
    }
    for name, blocks in files.items():
        (tmp_path / name).write_text(_lines(name, blocks))
    monkeypatch.setattr(parse, "PACKED_ROWS", 1)
    parts = [parse.parse_run_file(str(tmp_path / n), False, "tag") for n in files]
    assert all(isinstance(p.docno, parse.PackedIds) for p in parts)
    assemble.docno_codes(parts)
    assert [p.unique for p in parts] == [True, False, None]
    calls = []
    real = assemble.no_repeats
    monkeypatch.setattr(assemble, "no_repeats", lambda *a: calls.append(1) or real(*a))
    with pytest.raises(TrecFormatError, match="duplicate document 'D000014'") as e:
        read_runs(tmp_path)
    assert e.value.line == 7 and e.value.file.endswith("input.b")
    assert calls == [1]  # input.c only
    with pytest.warns(TrecFormatWarning):
        fast = read_runs(tmp_path, lenient=True)
    monkeypatch.setattr(parse, "PACKED_ROWS", 1 << 60)
    with pytest.warns(TrecFormatWarning):
        slow = read_runs(tmp_path, lenient=True)
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    pd.testing.assert_frame_equal(fast.attrs["repairs"], slow.attrs["repairs"])
    assert len(fast) == 29


@pytest.mark.parametrize("length", [1, 3, 5, 8, 9])
def test_encode_ids_of_one_length_is_dictionary_encode(length, monkeypatch):
    """Docnos of one length (up to 8 bytes: hashed as packed words and unpacked; 9: the
    strings), repetitive (hashed) or distinct (packed), a slice with an offset, two-byte
    characters: the dictionary and indices of pc.dictionary_encode, or the words of every row."""
    from pbtools.io import parse

    rng = np.random.default_rng(length)
    alphabet = np.array(list("ab9Zé-"))
    ids = {"".join(rng.choice(alphabet, size=length)) for _ in range(300)}
    ids = sorted(i for i in ids if len(i.encode()) == length)
    rows = ["x" * length, *rng.choice(ids, size=3000).tolist()]
    arr = pa.array(rows).slice(1)
    got = parse.encode_ids(arr)
    ref = pc.dictionary_encode(arr)
    assert got.dictionary.equals(ref.dictionary) and got.indices.equals(ref.indices)
    monkeypatch.setattr(parse, "PACKED_ROWS", 1)
    distinct = pa.array([f"{i:0{length}d}"[-length:] for i in range(min(10**length, 5000))])
    got = parse.encode_ids(distinct)
    assert isinstance(got, parse.PackedIds)
    assert packed.unpack(np.stack(got.words, axis=1)).equals(distinct)
    assert packed.words(pa.array(["ab", "abc"] * 600), uniform=True) is None


@pytest.mark.parametrize("block", [1, 3, 7, 1 << 16])
def test_words_by_blocks_are_the_strings_bytes(block, monkeypatch):
    """``packed.words`` gathers by blocks of rows: every block size gives each string's bytes,
    big-endian, zero-padded (windows past the end included; a sliced array too)."""
    monkeypatch.setattr(packed, "WORD_BLOCK", block)
    rng = np.random.default_rng(7)
    strings = ["".join(rng.choice(list("ab09Z-"), rng.integers(1, 17))) for _ in range(61)]
    for arr in (pa.array(strings), pa.array(strings).slice(5, 40), pa.array(["x", "yz"])):
        got = packed.words(arr, max_words=2)
        for i, s in enumerate(arr.to_pylist()):
            b = s.encode().ljust(16, b"\0")
            want = [int.from_bytes(b[8 * w : 8 * w + 8], "big") for w in range(len(got))]
            assert [int(g[i]) for g in got] == want, (block, s)
