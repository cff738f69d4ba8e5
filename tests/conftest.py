"""Shared fixtures: the ../shared data (skipped when absent) and a tiny hand-made track."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import budget
import pytest
from hypothesis import HealthCheck, settings

# Property tests: no wall-clock deadline (timing is for benchmarks/, never tests), and under CI a
# fixed example sequence, so a submission's CI run is reproducible. Locally the examples vary.
settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_configure(config):
    """The quick subset (``-m "not slow"``) draws fewer property examples (``budget.py``)."""
    budget.QUICK = "not slow" in (config.getoption("markexpr") or "")


#: doctests that take seconds (a whole HTML page with its figures, a bootstrap of thousands
#: of resamples): marked slow like the tests, so the quick subset leaves them out
SLOW_DOCTESTS = {
    "pbtools.experiments.htmlreport",
    "pbtools.corrections.bootstrap.topic_bootstrap",
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        if item.name in SLOW_DOCTESTS and isinstance(item, pytest.DoctestItem):
            item.add_marker(pytest.mark.slow)


REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` next to the repository; skips the test when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is absent")
    return SHARED


@pytest.fixture(scope="session")
def trec2_dir(shared_dir: Path) -> Path:
    """The TREC-2 ad hoc track: ``TREC-2/Adhoc/{QRels/,Runs/,desc.xml}`` (38 gzipped runs)."""
    path = shared_dir / "data" / "trec" / "TREC-2" / "Adhoc"
    if not path.is_dir():
        pytest.skip("../shared/data/trec/TREC-2/Adhoc is absent")
    return path


def _read_trec2(track: Path, run_id: str):
    import warnings

    from pbtools import io

    with warnings.catch_warnings():  # its repairs: tests/io/test_io.py checks them
        warnings.simplefilter("ignore")
        return io.read_collection(track, lenient=True, run_id=run_id)


@pytest.fixture(scope="session")
def trec2_tag(trec2_dir: Path):
    """TREC-2 read once for the whole session (lenient; runs named by tag). Read-only: a test
    that changes its frames changes them for every later test."""
    return _read_trec2(trec2_dir, "tag")


@pytest.fixture(scope="session")
def trec2_file(trec2_dir: Path):
    """TREC-2 read once for the whole session (lenient; runs named by file). Read-only."""
    return _read_trec2(trec2_dir, "file")


@pytest.fixture(scope="session")
def toy_dir(shared_dir: Path) -> Path:
    """The 5-run TOY track in ``../shared/data/trec/TOY``."""
    path = shared_dir / "data" / "trec" / "TOY"
    if not path.is_dir():
        pytest.skip("../shared/data/trec/TOY is absent")
    return path


TINY_RUNS = {
    # run a: plain text, a tie on topic 1 (d2/d3 at 2.0 → docno descending: d3 first)
    "input.a": [
        "1 Q0 d1 1 3.0 a",
        "1 Q0 d2 2 2.0 a",
        "1 Q0 d3 3 2.0 a",
        "2 Q0 d4 1 1.5 a",
        "2 Q0 d1 2 0.5 a",
    ],
    # run b: gzipped, tabs and runs of spaces, written in the wrong rank order
    "input.b.gz": [
        "1\tQ0\td4\t1\t0.1\tb",
        "1  Q0  d1   2  0.9   b",
        "2 Q0 d2 1 0.7 b",
    ],
}
TINY_QRELS = ["1 0 d1 1", "1 0 d2 0", "1 0 d4 2", "2 0 d1 1", "2 0 d4 -1"]
TINY_DESC = """<set>
    <runs>
        <tag>a</tag>
        <organization>Org A</organization>
    </runs>
    <runs>
        <tag>b</tag>
        <organization>Org B</organization>
    </runs>
</set>
"""


@pytest.fixture
def tiny_collection(tmp_path: Path) -> Path:
    """A hand-made ``TRACK/{QRels/,Runs/,desc.xml}`` with two runs (one gzipped, one with tabs
    and runs of spaces), 2 topics, 5 judgments (one −1). Returns the track directory."""
    track = tmp_path / "TINY"
    (track / "Runs").mkdir(parents=True)
    (track / "QRels").mkdir()
    for name, lines in TINY_RUNS.items():
        data = ("\n".join(lines) + "\n").encode()
        if name.endswith(".gz"):
            data = gzip.compress(data)
        (track / "Runs" / name).write_bytes(data)
    (track / "QRels" / "qrels").write_text("\n".join(TINY_QRELS) + "\n")
    (track / "desc.xml").write_text(TINY_DESC)
    return track
