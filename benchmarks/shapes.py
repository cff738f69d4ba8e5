"""The two track shapes the speed benchmarks measure (issue 15).

* ``trec2()``: TREC-2 ad hoc from ``../shared`` (38 gzipped run files, 1.82 M lines, mixed
  space/tab separators, dirty lines that need ``--lenient``), or None when ``../shared`` is absent;
* ``synth127()``: a ``pbtools.synth`` collection at the shape of a large track — 127 runs,
  34 topics, 1,000 documents per run and topic (4.3 M lines), tab-separated, plain text —
  written once into a cache directory (``$PBTOOLS_BENCH_CACHE``, default
  ``~/.cache/pbtools-bench``) and reused; the same seed always writes the same files.

Both return a track directory (``QRels/``, ``Runs/``, ``desc.xml``). ``shape(name)`` resolves
``"trec2"`` / ``"synth127"`` (the ``--shape`` option of the benchmarks).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

SHAPES = ("trec2", "synth127")
SYNTH127 = {"runs": 127, "topics": 34, "docs": 2000, "run_length": 1000, "orgs": 40, "seed": 15}


def cache_dir() -> Path:
    """Where generated tracks are kept between benchmark runs."""
    return Path(os.environ.get("PBTOOLS_BENCH_CACHE", Path.home() / ".cache" / "pbtools-bench"))


def trec2() -> Path | None:
    """TREC-2 ad hoc in ``../shared`` (None when absent)."""
    track = ROOT.parent / "shared" / "data" / "trec" / "TREC-2" / "Adhoc"
    return track if (track / "Runs").is_dir() else None


def synth127() -> Path:
    """The 127-run, 34-topic, tab-separated synthetic track (generated on first use)."""
    tag = "-".join(f"{k}{v}" for k, v in SYNTH127.items())
    root = cache_dir() / f"synth127-tab-{tag}"
    done = root / ".complete"
    if not done.exists():
        from pbtools import synth

        print(f"generating the 127-run synthetic track in {root} (once) ...", file=sys.stderr)
        synth.generate(**SYNTH127).write(root, sep="\t")
        done.write_text("ok\n")
    return root


def shape(name: str) -> Path:
    """The track directory of shape ``name`` (:data:`SHAPES`); SystemExit when unavailable."""
    if name == "trec2":
        track = trec2()
        if track is None:
            raise SystemExit("TREC-2 is not in ../shared/data/trec: use --shape synth127")
        return track
    if name == "synth127":
        return synth127()
    raise SystemExit(f"unknown shape {name!r}: choose from {', '.join(SHAPES)}")


if __name__ == "__main__":
    for s in SHAPES:
        print(s, shape(s))
