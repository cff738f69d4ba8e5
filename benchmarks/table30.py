"""The one table of issue 30: every target, the figure before, the figure now and the baseline
measured in the same run, regenerated from the code.

Each row is measured by the function of the benchmark that owns it (imported, not copied):

* ``evaluate`` — ``pbtools evaluate`` whole process ÷ pytrec_eval-terrier whole process (its own
  loader), the 14 measures of :mod:`evaluate_speed`, per shape; target ≤ 0.5× (≤ 0.3× on
  msmarco);
* ``startup`` — ``pbtools --help`` / ``--version`` whole process against ``python -c pass``;
  target ≤ 0.25 s;
* ``parse`` — ``io.read_runs`` ÷ the pyarrow floor (:func:`parse_floor.parse_floor`) in one
  fresh process per round, per shape (strict; TREC-2 lenient, it needs it); target ≤ 1.5×;
* ``pairwise`` — pbtools' Lipani + Webber & Park ``estimate`` ÷ the compiled reference
  (:mod:`pairwise_reference`, one core) on synth129's leave-one-org-out problem, CPU; target
  ≤ 1×;
* ``rest`` — the non-pairwise rest of ``analyze`` ÷ the parse floor, per shape, measured by
  :func:`analyze_speed.rest_round` (one serial analysis with its output, minus Lipani, Webber &
  Park and the merges); target ≤ 3× in CPU time (the criterion: see :mod:`analyze_speed`), the
  wall ratio beside it;
* ``memory129`` — peak RSS of ``pbtools analyze --jobs 1`` (a fresh process) ÷ the Arrow size
  of the runs (the floor's table) on synth129; target ≤ 4×;
* ``linear`` — the same on 2,000 one-line runs and 1,000 runs × 50 topics × 100
  (:func:`memory.oneline`, :func:`memory.wide`); target ≤ 2× that size + a per-run constant:
  the constant the figure implies beyond :data:`LINEAR_B` is printed, and whether the bound
  stated in docs/input.md (2 × Arrow + :data:`LINEAR_B` + :data:`LINEAR_C` × runs) holds.

Timed rows run ``--repeat`` interleaved rounds (every row once per round, in turn) and quote
medians; memory rows run once (a peak is not noisy the way a time is). Wall-clock ratios are
asked on an idle machine; CPU ratios are printed beside them for a loaded one.

    PYTHONPATH=. python benchmarks/table30.py [--repeat 5] [--rows evaluate,parse,...]
        [--shapes trec2,synth127,synth129,synth63] [--write benchmarks/README.md]

``--write FILE`` replaces the text between ``<!-- table30 -->`` and ``<!-- /table30 -->`` in
FILE with the table (atomically).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

ROWS = ("startup", "parse", "evaluate", "pairwise", "rest", "memory129", "linear")
#: the shapes of the per-shape rows by default (msmarco: ``--shapes ...,msmarco``; its
#: pytrec_eval baseline needs several GB)
DEFAULT_SHAPES = ("trec2", "synth127", "synth129", "synth63")

#: the figures before, from the issue's text
BEFORE = {
    ("evaluate", "trec2"): "0.88×",
    ("evaluate", "synth127"): "0.65×",
    ("evaluate", "synth129"): "0.80×",
    ("evaluate", "synth63"): "1.05×",
    ("evaluate", "msmarco"): "— (÷ trec_eval 2.05×)",
    ("startup", "pbtools --help"): "0.60–0.78 s",
    ("startup", "pbtools --version"): "0.60–0.78 s",
    ("parse", "trec2"): "—",
    ("parse", "synth127"): "—",
    ("parse", "synth129"): "2.1×",
    ("parse", "synth63"): "—",
    ("parse", "msmarco"): "19.8×",
    ("pairwise", "synth129"): "1.39× (Lipani 4.1 s + W&P 3.4 s vs 5.4 s)",
    ("rest", "trec2"): "— (whole analysis 10.8×)",
    ("rest", "synth127"): "— (6.4×)",
    ("rest", "synth129"): "— (10.1×)",
    ("rest", "synth63"): "— (15.8×)",
    ("rest", "msmarco"): "—",
    ("memory129", "synth129"): "2.7 GB (≈ 10× 277 MiB)",
    ("linear", "oneline 2,000"): "4.4 GB",
    ("linear", "wide 1,000 × 50 × 100"): "—",
}
TARGET = {
    "evaluate": "≤ 0.5× pytrec_eval (msmarco ≤ 0.3×)",
    "startup": "≤ 0.25 s",
    "parse": "≤ 1.5× floor",
    "pairwise": "≤ 1× reference",
    "rest": "≤ 3× floor",
    "memory129": "peak ≤ 4× runs",
    "linear": "peak ≤ 2× runs + B + c·runs (docs/input.md)",
}
#: the bound of docs/input.md, "Memory of analyze with many runs": peak ≤ 2 × Arrow + B + c ×
#: runs, B (MiB) the process (216) and one chunk of the leave-out stage (≤ 370), c (MiB a run)
LINEAR_B, LINEAR_C = 586.0, 3.5


# --------------------------------------------------------------------------- one measurement each
def _python(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter on this checkout; the JSON it prints last."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{HERE}"}
    out = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, check=True, stdout=subprocess.PIPE, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


_PARSE = """
import json, sys, time, warnings
from parse_floor import parse_floor
from pbtools import io
files, lenient = sys.argv[2:], sys.argv[1] == "1"
out = {}
for _ in range(2):  # the second pass is kept: both warm (imports, thread pools, page cache)
    for key, fn in (("floor", lambda: parse_floor(files)),
                    ("read_runs", lambda: io.read_runs(files, lenient=lenient))):
        w, c = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
        out[key] = (time.perf_counter() - w, time.process_time() - c)
print(json.dumps(out))
"""


def run_files_of(track: Path) -> list[str]:
    return [str(p) for p in sorted((track / "Runs").iterdir()) if p.is_file()]


def run_files(shape_name: str) -> list[str]:
    from shapes import shape

    return run_files_of(shape(shape_name))


def measure_parse(shape_name: str) -> dict:
    """read_runs and the floor, alternated twice in one fresh process, the second pass kept
    (wall, cpu each)."""
    got = _python(_PARSE, "1" if shape_name == "trec2" else "0", *run_files(shape_name))
    (w, c), (bw, bc) = got["read_runs"], got["floor"]
    return {"now": w, "base": bw, "now_cpu": c, "base_cpu": bc}


def measure_startup(label: str) -> dict:
    from startup import COMMANDS, env_for, run_once

    env = env_for(ROOT)
    return {"now": run_once(COMMANDS[label], env), "base": run_once(["-c", "pass"], env)}


def measure_evaluate(shape_name: str) -> dict:
    import evaluate_speed as ev
    from shapes import shape

    track = shape(shape_name)
    qrels_file, run_dir = ev.track_files(track)
    files = [str(p) for p in sorted(run_dir.iterdir()) if p.name.startswith("input.")]
    ms = [a for name in ev.PB_MEASURES for a in ("-m", name)]
    pb = [sys.executable, "-m", "pbtools", "evaluate", str(qrels_file), str(run_dir), *ms]
    pb += ["--lenient"] if shape_name == "trec2" else []
    te = [sys.executable, ev.__file__, "--pytrec-child", str(qrels_file), *files]
    now, now_rss, *_ = ev.child(pb)  # (wall, peak MiB, output, CPU)
    base, base_rss, *_ = ev.child(te)
    return {"now": now, "base": base, "now_rss": now_rss, "base_rss": base_rss}


class Stateful:
    """The in-process rows: frames and problems loaded once, measured every round."""

    def __init__(self):
        self.frames: dict = {}
        self.problem = None

    def pairwise(self, shape_name: str) -> dict:
        import pairwise_reference as pr

        if self.problem is None:
            self.problem = pr.leave_org_out_problem(*pr.load_shape(shape_name))
            pr.reference(self.problem)  # compiled (or loaded from the cache)
        _, rw, rc = pr.timed(pr.reference, self.problem)
        _, pw, pc = pr.timed(pr.pbtools_stage, self.problem)
        return {"now": pw, "base": rw, "now_cpu": pc, "base_cpu": rc}

    def rest(self, shape_name: str) -> dict:
        """:func:`analyze_speed.rest_round`, the one measure of the rest (warmed up once per
        shape): the criterion is its CPU ratio, the wall ratio is printed beside it."""
        import analyze_speed as az

        files = run_files(shape_name)
        if shape_name not in self.frames:
            from shapes import shape

            from pbtools import io

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                col = io.load_collection([shape(shape_name)], lenient=True)
            self.frames[shape_name] = (col.runs, col.qrels, col.orgs)
            az.warm_up(files)
        r = az.rest_round(self.frames[shape_name], files)
        out = {"now": r["rest_wall"], "base": r["floor_wall"]}
        out.update(now_cpu=r["rest_cpu"], base_cpu=r["floor_cpu"])
        cpu = {k: v for k, v in r["serial"].cpu.items() if k not in az.PAIRWISE}
        top = max(cpu, key=cpu.get)
        out["note"] = f"CPU {r['rest_cpu']:.2f} s, largest: {top} {cpu[top] / r['rest_cpu']:.0%}"
        return out


def measure_memory(kind: str) -> dict:
    """Peak RSS of ``pbtools analyze TRACK --jobs 1`` in a fresh process, measured by a small
    spawning process of its own (:func:`evaluate_speed.child`: ``wait4`` of that one child, not
    the maximum over every child this script started), against the Arrow size of the runs as
    the issue states it — the floor's table (:func:`parse_floor.parse_floor`; 264.5 MiB =
    277 MB on synth129, the issue's "277 MiB") — and, in the note, against the frame read with
    dictionary-encoded ids (:func:`analyze_speed.arrow_mib`)."""
    import tempfile

    import analyze_speed as az
    import evaluate_speed as ev
    import memory
    from shapes import shape

    from pbtools import io

    if kind == "synth129":
        track = shape("synth129")
    elif kind == "oneline 2,000":
        track = memory.oneline(2000)
    else:
        track = memory.wide(1000, 50, 100)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pbtools", "analyze", str(track), "--jobs", "1"]
        _, peak, *_ = ev.child([*cmd, "--no-progress", "-o", str(Path(tmp) / "out")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = io.read_runs(str(track / "Runs"))
    from parse_floor import parse_floor

    floor_mib = parse_floor(run_files_of(track))[1].nbytes / 2**20
    enc = az.arrow_mib(runs)
    out = {"now": peak, "base": floor_mib, "runs": runs["name"].nunique()}
    out["note"] = f"{peak / enc:.2f}× the {enc:,.1f} MiB of the encoded frame"
    return out


# --------------------------------------------------------------------------- the table
def plan(rows, shapes) -> list[tuple[str, str]]:
    out = []
    for row in rows:
        if row == "startup":
            out += [("startup", "pbtools --help"), ("startup", "pbtools --version")]
        elif row in ("parse", "evaluate", "rest"):
            out += [(row, s) for s in shapes]
        elif row == "pairwise":
            out.append(("pairwise", "synth129"))
        elif row == "memory129":
            out.append(("memory129", "synth129"))
        elif row == "linear":
            out += [("linear", "oneline 2,000"), ("linear", "wide 1,000 × 50 × 100")]
    return out


def measure_all(cells, repeat: int) -> dict:
    state = Stateful()
    fns = {
        "startup": measure_startup,
        "parse": measure_parse,
        "evaluate": measure_evaluate,
        "pairwise": state.pairwise,
        "rest": state.rest,
    }
    got: dict = {c: [] for c in cells}
    for r in range(repeat):  # interleaved rounds: every timed cell once per round
        for cell in cells:
            if cell[0] in fns:
                got[cell].append(fns[cell[0]](cell[1]))
                print(f"round {r + 1}: {cell[0]} {cell[1]} done", file=sys.stderr, flush=True)
    for cell in cells:  # memory: once
        if cell[0] in ("memory129", "linear"):
            got[cell].append(measure_memory(cell[1]))
            print(f"{cell[0]} {cell[1]} done", file=sys.stderr, flush=True)
    return got


def _med(rounds: list, key: str):
    vals = [r[key] for r in rounds if key in r]
    return statistics.median(vals) if vals else None


def render(got: dict, repeat: int, load: str, commit: str) -> str:
    lines = [
        f"At {commit}, load average {load} (2 cores), medians of {repeat} interleaved rounds "
        "(memory: one run). Regenerate: `PYTHONPATH=. python benchmarks/table30.py --repeat 5 "
        "--write benchmarks/README.md` (rows: `--rows`, shapes: `--shapes`).",
        "",
        "| target | case | before (issue 30) | now | baseline, same run | ratio (wall; cpu) "
        "| holds |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for (row, case), rounds in got.items():
        if not rounds:
            continue
        now, base = _med(rounds, "now"), _med(rounds, "base")
        now_c, base_c = _med(rounds, "now_cpu"), _med(rounds, "base_cpu")
        ratio = now / base
        cpu = f"; {now_c / base_c:.2f}× cpu" if now_c is not None and base_c else ""
        note = rounds[-1].get("note", "")
        if row == "startup":
            now_s, base_s, rat = f"{now:.3f} s", f"`python -c pass` {base:.3f} s", "—"
            holds = now <= 0.25
        elif row in ("memory129", "linear"):
            now_s, base_s = f"peak {now:,.0f} MiB", f"runs, Arrow (floor) {base:,.1f} MiB"
            rat = f"{ratio:.2f}×"
            if row == "linear":
                runs = rounds[-1]["runs"]
                c = (now - 2 * base - LINEAR_B) / runs * 1024
                rat += f"; 2× runs + {LINEAR_B:.0f} MiB + {max(c, 0):,.0f} KiB per run"
                holds = now <= 2 * base + LINEAR_B + LINEAR_C * runs
            else:
                holds = ratio <= 4
        else:
            unit = {"evaluate": "pytrec_eval", "parse": "floor", "pairwise": "reference"}
            unit["rest"] = "floor"
            now_s, base_s = f"{now:.2f} s", f"{unit[row]} {base:.2f} s"
            rat = f"{ratio:.2f}×{cpu}"
            limit = {"evaluate": 0.3 if case == "msmarco" else 0.5, "parse": 1.5}
            limit.update({"pairwise": 1.0, "rest": 3.0})
            holds = ratio <= limit[row]
            if row == "rest":  # the criterion is CPU (analyze_speed's docstring)
                holds = now_c / base_c <= limit[row]
                rat = f"{ratio:.2f}× wall; **{now_c / base_c:.2f}× cpu** (criterion)"
            if row == "evaluate":
                now_s += f" ({rounds[-1]['now_rss']:,.0f} MiB)"
                base_s += f" ({rounds[-1]['base_rss']:,.0f} MiB)"
        if note:
            now_s += f"; {note}"
        mark = "—" if holds is None else ("yes" if holds else "**no**")
        before = BEFORE.get((row, case), "—")
        lines.append(f"| {TARGET[row]} | {case} | {before} | {now_s} | {base_s} | {rat} | {mark} |")
    return "\n".join(lines) + "\n"


def write_into(path: Path, table: str) -> None:
    from pbtools.io import atomic

    text = path.read_text()
    start, end = "<!-- table30 -->", "<!-- /table30 -->"
    if start not in text or end not in text:
        raise SystemExit(f"{path}: no {start} … {end} markers to write between")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    atomic.write_text(path, f"{head}{start}\n{table}{end}{tail}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--rows", default=",".join(ROWS), help=f"any of {', '.join(ROWS)}")
    ap.add_argument("--shapes", default=",".join(DEFAULT_SHAPES), help="per-shape rows' shapes")
    ap.add_argument("--write", type=Path, help="put the table between the markers of this file")
    args = ap.parse_args(argv)
    rows = [r for r in args.rows.split(",") if r]
    bad = sorted(set(rows) - set(ROWS))
    if bad:
        ap.error(f"unknown rows {bad}: choose from {', '.join(ROWS)}")
    from shapes import SHAPES

    shapes = [s for s in args.shapes.split(",") if s]
    if set(shapes) - set(SHAPES):
        ap.error(f"unknown shapes: choose from {', '.join(SHAPES)}")
    with open("/proc/loadavg") as fh:
        load0 = fh.read().split()[0]
    got = measure_all(plan(rows, shapes), args.repeat)
    with open("/proc/loadavg") as fh:
        load1 = fh.read().split()[0]
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    table = render(got, args.repeat, f"{load0}–{load1}", commit or "?")
    print(table)
    if args.write:
        write_into(args.write, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
