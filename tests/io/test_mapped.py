"""Big plain run files read through a mapping (``pbtools.io.mapping.mapped``): the same frames,
repairs and refusals as when their bytes are read, the mapping closed after the read."""

from __future__ import annotations

import gzip
import os
import warnings

import numpy as np
import pandas as pd
import pytest

from pbtools import native
from pbtools.io import mapping, parse

needs_tokens = pytest.mark.skipif(native.tokens() is None, reason="pbtools._tokens not built")

CLEAN = b"".join(b"%d Q0 d%d %d %.3f r\n" % (q, d, d, 10 - d / 7) for q in (3, 1) for d in range(9))


def test_mapped_maps_plain_regular_files_only(tmp_path):
    plain, gz, empty = tmp_path / "p", tmp_path / "g", tmp_path / "e"
    plain.write_bytes(CLEAN)
    gz.write_bytes(gzip.compress(CLEAN))
    empty.write_bytes(b"")
    with mapping.mapped(plain, min_size=1) as view:
        assert bytes(view) == CLEAN
    assert view.closed  # closed on leaving the block
    with pytest.raises(RuntimeError), mapping.mapped(plain, min_size=1) as view:
        raise RuntimeError
    assert view.closed  # and on an exception
    with mapping.mapped(plain, min_size=len(CLEAN) + 1) as small:
        assert small is None
    for other in (gz, empty, tmp_path, tmp_path / "missing"):
        with mapping.mapped(other, min_size=0) as view:
            assert view is None, other
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with mapping.mapped(fifo, min_size=0) as view:  # never opened: it would block
        assert view is None


def read(source, monkeypatch, mapped: bool, **kw):
    from pbtools import io

    with monkeypatch.context() as m, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.setattr(mapping, "MAP_BYTES", 1 if mapped else 1 << 62)
        try:
            return io.read_runs(source, **kw)
        except Exception as e:  # the refusal itself is compared
            return type(e), str(e)


CASES = {
    "clean": CLEAN,
    "zero scores": CLEAN.replace(b"9.857", b"0").replace(b"9.714", b"-0.0"),
    "tabs": CLEAN.replace(b" ", b"\t"),
    "crlf": CLEAN.replace(b"\n", b"\r\n"),
    "bom": b"\xef\xbb\xbf" + CLEAN,
    "blank line": CLEAN + b"\n",
    "bad rank": CLEAN.replace(b"d3 3", b"d3 x"),
    "no line end": CLEAN[:-1],
}


@needs_tokens
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("lenient", [False, True])
def test_mapped_read_gives_the_same_frames_and_refusals(tmp_path, monkeypatch, case, lenient):
    (tmp_path / "input.a").write_bytes(CASES[case])
    (tmp_path / "input.b.gz").write_bytes(gzip.compress(CLEAN.replace(b" r\n", b" g\n")))
    got = read(tmp_path, monkeypatch, True, lenient=lenient)
    want = read(tmp_path, monkeypatch, False, lenient=lenient)
    if isinstance(want, tuple):
        assert got == want
        return
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    for c in ("qid", "docno"):
        assert np.array_equal(got[c].cat.codes, want[c].cat.codes)
    assert got.attrs.keys() == want.attrs.keys()


@needs_tokens
def test_clean_plain_files_are_not_copied(tmp_path, monkeypatch):
    """The tokenizer reads a big clean file through the mapping: its bytes are never read."""
    (tmp_path / "input.a").write_bytes(CLEAN)
    (tmp_path / "input.b").write_bytes(CASES["crlf"].replace(b" r\r", b" g\r"))
    read_paths = []
    real = parse.read_bytes
    monkeypatch.setattr(parse, "read_bytes", lambda p: read_paths.append(p) or real(p))
    frame = read(tmp_path, monkeypatch, True)
    assert len(frame) == 36 and read_paths == [str(tmp_path / "input.b")]
    read_paths.clear()
    read(tmp_path, monkeypatch, False)
    assert sorted(read_paths) == [str(tmp_path / "input.a"), str(tmp_path / "input.b")]
