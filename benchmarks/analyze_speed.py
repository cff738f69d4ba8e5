"""What ``pbtools analyze`` does after parsing, against the parse floor of its input (issues 15
and 30): the measure of issue 30 item 5, "the non-pairwise rest of analyze ≤ 3× the parse floor".

For a track shape of :mod:`benchmarks.shapes` (``--shape trec2`` … ``msmarco``; the four small
ones by default) it reads the collection once (lenient, as ``pbtools analyze TRACK --lenient``)
and then, in one process, after a warm-up (:func:`warm_up`), runs ``--repeat`` interleaved rounds
of (:func:`rest_round`):

* **the parse floor** of the run files (:func:`parse_floor.parse_floor`: pyarrow's typed read on
  a thread per core), wall and CPU time of the same call;
* **one serial analysis** (``analyze(frames, jobs=1)``, then its tables written as ``pbtools
  analyze -o`` writes them and its report made: everything the command does after parsing),
  broken into stages by timing the functions that do the work (:data:`PROBES`; exclusive times,
  a stage's own time without the stages it calls), on both clocks at once:

      pool inference, encoding (DenseRuns), truth/top75, experiment blocks, merges (r_p ∘ r_u of
      every pair), lipani, webber, reduced, true scores, stats (Tukey HSD, errors, their noise
      intervals, τ), output (tables written, report), other (total minus the probed stages:
      the results' frames, bookkeeping) — so the stages add up to the run exactly;
* the analysis as ``pbtools analyze`` runs it (default jobs: threads on every core), whole.

**The rest** = the serial run's total minus its pairwise stages (:data:`PAIRWISE`: Lipani,
Webber & Park and the merges, work ∝ runs² × topics, items 3–4), nothing left unprobed.
**The criterion is CPU**: the rest's CPU time ÷ the floor's CPU time (every thread of the
process, :func:`time.process_time`). CPU counts the work on both sides whatever the threads: the
floor reads on every core and the probes need the analysis on one thread, so a wall ratio
compares one core against two (on an idle 2-core machine it is about twice the CPU ratio), and
on a shared machine wall time also counts the other processes. The wall ratio (serial rest ÷
the floor on all its threads) is printed beside it, the stricter reading. Medians of the rounds.

Why this replaces the two measures of session 5 (which disagreed by ~2×): ``--cpu`` timed the
*first* ``parse_floor`` call of the process, which includes :func:`parse_floor.classify` (cached:
it reads and parses every file once more to choose the floor's read) — with ``--repeat 1`` the
floor was ~2× its real cost (TREC-2 1.50 s CPU against 0.87–1.07 s warm; synth63 1.71 against
0.68–0.72), so its ratios (1.2–1.9×) were about half. ``table30.py``'s ``rest`` row timed the
floor warm but took the serial analysis' CPU × the rest's share of its wall time, the floor's
wall on two threads against the rest's on one (wall ratio ≈ 1.6× its CPU ratio), and it left
out the output. Both now call :func:`rest_round`: one measure, one figure.

Peak memory: the peak resident set of a forked child running the analysis alone, minus its
resident set at the start (the frames already loaded).

    PYTHONPATH=. python benchmarks/analyze_speed.py [--shape trec2] [--repeat 3] [--profile]
        [--memory] [--measures P@10,AP] [--estimators lipani,webber] [--before CHECKOUT]

``--before CHECKOUT`` measures the rest (:func:`rest_round`) on another checkout and on this
one, one fresh process per round each, interleaved (:func:`before_after`). ``--profile
[STAGE|rest]`` runs one more serial analysis with its largest probed rest stage (or STAGE, or
with ``rest`` the whole run but its pairwise stages) under cProfile; ``--memory`` measures the
whole-process peak RSS of ``pbtools analyze TRACK --lenient`` against the Arrow size of the runs
(target ≤ 4× on synth129).
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import os
import resource
import statistics
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: the pbtools measured: this checkout, or the one ``--before`` names (its child processes)
TREE = os.environ.get("ANALYZE_SPEED_TREE", str(HERE.parent))
if TREE not in sys.path:
    sys.path.insert(0, TREE)
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from parse_floor import parse_floor  # noqa: E402
from scaling import PAIRWISE as PAIRWISE_ESTIMATORS  # noqa: E402
from shapes import SHAPES, shape  # noqa: E402

if sys.path[0] != TREE and "pbtools" not in sys.modules:
    # those modules put this checkout first: the tree measured goes first
    sys.path.remove(TREE)
    sys.path.insert(0, TREE)

#: (stage, module, attribute path) of the functions timed; nested calls are subtracted (a
#: function missing from the pbtools imported is skipped: the script also times older trees)
PROBES = (
    ("pool inference", "pbtools.pooling.inference", "infer_pool"),
    ("encoding", "pbtools.engine.dense", "DenseRuns.__init__"),
    ("truth/top75", "pbtools.experiments.leaveout", "_top_blocks"),
    ("merges", "pbtools.engine.merge", "merge_rows"),
    ("lipani", "pbtools.corrections.lipani", "Lipani.estimate"),
    ("webber", "pbtools.corrections.webber", "WebberOnRuns.estimate"),
    ("reduced", "pbtools.corrections.reduced", "ReducedPool.estimate"),
    # the estimators' columns (a leave-out experiment's chunks call these, not ``estimate``)
    ("lipani", "pbtools.corrections.lipani", "Lipani.estimate_columns"),
    ("webber", "pbtools.corrections.webber", "WebberOnRuns.estimate_columns"),
    ("reduced", "pbtools.corrections.reduced", "ReducedPool.estimate_columns"),
    ("experiment blocks", "pbtools.experiments.leaveout", "_build"),
    ("true scores", "pbtools.experiments.leaveout", "_finish"),
    ("experiment blocks", "pbtools.experiments.leaveout", "_block"),  # before the split
    ("stats", "pbtools.stats", "tukey_hsd"),
    ("stats", "pbtools.stats", "error_table"),
    ("stats", "pbtools.stats", "kendall_tau"),
)


#: the stages whose work is pairwise (every pooled run against every other on every topic: runs²
#: × topics, issue 15 item 4; the floor and the other stages grow with runs × topics): the
#: estimators ``scaling.py`` calls pairwise, and the merges r_p ∘ r_u that Lipani's runs inside
#: its own (timed apart here) — together the time ``scaling.py`` counts as pairwise
PAIRWISE = (*PAIRWISE_ESTIMATORS, "merges")


#: probes added in issue 30: the run-to-run noise intervals of the analysis (a paired bootstrap,
#: statistics: counted as "stats")
MORE_PROBES = (("stats", "pbtools.stats", "error_intervals"),)

#: where the modules probed live in other versions of pbtools (the engine's move, issue 30)
MOVED = {
    "pbtools.pooling.dense": "pbtools.engine.dense",
    "pbtools.engine.dense": "pbtools.pooling.dense",
    "pbtools.corrections.merge": "pbtools.engine.merge",
    "pbtools.engine.merge": "pbtools.corrections.merge",
}


class Probes:
    """Exclusive wall and CPU time per stage of the functions in :data:`PROBES` (patched while
    active): ``wall[stage]``, ``cpu[stage]`` (CPU: :func:`time.process_time`, every thread of
    the process — in a serial run, the BLAS threads a stage starts count for that stage)."""

    def __init__(self, profile: str | None = None):
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.stack: list[list] = []
        #: stage whose calls run under cProfile (``--profile``), and its profiles
        self.profile, self.prof, self.stats, self.paused = profile, None, [], 0

    def wrap(self, name, fn):
        def timed(*a, **k):
            self.stack.append([name, 0.0, 0.0])
            prof = None
            paused = self.profile == "rest" and name in PAIRWISE and self.prof is not None
            if paused:  # the rest's profile leaves the pairwise stages (nested too) out
                self.paused += 1
                self.prof.disable()
            if name == self.profile and self.prof is None:
                import cProfile

                self.prof = prof = cProfile.Profile()
                prof.enable()
            w, c = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **k)
            finally:
                dw, dc = time.perf_counter() - w, time.process_time() - c
                if prof is not None:
                    prof.disable()
                    self.stats.append(prof)
                    self.prof = None
                if paused:
                    self.paused -= 1
                    if not self.paused:
                        self.prof.enable()
                _, inner_w, inner_c = self.stack.pop()
                self.wall[name] = self.wall.get(name, 0.0) + dw - inner_w
                self.cpu[name] = self.cpu.get(name, 0.0) + dc - inner_c
                if self.stack:
                    self.stack[-1][1] += dw
                    self.stack[-1][2] += dc

        return timed

    @contextlib.contextmanager
    def active(self):
        import importlib
        import importlib.util

        import pbtools.experiments.analysis  # noqa: F401  (load every module patched below)

        saved = []
        for name, mod, attr in PROBES + MORE_PROBES:
            try:
                obj = importlib.import_module(mod)
            except ImportError:  # a module another version of pbtools has elsewhere
                alt = MOVED.get(mod)
                if alt is None or importlib.util.find_spec(alt) is None:
                    continue
                obj = importlib.import_module(alt)
            *owner, last = attr.split(".")
            for o in owner:
                obj = getattr(obj, o)
            original = getattr(obj, last, None)
            if original is None:  # a function this version of pbtools does not have
                continue
            timed = self.wrap(name, original)
            targets = [obj]
            if not owner:  # a function: also where other modules imported it by name
                targets += [
                    m
                    for k, m in list(sys.modules.items())
                    if k.startswith("pbtools") and getattr(m, last, None) is original
                ]
            for target in dict.fromkeys(targets):
                saved.append((target, last, original))
                setattr(target, last, timed)
        try:
            yield self
        finally:
            for obj, attr, value in reversed(saved):
                setattr(obj, attr, value)


#: ``measures``/``estimators`` of every analysis timed (``--measures``, ``--estimators``)
ANALYSIS_OPTIONS: dict = {}


def _analysis(frames, jobs=None):
    from pbtools.experiments.analysis import analyze

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return analyze(frames, progress=False, jobs=jobs, **ANALYSIS_OPTIONS)


@contextlib.contextmanager
def scored_cells():
    """Count the (row × measure) cells the engine scores in ``Problem.score_runs`` (runs on
    their topics: pooled runs, runs to score, truth): yields a one-item list, the count. The
    work a shared scoring step saves (issue 29: Lipani's and Webber & Park's pooled runs)."""
    from pbtools.engine.problem import Problem

    count, original = [0], Problem.score_runs

    def counted(self, slots, var, t, width, measures):
        count[0] += len(slots) * len(measures)
        return original(self, slots, var, t, width, measures)

    Problem.score_runs = counted
    try:
        yield count
    finally:
        Problem.score_runs = original


def _child(conn, frames):
    with open("/proc/self/statm") as fh:
        start = int(fh.read().split()[1]) * resource.getpagesize() / 2**20
    _analysis(frames)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    conn.send(max(peak - start, 0.0))
    conn.close()


def peak_mib(frames) -> float:
    """MiB the analysis adds at its peak, measured in a forked child."""
    ctx = mp.get_context("fork")
    a, b = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(b, frames))
    p.start()
    out = a.recv()
    p.join()
    return out


@dataclass
class Serial:
    """One serial analysis (``jobs=1``) broken into stages, on both clocks.

    ``wall`` and ``cpu`` map every stage of :data:`PROBES` that ran, ``"output"`` (the tables
    written as ``pbtools analyze -o`` writes them, and the report printed) and ``"other"``
    (everything no probe covers: the total minus the probed stages) to seconds, so that the
    stages add up to ``total_wall`` / ``total_cpu`` exactly."""

    wall: dict
    cpu: dict
    total_wall: float
    total_cpu: float
    cells: int = 0
    profiles: list = field(default_factory=list, repr=False)

    def rest(self, clock: str = "cpu") -> float:
        """The non-pairwise rest: the whole run minus the stages in :data:`PAIRWISE`."""
        total = self.total_cpu if clock == "cpu" else self.total_wall
        return total - sum(getattr(self, clock).get(k, 0.0) for k in PAIRWISE)


def _output(result, out_dir: Path) -> None:
    """What ``pbtools analyze -o DIR`` does with an analysis: its tables written, its report."""
    result.write(out_dir)
    result.report()


def serial_stages(frames, profile: str | None = None, output: bool = True) -> Serial:
    """One analysis of ``frames`` on one thread (``jobs=1``: the probes time one call stack),
    then (``output``) its tables written to a temporary directory and its report made, as the
    command line does; every stage's exclusive wall and CPU time (:class:`Serial`). With
    ``profile`` (a stage), the cProfile profiles of that stage's calls."""
    import tempfile

    probes = Probes(profile)
    with probes.active(), scored_cells() as cells:
        if profile == "rest":  # the whole run but its pairwise stages
            import cProfile

            probes.prof = cProfile.Profile()
            probes.prof.enable()
        w, c = time.perf_counter(), time.process_time()
        result = _analysis(frames, jobs=1)
        if output:
            with tempfile.TemporaryDirectory() as tmp:
                probes.wrap("output", _output)(result, Path(tmp) / "out")
        del result
        total_w, total_c = time.perf_counter() - w, time.process_time() - c
        if profile == "rest":
            probes.prof.disable()
            probes.stats.append(probes.prof)
    probes.wall["other"] = total_w - sum(probes.wall.values())
    probes.cpu["other"] = total_c - sum(probes.cpu.values())
    return Serial(probes.wall, probes.cpu, total_w, total_c, cells[0], probes.stats)


def warm_up(files) -> None:
    """What both sides pay once per process and the measure leaves out: the floor's choice
    of read for each file (:func:`parse_floor.classify`, cached: it reads and parses every
    file once more) and its thread pool, and the modules an analysis imports on first use
    (one analysis of the bundled sample)."""
    from pbtools.experiments.load import SAMPLE
    from pbtools.io import load_collection

    parse_floor(files)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        col = load_collection([SAMPLE], lenient=True)
        serial_stages((col.runs, col.qrels, col.orgs))


def rest_round(frames, files, profile: str | None = None) -> dict:
    """One round of the measure of issue 30 item 5 (after :func:`warm_up`): the parse floor
    of ``files`` (wall and CPU of the same call), then one serial analysis of ``frames``
    (:func:`serial_stages`). Keys: ``floor_wall``, ``floor_cpu``, ``rest_wall``, ``rest_cpu``,
    ``serial`` (the :class:`Serial`)."""
    w, c = time.perf_counter(), time.process_time()
    parse_floor(files)
    floor_w, floor_c = time.perf_counter() - w, time.process_time() - c
    s = serial_stages(frames, profile=profile)
    return {
        "floor_wall": floor_w,
        "floor_cpu": floor_c,
        "rest_wall": s.rest("wall"),
        "rest_cpu": s.rest("cpu"),
        "serial": s,
    }


def medians(rounds: list[dict]) -> dict:
    """The median of each figure of :func:`rest_round` over ``rounds``, and of each stage
    (``wall``/``cpu``: stage → seconds)."""
    out = {k: statistics.median(r[k] for r in rounds) for k in rounds[0] if k != "serial"}
    for clock in ("wall", "cpu"):
        names = dict.fromkeys(k for r in rounds for k in getattr(r["serial"], clock))
        out[clock] = {
            k: statistics.median(getattr(r["serial"], clock).get(k, 0.0) for r in rounds)
            for k in names
        }
    out["cells"] = rounds[-1]["serial"].cells
    return out


def arrow_mib(runs) -> float:
    """The Arrow size of the runs frame (MiB): what the memory targets are stated against
    (``parse_floor.py --memory`` measures the same)."""
    import pyarrow as pa

    return pa.Table.from_pandas(runs, preserve_index=False).nbytes / 2**20


def process_peak_mib(track: Path) -> tuple[float, float]:
    """Whole-process peak RSS (MiB) and wall time of ``pbtools analyze TRACK --lenient`` in a
    fresh child (the figure the issue quotes: 2.7 GB on the 129-run shape)."""
    import os
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "pbtools", "analyze", str(track), "--lenient"]
        cmd += ["--no-progress", "-o", out]
        env = dict(os.environ, PYTHONPATH=str(HERE.parent))
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:  # an earlier child peaked higher: ru_maxrss is the children's maximum
        print("  (process peak not measurable: an earlier child peaked higher)")
    return peak / 1024, wall


def bench(name: str, repeat: int, memory: bool = False, profile: str | None = None) -> dict:
    from pbtools import io

    track = shape(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        col = io.load_collection([track], lenient=True)
        parse_s = time.perf_counter() - t
    frames = (col.runs, col.qrels, col.orgs)
    files = sorted(str(p) for p in (track / "Runs").iterdir() if p.is_file())
    warm_up(files)
    rounds, totals = [], []
    for _ in range(repeat):  # interleaved, in one process: floor, serial run, default run
        rounds.append(rest_round(frames, files))
        w, c = time.perf_counter(), time.process_time()
        _analysis(frames)
        totals.append((time.perf_counter() - w, time.process_time() - c))
    m = medians(rounds)
    fw, fc = m["floor_wall"], m["floor_cpu"]
    total_w = statistics.median(t[0] for t in totals)
    total_c = statistics.median(t[1] for t in totals)
    mem = peak_mib(frames)
    size = arrow_mib(col.runs)
    print(f"{name}: {len(files)} run files; pbtools parse {parse_s:.2f} s (once)")
    print(
        f"  parse floor (warm, median of {repeat})  wall {fw:6.2f} s   CPU {fc:6.2f} s "
        f"(its threads: {os.cpu_count()})"
    )
    print(
        f"  analysis after parsing (default jobs)  wall {total_w:6.2f} s = {total_w / fw:5.2f}× "
        f"floor   CPU {total_c:6.2f} s = {total_c / fc:5.2f}×   peak +{mem:.0f} MiB"
    )
    sw, sc = sum(m["wall"].values()), sum(m["cpu"].values())
    print(
        f"  one serial run (jobs=1, tables written, report made; median of {repeat}): wall "
        f"{sw:.2f} s, CPU {sc:.2f} s; {m['cells']:,} (row × measure) cells scored by "
        "Problem.score_runs; exclusive times:"
    )
    print(f"    {'stage':20s} {'wall s':>7s} {'CPU s':>7s}  {'CPU ÷ floor CPU':>15s}")
    for k, v in sorted(m["cpu"].items(), key=lambda kv: -kv[1]):
        print(f"    {k:20s} {m['wall'][k]:7.2f} {v:7.2f}  {v / fc:14.2f}×")
    pw = sum(m["wall"].get(k, 0.0) for k in PAIRWISE)
    pc = sum(m["cpu"].get(k, 0.0) for k in PAIRWISE)
    rw, rc = m["rest_wall"], m["rest_cpu"]
    print(
        f"  pairwise ({', '.join(PAIRWISE)}): CPU {pc:.2f} s = {pc / fc:.2f}× floor CPU, "
        f"wall {pw:.2f} s = {pw / fw:.2f}× floor wall"
    )
    print(
        f"  THE REST (issue 30 item 5, target ≤ 3×): CPU {rc:.2f} s = {rc / fc:.2f}× the floor's "
        f"CPU (the criterion); wall {rw:.2f} s on one thread = {rw / fw:.2f}× the floor's wall "
        f"on {os.cpu_count()}"
    )
    rest = {k: v for k, v in m["cpu"].items() if k not in PAIRWISE}
    for k, v in sorted(rest.items(), key=lambda kv: -kv[1]):
        share = v / rc if rc else 0.0
        print(f"    {k:20s} CPU {v:7.2f} s  {v / fc:5.2f}× floor  {share:6.1%} of the rest")
    top = max((k for k in rest if k not in ("other", "output")), key=lambda k: rest[k])
    out = {
        "floor_wall": fw,
        "floor_cpu": fc,
        "analysis_wall": total_w,
        "analysis_cpu": total_c,
        "rest_wall": rw,
        "rest_cpu": rc,
        "stages_cpu": m["cpu"],
        "stages_wall": m["wall"],
        "peak_mib": mem,
        "arrow_mib": size,
        "largest_rest_stage": top,
        "cells_scored": m["cells"],
    }
    if profile:
        stage = top if profile == "largest" else profile
        profs = serial_stages(frames, profile=stage).profiles
        what = "the rest (pairwise stages left out)" if stage == "rest" else f"stage {stage!r}"
        print(f"  profile of {what} (one more serial run, cProfile, by own time):")
        _print_profile(profs, top=25 if stage == "rest" else 12)
    if memory:
        peak, wall = process_peak_mib(track)
        out["process_peak_mib"] = peak
        print(
            f"  pbtools analyze whole process: peak RSS {peak:,.0f} MiB = {peak / size:.2f}× the "
            f"{size:,.1f} MiB Arrow size of the runs (target ≤ 4×), {wall:.1f} s wall"
        )
    sys.stdout.flush()
    return out


def _round_json(name: str) -> None:
    """``--round-json``: one :func:`rest_round` of shape ``name`` after a warm-up, printed as
    one JSON line (the child of :func:`before_after`)."""
    import json

    import pbtools
    from pbtools import io

    assert Path(pbtools.__file__).resolve().is_relative_to(Path(TREE).resolve()), pbtools.__file__
    track = shape(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        col = io.load_collection([track], lenient=True)
    files = sorted(str(p) for p in (track / "Runs").iterdir() if p.is_file())
    warm_up(files)
    r = rest_round((col.runs, col.qrels, col.orgs), files)
    s = r.pop("serial")
    print(json.dumps({**r, "wall": s.wall, "cpu": s.cpu}))


def before_after(name: str, before: Path, repeat: int) -> dict:
    """The rest's measure on this checkout and on ``before`` (another checkout: the code
    before a change), one fresh process per round each, interleaved; the medians printed
    (this script's probes time both trees: a function a tree lacks is skipped)."""
    import json
    import subprocess

    got: dict[str, list] = {"before": [], "after": []}
    trees = {"before": Path(before).resolve(), "after": HERE.parent}
    for _ in range(repeat):
        for label, tree in trees.items():
            env = dict(os.environ, PYTHONPATH=str(tree), ANALYZE_SPEED_TREE=str(tree))
            cmd = [sys.executable, str(Path(__file__).resolve()), "--round-json", name]
            out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
            got[label].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(
        f"{name}: the rest before ({trees['before']}) and after ({trees['after']}), medians of "
        f"{repeat} interleaved fresh processes"
    )
    # the floor is the same code in both trees: every round's floor pooled, a steadier divisor
    pooled = {
        k: statistics.median(r[k] for rounds in got.values() for r in rounds)
        for k in ("floor_cpu", "floor_wall")
    }
    print(
        f"  floor, both trees' {2 * repeat} rounds pooled: CPU {pooled['floor_cpu']:.2f} s, "
        f"wall {pooled['floor_wall']:.2f} s"
    )
    res = {"floor": pooled}
    for label, rounds in got.items():
        med = {
            k: statistics.median(r[k] for r in rounds)
            for k in rounds[0]
            if k not in ("wall", "cpu")
        }
        cpu = {k: statistics.median(r["cpu"].get(k, 0.0) for r in rounds) for k in rounds[0]["cpu"]}
        res[label] = {**med, "cpu": cpu}
        print(
            f"  {label:6s} floor CPU {med['floor_cpu']:5.2f} s wall {med['floor_wall']:5.2f} s; "
            f"rest CPU {med['rest_cpu']:5.2f} s = {med['rest_cpu'] / med['floor_cpu']:.2f}× "
            f"(criterion), wall {med['rest_wall']:5.2f} s = "
            f"{med['rest_wall'] / med['floor_wall']:.2f}×; against the pooled floor "
            f"{med['rest_cpu'] / pooled['floor_cpu']:.2f}× CPU, "
            f"{med['rest_wall'] / pooled['floor_wall']:.2f}× wall"
        )
        rest = sorted(((k, v) for k, v in cpu.items() if k not in PAIRWISE), key=lambda kv: -kv[1])
        print("    " + ", ".join(f"{k} {v:.2f}" for k, v in rest))
    sys.stdout.flush()
    return res


def _print_profile(profs, top: int = 12) -> None:
    import io as _io
    import pstats

    if not profs:
        print("    (the stage was not called)")
        return
    buf = _io.StringIO()
    st = pstats.Stats(profs[0], stream=buf)
    for p in profs[1:]:
        st.add(p)
    st.sort_stats("tottime").print_stats(top)
    lines = buf.getvalue().splitlines()
    start = next((i for i, x in enumerate(lines) if x.lstrip().startswith("ncalls")), 0)
    for line in lines[start:]:
        if line.strip():
            print("    " + line.rstrip()[:150])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=SHAPES, action="append")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--memory",
        action="store_true",
        help="also the whole-process peak RSS of `pbtools analyze TRACK --lenient` against the "
        "Arrow size of the runs (issue 30 item 5: ≤ 4×)",
    )
    ap.add_argument(
        "--profile",
        nargs="?",
        const="largest",
        metavar="STAGE",
        help="one more serial run under cProfile: the largest probed stage of the rest (no "
        "value), a stage by name, or 'rest' (the whole run with its pairwise stages left out)",
    )
    ap.add_argument("--measures", help="comma-separated measures of analyze (default its own)")
    ap.add_argument(
        "--estimators",
        help="comma-separated estimators of analyze in their order (default its own), e.g. "
        "lipani,webber: Lipani first asks for fewer measures of the pooled runs",
    )
    ap.add_argument(
        "--before",
        type=Path,
        metavar="CHECKOUT",
        help="measure the rest on CHECKOUT (the code before a change) and on this one, "
        "interleaved, one fresh process per round each",
    )
    ap.add_argument("--round-json", metavar="SHAPE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.round_json:
        return _round_json(args.round_json)
    for opt in ("measures", "estimators"):
        if getattr(args, opt):
            ANALYSIS_OPTIONS[opt] = getattr(args, opt).split(",")
    with open("/proc/loadavg") as fh:
        print("load average:", " ".join(fh.read().split()[:3]))
    for name in args.shape or [s for s in SHAPES if s != "msmarco"]:
        if args.before is not None:
            before_after(name, args.before, args.repeat)
            continue
        bench(name, args.repeat, memory=args.memory, profile=args.profile)


if __name__ == "__main__":
    main()
