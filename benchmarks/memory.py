"""Peak memory of ``pbtools analyze`` on many runs (issue 25 item 4, issue 30 item 4).

Two generated tracks, written once into the benchmark cache (``$PBTOOLS_BENCH_CACHE``, see
:mod:`shapes`) and reused:

* ``oneline``: ``--runs`` runs (default 2,000) of one line each (one topic, one document per
  run, ``pbtools.synth`` at ``run_length=1``), spread over ``runs // 2`` organizations; the case
  where the pairs of runs dominate everything else;
* ``wide``: ``--runs`` runs (default 1,000) × ``--topics`` topics (default 50) × ``--length``
  documents (default 100) from ``pbtools.synth`` (``runs // 2`` organizations, pool depth 10,
  ``docs = 20 × length`` documents): the runs² stages with every topic, and Arrow data that
  grows with the runs;
* ``trec2x``: TREC-2 ad hoc (``../shared``) with its 38 runs repeated ``--times`` times (default
  10: 380 runs, 846 MB of text) under new tags and organizations (``<tag>x<k>``), so the runs²
  stages grow ``times²``-fold while the pool and qrels stay TREC-2's; read with ``--lenient``.

For each case the script runs ``python -m pbtools analyze TRACK --jobs 1 --no-progress -o DIR``
in a child process and prints its peak resident set (``ru_maxrss`` of the child), the Arrow size
of the runs (``read_runs(...)``'s frame, ``memory_usage(deep=True)``), the size of the
significance table it wrote (the one output of runs² rows, written a block at a time since
issue 30, never held whole) and what is left per run beyond 2 × Arrow and ``--base`` (the
process itself) — the per-run constant c of issue 30 item 4 (docs/input.md)::

    python3 benchmarks/memory.py oneline --runs 2000
    python3 benchmarks/memory.py wide --runs 1000 --topics 50 --length 100
    python3 benchmarks/memory.py trec2x --times 10

``--output DIR`` keeps the analysis tables (for comparing two versions frame by frame).
``--stages`` prints, as each stage of ``analyze`` begins (reading, pool inference, leave-outs
and truth — within it the encoding of the pooled runs and the estimation, chunk by chunk —,
significance) and at its end, the child's resident set and its peak so far
(``VmRSS``/``VmHWM`` of ``/proc/self/status``): the peak of a stage is the rise of ``VmHWM``
between its line and the next. It runs ``analyze`` through :func:`pbtools.cli.main` in a
wrapper that announces the stages; the peak is the same. The
child imports pbtools as ``PYTHONPATH`` says, so ``PYTHONPATH=OTHER_CHECKOUT python3
benchmarks/memory.py ...`` measures another version on the same generated track.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from shapes import cache_dir, trec2  # noqa: E402


def oneline(runs: int = 2000, seed: int = 25) -> Path:
    """The track of ``runs`` one-line runs (generated on first use)."""
    root = cache_dir() / f"oneline-runs{runs}-topics2-seed{seed}"
    done = root / ".complete"
    if not done.exists():
        from pbtools import synth

        print(f"generating {runs} one-line runs in {root} (once) ...", file=sys.stderr)
        coll = synth.generate(
            topics=2,
            docs=max(100, runs),
            runs=runs,
            orgs=max(1, runs // 2),
            run_length=1,
            depth=1,
            unpooled=0,
            seed=seed,
        )
        coll.write(root)
        done.write_text("ok\n")
    return root


def wide(runs: int = 1000, topics: int = 50, length: int = 100, seed: int = 30) -> Path:
    """The track of ``runs`` runs × ``topics`` topics × ``length`` documents (generated on
    first use)."""
    root = cache_dir() / f"wide-runs{runs}-topics{topics}-length{length}-seed{seed}"
    done = root / ".complete"
    if not done.exists():
        from pbtools import synth

        print(f"generating {runs} × {topics} × {length} in {root} (once) ...", file=sys.stderr)
        coll = synth.generate(
            topics=topics,
            docs=20 * length,
            runs=runs,
            orgs=max(1, runs // 2),
            run_length=length,
            depth=10,
            unpooled=0,
            seed=seed,
        )
        coll.write(root)
        done.write_text("ok\n")
    return root


def trec2x(times: int = 10) -> Path:
    """TREC-2 with its runs repeated ``times`` times under new tags (generated on first use)."""
    src = trec2()
    if src is None:
        raise SystemExit("TREC-2 is not in ../shared/data/trec")
    root = cache_dir() / f"trec2x{times}"
    done = root / ".complete"
    if done.exists():
        return root
    print(f"generating TREC-2 × {times} in {root} (once) ...", file=sys.stderr)
    (root / "Runs").mkdir(parents=True, exist_ok=True)
    (root / "QRels").mkdir(exist_ok=True)
    for q in (src / "QRels").iterdir():
        (root / "QRels" / q.name).write_bytes(q.read_bytes())
    desc = (src / "desc.xml").read_text()
    entries = re.findall(r"<runs>.*?</runs>", desc, flags=re.S)
    out = ["<set>"]
    for k in range(times):
        for entry in entries:
            out.append(
                re.sub(
                    r"<(tag|organization)>\s*(.*?)\s*</\1>",
                    lambda m, k=k: f"<{m[1]}>{m[2]}{'x' if m[1] == 'tag' else ' x'}{k}</{m[1]}>",
                    entry,
                    flags=re.S,
                )
            )
    out.append("</set>")
    (root / "desc.xml").write_text("\n".join(out) + "\n")
    for f in sorted((src / "Runs").iterdir()):
        text = gzip.decompress(f.read_bytes())
        name = f.name.removesuffix(".gz")
        for k in range(times):
            # the tag is the last field of each line: append x<k> to it
            new = re.sub(rb"(\S)([ \t]*)(\r?\n)", rb"\1x%d\2\3" % k, text)
            (root / "Runs" / f"{name}x{k}.gz").write_bytes(gzip.compress(new, compresslevel=1))
    done.write_text("ok\n")
    return root


#: the child of ``--stages``: ``analyze`` with each stage's start announced on stderr
STAGES = """
import sys, time
import pbtools.experiments.analysis as analysis
import pbtools.experiments.chunked as chunked
import pbtools.experiments.leaveout as leaveout
from pbtools.cli import main

T0 = time.perf_counter()


def mem(what):
    got = dict(line.split(":", 1) for line in open("/proc/self/status") if line[:5] == "VmHWM"
               or line[:5] == "VmRSS")
    mib = {k: int(v.split()[0]) // 1024 for k, v in got.items()}
    print(f"stage {what:<22} at {time.perf_counter() - T0:7.1f} s: RSS {mib['VmRSS']:6} MiB, "
          f"peak so far {mib['VmHWM']:6} MiB", file=sys.stderr, flush=True)


def around(module, name, label):
    real = getattr(module, name)

    def wrapped(*args, **kwargs):
        mem(f"  {label}")
        try:
            return real(*args, **kwargs)
        finally:
            mem(f"  {label} done")

    setattr(module, name, wrapped)


real = analysis.stage
analysis.stage = lambda name: (mem(name), real(name))
# the leave-out stage's parts: the encoding of the pooled runs, the chunks of runs to score
around(leaveout, "DenseRuns", "encoding")
around(leaveout, "estimate_in_chunks", "estimation")
code = main(sys.argv[1:])
mem("end")
sys.exit(code)
"""


def measure(track: Path, extra: list[str], output: str | None, stages: bool = False) -> dict:
    """Peak RSS (bytes) of one ``analyze`` child process, and the Arrow size of the runs
    (``stages``: the child's memory at each stage printed, :data:`STAGES`)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = output or os.path.join(tmp, "out")
        head = ["-c", STAGES] if stages else ["-m", "pbtools"]
        cmd = [sys.executable, *head, "analyze", str(track), "--jobs", "1"]
        cmd += ["--no-progress", "-o", out, *extra]
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        # run from the temporary directory: the child imports pbtools as PYTHONPATH says (a
        # worktree, or the installed package), never by accident from the current directory
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        seconds = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if stages:
            print("".join(x for x in done.stderr.splitlines(True) if x.startswith("stage ")))
        significance = 0
        if done.returncode == 0:  # the one output of runs² rows (docs/input.md)
            from pbtools.io import read_parquet

            table = read_parquet(os.path.join(out, "significance.parquet"))
            significance = int(table.memory_usage(deep=True).sum())
    if done.returncode != 0:
        raise SystemExit(f"analyze failed ({done.returncode}):\n{done.stderr}")
    if peak <= before:
        print("warning: an earlier child had a higher peak; figure unreliable", file=sys.stderr)
    from pbtools.io import read_runs

    lenient = "--lenient" in extra
    with warnings.catch_warnings():  # the repairs of --lenient, one warning per file
        warnings.simplefilter("ignore")
        runs = read_runs(str(track / "Runs"), lenient=lenient)
    arrow = int(runs.memory_usage(deep=True).sum())
    return {
        "peak": peak * 1024,
        "arrow": arrow,
        "runs": runs["name"].nunique(),
        "significance": significance,
        "seconds": seconds,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", choices=("oneline", "wide", "trec2x"))
    ap.add_argument("--runs", type=int, help="oneline, wide: runs (default 2,000; 1,000)")
    ap.add_argument("--topics", type=int, default=50, help="wide: topics")
    ap.add_argument("--length", type=int, default=100, help="wide: documents per topic")
    ap.add_argument("--times", type=int, default=10, help="trec2x: copies of TREC-2's runs")
    ap.add_argument("--output", help="keep the analysis tables in this directory")
    ap.add_argument("--stages", action="store_true", help="print the memory at each stage")
    ap.add_argument(
        "--base",
        type=float,
        default=216.0,
        help="MiB of the process itself (the bundled sample's peak, `/usr/bin/time -v pbtools "
        "analyze --jobs 1`), left out of the per-run figure",
    )
    args = ap.parse_args(argv)
    if args.case == "oneline":
        track, extra = oneline(args.runs or 2000), []
    elif args.case == "wide":
        track, extra = wide(args.runs or 1000, args.topics, args.length), []
    else:
        track, extra = trec2x(args.times), ["--lenient"]
    r = measure(track, extra, args.output, args.stages)
    mib = 1 << 20
    rest = r["peak"] - 2 * r["arrow"] - args.base * mib
    print(
        f"{args.case}: {r['runs']} runs, Arrow size of the runs {r['arrow'] / mib:.2f} MiB, "
        f"analyze peak RSS {r['peak'] / mib:.0f} MiB, significance table written "
        f"{r['significance'] / mib:.0f} MiB (streamed, not held); (peak − 2 × Arrow − "
        f"{args.base:.0f} MiB) per run {rest / r['runs'] / 1024:.0f} KiB; {r['seconds']:.0f} s"
    )


if __name__ == "__main__":
    main()
