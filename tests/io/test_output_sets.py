"""Commands and writers that write several files do so all or nothing (issue 25 item 2):
``pbtools pool --strategy … -o QRELS --order ORDER`` (pbtools.io.atomic.atomic_set) and a
synthetic track (``SyntheticCollection.write``, pbtools.io.results.write_directory). A failure
injected in the middle of the set leaves the previous set intact and no temporary behind."""

from __future__ import annotations

import pytest

from pbtools import io, synth
from pbtools.cli import main
from pbtools.io import atomic, results

SMALL = dict(topics=4, docs=120, runs=6, orgs=3, run_length=20, depth=5, unpooled=1)


def snapshot(root):
    """Every file under ``root``: relative path → bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_atomic_set_writes_all_or_none(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt.gz"
    with atomic.atomic_set([a, b]) as (sa, sb):
        assert sb.name == "b.txt.gz"  # a writer that reads the suffix sees the target's
        sa.write_text("old a")
        sb.write_text("old b")
    with pytest.raises(RuntimeError, match="boom"):
        with atomic.atomic_set([a, b]) as (sa, sb):
            sa.write_text("new a")
            raise RuntimeError("boom")  # before the second file is written
    assert (a.read_text(), b.read_text()) == ("old a", "old b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt.gz"]
    with pytest.raises(RuntimeError, match="did not write"):  # a set is whole or refused
        with atomic.atomic_set([a, b]) as (sa, sb):
            sa.write_text("new a")
    assert a.read_text() == "old a"
    with pytest.raises(atomic.UnsafeOutputError):
        with atomic.atomic_set([a, a]):
            pass


def pool_cli(track, out, order, budget):
    argv = ["pool", track, "--strategy", "depth:5", "--budget", budget, "-o", out, "--order", order]
    return main([str(x) for x in argv])


def test_pool_strategy_writes_qrels_and_order_as_one_set(tmp_path, monkeypatch, capsys):
    track = synth.generate(**SMALL, seed=4).write(tmp_path / "track")
    out, order = tmp_path / "sim.qrels", tmp_path / "order.parquet"
    assert pool_cli(track, out, order, 8) == 0
    before = {p: p.read_bytes() for p in (out, order)}
    assert len(io.read_qrels(out)) and len(io.read_parquet(order))

    def fail(*args, **kwargs):  # the order's writer fails after the qrels are written
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(io, "write_parquet", fail)
    assert pool_cli(track, out, order, 3) != 0  # another budget: other qrels, not written
    assert {p: p.read_bytes() for p in (out, order)} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["order.parquet", "sim.qrels", "track"]
    capsys.readouterr()


def test_synthetic_track_is_written_all_or_nothing(tmp_path, monkeypatch):
    root = tmp_path / "track"
    synth.generate(**SMALL, seed=1).write(root)
    old = snapshot(root)
    assert "manifest.json" in old and "desc.xml" in old
    col = io.read_collection(root)  # the manifest does not disturb the reader
    assert col.runs["name"].nunique() == SMALL["runs"]

    def fail(*args, **kwargs):  # desc.xml, the last file of the track, cannot be written
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(synth, "write_desc", fail)
        with pytest.raises(OSError, match="No space"):
            synth.generate(**SMALL, seed=2).write(root)
    assert snapshot(root) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["track"]
    synth.generate(**SMALL, seed=2).write(root)  # a complete write replaces it whole
    new = snapshot(root)
    assert new != old and set(new) == set(old)
    assert results.read_manifest(root)["parameters"]["seed"] == 2


def test_synthetic_track_refuses_a_directory_it_did_not_write(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    with pytest.raises(results.ResultSetError, match="not a pbtools result set"):
        synth.generate(**SMALL, seed=1).write(theirs)
    assert sorted(p.name for p in theirs.iterdir()) == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (synth.generate(**SMALL, seed=1).write(empty) / "Runs").is_dir()


def test_a_table_written_block_by_block_joins_its_set_or_nothing(tmp_path):
    """``results.building``: a table streamed block by block is in the set, read back whole;
    a failure before the set is finished — while a table is half written — leaves the
    previous set as it was and no file of the new one."""
    import pandas as pd

    out = tmp_path / "set"
    io.write_results(out, {"t": pd.DataFrame({"x": [0]})})
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(KeyboardInterrupt), results.building(out) as b:
        w = b.blocks("pairs")
        w.write(pd.DataFrame({"x": [1, 2]}))
        raise KeyboardInterrupt
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert io.read_results(out)["t"]["x"].tolist() == [0]
    with results.building(out) as b:
        w = b.blocks("pairs")
        for part in ([1, 2], [3]):
            w.write(pd.DataFrame({"x": part}))
        b.table("t", pd.DataFrame({"x": [4]}))
        b.close_blocks("pairs", metadata={"k": 1})
        b.params = {"p": 2}
    back = io.read_results(out)
    assert back["pairs"]["x"].tolist() == [1, 2, 3] and back["t"]["x"].tolist() == [4]
    assert list(back) == ["t", "pairs"] and back.manifest["files"]["pairs.parquet"]["rows"] == 3
    assert back["pairs"].attrs["metadata"] == {"k": 1} and back.manifest["parameters"] == {"p": 2}
    with pytest.raises(RuntimeError, match="tables not finished"), results.building(out) as b:
        b.blocks("pairs").write(pd.DataFrame({"x": [5]}))
    assert io.read_results(out)["pairs"]["x"].tolist() == [1, 2, 3]
    assert sorted(p.name for p in tmp_path.iterdir()) == before
