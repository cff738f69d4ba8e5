"""Benchmark: all leave-one-organization-out reduced qrels, against the time to parse the runs.

Two collections:

* **TREC-2 ad hoc** (``../shared/data/trec/TREC-2/Adhoc``): 38 runs, 50 topics, d = 100, 22
  organisations. Baseline: ``pbtools.io.read_runs`` of its ``Runs/`` directory (run id = tag,
  lenient, as the Lipani protocol reads it).
* **synthetic, 10× TREC-2** (:func:`pbtools.synth.generate`: 380 runs from 220 organisations,
  50 topics, run length 1000, d = 100, 20 unpooled runs): written to a temporary directory as
  plain-text runs, then read back with ``read_runs`` for the baseline.

For each: the best of ``--repeats`` wall-clock times of ``read_runs`` and of
``pooling.leave_one_out(runs, qrels, d, leave_out="org", orgs=..., pooled=...)``
(every organisation at
once; pool inference is timed separately), their ratio (target ≤ 0.5), the size of the output,
and the peak memory of one leave-out call (``tracemalloc``, measured in a separate call so it does
not slow the timed ones) and of the process (``ru_maxrss``).

Usage: ``python benchmarks/pooling_speed.py [--shared PATH] [--repeats N] [--scale K]``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pbtools import io, pooling, synth  # noqa: E402
from pbtools.pooling.inference import infer_pool  # noqa: E402


def best(fn, repeats: int):
    """(best wall time in seconds, last result) of ``repeats`` calls of ``fn``."""
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def peak_mib(fn) -> float:
    """Peak traced Python/numpy allocation of one call of ``fn``, in MiB."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def bench(label: str, runs_dir: Path, qrels, orgs, repeats: int, truth=None) -> dict:
    """Time read_runs, infer_pool and leave-one-org-out; ``truth`` = (depth, pooled) if known."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_parse, runs = best(lambda: io.read_runs(runs_dir, lenient=True), repeats)
    t_infer, info = best(lambda: infer_pool(runs, qrels), 1)
    depth, pooled = truth if truth is not None else (info.depth, info.pooled_runs)
    if truth is not None:
        print(
            f"  (inferred d={info.depth}, |R_p|={len(info.pooled_runs)}; "
            f"the generator's d={depth}, |R_p|={len(pooled)} are used)"
        )

    def loo():
        return pooling.leave_one_out(runs, qrels, depth, leave_out="org", orgs=orgs, pooled=pooled)

    t_loo, reduced = best(loo, repeats)
    mem = peak_mib(loo)
    row = dict(
        collection=label,
        runs=int(runs["name"].nunique()),
        rows=len(runs),
        qrels=len(qrels),
        d=depth,
        pooled=len(pooled),
        orgs=int(reduced["left_out"].nunique()),
        reduced_rows=len(reduced),
        parse_s=t_parse,
        infer_s=t_infer,
        loo_s=t_loo,
        ratio=t_loo / t_parse,
        loo_peak_mib=mem,
    )
    print(
        f"{label}: {row['runs']} runs ({row['rows']:,} rows), {row['qrels']:,} qrels, "
        f"d={row['d']}, |R_p|={row['pooled']}, {row['orgs']} orgs left out "
        f"-> {row['reduced_rows']:,} reduced-qrels rows"
    )
    print(
        f"  read_runs {t_parse:.3f} s | infer_pool {t_infer:.3f} s | leave-one-org-out "
        f"{t_loo:.3f} s | ratio {row['ratio']:.3f}x parse (target <= 0.5) "
        f"[{'ok' if row['ratio'] <= 0.5 else 'SLOW'}] | leave-out peak {mem:.0f} MiB"
    )
    return row


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--shared",
        type=Path,
        default=REPO.parent / "shared",
        help="the shared data directory (default: ../shared)",
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scale", type=int, default=10, help="synthetic size in TREC-2 run counts")
    args = ap.parse_args(argv)
    rows = []
    track = args.shared / "data" / "trec" / "TREC-2" / "Adhoc"
    if track.is_dir():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            qrels = io.read_qrels(track / "QRels")
            orgs = io.read_orgs(track / "desc.xml")
        rows.append(bench("TREC-2", track / "Runs", qrels, orgs, args.repeats))
    else:
        print(f"TREC-2 skipped: {track} is absent")
    t = time.perf_counter()
    c = synth.generate(
        topics=50,
        docs=2000,
        runs=38 * args.scale,
        orgs=22 * args.scale,
        run_length=1000,
        depth=100,
        unpooled=2 * args.scale,
        seed=0,
    )
    t_gen = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        root = c.write(tmp)
        t_write = time.perf_counter() - t
        print(f"synthetic {args.scale}x: generated in {t_gen:.2f} s, written in {t_write:.2f} s")
        rows.append(
            bench(
                f"synthetic {args.scale}x TREC-2",
                root / "Runs",
                c.qrels,
                c.orgs,
                args.repeats,
                truth=(c.depth, c.pooled),
            )
        )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak RSS {rss:.0f} MiB")
    return rows


if __name__ == "__main__":
    main()
