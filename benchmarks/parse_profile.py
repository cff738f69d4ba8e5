"""Where ``read_runs`` spends its CPU above the parse floor: each stage timed apart (issue 30).

``python benchmarks/parse_profile.py --shape S`` (or ``parse_floor.py --shape S --profile``)
reads the shape once with ``read_runs`` (strict; TREC-2 lenient) on one thread
(``pbtools.threads.limited_threads(1)``) while the functions of each stage are wrapped with
``time.process_time`` (the process's CPU while they run: with one worker thread, the stage's own
CPU and that of Arrow's reader thread, which parses the next block of the direct read while the
worker checks the last one — ``time.thread_time`` would miss it), and prints each stage's CPU
seconds, ns per row and share of the whole process's CPU, next to the floor's (``parse_floor``,
every core) in the same process.
Each stage's time is its own (exclusive): a stage called inside another (``file_order`` inside
``sort_slow_rows``, the pair tables inside ``packed.encode``) is taken out of the outer one, so
the shares add up to the profiled part; "the rest" is what no stage covers (the interpreter,
the pool's hand-offs).
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
    ("pbtools.io.parse", "parse_run_file", "a file's own steps outside the stages above"),
    ("pbtools.packed", "presence", "pair tables of the docnos"),
    ("pbtools.packed.Radix", "number", "each docno's mixed-radix number and row"),
    ("pbtools.packed", "encode", "the one sort of the numbers, its set-up"),
    ("pbtools.packed", "rank_rows", "codes from the sorted numbers"),
    ("pbtools.packed.Radix", "keys", "the distinct docnos decoded"),
    ("pbtools.io.assemble", "docno_codes", "the docnos' merge outside the stages above"),
    ("pbtools.io.assemble", "sorted_dictionary", "the docno dictionary taken in sorted order"),
    ("pbtools.io.assemble", "union_dictionary", "the files' qid dictionaries merged"),
    ("pbtools.io.assemble", "no_repeats", "no (qid, docno) twice in a file"),
    ("pbtools.io.assemble", "sort_slow_rows", "the slow files' rows: repeats, trec order"),
    ("pbtools.io.assemble", "file_order", "trec order of each file (pbtools.order)"),
    ("pbtools.io.assemble", "ranks_from_starts", "ranks"),
    ("pbtools.io.assemble", "release_memory", "memory handed back (malloc_trim)"),
    ("pbtools.io.parse", "release_memory", "memory handed back in the workers"),
    ("pbtools.io.assemble", "assemble_runs", "the frame's columns filled (takes, copies)"),
    ("pbtools.ids", "dictionary_dtype", "the frame's id categories (pandas)"),
    ("pbtools.io.encoded.EncodedRuns", "frame", "the pandas frame"),
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
    # one stack for all threads: on one thread the main thread waits while the pool's worker
    # runs a stage, so the worker's stages nest inside the main thread's (process CPU)
    stack: list[float] = []
    saved = []
    for mod, name, _ in STAGES:
        owner = _resolve(mod)
        fn = getattr(owner, name)
        saved.append((owner, name, fn))

        def timed(*a, _fn=fn, _key=f"{mod}.{name}", **k):
            stack.append(0.0)  # the CPU of the stages called inside this one
            t0 = time.process_time()
            try:
                return _fn(*a, **k)
            finally:
                took = time.process_time() - t0
                inner = stack.pop()
                if stack:
                    stack[-1] += took
                with lock:
                    spent[_key] += took - inner

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
