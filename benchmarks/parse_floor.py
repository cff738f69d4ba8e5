"""The parse floor: the fastest plain pyarrow read of a set of TREC run files into one table.

``parse_floor(paths)`` does the least work that turns run files into typed columns — gunzip,
pyarrow's CSV reader (one column per physical line), Arrow's whitespace split, the six fields
as columns, ``score`` cast to float64, one table — with no validation, no id encoding, no
duplicate handling, no ordering. Other benchmarks divide their time by it.

Run ``python benchmarks/parse_floor.py [RUNS_DIR]`` (default: TREC-2 ad hoc in ``../shared``):
prints the floor, ``pbtools.io.read_runs`` (lenient, trec order included) and their ratio, as the
best of several repeats measured in the same process.
"""

from __future__ import annotations

import gzip
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

NAMES = ("qid", "q0", "docno", "rank", "score", "tag")
_READ = pcsv.ReadOptions(autogenerate_column_names=True, block_size=1 << 24)
_PARSE = pcsv.ParseOptions(
    delimiter="\x1f", quote_char=False, escape_char=False, ignore_empty_lines=True
)
_CONVERT = pcsv.ConvertOptions(column_types={"f0": pa.string()})


def _one(path: str) -> pa.Table:
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    lines = (
        pcsv.read_csv(
            pa.BufferReader(data),
            read_options=_READ,
            parse_options=_PARSE,
            convert_options=_CONVERT,
        )
        .column(0)
        .combine_chunks()
    )
    parts = pc.ascii_split_whitespace(pc.ascii_trim_whitespace(lines))
    offsets = np.asarray(parts.offsets)[:-1].astype(np.int64)
    six = np.flatnonzero(np.asarray(pc.list_value_length(parts)) >= 6)  # dirty lines: dropped
    base = offsets[six]
    cols = [parts.values.take(pa.array(base + j)) for j in range(6)]
    cols[4] = pc.cast(cols[4], pa.float64())
    return pa.table(dict(zip(NAMES, cols, strict=True)))


def parse_floor(paths) -> tuple[float, pa.Table]:
    """Read every run file in ``paths`` into ONE Arrow table as fast as pyarrow allows.

    Returns ``(seconds, table)``; the table has string columns ``qid``, ``q0``, ``docno``,
    ``rank``, ``tag`` and float64 ``score``, rows in file order (lines with fewer than 6 fields
    dropped, no other check). Files are parsed in a thread pool (gzip and Arrow release the GIL).
    """
    paths = [str(p) for p in paths]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as ex:
        tables = list(ex.map(_one, paths))
    table = pa.concat_tables(tables)
    return time.perf_counter() - t0, table


def _best(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv: list[str]) -> None:
    root = Path(__file__).resolve().parents[1]
    if str(root) not in sys.path:  # run as a script from anywhere
        sys.path.insert(0, str(root))
    from pbtools import TrecFormatWarning
    from pbtools.io import read_runs, run_files

    runs_dir = (
        Path(argv[1])
        if len(argv) > 1
        else (root.parent / "shared" / "data" / "trec" / "TREC-2" / "Adhoc" / "Runs")
    )
    paths = run_files(runs_dir)
    repeat = 5
    floor, table = _best(lambda: parse_floor(paths)[1], repeat)
    warnings.simplefilter("ignore", TrecFormatWarning)
    t_tag, df = _best(lambda: read_runs(paths, lenient=True), repeat)
    t_file, _ = _best(lambda: read_runs(paths, lenient=True, run_id="file"), repeat)
    t_f32, _ = _best(lambda: read_runs(paths, lenient=True, float32=True), repeat)
    print(
        f"{len(paths)} files, {table.num_rows:,} rows parsed; read_runs gives {len(df):,} "
        f"rows, {df['name'].nunique()} runs (best of {repeat})"
    )
    print(f"parse floor (pyarrow.csv, one table)       {floor:6.3f} s   1.00")
    for label, t in (
        ("read_runs lenient, run_id='tag'", t_tag),
        ("read_runs lenient, run_id='file'", t_file),
        ("read_runs lenient, float32", t_f32),
    ):
        print(f"{label:<42} {t:6.3f} s   {t / floor:.2f}x floor")


if __name__ == "__main__":
    main(sys.argv)
