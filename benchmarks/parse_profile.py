"""Where ``read_runs`` spends its CPU above the parse floor: each stage timed apart (issue 30).

``python benchmarks/parse_profile.py --shape S`` (or ``parse_floor.py --shape S --profile``)
reads the shape once with ``read_runs`` (strict; TREC-2 lenient) on one thread
(``pbtools.threads.limited_threads(1)``) while the functions of each stage are wrapped with
``time.process_time`` (the process's CPU while they run: with one worker thread, the stage's own
CPU and that of Arrow's reader thread, which parses the next block of the direct read while the
worker checks the last one — ``time.thread_time`` would miss it), and prints each stage's CPU
seconds, ns per row and share of the whole process's CPU, next to the floor's (``parse_floor``,
every core) in the same process.
Stages nest nowhere (each wrapped function is called outside the others), so the shares add up
to the profiled part; "the rest" is the frame, the merges of small arrays and the interpreter.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
import warnings
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _p in (HERE, HERE.parent):  # run as a script from anywhere
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

#: (module, function, what it is), in the order of the work
STAGES = (
    ("pbtools.io.parse", "read_bytes", "the files' bytes (also in the floor)"),
    ("pbtools.io.parse", "read_direct", "Arrow's typed CSV read and the direct path's checks"),
    ("pbtools.io.parse", "encode_topics", "qids dictionary-encoded per file"),
    ("pbtools.io.parse", "encode_ids", "docnos packed into words per file"),
    ("pbtools.packed", "presence", "pair tables of the docnos"),
    ("pbtools.packed.Radix", "number", "each docno's mixed-radix number and row"),
    ("pbtools.packed", "rank_rows", "codes from the sorted numbers"),
    ("pbtools.packed.Radix", "keys", "the distinct docnos decoded"),
    ("pbtools.io.assemble", "sorted_dtype", "the docno dictionary taken in sorted order"),
    ("pbtools.io.assemble", "no_repeats", "no (qid, docno) twice in a file"),
    ("pbtools.io.assemble", "file_order", "trec order of each file"),
    ("pbtools.io.assemble", "ranks_from_starts", "ranks"),
    ("pbtools.ids", "dictionary_dtype", "the frame's id categories (pandas)"),
)


def _resolve(path: str):
    import importlib

    parts = path.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(path)


def profile(paths: list[str], lenient: bool) -> None:
    """Print the stage table of one ``read_runs`` of ``paths`` (see the module docstring)."""
    import numpy as np
    from parse_floor import parse_floor

    from pbtools.io import read_runs
    from pbtools.threads import limited_threads

    spent: dict[str, float] = defaultdict(float)
    lock = threading.Lock()
    saved = []
    for mod, name, _ in STAGES:
        owner = _resolve(mod)
        fn = getattr(owner, name)
        saved.append((owner, name, fn))

        def timed(*a, _fn=fn, _key=f"{mod}.{name}", **k):
            t0 = time.process_time()
            try:
                return _fn(*a, **k)
            finally:
                with lock:
                    spent[_key] += time.process_time() - t0

        setattr(owner, name, timed)
    parse_floor(paths)  # classify the files, outside the timing
    c0 = time.process_time()
    floor = parse_floor(paths)[1].num_rows
    floor_cpu = time.process_time() - c0
    try:
        c0 = time.process_time()
        with limited_threads(1):
            n = len(read_runs(paths, lenient=lenient))
        total = time.process_time() - c0
    finally:
        for owner, name, fn in saved:
            setattr(owner, name, fn)
    sort = np.random.default_rng(0).integers(0, 1 << 50, n, dtype=np.uint64)
    c0 = time.process_time()
    sort.sort()
    sort_cpu = time.process_time() - c0

    def per(x: float) -> str:
        return f"{x:7.3f} s {x * 1e9 / n:5.0f} ns/row {100 * x / total:5.1f} %"

    print(f"  {n:,} rows; floor ({floor:,} rows) {floor_cpu:.3f} s CPU")
    print(f"  read_runs {per(total)} = {total / floor_cpu:.2f}x the floor")
    rest = total
    for mod, name, what in STAGES:
        s = spent.get(f"{mod}.{name}", 0.0)
        rest -= s
        print(f"    {name:18s} {per(s)}  {what}")
    print(f"    {'the rest':18s} {per(rest)}")
    print(f"    (np.sort of {n:,} random 50-bit numbers, the docnos' one sort: {sort_cpu:.3f} s)")


def main(argv: list[str] | None = None) -> None:
    import os

    from shapes import SHAPES, shape

    from pbtools.io import run_files

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", choices=SHAPES, default="synth129")
    ap.add_argument("--topics", type=int, help="msmarco: its first N topics only")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.topics and args.shape == "msmarco":
        from shapes import msmarco

        track = msmarco(args.topics)
    else:
        track = shape(args.shape)
    print(f"{args.shape}: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    profile([str(p) for p in run_files(track / "Runs")], lenient=args.shape == "trec2")


if __name__ == "__main__":
    main()
