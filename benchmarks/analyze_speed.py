"""What ``pbtools analyze`` does after parsing, against the parse floor of its input (issue 15).

For a track shape of :mod:`benchmarks.shapes` (``--shape trec2`` / ``synth127``, both by default)
reads the collection once (lenient, as ``pbtools analyze TRACK --lenient``), measures the parse
floor of its run files (:func:`benchmarks.parse_floor.parse_floor`) and then the analysis
(:func:`pbtools.experiments.analysis.analyze` on the frames read: pool inference, the four
leave-one-out experiments, significance, errors), alternating floor and analysis ``--repeat``
times in one process and quoting medians. One more run on one thread (the analysis runs its
blocks and merges on a few threads otherwise) is broken down into stages by timing the functions
that do the work (exclusive times: a stage's own time without the stages it calls):

    pool inference, encoding (DenseRuns), truth/top-75 (re-pool, run sets), merges (r_p ∘ r_u of
    every pair), lipani, webber, reduced, true scores (per-topic truth), stats (Tukey HSD, errors,
    τ), other (frames, bookkeeping).

Peak memory: the peak resident set of a forked child running the analysis alone, minus its
resident set at the start (the frames already loaded).

    PYTHONPATH=. python benchmarks/analyze_speed.py [--shape trec2] [--repeat 3] [--cpu]
        [--profile] [--memory] [--measures P@10,AP] [--estimators lipani,webber]

Issue 30 item 5: the non-pairwise rest (every stage but Lipani, Webber & Park and the merges:
pool inference, encoding, truth, blocks, true scores, reduced pool, statistics and what no probe
covers) is printed apart, each stage with its share, against the floor (target ≤ 3×);
``--profile`` runs one more serial analysis with its largest stage under cProfile;
``--memory`` measures the whole-process peak RSS of ``pbtools analyze TRACK --lenient`` against
the Arrow size of the runs (target ≤ 4× on synth129).

Prints, per shape: the floor, the analysis time and their ratio (target ≤ 3×, issue 15 item 3),
the stages, the peak memory added, and the serial run split into its pairwise stages (webber,
lipani and its merges: every pooled run against every other, work ∝ runs² × topics) and the
rest, each against the floor (which grows with runs × topics).
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from parse_floor import parse_floor  # noqa: E402
from scaling import PAIRWISE as PAIRWISE_ESTIMATORS  # noqa: E402
from shapes import SHAPES, shape  # noqa: E402

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

#: the stages of the non-pairwise rest (issue 30 item 5: ≤ 3× the parse floor); "other" is
#: what no probe covers (frames, bookkeeping)
REST = (
    "pool inference",
    "encoding",
    "truth/top75",
    "experiment blocks",
    "true scores",
    "reduced",
    "stats",
    "other",
)


class Probes:
    """Exclusive time per stage of the functions in :data:`PROBES` (patched while active)."""

    def __init__(self, clock=time.perf_counter, profile: str | None = None):
        self.clock = clock
        self.times: dict[str, float] = {}
        self.stack: list[list] = []
        #: stage whose calls run under cProfile (``--profile``), and the profile
        self.profile, self.prof = profile, None

    def wrap(self, name, fn):
        def timed(*a, **k):
            self.stack.append([name, 0.0])
            prof = None
            if name == self.profile and self.prof is None:
                import cProfile

                self.prof = prof = cProfile.Profile()
                prof.enable()
            t = self.clock()
            try:
                return fn(*a, **k)
            finally:
                dt = self.clock() - t
                if prof is not None:
                    prof.disable()
                    self.stats = getattr(self, "stats", [])
                    self.stats.append(prof)
                    self.prof = None
                _, inner = self.stack.pop()
                self.times[name] = self.times.get(name, 0.0) + dt - inner
                if self.stack:
                    self.stack[-1][1] += dt

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
#: what the last :func:`serial_stages` run counted: ``cells`` scored (:func:`scored_cells`)
LAST_RUN: dict = {}


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


def serial_stages(frames, clock, profile: str | None = None) -> tuple[dict, float, list]:
    """The stage times of one analysis run on one thread (``jobs=1``: the probes time one call
    stack), that run's total and, with ``profile`` (a stage), the cProfile profiles of its
    calls; the cells it scored (:func:`scored_cells`) go to ``LAST_RUN["cells"]``."""
    probes = Probes(clock, profile)
    with probes.active(), scored_cells() as cells:
        t = clock()
        _analysis(frames, jobs=1)
        total = clock() - t
    probes.times["other"] = total - sum(probes.times.values())
    LAST_RUN["cells"] = cells[0]
    return probes.times, total, getattr(probes, "stats", [])


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


def bench(
    name: str, repeat: int, clock=time.perf_counter, memory: bool = False, profile: bool = False
) -> dict:
    from pbtools import io

    track = shape(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        col = io.load_collection([track], lenient=True)
        parse_s = time.perf_counter() - t
    frames = (col.runs, col.qrels, col.orgs)
    files = sorted(p for p in (track / "Runs").iterdir() if p.is_file())
    floors, totals = [], []
    for _ in range(repeat):  # alternating, in one process
        t = clock()
        parse_floor(files)
        floors.append(clock() - t)
        t = clock()
        _analysis(frames)
        totals.append(clock() - t)
    floor, total = statistics.median(floors), statistics.median(totals)
    best, serial, _ = serial_stages(frames, clock)
    cells = LAST_RUN["cells"]
    mem = peak_mib(frames)
    size = arrow_mib(col.runs)
    print(f"{name}: {len(files)} run files; pbtools parse {parse_s:.2f} s (once)")
    print(f"  parse floor (median of {repeat})   {floor:7.2f} s")
    print(
        f"  analysis after parsing         {total:7.2f} s = {total / floor:5.2f}× floor"
        f"   (target ≤ 3×)   peak +{mem:.0f} MiB"
    )
    print(
        f"  stages of one serial run ({serial:.2f} s, exclusive times; threads: 1; "
        f"{cells:,} (row × measure) cells scored by Problem.score_runs)"
    )
    for k, v in sorted(best.items(), key=lambda kv: -kv[1]):
        print(f"    {k:20s} {v:7.2f} s  {v / floor:5.2f}× floor")
    pairwise = sum(best.get(k, 0.0) for k in PAIRWISE)
    print(
        f"  of which pairwise ({', '.join(PAIRWISE)}) {pairwise:5.2f} s = "
        f"{pairwise / floor:5.2f}× floor; the rest {serial - pairwise:5.2f} s = "
        f"{(serial - pairwise) / floor:5.2f}× floor"
    )
    rest = {k: best.get(k, 0.0) for k in REST}
    total_rest = sum(rest.values())
    print(
        f"  the non-pairwise rest (issue 30 item 5, target ≤ 3× the floor): {total_rest:.2f} s = "
        f"{total_rest / floor:.2f}× floor"
    )
    for k, v in sorted(rest.items(), key=lambda kv: -kv[1]):
        share = v / total_rest if total_rest else 0.0
        print(f"    {k:20s} {v:7.2f} s  {v / floor:5.2f}× floor  {share:6.1%} of the rest")
    top = max((k for k in rest if k != "other"), key=lambda k: rest[k])
    out = {
        "floor": floor,
        "analysis": total,
        "stages": best,
        "rest": total_rest,
        "peak_mib": mem,
        "arrow_mib": size,
        "largest_rest_stage": top,
        "cells_scored": cells,
    }
    if profile:
        _, _, profs = serial_stages(frames, clock, profile=top)
        print(f"  profile of the largest rest stage, {top!r} (one serial run, by own time):")
        _print_profile(profs)
    if memory:
        peak, wall = process_peak_mib(track)
        out["process_peak_mib"] = peak
        print(
            f"  pbtools analyze whole process: peak RSS {peak:,.0f} MiB = {peak / size:.2f}× the "
            f"{size:,.1f} MiB Arrow size of the runs (target ≤ 4×), {wall:.1f} s wall"
        )
    sys.stdout.flush()
    return out


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
        "--cpu",
        action="store_true",
        help="CPU time of the process (all threads) instead of wall time: steadier on a shared "
        "machine; the floor's two threads both count",
    )
    ap.add_argument(
        "--memory",
        action="store_true",
        help="also the whole-process peak RSS of `pbtools analyze TRACK --lenient` against the "
        "Arrow size of the runs (issue 30 item 5: ≤ 4×)",
    )
    ap.add_argument(
        "--profile",
        action="store_true",
        help="profile (cProfile) the largest stage of the non-pairwise rest in one more serial run",
    )
    ap.add_argument("--measures", help="comma-separated measures of analyze (default its own)")
    ap.add_argument(
        "--estimators",
        help="comma-separated estimators of analyze in their order (default its own), e.g. "
        "lipani,webber: Lipani first asks for fewer measures of the pooled runs",
    )
    args = ap.parse_args(argv)
    for opt in ("measures", "estimators"):
        if getattr(args, opt):
            ANALYSIS_OPTIONS[opt] = getattr(args, opt).split(",")
    with open("/proc/loadavg") as fh:
        print("load average:", " ".join(fh.read().split()[:3]))
    for name in args.shape or SHAPES:
        clock = time.process_time if args.cpu else time.perf_counter
        bench(name, args.repeat, clock, memory=args.memory, profile=args.profile)


if __name__ == "__main__":
    main()
