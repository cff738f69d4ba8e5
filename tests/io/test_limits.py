"""Limits on hostile input (issue 25 item 4): gzip bombs and oversized ``desc.xml`` are refused,
naming the file and how to raise the limit, and memory stays bounded by the limit (both gunzip
paths: python-isal and the standard library); ``desc.xml`` is parsed in one streamed pass."""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest

from pbtools import TrecFormatError, io
from pbtools.io import files, limits
from pbtools.io.desc import parse_desc
from pbtools.io.limits import gunzip_limit, input_limits, xml_limit

REPO = Path(__file__).resolve().parents[2]
LINE = b"1 Q0 d1 1 3.0 r\n"


@pytest.fixture(params=["fast", "stdlib"])
def gunzip_path(request, monkeypatch):
    """Both decompressors: python-isal (the ``fast`` extra) and the standard library's zlib."""
    if request.param == "stdlib":
        monkeypatch.setattr(files, "FAST_GUNZIP", None)
    elif files.FAST_GUNZIP is None:
        pytest.skip("python-isal (the optional 'fast' extra) is not installed")
    return request.param


def squeezable(tmp_path: Path, n: int = 5000) -> Path:
    """A valid run of ``n`` lines (one topic; long docnos) that gzip shrinks more than 50×."""
    text = b"".join(b"1 Q0 %s%06d 1 0 r\n" % (b"d" * 1000, i) for i in range(n))
    path = tmp_path / "input.r.gz"
    path.write_bytes(gzip.compress(text, 9))
    return path


def test_gunzip_limit_refuses_and_can_be_raised(tmp_path, gunzip_path, monkeypatch):
    path = squeezable(tmp_path)
    assert path.stat().st_size * limits.GUNZIP_RATIO < 5000 * 1019  # over 50×: tests the ratio
    monkeypatch.setattr(limits, "GUNZIP_FLOOR", 1000)  # a small floor, so the ratio decides
    with pytest.raises(TrecFormatError) as info:
        io.read_run(path)
    err = info.value
    assert err.file == str(path) and err.line is None
    assert "gzip bomb" in err.problem and "gunzip_ratio" in err.problem
    assert f"more than {50 * path.stat().st_size:,} bytes" in err.problem
    with input_limits(gunzip_ratio=1000):
        assert len(io.read_run(path)) == 5000
    with input_limits(gunzip_ratio=0):  # no limit
        assert len(io.read_run(path)) == 5000
    monkeypatch.setenv("PBTOOLS_GUNZIP_RATIO", "1000")
    assert len(io.read_run(path)) == 5000
    with input_limits(gunzip_ratio=50):  # the API wins over the environment
        with pytest.raises(TrecFormatError):
            io.read_run(path)


def test_gunzip_limit_is_exact(tmp_path, gunzip_path, monkeypatch):
    """A file expanding to exactly the limit is read; one byte more is refused; several
    members count together."""
    monkeypatch.setattr(limits, "GUNZIP_FLOOR", 0)
    raw = gzip.compress(LINE * 30) + gzip.compress(LINE * 30)
    size = 60 * len(LINE)
    ratio = size / len(raw)
    assert files.gunzip(raw, "x", limit=size) == LINE * 60
    with input_limits(gunzip_ratio=ratio + 1e-9):
        assert files.gunzip(raw, "x") == LINE * 60
    with pytest.raises(TrecFormatError, match="gunzipped file holds more than"):
        files.gunzip(raw, "x", limit=size - 1)
    with input_limits(gunzip_ratio=(size - 1) / len(raw)):
        with pytest.raises(TrecFormatError, match="gzip bomb"):
            files.gunzip(raw, "x")


def test_limit_settings():
    assert gunzip_limit(1) == limits.GUNZIP_FLOOR
    assert gunzip_limit(10 << 20) == 500 << 20
    assert xml_limit() == 16 << 20
    with input_limits(gunzip_ratio=0, xml_limit=0):
        assert gunzip_limit(10 << 20) is None and xml_limit() is None
    assert xml_limit() == 16 << 20  # restored
    for bad in (-1, float("nan"), float("inf"), "x"):
        with pytest.raises(ValueError, match="gunzip_ratio must be a number >= 0"):
            with input_limits(gunzip_ratio=bad):
                pass


def test_bad_environment(monkeypatch):
    monkeypatch.setenv("PBTOOLS_XML_LIMIT", "lots")
    with pytest.raises(ValueError, match="environment variable PBTOOLS_XML_LIMIT"):
        xml_limit()


@pytest.mark.slow
@pytest.mark.parametrize("fast", [True, False])
def test_gzip_bomb_memory_bounded(tmp_path, fast):
    """A 400 MiB gzip bomb (~400 KB) is refused after at most the 64 MiB floor: the peak
    resident set of a fresh process grows by far less than the bomb (without the limit it grows
    by at least 400 MiB)."""
    if fast and files.FAST_GUNZIP is None:
        pytest.skip("python-isal (the optional 'fast' extra) is not installed")
    bomb = tmp_path / "input.b.gz"
    with bomb.open("wb") as f, gzip.GzipFile(mode="wb", fileobj=f, compresslevel=1) as z:
        z.write(LINE)
        block = bytes(16 << 20)
        for _ in range(25):
            z.write(block)
    code = textwrap.dedent(
        f"""
        import resource
        from pbtools import TrecFormatError
        from pbtools.io import files
        if not {fast}:
            files.FAST_GUNZIP = None
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            files.read_bytes({str(bomb)!r})
        except TrecFormatError as e:
            assert "gzip bomb" in e.problem, e.problem
        else:
            raise SystemExit("not refused")
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    grown_kib = int(done.stdout.strip())
    assert grown_kib < 200 * 1024, grown_kib  # the 64 MiB floor, at most ~2× while joined


def desc_text(n: int) -> str:
    entry = "  <runs>\n    <tag>t{i}</tag>\n    <organization>Org {o}</organization>\n  </runs>\n"
    return "<set>\n" + "".join(entry.format(i=i, o=i // 2) for i in range(n)) + "</set>\n"


def test_xml_limit(tmp_path):
    path = tmp_path / "desc.xml"
    path.write_text(desc_text(3))
    size = path.stat().st_size
    with input_limits(xml_limit=size):
        assert len(io.read_orgs(path)) == 3
    with input_limits(xml_limit=size - 1):
        with pytest.raises(TrecFormatError) as info:
            io.read_orgs(path)
    assert info.value.file == str(path)
    assert f"desc.xml holds {size:,} bytes, over the limit of {size - 1:,}" in info.value.problem
    assert "xml_limit" in info.value.problem


def test_desc_memory_linear(tmp_path):
    """No tree of the document is kept: the parse of 5,000 entries (390 KB) allocates at most
    under 8× the file (5.3× measured; the former tree: 24×)."""
    path = tmp_path / "desc.xml"
    path.write_text(desc_text(5_000))
    tracemalloc.start()
    try:
        names, orgs, _ = parse_desc(path, lenient=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert names[-1] == "t4999" and orgs[-1] == "Org 2499" and len(names) == 5_000
    assert peak < 8 * path.stat().st_size, (peak, path.stat().st_size)
