"""The track shapes the speed benchmarks measure (issues 15 and 30).

* ``trec2()``: TREC-2 ad hoc from ``../shared`` (38 gzipped run files, 1.82 M lines, mixed
  space/tab separators, dirty lines that need ``--lenient``), or None when ``../shared`` is absent;
* ``synth127()``: a ``pbtools.synth`` collection at the shape of a large track — 127 runs,
  34 topics, 1,000 documents per run and topic (4.3 M lines), tab-separated, plain text —
  written once into a cache directory (``$PBTOOLS_BENCH_CACHE``, default
  ``~/.cache/pbtools-bench``) and reused; the same seed always writes the same files.

* ``synth129()``: 129 runs × 50 topics × 1,000 (6.45 M lines), space-separated;
* ``synth63()``: 63 runs × 477 topics × 100 (3.0 M lines), qrels on 53 topics only;
* ``msmarco()``: an MS MARCO-dev-like shape, 10 runs × 6,980 topics × 500 (34.9 M lines,
  1.3 GB): numeric qids (1..1,102,400, written in numeric order, which is not string order)
  and numeric passage ids (0..8,841,822) drawn from a per-topic candidate set of 1,000 that
  the runs share (several million distinct docnos), scores with 6 decimals, space-separated;
  ``msmarco(topics=N)`` writes the first N topics of it (the same lines), for the scaling curve.

Each returns a track directory (``QRels/``, ``Runs/``, ``desc.xml``). ``shape(name)`` resolves
the names of :data:`SHAPES` (the ``--shape`` option of the benchmarks).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

SHAPES = ("trec2", "synth127", "synth129", "synth63", "msmarco")
SYNTH127 = {"runs": 127, "topics": 34, "docs": 2000, "run_length": 1000, "orgs": 40, "seed": 15}
SYNTH129 = {"runs": 129, "topics": 50, "docs": 2000, "run_length": 1000, "orgs": 40, "seed": 30}
SYNTH63 = {"runs": 63, "topics": 477, "docs": 400, "run_length": 100, "orgs": 20, "seed": 31}
SYNTH63_JUDGED = 53
MSMARCO = {"runs": 10, "topics": 6980, "run_length": 500, "candidates": 1000, "seed": 32}


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


def _synth(prefix: str, params: dict, sep: str, judged: int | None = None) -> Path:
    tag = "-".join(f"{k}{v}" for k, v in params.items())
    root = cache_dir() / f"{prefix}-{tag}"
    done = root / ".complete"
    if not done.exists():
        from pbtools import synth

        print(f"generating {root.name} in {root} (once) ...", file=sys.stderr)
        col = synth.generate(**params)
        if judged is not None:  # qrels on the first topics only
            keep = col.qrels["qid"].cat.codes.to_numpy() < judged
            col.qrels = col.qrels[keep].reset_index(drop=True)
        col.write(root, sep=sep)
        done.write_text("ok\n")
    return root


def synth129() -> Path:
    """129 runs × 50 topics × 1,000, space-separated (generated on first use)."""
    return _synth("synth129", SYNTH129, " ")


def synth63() -> Path:
    """63 runs × 477 topics × 100, qrels on 53 topics (generated on first use)."""
    return _synth("synth63", SYNTH63, " ", judged=SYNTH63_JUDGED)


def msmarco(topics: int | None = None) -> Path:
    """The MS MARCO-dev-like shape (module docstring), or its first ``topics`` topics."""
    p = dict(MSMARCO)
    full = p["topics"]
    topics = full if topics is None else min(int(topics), full)
    tag = "-".join(f"{k}{v}" for k, v in p.items())
    root = cache_dir() / f"msmarco-v2-{tag}" / ("full" if topics == full else f"t{topics}")
    done = root / ".complete"
    if done.exists():
        return root
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from pbtools.io import atomic
    from pbtools.synth import join_lines

    print(f"generating the MS MARCO-like shape in {root} (once) ...", file=sys.stderr)
    rng = np.random.default_rng(p["seed"])
    qids = np.sort(rng.choice(1_102_400, size=full, replace=False) + 1)
    cand = np.sort(rng.integers(0, 8_841_823, size=(full, p["candidates"])), axis=1)
    dup = np.zeros(cand.shape, dtype=bool)  # no passage twice on a topic
    dup[:, 1:] = cand[:, 1:] == cand[:, :-1]
    cand[dup] = 8_841_823 + np.arange(int(dup.sum()))
    cand = rng.permuted(cand, axis=1)
    quality = rng.random(p["runs"])
    for sub in ("QRels", "Runs"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    rel = cand[:, :2]  # two relevant passages per topic
    qtext = pc.cast(pa.array(np.repeat(qids, 2)), pa.string())
    lines = pc.binary_join_element_wise(
        qtext, pa.scalar("0"), pc.cast(pa.array(rel.ravel()), pa.string()), pa.scalar("1"), " "
    )
    atomic.write_text(root / "QRels" / "qrels", "\n".join(lines.to_pylist()[: 2 * topics]) + "\n")
    n = p["run_length"]
    for r in range(p["runs"]):
        rr = np.random.default_rng([p["seed"], r])
        score = rr.random(cand.shape)
        score[:, :2] += quality[r]  # the relevant ones rank higher in better runs
        top = np.argsort(-score, axis=1)[:, :n][:topics]
        docs = np.take_along_axis(cand[:topics], top, axis=1).ravel()
        sc = np.round(np.take_along_axis(score[:topics], top, axis=1).ravel() * 10, 6)
        name = f"run{r:02d}"
        text, _ = join_lines(
            [
                pc.cast(pa.array(np.repeat(qids[:topics], n)), pa.string()),
                pa.scalar("Q0"),
                pc.cast(pa.array(docs), pa.string()),
                pc.cast(pa.array(np.tile(np.arange(1, n + 1), topics)), pa.string()),
                pc.cast(pa.array(sc), pa.string()),
                pa.scalar(name),
            ]
        )
        atomic.write_bytes(root / "Runs" / f"input.{name}", text)
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
    if name == "synth129":
        return synth129()
    if name == "synth63":
        return synth63()
    if name == "msmarco":
        return msmarco()
    raise SystemExit(f"unknown shape {name!r}: choose from {', '.join(SHAPES)}")


if __name__ == "__main__":
    for s in SHAPES:
        print(s, shape(s))
