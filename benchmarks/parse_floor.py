"""The parse floor: the fastest plain pyarrow read of a set of TREC run files into one table,
and ``pbtools.io.read_runs`` measured against it (issue 15, item 1).

``parse_floor(paths)`` does the least work that turns run files into typed columns, with no
validation, no id encoding, no duplicate handling, no ordering, files read in a thread pool (as
many threads as cores; gzip and Arrow release the GIL), one ``pa.concat_tables`` at the end.
Each file gets the cheaper of two reads, chosen before any timing (:func:`classify`):

* ``direct``, for a file whose six fields are separated by single TABs or single spaces
  everywhere (the 127-run synthetic track; 10 of TREC-2's 38 files):
  ``pyarrow.csv.read_csv`` with explicit column types (``qid``, ``q0``, ``docno``, ``tag``
  string, ``rank`` int32, ``score`` float64) — the floor of the issue;
* ``split``, for any other file (runs of blanks, TABs and spaces mixed, leading blanks, lines
  with other field counts: 28 of TREC-2's files), which a single-delimiter CSV read cannot
  split: pyarrow's CSV reader with one column per physical line, Arrow's whitespace split, the
  six fields of the lines that have at least six as columns, ``score`` cast to float64.

``python benchmarks/parse_floor.py [--shape NAME|both|all] [--repeat N] [--memory]`` prints,
per shape (``benchmarks/shapes.py``: trec2, synth127, synth129, synth63, msmarco), which floor
its files used, then the floor and ``read_runs`` measured alternately in one process
(``--repeat`` rounds, median and best), and their ratio; ``--memory`` adds the peak resident set
of ``read_runs`` in a fresh process against the Arrow size of the frame it returns (ids
dictionary-encoded) and against a process that only imports pbtools; ``--curve`` measures the
MS MARCO-like shape at 1 M, 3.5 M, 10 M and 34.9 M rows (its first 200, 698, 2,000 and 6,980
topics) and prints the time per row of the floor and of ``read_runs``, each call in a fresh
process (with ``--before``, that checkout's too); ``--before CHECKOUT``
measures instead the floor, ``read_runs`` and ``read_runs`` of another checkout (the code
before a change), one call per fresh process, interleaved (issue 30; ``parse_identity.py``
checks that both give the same frames, ``--profile`` prints the CPU of each stage of
``read_runs``, ``parse_profile.py``):

* synth127 (tab-separated, clean), synth129, synth63, msmarco: ``read_runs`` strict;
* trec2: ``read_runs`` strict on the files that need no repair (the files a strict read of each
  file alone accepts, one file per run tag), with the floor of those files; and
  ``read_runs(lenient=True)`` on all 38 files against the floor of all of them.

``read_runs`` includes what the floor does not do: byte and field validation with file and line
messages, dictionary-encoded ids, the duplicate rule, trec_eval order and ranks, a pandas frame.
The load average of the machine is printed with the figures: compare ratios, not seconds.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import os
import statistics
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

HERE = Path(__file__).resolve().parent
for _p in (HERE, HERE.parent):  # run as a script from anywhere
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

NAMES = ("qid", "q0", "docno", "rank", "score", "tag")
TYPES = {
    "qid": pa.string(),
    "q0": pa.string(),
    "docno": pa.string(),
    "rank": pa.int32(),
    "score": pa.float64(),
    "tag": pa.string(),
}
_DIRECT_READ = pcsv.ReadOptions(column_names=list(NAMES), block_size=1 << 24)
_DIRECT_PARSE = {
    sep: pcsv.ParseOptions(delimiter=sep, quote_char=False, escape_char=False) for sep in "\t "
}
_DIRECT_CONVERT = pcsv.ConvertOptions(column_types=TYPES)
_LINE_READ = pcsv.ReadOptions(autogenerate_column_names=True, block_size=1 << 24)
_LINE_PARSE = pcsv.ParseOptions(
    delimiter="\x1f", quote_char=False, escape_char=False, ignore_empty_lines=True
)
_LINE_CONVERT = pcsv.ConvertOptions(column_types={"f0": pa.string()})


def _inflater():
    """The gzip inflater of the floor: the one ``read_runs`` uses (python-isal's ISA-L when
    installed, :data:`pbtools.io.files.FAST_GUNZIP`; about 3× less CPU than zlib), so that both
    read the same bytes the same way (TREC-2's 38 gzipped files: 0.08 s with ISA-L, 0.22 s with
    ``gzip.decompress``; a floor on zlib would be charged 0.14 s that ``read_runs`` never pays)."""
    try:
        from isal import igzip
    except ImportError:
        return gzip.decompress
    return igzip.decompress


_INFLATE = _inflater()


def _bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    return _INFLATE(data) if data[:2] == b"\x1f\x8b" else data


def direct(path: str, sep: str) -> pa.Table:
    """The typed CSV read of a file separated by single ``sep`` characters."""
    return pcsv.read_csv(
        pa.BufferReader(_bytes(path)),
        read_options=_DIRECT_READ,
        parse_options=_DIRECT_PARSE[sep],
        convert_options=_DIRECT_CONVERT,
    )


def split(path: str) -> pa.Table:
    """One column per physical line, split on whitespace (lines of < 6 fields dropped)."""
    lines = (
        pcsv.read_csv(
            pa.BufferReader(_bytes(path)),
            read_options=_LINE_READ,
            parse_options=_LINE_PARSE,
            convert_options=_LINE_CONVERT,
        )
        .column(0)
        .combine_chunks()
    )
    parts = pc.ascii_split_whitespace(pc.ascii_trim_whitespace(lines))
    offsets = np.asarray(parts.offsets)[:-1].astype(np.int64)
    six = np.flatnonzero(np.asarray(pc.list_value_length(parts)) >= 6)
    base = offsets[six]
    cols = [parts.values.take(pa.array(base + j)) for j in range(6)]
    cols[4] = pc.cast(cols[4], pa.float64())
    return pa.table(dict(zip(NAMES, cols, strict=True)))


@functools.cache
def classify(path: str) -> str:
    """``"tab"`` or ``"space"`` when the direct typed read takes the file as it is (single
    separators, six fields on every line, typed values parse), else ``"split"`` (cached: the
    choice is made once, outside any timing)."""
    data = _bytes(path)
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    for sep, other in ((b"\t", b" "), (b" ", b"\t")):
        if other in data or sep + sep in data or b"\n" + sep in data or sep + b"\n" in data:
            continue
        if data.startswith(sep):
            continue
        try:
            table = direct(path, sep.decode())
        except pa.ArrowInvalid:
            continue
        if table.num_rows == lines:
            return "tab" if sep == b"\t" else "space"
    return "split"


def _read_one(job: tuple[str, str]) -> pa.Table:
    path, how = job
    if how == "split":
        return split(path)
    return direct(path, "\t" if how == "tab" else " ")


def parse_floor(paths, how: list[str] | None = None) -> tuple[float, pa.Table]:
    """Read every run file in ``paths`` as fast as pyarrow allows; ``(seconds, table)``.

    Each file gets its floor read (:func:`classify`, decided before the clock starts):
    ``direct`` or ``split``. The files are read in a thread pool and the tables of each kind
    concatenated (``pa.concat_tables``); ``seconds`` is that time (``how``: the kinds of read,
    already classified, e.g. in another process). The returned table holds
    every row (string ``qid``, ``q0``, ``docno``, ``tag``, float64 ``score``; ``rank`` int32,
    or string when some file needed the split), in file order within each kind.
    """
    how = how or [classify(str(p)) for p in paths]
    jobs = [(str(p), h) for p, h in zip(paths, how, strict=True)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as ex:
        tables = list(ex.map(_read_one, jobs))
    direct_t = [t for t, (_, how) in zip(tables, jobs, strict=True) if how != "split"]
    split_t = [t for t, (_, how) in zip(tables, jobs, strict=True) if how == "split"]
    groups = [pa.concat_tables(g) for g in (direct_t, split_t) if g]
    seconds = time.perf_counter() - t0
    if len(groups) == 2:  # one schema for the caller, outside the timing
        groups[0] = groups[0].cast(groups[1].schema)
    return seconds, pa.concat_tables(groups) if groups else pa.table({})


def alternate(fns: dict, repeat: int) -> dict[str, list[tuple[float, float]]]:
    """Time each function once per round, in turn, for ``repeat`` rounds (after one warm-up
    round); returns ``(wall, cpu)`` seconds of every round (cpu: all threads of the process,
    less disturbed than wall time by other processes on a busy machine)."""
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in fns}
    for r in range(repeat + 1):
        for k, fn in fns.items():
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            if r:
                times[k].append((time.perf_counter() - t0, time.process_time() - c0))
    return times


def strict_subset(paths: list[str]) -> list[str]:
    """The files that ``read_runs`` accepts in strict mode, each read alone, one per run tag."""
    from pbtools import TrecFormatError
    from pbtools.io import read_runs

    keep, tags = [], set()
    for p in paths:
        try:
            df = read_runs([p])
        except TrecFormatError:
            continue
        tag = str(df["name"].iloc[0])
        if tag not in tags:
            tags.add(tag)
            keep.append(p)
    return keep


def measure(label: str, paths: list[str], lenient: bool, repeat: int) -> None:
    from pbtools.io import read_runs

    rows = parse_floor(paths)[1].num_rows
    n = len(read_runs(paths, lenient=lenient))
    times = alternate(
        {
            "floor": lambda: parse_floor(paths),
            "read_runs": lambda: read_runs(paths, lenient=lenient),
        },
        repeat,
    )
    mode = "lenient" if lenient else "strict"
    print(f"  {label}: {len(paths)} files, floor {rows:,} rows, read_runs ({mode}) {n:,} rows")
    stats = {}
    for k, v in times.items():
        wall, cpu = [t[0] for t in v], [t[1] for t in v]
        stats[k] = (statistics.median(wall), min(wall), statistics.median(cpu))
        print(
            f"    {k:<10} wall median {stats[k][0]:6.3f} s  best {stats[k][1]:6.3f} s   "
            f"cpu median {stats[k][2]:6.3f} s"
        )
    f, r = stats["floor"], stats["read_runs"]
    print(
        f"    ratio      wall median {r[0] / f[0]:5.2f}x  best {r[1] / f[1]:5.2f}x   "
        f"cpu median {r[2] / f[2]:5.2f}x"
    )


_PEAK = """
import resource, sys, warnings
import pyarrow as pa
from pbtools.io import read_runs
warnings.simplefilter("ignore")
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if sys.argv[1] != "-":
    df = read_runs(sys.argv[2:], lenient=sys.argv[1] == "lenient")
    size = pa.Table.from_pandas(df, preserve_index=False).nbytes
else:
    size = 0
print(rss0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, size)
"""


_ONE_CALL = """
import sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
if sys.argv[2].startswith("floor"):
    sys.path.insert(0, sys.argv[3])
    from parse_floor import parse_floor
    paths = sys.argv[4:]
    how = sys.argv[2].split(":")[1].split(",")  # classified by the parent: a cold call, too
    import pbtools.io  # noqa: F401  the imports of read_runs' child (they warm Arrow's kernels)
    t0, c0 = time.perf_counter(), time.process_time()
    parse_floor(paths, how)
else:
    from pbtools.io import read_runs
    t0, c0 = time.perf_counter(), time.process_time()
    read_runs(sys.argv[4:], lenient=sys.argv[2] == "lenient")
print(time.perf_counter() - t0, time.process_time() - c0)
"""


def fresh(
    paths: list[str], lenient: bool, repeat: int, before: Path | None = None
) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) of the floor, ``read_runs`` of this checkout and (given) of ``before``, one
    call per fresh process (the checkout first on ``sys.path``), interleaved for ``repeat``
    rounds.

    Each child makes exactly one call, cold (no earlier read in the process: Arrow's pool and
    the heap start empty for both); the floor's kind of read per file (:func:`classify`, which
    reads every file) is decided here, in this process, and handed to the child, which imports
    ``pbtools.io`` first as ``read_runs``' child does (a cold floor without it paid ~0.1 s of
    Arrow's first-call costs that the import pays for ``read_runs``). Until issue
    30's s8parse the floor's child classified first, in the same process, so that its timed
    call reused the pages of a first read while ``read_runs`` paid for fresh ones."""
    import subprocess

    mode = "lenient" if lenient else "strict"
    how = ",".join(classify(str(p)) for p in paths)
    jobs = {"floor": (HERE.parent, f"floor:{how}"), "read_runs": (HERE.parent, mode)}
    if before is not None:
        jobs["read_runs before"] = (before, mode)
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in jobs}
    for _ in range(repeat):
        for k, (root, what) in jobs.items():
            out = subprocess.run(
                [sys.executable, "-c", _ONE_CALL, str(root), what, str(HERE), *paths],
                capture_output=True,
                text=True,
                check=True,
                cwd=str(root),
            )
            times[k].append(tuple(float(x) for x in out.stdout.split()))
    return times


def before_after(paths: list[str], lenient: bool, before: Path, repeat: int) -> None:
    """The floor, ``read_runs`` of this checkout and of ``before`` in fresh processes
    (:func:`fresh`); medians."""
    times = fresh(paths, lenient, repeat, before)
    f = statistics.median(t[0] for t in times["floor"])
    fc = statistics.median(t[1] for t in times["floor"])
    for k, v in times.items():
        w, c = statistics.median(t[0] for t in v), statistics.median(t[1] for t in v)
        print(
            f"    {k:<17} wall median {w:7.3f} s ({w / f:5.2f}x the floor)   "
            f"cpu median {c:7.3f} s ({c / fc:5.2f}x)"
        )


def peak_memory(paths: list[str], lenient: bool) -> None:
    """Peak RSS of ``read_runs`` in a fresh process, against the Arrow size of its frame and a
    process that imports the same modules and reads nothing."""
    import subprocess

    # the child is started by a small intermediate process: a child forked from this one
    # would start with this process's peak resident set as its own (Linux keeps ru_maxrss
    # across fork and exec)
    hop = "import subprocess, sys; subprocess.run(sys.argv[1:], check=True)"

    def child(mode: str, files: list[str]) -> list[int]:
        out = subprocess.run(
            [sys.executable, "-c", hop, sys.executable, "-c", _PEAK, mode, *files],
            capture_output=True,
            text=True,
            check=True,
        )
        return [int(x) for x in out.stdout.split()]

    _, idle, _ = child("-", [])
    _, peak, size = child("lenient" if lenient else "strict", paths)
    mib = 1 << 20
    print(
        f"    memory     peak RSS {peak / 1024:,.0f} MiB (imports alone {idle / 1024:,.0f} MiB),"
        f" Arrow size of the frame {size / mib:,.1f} MiB: peak / Arrow {peak * 1024 / size:.2f}x,"
        f" above the imports {(peak - idle) * 1024 / size:.2f}x"
    )


def curve(repeat: int, before: Path | None = None) -> None:
    """Floor and ``read_runs`` per row on the first 200, 698, 2,000 and 6,980 topics of the
    MS MARCO-like shape (1 M to 34.9 M rows), each call in a fresh process (:func:`fresh`, as
    the shapes' rows; until s11read they were timed in this process, one after the other)."""
    from shapes import msmarco

    from pbtools.io import run_files

    print("msmarco curve: floor and read_runs (strict), ns per row, medians, fresh processes")
    for topics in (200, 698, 2000, 6980):
        paths = run_files(msmarco(topics) / "Runs")
        times = fresh(paths, False, repeat, before)
        rows = 10 * 500 * topics
        f = statistics.median(t[0] for t in times["floor"])
        fc = statistics.median(t[1] for t in times["floor"])
        line = (
            f"  {rows / 1e6:5.2f} M rows: floor {f * 1e9 / rows:4.0f} ns/row wall "
            f"({fc * 1e9 / rows:4.0f} cpu)"
        )
        for k in [k for k in times if k != "floor"]:
            r = statistics.median(t[0] for t in times[k])
            rc = statistics.median(t[1] for t in times[k])
            line += (
                f", {k} {r * 1e9 / rows:4.0f} wall ({rc * 1e9 / rows:4.0f} cpu)"
                f" = {rc / fc:.2f}x cpu"
            )
        print(line, flush=True)


def main(argv: list[str] | None = None) -> None:
    from shapes import SHAPES, shape, trec2

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", choices=(*SHAPES, "both", "all"), default="both")
    ap.add_argument("--repeat", type=int, default=7, help="timed rounds (default 7)")
    ap.add_argument("--memory", action="store_true", help="peak RSS of read_runs, per shape")
    ap.add_argument("--curve", action="store_true", help="the msmarco curve from 1 M rows")
    ap.add_argument(
        "--profile", action="store_true", help="CPU of read_runs per stage (parse_profile.py)"
    )
    ap.add_argument(
        "--before",
        type=Path,
        metavar="CHECKOUT",
        help="also read_runs of another checkout (one call per fresh process, interleaved)",
    )
    args = ap.parse_args(argv)

    from pbtools import TrecFormatWarning
    from pbtools.io import run_files

    warnings.simplefilter("ignore", TrecFormatWarning)
    if args.curve:
        print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        curve(args.repeat, args.before)
        print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return
    shapes = {"both": ["trec2", "synth127"], "all": list(SHAPES)}.get(args.shape, [args.shape])
    if "trec2" in shapes and args.shape in ("both", "all") and trec2() is None:
        print("TREC-2 is not in ../shared: measuring synth127 only")
        shapes.remove("trec2")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name in shapes:
        paths = run_files(shape(name) / "Runs")
        how = [classify(p) for p in paths]
        counts = {k: how.count(k) for k in ("tab", "space", "split")}
        print(
            f"{name}: floor = direct typed CSV read for {counts['tab']} tab- and "
            f"{counts['space']} space-separated files, line split for {counts['split']}"
        )
        lenient = name == "trec2"
        if args.profile:
            from parse_profile import profile

            profile(paths, lenient)
            continue
        if args.before is not None:
            print(f"  {'lenient' if lenient else 'strict'}, all files, fresh processes:")
            before_after(paths, lenient, args.before, args.repeat)
        elif name == "trec2":
            clean = strict_subset(paths)
            measure("strict, files needing no repair", clean, False, args.repeat)
            if args.memory:
                peak_memory(clean, False)
            measure("lenient, all files", paths, True, args.repeat)
        else:
            measure("strict, all files", paths, False, args.repeat)
        if args.memory:
            peak_memory(paths, lenient)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
