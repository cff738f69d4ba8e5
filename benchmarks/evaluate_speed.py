"""Evaluation speed: ``pbtools evaluate`` vs pytrec_eval-terrier, whole process and in process.

Fourteen measures that both tools compute identically (trec_eval names in brackets): P@5, P@10,
P@15, P@20, P@30, P@100, P@200, P@500, P@1000 (``P``), AP (``map``), nDCG (``ndcg``), Bpref
(``bpref``), Rprec (``Rprec``), RR (``recip_rank``). The track shapes of ``benchmarks/shapes.py``:
``trec2`` (TREC-2 ad hoc, 38 gzipped runs, 1.82 M lines, dirty: ``--lenient``), ``synth127``
(127 runs × 34 topics × 1,000 documents, tab-separated, clean), ``synth129`` (129 × 50 ×
1,000), ``synth63`` (63 runs × 477 topics × 100, qrels on 53 topics) and ``msmarco`` (10 runs ×
6,980 topics × 500, 34.9 M lines; use ``--whole-only``), all strict but TREC-2 (issue 30,
item 1). For each shape it prints:

* **whole process** (issue 15, items 2 and 5): ``python -m pbtools evaluate QRELS RUNS_DIR -m …``
  (``--lenient`` on TREC-2) against the C baseline, pytrec_eval-terrier as a whole process with
  its own loader — ``pytrec_eval.parse_qrel``, ``pytrec_eval.parse_run`` per file (a file it
  refuses, i.e. a dirty TREC-2 file, is re-read with the lenient rule of ``--lenient``: first six
  fields, lines with fewer dropped, a repeated document keeps its highest score), one
  ``RelevanceEvaluator`` and ``evaluate`` per run, each run's means written to standard output.
  Both write to ``/dev/null``. Wall time is the median of ``--repeat`` alternating runs after one
  warm-up of each (which also writes pbtools' bytecode cache, as any installation has, even
  where ``PYTHONDONTWRITEBYTECODE`` is set). Target: pbtools / pytrec_eval ≤ 0.5.
* **peak memory**: the child's peak resident set (``ru_maxrss`` from ``os.wait4``, measured by a
  small spawning process so that this script's own memory is not counted) against the
  *Arrow in-memory size of the runs*, defined as ``Table.nbytes`` of the parse-floor table
  (``benchmarks/parse_floor.py``: every run line's six fields, ids and rank as Arrow strings,
  score as float64, one table, no dictionary encoding). Target: ≤ 3×.
* **breakdown by stage** of the command line's own path (a fresh child process per repeat,
  medians): ``pbtools.cli.main`` runs ``pbtools evaluate`` as ``python -m pbtools`` does (the
  pandas-free reader, judge, grouping and kernels on arrays) and the marks it makes
  (:func:`pbtools.measures.stages.stage`) split it: start-up (the interpreter, before the
  child's first line), import (and the arguments), qrels, runs, coverage (and ``-M``), judge
  (the join: every run row's label), group set-up (grouping, trec order check, ranks), view
  (the rankings' starts), each measure's kernel (each family's together), order (the groups
  in output order), aggregate (the averages), tables (the text), write, and exit (``os._exit``
  as :func:`pbtools.cli.entry`: the kernel unmapping the arrays; the parent's figure beyond
  the last mark); on the wall clock, in CPU (user + system, every thread), in system CPU
  alone (the kernel zeroing fresh pages) and in minor page faults. With ``--before`` a
  checkout that marks its stages is broken down in the same rounds, its CPU and system CPU
  beside. Each tool's whole-process line has its system CPU and minor faults too.
* the **in-process figures** this script printed before (parse floor, ``read_runs``, pbtools and
  pytrec_eval end to end and after parsing, best of ``--repeat``), per shape.

Usage: ``python benchmarks/evaluate_speed.py [--shape NAME|both|all] [--repeat 5] [--whole-only]
[--before CHECKOUT] [--topics N]`` (``--track DIR`` evaluates another track directory with the
in-process figures only; ``--before`` times another checkout's ``pbtools evaluate`` in the same
rounds; ``--topics 2000`` takes the msmarco shape's first 2,000 topics, 10 M lines).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
PB_MEASURES = [f"P@{n}" for n in CUTOFFS] + ["AP", "nDCG", "Bpref", "Rprec", "RR"]
TE_MEASURES = {"P", "map", "ndcg", "bpref", "Rprec", "recip_rank"}
TE_KEYS = [f"P_{n}" for n in CUTOFFS] + ["map", "ndcg", "bpref", "Rprec", "recip_rank"]
#: the shapes read with ``--lenient`` (TREC-2's dirty files); every other shape is read strict
LENIENT = {"trec2": True}


# --------------------------------------------------------------------------------------------
# the pytrec_eval baseline (also run as a child process: --pytrec-child)
# --------------------------------------------------------------------------------------------


def _open(path):
    return gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)


def lenient_run(lines) -> dict:
    """pytrec_eval's run dictionary from dirty lines: first six fields, shorter lines dropped,
    a repeated (qid, docno) keeps its highest score (the rule of ``--lenient``)."""
    run: dict = {}
    for ln in lines:
        f = ln.split()
        if len(f) < 6:
            continue
        d = run.setdefault(f[0], {})
        s = float(f[4])
        if f[2] not in d or s > d[f[2]]:
            d[f[2]] = s
    return run


def load_run(path) -> dict:
    """A run file with pytrec_eval's own ``parse_run``; a file it refuses: :func:`lenient_run`."""
    import pytrec_eval

    with _open(path) as fh:
        try:
            return pytrec_eval.parse_run(fh)
        except (AssertionError, ValueError):
            pass
    with _open(path) as fh:
        return lenient_run(fh)


def load_qrels(path) -> dict:
    import pytrec_eval

    with _open(path) as fh:
        return pytrec_eval.parse_qrel(fh)


def pytrec_child(qrels_file: str, run_files: list[str]) -> None:
    """The whole-process baseline: load, evaluate and print each run's means (like trec_eval)."""
    import pytrec_eval

    ev = pytrec_eval.RelevanceEvaluator(load_qrels(qrels_file), TE_MEASURES)
    out = sys.stdout
    for f in run_files:
        res = ev.evaluate(load_run(f))
        n = max(len(res), 1)
        means = (sum(r[k] for r in res.values()) / n for k in TE_KEYS)
        out.write(Path(f).name + "\t" + "\t".join(f"{v:.4f}" for v in means) + "\n")


def pytrec_parse(run_files, qrels_file):
    return load_qrels(qrels_file), {f: load_run(f) for f in run_files}


def pytrec_evaluate(qrel, runs):
    import pytrec_eval

    ev = pytrec_eval.RelevanceEvaluator(qrel, TE_MEASURES)
    return {name: ev.evaluate(run) for name, run in runs.items()}


# --------------------------------------------------------------------------------------------
# pbtools evaluate, stage by stage (run as a child process: --breakdown-child)
# --------------------------------------------------------------------------------------------


def breakdown_child(track: str, lenient: bool) -> None:
    """``pbtools evaluate`` (the command line's own path: :func:`pbtools.cli.main`, the
    pandas-free reader and scorer on arrays) timed between the marks it makes
    (:func:`pbtools.measures.stages.stage`): reading the qrels and the runs, the coverage
    check, the join (``judge``), the grouping's set-up, the rankings' view, each measure's
    kernel, trec order (``order``), the averages, the tables and text, writing. Prints a JSON
    object: per stage the wall seconds (``wall``), CPU seconds of the process, every thread
    (``cpu``: user + system), the system part of them (``sys``: mostly the kernel zeroing the
    pages of fresh arrays) and minor page faults (``faults``); ``start-up`` is what the process
    had used before its first line ran (interpreter start). Then ends the process as the
    command line does (``os._exit``: :func:`pbtools.cli.entry`), so that what the parent
    measures beyond the last mark is the exit (the kernel unmapping the arrays)."""
    import resource

    def mark(name: str) -> None:
        use = resource.getrusage(resource.RUSAGE_SELF)
        marks.append(
            (name, time.perf_counter(), use.ru_utime + use.ru_stime, use.ru_stime, use.ru_minflt)
        )

    marks: list = []
    mark("start-up")
    import pbtools.cli  # (what `python -m pbtools` imports)
    from pbtools.measures.stages import recording

    qrels_file, run_dir = track_files(Path(track))
    ms = [a for name in PB_MEASURES for a in ("-m", name)]
    argv = ["evaluate", str(qrels_file), str(run_dir), *ms] + (["--lenient"] if lenient else [])
    with open(os.devnull, "w") as null, recording(mark):
        stdout, sys.stdout = sys.stdout, null
        stderr, sys.stderr = sys.stderr, null
        try:
            code = pbtools.cli.main(argv)
        finally:
            sys.stdout, sys.stderr = stdout, stderr
    if code != 0:
        raise SystemExit(f"pbtools evaluate failed with exit status {code}")
    out: dict = {kind: {} for kind in ("wall", "cpu", "sys", "faults")}
    out["wall"]["start-up"] = 0.0  # (the parent's wall clock counts it with the exit)
    for j, kind in ((2, "cpu"), (3, "sys"), (4, "faults")):
        out[kind]["start-up"] = marks[0][j]
    for prev, cur in zip(marks, marks[1:], strict=False):
        for j, kind in enumerate(("wall", "cpu", "sys", "faults"), start=1):
            out[kind][cur[0]] = out[kind].get(cur[0], 0) + cur[j] - prev[j]
    out["end"] = {"cpu": marks[-1][2], "sys": marks[-1][3], "faults": marks[-1][4]}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    os._exit(0)


# --------------------------------------------------------------------------------------------
# measuring
# --------------------------------------------------------------------------------------------


def track_files(track: Path) -> tuple[Path, Path]:
    """(qrels file, runs directory) of a track directory."""
    return next(p for p in sorted((track / "QRels").iterdir()) if p.is_file()), track / "Runs"


#: the measuring parent of every timed command: a small process of its own, because a child's
#: ``ru_maxrss`` counts what it shared with its parent before ``exec`` (this script holds
#: pandas and the parse-floor table: ~350 MiB, which every command then "reached")
_SPAWN = """
import os, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
wall = time.perf_counter() - t0
sys.stdout.flush()
cpu = usage.ru_utime + usage.ru_stime
print(f"\\n@@measure {os.waitstatus_to_exitcode(status)} {wall!r} {usage.ru_maxrss} {cpu!r}",
      usage.ru_stime, usage.ru_minflt)
"""


def child(cmd: list[str], root: Path = ROOT) -> tuple[float, float, str, float, float, int]:
    """Run ``cmd`` from a small spawning process, importing pbtools from ``root``; (wall
    seconds, its peak RSS in MiB, its standard output, its CPU seconds: user + system, all
    threads, the system part of them, its minor page faults)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    # run from ``root``: ``python -m pbtools`` puts the working directory first on its path,
    # before PYTHONPATH (run from another checkout, "before" would time that one's pbtools)
    # bytecode is cached as in any installation (the warm-up writes it), even where the
    # environment turns that off: compiling pbtools' modules on every start is not its speed
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run(
        [sys.executable, "-c", _SPAWN, *cmd], stdout=subprocess.PIPE, env=env, check=True, cwd=root
    ).stdout.decode()
    out, _, measure = out.rpartition("\n@@measure ")
    code, wall, rss, cpu, system, faults = measure.split()
    if int(code) != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} … failed with exit status {code}")
    return float(wall), int(rss) / 1024, out, float(cpu), float(system), int(faults)


def whole_process(shape: str, track: Path, repeat: int, before: Path | None = None) -> dict:
    """Medians of alternating whole-process runs of both tools, the breakdown, peak RSS; with
    ``before`` (another checkout), its ``pbtools evaluate`` too, in the same rounds (``pb0``)."""
    qrels_file, run_dir = track_files(track)
    run_files = [str(p) for p in sorted(run_dir.iterdir()) if p.name.startswith("input.")]
    ms = [a for name in PB_MEASURES for a in ("-m", name)]
    pb = [sys.executable, "-m", "pbtools", "evaluate", str(qrels_file), str(run_dir), *ms]
    pb += ["--lenient"] if LENIENT.get(shape, False) else []
    te = [sys.executable, __file__, "--pytrec-child", str(qrels_file), *run_files]
    lenient = str(int(LENIENT.get(shape, False)))

    def bd(root: Path) -> list[str]:  # each checkout's own script: it imports its pbtools
        script = root / "benchmarks" / Path(__file__).name
        return [sys.executable, str(script), "--breakdown-child", str(track), lenient]

    tools = [("pb", pb, ROOT), ("te", te, ROOT)] + ([("pb0", pb, before)] if before else [])
    # the breakdown of each checkout that marks its stages (pbtools.measures.stages)
    staged_roots = [("", ROOT)]
    if before and (before / "pbtools" / "measures" / "stages.py").exists():
        staged_roots.append(("0", before))
    for _, cmd, root in tools:  # warm-up (page cache, .pyc files)
        child(cmd, root)
    for _, root in staged_roots:
        child(bd(root), root)
    staged = tuple(
        f"{k}{x}"
        for x, _ in staged_roots
        for k in ("stages", "stage_cpu", "stage_sys", "stage_faults")
    )
    keys = staged + tuple(
        f"{k}{x}" for k, _, _ in tools for x in ("", "_rss", "_cpu", "_sys", "_flt")
    )
    rec: dict = {k: [] for k in keys}
    for _ in range(repeat):
        for key, cmd, root in tools:
            wall, rss, _, cpu, system, faults = child(cmd, root)
            rec[key].append(wall)
            rec[f"{key}_rss"].append(rss)
            rec[f"{key}_cpu"].append(cpu)
            rec[f"{key}_sys"].append(system)
            rec[f"{key}_flt"].append(faults)
        for x, root in staged_roots:
            wall, _, out, cpu, system, faults = child(bd(root), root)
            steps = json.loads(out)
            end = steps.pop("end")
            steps["wall"]["exit"] = max(wall - sum(steps["wall"].values()), 0.0)  # (+ start-up)
            steps["cpu"]["exit"] = max(cpu - end["cpu"], 0.0)
            steps["sys"]["exit"] = max(system - end["sys"], 0.0)
            steps["faults"]["exit"] = max(faults - end["faults"], 0)
            for k, kind in (("stages", "wall"), ("stage_cpu", "cpu"), ("stage_sys", "sys")):
                rec[k + x].append(steps[kind])
            rec["stage_faults" + x].append(steps["faults"])
    med = {k: statistics.median(v) for k, v in rec.items() if k not in staged}
    for key in staged:
        med[key] = {k: statistics.median(s[k] for s in rec[key]) for k in rec[key][0].keys()}
    return med


def best_of(repeat: int, fn):
    """(best wall time in seconds, last result) of ``repeat`` calls of ``fn``."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def in_process(track: Path, lenient: bool, repeat: int, label: str) -> None:
    """The in-process figures (parse floor, read_runs, both tools end to end and after parsing)."""
    from parse_floor import parse_floor

    from pbtools import io, measures

    qrels_file, run_dir = track_files(track)
    run_files = sorted(p for p in run_dir.iterdir() if p.name.startswith("input."))

    def pb_end_to_end():
        runs = io.read_runs(run_files, lenient=lenient, run_id="file")
        qrels = io.read_qrels(qrels_file, lenient=lenient)
        return measures.evaluate(runs, qrels, PB_MEASURES, per_topic=True)

    t_floor, _ = best_of(repeat, lambda: parse_floor(run_files))
    t_pb, per = best_of(repeat, pb_end_to_end)
    runs = io.read_runs(run_files, lenient=lenient, run_id="file")
    qrels = io.read_qrels(qrels_file, lenient=lenient)
    t_pb_eval, _ = best_of(
        repeat, lambda: measures.evaluate(runs, qrels, PB_MEASURES, per_topic=True)
    )
    t_read, _ = best_of(repeat, lambda: io.read_runs(run_files, lenient=lenient, run_id="file"))
    try:
        import pytrec_eval  # noqa: F401
    except ImportError:
        te = None
    else:
        t_te_parse, (qrel, te_runs) = best_of(1, lambda: pytrec_parse(run_files, qrels_file))
        t_te_eval, _ = best_of(repeat, lambda: pytrec_evaluate(qrel, te_runs))
        te = (t_te_parse + t_te_eval, t_te_parse, t_te_eval)

    mode = "lenient" if lenient else "strict"
    print(
        f"{label}: {len(run_files)} run files, {len(runs):,} rows, {per['measure'].nunique()} "
        f"measures, {len(per):,} per-topic values; in process, best of {repeat}"
    )
    print(f"{'':38s}{'seconds':>9s}{'× parse floor':>15s}")
    line = "{:38s}{:9.3f}{:15.2f}"
    print(line.format("parse floor (pyarrow, one table)", t_floor, 1.0))
    print(line.format(f"pbtools read_runs ({mode}, ordered)", t_read, t_read / t_floor))
    print(line.format("pbtools evaluate (after parsing)", t_pb_eval, t_pb_eval / t_floor))
    print(line.format("pbtools end to end", t_pb, t_pb / t_floor))
    if te:
        print(line.format("pytrec_eval parse (Python dicts)", te[1], te[1] / t_floor))
        print(line.format("pytrec_eval evaluate", te[2], te[2] / t_floor))
        print(line.format("pytrec_eval end to end", te[0], te[0] / t_floor))
        print(
            f"pbtools end to end is {te[0] / t_pb:.2f}× faster than pytrec_eval end to end; "
            f"evaluation alone {te[2] / t_pb_eval:.2f}× faster"
        )
    else:
        print("pytrec_eval-terrier not installed: pip install pytrec-eval-terrier")


def report_whole(shape: str, track: Path, repeat: int, before: Path | None = None) -> None:
    from parse_floor import parse_floor

    _, table = parse_floor(sorted(track_files(track)[1].glob("input.*")))
    arrow = table.nbytes / 2**20
    rows = table.num_rows
    del table
    med = whole_process(shape, track, repeat, before)
    ratio = med["pb"] / med["te"]
    mem = med["pb_rss"] / arrow
    print(
        f"{shape}: {rows:,} run lines, Arrow size of the runs {arrow:.1f} MiB; whole process, "
        f"medians of {repeat} alternating runs after a warm-up; load average {_load()}"
    )
    tools = [("pb", "pbtools evaluate"), ("te", "pytrec_eval")]
    tools += [("pb0", f"before ({before})")] if before else []
    for key, label in tools:
        print(
            f"  {label:<17} {med[key]:7.3f} s wall  {med[key + '_cpu']:7.3f} s CPU "
            f"({med[key + '_sys']:6.3f} system)  peak RSS {med[key + '_rss']:6.0f} MiB  "
            f"{med[key + '_flt'] / 1e3:7.1f} k minor faults"
        )
    cpu_ratio = med["pb_cpu"] / med["te_cpu"]
    print(
        f"  pbtools / pytrec_eval whole process: {ratio:.2f} wall, {cpu_ratio:.2f} CPU  "
        "(target ≤ 0.5; the CPU ratio is the steadier on a shared machine)"
    )
    if before:
        print(
            f"  before / pytrec_eval whole process: {med['pb0'] / med['te']:.2f} wall, "
            f"{med['pb0_cpu'] / med['te_cpu']:.2f} CPU; after / before "
            f"{med['pb'] / med['pb0']:.2f} wall, {med['pb_cpu'] / med['pb0_cpu']:.2f} CPU"
        )
    print(f"  pbtools peak RSS / Arrow size of the runs: {mem:.2f}  (target ≤ 3)")
    print_stages(med)


def print_stages(med: dict) -> None:
    """The breakdown's stages, one line each: wall, CPU, system CPU (seconds) and thousand
    minor faults, medians; with a staged ``--before`` checkout, its CPU and system CPU beside."""
    before = "stage_cpu0" in med
    head = f"  {'stage':<16}{'wall':>8}{'CPU':>8}{'system':>8}{'k faults':>10}"
    head += f"{'CPU before':>12}{'sys before':>12}" if before else ""
    print("  pbtools evaluate by stage (the command line's path; seconds, medians):")
    print(head)
    names = list(med["stage_cpu"])
    names += [n for n in med.get("stage_cpu0", {}) if n not in names]
    total = [0.0] * 6
    for name in names:
        row = [
            med["stages"].get(name, float("nan")),
            med["stage_cpu"].get(name, float("nan")),
            med["stage_sys"].get(name, float("nan")),
            med["stage_faults"].get(name, float("nan")) / 1e3,
        ]
        if before:
            row += [
                med["stage_cpu0"].get(name, float("nan")),
                med["stage_sys0"].get(name, float("nan")),
            ]
        total = [t + (0.0 if v != v else v) for t, v in zip(total, row, strict=False)]
        cells = "".join(f"{v:>8.3f}" for v in row[:3]) + f"{row[3]:>10.1f}"
        cells += "".join(f"{v:>12.3f}" for v in row[4:])
        print(f"  {name:<16}{cells}")
    cells = "".join(f"{v:>8.3f}" for v in total[:3]) + f"{total[3]:>10.1f}"
    cells += "".join(f"{v:>12.3f}" for v in total[4 : len(row)])
    print(f"  {'total':<16}{cells}")


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "n.a."


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--pytrec-child"]:
        pytrec_child(argv[1], argv[2:])
        return 0
    if argv[:1] == ["--breakdown-child"]:
        breakdown_child(argv[1], argv[2] == "1")
        return 0
    from pbtools import measures
    from pbtools.frames import TrecFormatWarning

    warnings.simplefilter("ignore", TrecFormatWarning)  # the lenient repairs are known
    warnings.simplefilter("ignore", measures.CoverageWarning)  # rutcomb1/rutfmed: 25/24 topics
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    from shapes import SHAPES

    ap.add_argument("--shape", choices=(*SHAPES, "both", "all"), default="both")
    ap.add_argument("--track", type=Path, help="another track directory (in-process figures)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--whole-only", action="store_true", help="skip the in-process figures (faster)"
    )
    ap.add_argument(
        "--before",
        type=Path,
        help="another checkout: its `pbtools evaluate` timed in the same alternating rounds",
    )
    ap.add_argument(
        "--topics",
        type=int,
        help="msmarco only: its first N topics (2000: 10 M lines, the shape's iteration cut)",
    )
    args = ap.parse_args(argv)
    if args.track is not None:
        if not (args.track / "Runs").is_dir():
            print(f"track {args.track} not found", file=sys.stderr)
            return 1
        in_process(args.track, True, args.repeat, str(args.track))
        return 0
    from shapes import msmarco
    from shapes import shape as shape_dir

    groups = {"both": ("trec2", "synth127"), "all": SHAPES}
    for name in groups.get(args.shape, (args.shape,)):
        track = msmarco(args.topics) if name == "msmarco" and args.topics else shape_dir(name)
        report_whole(name, track, args.repeat, args.before)
        if not args.whole_only:
            in_process(track, LENIENT.get(name, False), args.repeat, name)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
