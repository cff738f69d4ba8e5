"""Start-up of the command line (issue 30): ``pbtools --help`` and ``pbtools --version``, whole
process, against ``python -c "import pandas"`` and against another checkout, interleaved.

``python benchmarks/startup.py [--repeat N] [--before DIR]`` runs, in turn and ``--repeat``
times each (default 9, after one warm-up round), fresh processes of::

    python -m pbtools --help          python -m pbtools --version
    python -c "import pbtools"        python -c "import pandas"     python -c "pass"

with this checkout first on ``PYTHONPATH``, and the three pbtools commands again with
``--before DIR`` first (e.g. ``/work/main``: the baseline, measured in the same run), and prints
the median and best wall time of each, and which of numpy, pandas, pyarrow and scipy each
pbtools command imports (``python -X importtime``). Target: ``--help`` and ``--version`` ≤
0.25 s, without pandas. The load average is printed: on a busy machine compare the medians
within one run, not across runs.

Bytecode is cached as in any installation (a wheel's modules are compiled once): the children
write and read it under a temporary ``PYTHONPYCACHEPREFIX`` (nothing is written into the
checkouts), with ``PYTHONDONTWRITEBYTECODE`` removed from their environment; the warm-up round
compiles. Where that variable is set, every start would otherwise compile pbtools' sources
again.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "pandas", "pyarrow", "scipy")

COMMANDS = {
    "pbtools --help": ["-m", "pbtools", "--help"],
    "pbtools --version": ["-m", "pbtools", "--version"],
    "import pbtools": ["-c", "import pbtools"],
}
BASELINES = {
    'python -c "import pandas"': ["-c", "import pandas"],
    'python -c "pass"': ["-c", "pass"],
}


#: where the children cache bytecode (one directory per checkout: :func:`env_for`)
CACHE = Path(tempfile.mkdtemp(prefix="pbtools-startup-"))


def env_for(checkout: Path) -> dict:
    """The environment of a child that imports ``checkout``'s pbtools (its directory first on
    ``PYTHONPATH``; the children run in that directory, where ``-m`` looks first), bytecode
    cached under :data:`CACHE`."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "PWD": str(checkout)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(CACHE / str(abs(hash(str(checkout.resolve())))))
    return env


def run_once(args: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, *args], env=env, cwd=env["PWD"], stdout=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - t0


def heavy_imports(args: list[str], env: dict) -> list[str]:
    """The top-level heavy packages a command imports (``-X importtime``)."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        env=env,
        cwd=env["PWD"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    ).stderr
    names = {line.rsplit("|", 1)[-1].strip() for line in out.splitlines() if "|" in line}
    return [h for h in HEAVY if h in names]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=9, help="timed rounds (default 9)")
    ap.add_argument("--before", type=Path, help="another checkout, measured in the same rounds")
    args = ap.parse_args(argv)
    jobs: dict[str, tuple[list[str], dict]] = {}
    for label, cmd in COMMANDS.items():
        jobs[label] = (cmd, env_for(ROOT))
        if args.before is not None:
            jobs[f"{label} (before)"] = (cmd, env_for(args.before))
    for label, cmd in BASELINES.items():
        jobs[label] = (cmd, env_for(ROOT))
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    times: dict[str, list[float]] = {k: [] for k in jobs}
    for r in range(args.repeat + 1):
        for label, (cmd, env) in jobs.items():
            t = run_once(cmd, env)
            if r:
                times[label].append(t)
    print(f"whole process, wall, {args.repeat} interleaved rounds:")
    for label, (cmd, env) in jobs.items():
        v = times[label]
        line = f"  {label:<30} median {statistics.median(v):6.3f} s  best {min(v):6.3f} s"
        if label.startswith(("pbtools", "import")):
            heavy = heavy_imports(cmd, env)
            line += f"   imports {', '.join(heavy) or 'none of ' + '/'.join(HEAVY)}"
        print(line)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(CACHE, ignore_errors=True)
