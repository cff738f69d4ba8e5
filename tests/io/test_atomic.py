"""Atomic files (pbtools.io.atomic), result sets (pbtools.io.results) and the integrity checks
of pbtools.io.read_parquet, in process; tests/cli/test_faults.py kills real commands."""

from __future__ import annotations

import json
import os
import signal
import stat
import tempfile
import threading
import time

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from pbtools import io
from pbtools.cli.common import UsageError, check_output
from pbtools.frames import encode
from pbtools.io import atomic, results
from pbtools.io.parquet import CorruptFileError


def frame(n=2000, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    docnos = pd.Series([f"d{i:05d}" for i in rng.permutation(n)], dtype="str")
    return pd.DataFrame(
        {
            "qid": pd.Categorical([str(i % 7) for i in range(n)]),
            "docno": encode(docnos),
            "score": rng.normal(size=n),
        }
    )


# --------------------------------------------------------------------------------------------
# atomic files
# --------------------------------------------------------------------------------------------


def test_atomic_write_replaces_whole(tmp_path):
    target = tmp_path / "a.tsv"
    target.write_text("old\n")
    target.chmod(0o640)
    atomic.write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the replaced file's mode kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tsv"]


@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()])
def test_a_failed_write_leaves_the_target_and_no_temporary(tmp_path, exc):
    target = tmp_path / "a.tsv"
    target.write_text("old\n")
    with pytest.raises(type(exc)), atomic.atomic_write(target) as fh:
        fh.write("half")
        raise exc
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tsv"]


def test_a_failed_parquet_write_deletes_nothing(tmp_path, monkeypatch):
    """pyarrow removes the file it fails to write: that is now pbtools' temporary file, and the
    previous target is intact (before, the target itself was removed)."""
    target = tmp_path / "t.parquet"
    io.write_parquet(frame(10), target)
    before = target.read_bytes()

    class Failing:  # pbtools writes a row group at a time through a ParquetWriter
        def __init__(self, where, schema, **kw):
            with open(where, "wb") as fh:
                fh.write(b"PAR1 half")
            os.unlink(where)  # as pyarrow does on error
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq, "ParquetWriter", Failing)
    with pytest.raises(OSError, match="No space"):
        io.write_parquet(frame(10, seed=1), target)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]


def test_a_symbolic_link_is_followed_and_kept(tmp_path):
    real = tmp_path / "real.tsv"
    real.write_text("old\n")
    link = tmp_path / "link.tsv"
    link.symlink_to(real)
    atomic.write_text(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_non_regular_targets_are_refused_and_kept(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(atomic.UnsafeOutputError, match="a FIFO"):
        io.write_parquet(frame(10), fifo)
    with pytest.raises(atomic.UnsafeOutputError, match="a FIFO"):
        io.to_trec_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d"], "label": [1]}), fifo)
    assert fifo.is_fifo()
    with pytest.raises(atomic.UnsafeOutputError, match="a directory"):
        atomic.write_text(tmp_path, "x")
    with pytest.raises(atomic.UnsafeOutputError, match="pseudo file system"):
        atomic.check_target("/proc/self/fd/1")
    with pytest.raises(atomic.UnsafeOutputError, match="under /proc"):
        atomic.check_target("/proc/self/comm")  # a regular file of the kernel's
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(atomic.UnsafeOutputError, match="dangling"):
        atomic.check_target(tmp_path / "dangling")
    with pytest.raises(UsageError, match="-o .*a FIFO"):
        check_output(fifo)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "fifo"]


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_a_device_target_is_refused_and_kept(tmp_path):
    """A character device made in a temporary directory (the numbers of /dev/null, so that
    nothing real is at risk): refused, and the node is still there."""
    dev = tmp_path / "null"
    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    with pytest.raises(atomic.UnsafeOutputError, match="a character device"):
        io.write_parquet(frame(10), dev)
    with pytest.raises(UsageError, match="a character device"):
        check_output(dev)
    assert stat.S_ISCHR(dev.stat().st_mode)


# --------------------------------------------------------------------------------------------
# Parquet integrity
# --------------------------------------------------------------------------------------------


def test_flipped_bytes_are_refused_or_harmless(tmp_path):
    """A byte flipped anywhere in the file: the read is refused (naming the file) or gives the
    frame back unchanged — never other values (page CRCs, the metadata's SHA-256)."""
    good = tmp_path / "t.parquet"
    df = frame(200)  # every part of a Parquet file (pages, dictionaries, footer) in ~5 kB
    io.write_parquet(df, good)
    data = good.read_bytes()
    bad = tmp_path / "bad.parquet"
    refused = 0
    for off in range(4, len(data) - 4, 41):
        b = bytearray(data)
        b[off] ^= 0x5A
        bad.write_bytes(bytes(b))
        try:
            back = io.read_parquet(bad)
        except CorruptFileError as e:
            assert str(bad) in str(e)
            refused += 1
            continue
        pd.testing.assert_frame_equal(back, df)
    assert refused > (len(data) - 8) // 41 // 2


def test_a_truncated_file_is_refused_with_its_name(tmp_path):
    p = tmp_path / "t.parquet"
    io.write_parquet(frame(), p)
    p.write_bytes(p.read_bytes()[:-100])
    with pytest.raises(CorruptFileError, match=f"{p}: a damaged or truncated Parquet file"):
        io.read_parquet(p)


def _retag(src, dst, change, *, keep_sha=True):
    """Rewrite ``src`` with pbtools' metadata changed by ``change`` (the sha kept stale, or
    dropped as in a file without one)."""
    table = pq.read_table(src)
    meta = dict(table.schema.metadata)
    body = json.loads(meta[b"pbtools"])
    change(body)
    meta[b"pbtools"] = json.dumps(body).encode()
    if not keep_sha:
        del meta[b"pbtools.sha256"]
    pq.write_table(table.replace_schema_metadata(meta), dst)


def test_tampered_categories_are_refused(tmp_path):
    """The issue's case: a category list changed in the metadata turned most docnos into NaN;
    now refused by the metadata checksum, and without one by the values it would lose."""
    df = frame()
    df["docno"] = pd.Categorical(df["docno"], categories=sorted(df["docno"])[::-1])  # stored
    src = tmp_path / "t.parquet"
    io.write_parquet(df, src)
    assert io.read_parquet(src)["docno"].isna().sum() == 0

    def shift(body):
        body["categoricals"]["docno"]["categories"] = [
            c + "x" for c in body["categoricals"]["docno"]["categories"][:-6]
        ] + body["categoricals"]["docno"]["categories"][-6:]

    _retag(src, tmp_path / "a.parquet", shift)
    with pytest.raises(CorruptFileError, match="metadata does not match its checksum"):
        io.read_parquet(tmp_path / "a.parquet")
    _retag(src, tmp_path / "b.parquet", shift, keep_sha=False)
    with pytest.raises(CorruptFileError, match="'docno': 1994 values are not among"):
        io.read_parquet(tmp_path / "b.parquet")


def test_row_count_and_types_are_checked(tmp_path):
    src = tmp_path / "t.parquet"
    io.write_parquet(frame(50), src)
    _retag(src, tmp_path / "r.parquet", lambda b: b.update(rows=49), keep_sha=False)
    with pytest.raises(CorruptFileError, match="50 rows, its metadata says 49"):
        io.read_parquet(tmp_path / "r.parquet")
    _retag(
        src, tmp_path / "c.parquet", lambda b: b["columns"].update(score="float"), keep_sha=False
    )
    with pytest.raises(CorruptFileError, match=r"types differ from its metadata \(score\)"):
        io.read_parquet(tmp_path / "c.parquet")


# --------------------------------------------------------------------------------------------
# result sets
# --------------------------------------------------------------------------------------------


def tables(seed=0) -> dict:
    return {"a": frame(30, seed), "b": frame(5, seed + 1)}


def test_result_set_round_trip_and_replacement(tmp_path):
    out = tmp_path / "out"
    results.write_results(out, tables(0), params={"seed": 0})
    res = io.read_results(out)
    pd.testing.assert_frame_equal(res["a"], tables(0)["a"])
    assert res.manifest["parameters"] == {"seed": 0}
    assert res.manifest["files"]["a.parquet"]["rows"] == 30
    results.write_results(out, tables(1), params={"seed": 1})  # over the earlier set
    res = io.read_results(out)
    pd.testing.assert_frame_equal(res["b"], tables(1)["b"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert sorted(p.name for p in out.iterdir()) == ["a.parquet", "b.parquet", "manifest.json"]


def test_result_set_replaces_only_an_empty_or_pbtools_directory(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    results.write_results(empty, tables(), params={})
    assert io.read_results(empty)["a"].shape == (30, 3)
    legacy = tmp_path / "legacy"  # written before manifests: only the tables' names
    legacy.mkdir()
    io.write_parquet(frame(3), legacy / "a.parquet")
    results.write_results(legacy, tables(), params={})
    assert len(io.read_results(legacy)["a"]) == 30
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "thesis.tex").write_text("keep me")
    with pytest.raises(results.ResultSetError, match="not a pbtools result set .*thesis.tex"):
        results.write_results(theirs, tables(), params={})
    with pytest.raises(UsageError, match="not a pbtools result set"):
        check_output(theirs, directory=True)
    assert [p.name for p in theirs.iterdir()] == ["thesis.tex"]
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())


@pytest.mark.parametrize("damage", ["missing", "extra", "changed", "no manifest"])
def test_read_results_refuses_a_set_unlike_its_manifest(tmp_path, damage):
    out = tmp_path / "out"
    results.write_results(out, tables(), params={})
    if damage == "missing":
        (out / "b.parquet").unlink()
        match = "b.parquet: listed in manifest.json but missing"
    elif damage == "extra":
        io.write_parquet(frame(3), out / "c.parquet")
        match = "c.parquet: not listed in manifest.json"
    elif damage == "changed":  # a valid Parquet file of another run in its place
        io.write_parquet(frame(30, seed=9), out / "a.parquet")
        match = "a.parquet: changed since it was written"
    else:
        (out / "manifest.json").unlink()
        match = "has no manifest.json: not a complete pbtools result set"
    with pytest.raises(results.ResultSetError, match=match):
        io.read_results(out)


def test_a_failed_result_set_leaves_the_previous_one(tmp_path):
    out = tmp_path / "out"
    results.write_results(out, tables(0), params={"seed": 0})
    bad = tables(1)
    bad["b"] = bad["b"].assign(x=[object()] * 5)  # Arrow cannot store it: fails mid-set
    with pytest.raises(Exception, match="object"):
        results.write_results(out, bad, params={"seed": 1})
    assert io.read_results(out).manifest["parameters"] == {"seed": 0}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_writers_lock_is_held_and_released(tmp_path):
    out = tmp_path / "out"
    with results.hold(out):
        assert (tmp_path / "out.lock").read_text().strip() == str(os.getpid())
        results.write_results(out, tables(), params={})  # re-entrant in the holder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# --------------------------------------------------------------------------------------------
# an interrupt right after a temporary is created (CI saw a `.out.X.new` left by SIGINT)
# --------------------------------------------------------------------------------------------


def _main_thread_only():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are set in the main thread only")


def test_held_signals_act_at_release_not_before():
    _main_thread_only()
    held = atomic.HeldSignals()
    os.kill(os.getpid(), signal.SIGINT)  # recorded, not raised
    for _ in range(3):
        time.sleep(0.001)
    with pytest.raises(KeyboardInterrupt):
        held.release()
    held.release()  # once only
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _interrupted(real):
    """``real`` (tempfile.mkstemp/mkdtemp) whose caller is interrupted right after it returns."""

    def make(*args, **kwargs):
        got = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        return got

    return make


@pytest.mark.parametrize("how", ["atomic_path", "atomic_set", "result_set"])
def test_an_interrupt_right_after_creation_leaves_no_temporary(tmp_path, monkeypatch, how):
    _main_thread_only()
    monkeypatch.setattr(tempfile, "mkstemp", _interrupted(tempfile.mkstemp))
    monkeypatch.setattr(tempfile, "mkdtemp", _interrupted(tempfile.mkdtemp))
    with pytest.raises(KeyboardInterrupt):
        if how == "atomic_path":
            with atomic.atomic_path(tmp_path / "a.txt") as tmp:
                tmp.write_text("x")
        elif how == "atomic_set":
            with atomic.atomic_set([tmp_path / "a.txt"]) as (a,):
                a.write_text("x")
        else:
            results.write_results(tmp_path / "out", {"t": pd.DataFrame({"x": [1]})})
    assert sorted(p.name for p in tmp_path.iterdir()) == []
