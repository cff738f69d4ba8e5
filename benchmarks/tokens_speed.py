"""The compiled tokenizer's cost per row against the typed Arrow path on the same bytes.

``PYTHONPATH=. python benchmarks/tokens_speed.py [--shape NAME|all] [--repeat N]`` reads every
run file of a shape (``benchmarks/shapes.py``; msmarco: its first file, 3.49 M rows) into
memory, then times, on one thread, in this process (CPU, best of ``--repeat``), over the files
the tokenizer takes: ``pbtools._tokens.run_columns`` alone, ``read_direct`` with it, and
``read_direct`` with ``PBTOOLS_PURE=1`` (the typed Arrow read with its checks: what the
tokenizer replaces). Prints ns per row and how many files and rows the tokenizer takes (issue
30, session s10tok).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _p in (HERE, HERE.parent):  # run as a script from anywhere
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))


def best_cpu(fn, repeat: int) -> float:
    """The least CPU seconds of ``repeat`` calls of ``fn``."""
    best = float("inf")
    for _ in range(repeat):
        c0 = time.process_time()
        fn()
        best = min(best, time.process_time() - c0)
    return best


def cost(name: str, paths: list[str], repeat: int) -> None:
    from pbtools import native
    from pbtools.io.direct import read_direct, read_tokens
    from pbtools.io.files import read_bytes

    tokens = native.tokens()
    if tokens is None:
        sys.exit("pbtools._tokens is not built (python3 setup.py build_ext --inplace)")
    datas = [read_bytes(p) for p in paths]
    taken = [d for d in datas if read_tokens(d, float32=False) is not None]
    rows = sum(d.count(b"\n") + (not d.endswith(b"\n")) for d in taken)
    if not rows:
        print(f"{name}: the tokenizer takes none of {len(paths)} files")
        return
    alone = best_cpu(lambda: [tokens.run_columns(d) for d in taken], repeat)
    with_it = best_cpu(lambda: [read_direct(d, float32=False) for d in taken], repeat)
    os.environ[native.PURE_ENV] = "1"
    try:
        arrow = best_cpu(lambda: [read_direct(d, float32=False) for d in taken], repeat)
    finally:
        del os.environ[native.PURE_ENV]
    ns = 1e9 / rows
    print(
        f"{name}: {len(taken)} of {len(paths)} files taken ({rows:,} rows); CPU, one thread, "
        f"best of {repeat}: run_columns {alone * ns:.0f} ns/row, read_direct with it "
        f"{with_it * ns:.0f} ns/row, the typed Arrow path {arrow * ns:.0f} ns/row "
        f"({arrow / with_it:.1f}x)"
    )


def main(argv: list[str] | None = None) -> None:
    from shapes import SHAPES, shape

    from pbtools.io import run_files

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", choices=(*SHAPES, "all"), default="all")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name in list(SHAPES) if args.shape == "all" else [args.shape]:
        track = shape(name)
        if track is None:
            print(f"{name}: not available")
            continue
        paths = [str(p) for p in run_files(track / "Runs")]
        cost(name, paths[:1] if name == "msmarco" else paths, args.repeat)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
