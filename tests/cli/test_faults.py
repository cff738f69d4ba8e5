"""Fault injection: real ``python -m pbtools analyze -o`` / ``report -o`` / ``evaluate -o``
processes interrupted (SIGINT, SIGTERM, SIGKILL) at fixed points, on a full file system
(``RLIMIT_FSIZE``), in a read-only directory, and two at once into one directory.

Every test asserts the guarantee of ``docs/outputs.md``: afterwards the output is the previous
result intact or the new one complete — never a mix, never a cut file — and the exit status is
non-zero whenever the new output is not there. The points are hit deterministically through
``PBTOOLS_FAULT_DELAY`` (:func:`pbtools.io.atomic.fault_point`): the process announces the
point on standard error and waits there until the test has sent its signal (or, with
``@PATH``, until the test creates ``PATH``). The analyses run on the bundled sample, one
configuration and one measure, so each process takes a few seconds.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pbtools import io
from pbtools.experiments.analysis import SAMPLE

REPO = Path(__file__).resolve().parents[2]
#: the analysis options of every run here: one configuration, one measure, one thread
QUICK = ["--no-progress", "--leave-out", "org", "--run-sets", "all", "--jobs", "1"]
OLD, NEW = "P@10", "P@5"  # the measure of the previous result set and of the new one
TIMEOUT = 300  # seconds: a guard against a hung process, never a timing assertion


def _env(fault: str | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PBTOOLS_FAULT_DELAY", None)
    if fault:
        env["PBTOOLS_FAULT_DELAY"] = fault
    return env


def start(args, *, cwd, fault=None, preexec_fn=None) -> subprocess.Popen:
    """A ``python -m pbtools ARGS`` process, standard error read line by line into a queue."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pbtools", *map(str, args)],
        cwd=cwd,
        env=_env(fault),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec_fn,
    )
    proc.lines = queue.Queue()
    proc.err = []

    def pump():
        for line in proc.stderr:
            proc.err.append(line)
            proc.lines.put(line)
        proc.lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return proc


def wait_for(proc, text: str) -> str:
    """Block until ``proc`` writes a line containing ``text`` on standard error."""
    while True:
        line = proc.lines.get(timeout=TIMEOUT)
        if line is None:
            raise AssertionError(f"process ended before {text!r}:\n{''.join(proc.err)}")
        if text in line:
            return line


def finish(proc) -> int:
    code = proc.wait(timeout=TIMEOUT)
    proc.stderr_text = "".join(proc.err)
    return code


def run(args, *, cwd, fault=None, preexec_fn=None):
    proc = start(args, cwd=cwd, fault=fault, preexec_fn=preexec_fn)
    code = finish(proc)
    return code, proc.stderr_text


def analyze_args(out, measure=NEW):
    return ["analyze", *QUICK, "-m", measure, "-o", out]


@pytest.fixture(scope="module")
def previous(tmp_path_factory):
    """A complete result set of the ``OLD`` measure, copied into each test's directory."""
    d = tmp_path_factory.mktemp("previous")
    code, err = run(analyze_args(d / "out", OLD), cwd=d)
    assert code == 0, err
    return d / "out"


def measures_of(res) -> set:
    return set(res["errors"]["measure"].astype(str))


def state(out: Path) -> str:
    """``"old"`` or ``"new"``: ``out`` read back whole (:func:`pbtools.io.read_results`, every
    file checked against the manifest), every table of the same run; a mix fails here."""
    res = io.read_results(out)
    found = {name: measures_of_table(df) for name, df in res.items() if name != "properties"}
    kinds = set(found.values())
    assert len(kinds) == 1, f"a mix of two runs in {out}: {found}"
    kind = kinds.pop()
    assert res.manifest["parameters"]["parameters"]["measure"] == [kind]
    return {OLD: "old", NEW: "new"}[kind]


def measures_of_table(df) -> str:
    values = set(df["measure"].astype(str))
    assert len(values) == 1, values
    return values.pop()


def leftovers(parent: Path) -> list[str]:
    """pbtools' temporary files and directories, and lock files, left in ``parent``."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(".") or p.suffix == ".lock")


def copy_previous(previous: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(previous, out)
    assert state(out) == "old"
    return out


SIGNALS = {"INT": signal.SIGINT, "TERM": signal.SIGTERM, "KILL": signal.SIGKILL}
EXPECTED = {"INT": 130, "TERM": 143, "KILL": -signal.SIGKILL}


# --------------------------------------------------------------------------------------------
# interrupted runs
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS)
@pytest.mark.parametrize("point", ["analysis", "file", "swap"])
def test_analyze_interrupted_keeps_the_previous_set(previous, tmp_path, point, sig):
    """Killed while analysing (its lock taken), while writing a table of the new set, or with
    the new set complete just before the swap: ``DIR`` is the previous set, whole."""
    out = copy_previous(previous, tmp_path)
    gate = tmp_path / "never"  # never created: the process waits at the point until killed
    fault = None if point == "analysis" else f"{point}=@{gate}"
    proc = start(analyze_args(out), cwd=tmp_path, fault=fault)
    if point == "analysis":
        while not (tmp_path / "out.lock").exists() and proc.poll() is None:
            threading.Event().wait(0.01)
    else:
        wait_for(proc, f"fault point {point}")
    proc.send_signal(SIGNALS[sig])
    code = finish(proc)
    assert code == EXPECTED[sig], proc.stderr_text
    assert state(out) == "old"
    if sig != "KILL":  # cleaned up on the way out
        assert leftovers(tmp_path) == []
        return
    # SIGKILL leaves its temporaries and DIR.lock, never a cut DIR; a later run is not blocked
    # by them (the kernel released the lock with the process)
    assert "out.lock" in leftovers(tmp_path)
    code, err = run(analyze_args(out), cwd=tmp_path)
    assert code == 0, err
    assert state(out) == "new"


@pytest.mark.slow
def test_analyze_completes_after_its_swap_point(previous, tmp_path):
    """Let through the swap point, the run replaces the set (the positive control)."""
    out = copy_previous(previous, tmp_path)
    gate = tmp_path / "go"
    proc = start(analyze_args(out), cwd=tmp_path, fault=f"swap=@{gate}")
    wait_for(proc, "fault point swap")
    assert state(out) == "old"  # the new set is complete beside it, not yet in
    gate.touch()
    assert finish(proc) == 0, proc.stderr_text
    assert state(out) == "new"
    assert leftovers(tmp_path) == []


@pytest.fixture(scope="module")
def previous_report(tmp_path_factory):
    pytest.importorskip("matplotlib")
    d = tmp_path_factory.mktemp("report")
    code, err = run(["report", *QUICK, "-m", OLD, "-o", d / "r.html"], cwd=d)
    assert code == 0, err
    return (d / "r.html").read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS)
def test_report_killed_at_its_write_keeps_the_previous_report(previous_report, tmp_path, sig):
    """``report -o r.html`` killed with the new page written but not renamed: the previous
    report is there, byte for byte (it was truncated to 0 bytes before)."""
    target = tmp_path / "r.html"
    target.write_bytes(previous_report)
    proc = start(
        ["report", *QUICK, "-m", NEW, "-o", target],
        cwd=tmp_path,
        fault=f"file=@{tmp_path / 'never'}",
    )
    wait_for(proc, "fault point file")
    proc.send_signal(SIGNALS[sig])
    assert finish(proc) == EXPECTED[sig], proc.stderr_text
    assert target.read_bytes() == previous_report
    if sig != "KILL":
        assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


# --------------------------------------------------------------------------------------------
# a full file system, a read-only directory
# --------------------------------------------------------------------------------------------


def _fsize(limit: int):
    def preexec():
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


@pytest.mark.slow
def test_analyze_on_a_full_file_system(previous, tmp_path):
    """Files may grow to 20 KB only (``RLIMIT_FSIZE``; scores.parquet is larger): the run
    fails with status 2 naming the file, and the previous set is intact."""
    out = copy_previous(previous, tmp_path)
    code, err = run(analyze_args(out), cwd=tmp_path, preexec_fn=_fsize(20_000))
    assert code == 2, err
    assert "File too large" in err and "Traceback" not in err
    assert state(out) == "old"
    assert leftovers(tmp_path) == []


@pytest.mark.slow
def test_report_on_a_full_file_system(previous_report, tmp_path):
    target = tmp_path / "r.html"
    target.write_bytes(previous_report)
    code, err = run(
        ["report", *QUICK, "-m", NEW, "-o", target], cwd=tmp_path, preexec_fn=_fsize(50_000)
    )
    assert code == 2, err
    assert target.read_bytes() == previous_report
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_evaluate_tsv_on_a_full_file_system(tmp_path):
    """``evaluate -o out.tsv`` whose file cannot grow: status 2, the old file kept."""
    target = tmp_path / "out.tsv"
    target.write_text("previous\n")
    qrels = SAMPLE / "QRels" / "qrels"
    runs = SAMPLE / "Runs"
    code, err = run(
        ["evaluate", qrels, runs, "-q", "-o", target], cwd=tmp_path, preexec_fn=_fsize(4096)
    )
    assert code == 2, err
    assert target.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tsv"]


@pytest.fixture
def read_only(tmp_path):
    """A directory nobody may write into: ``chattr +i`` (immutable, binds root too) where the
    file system allows it, else mode 0555 for a non-root user; skipped otherwise."""
    d = tmp_path / "ro"
    d.mkdir()
    (d / "r.html").write_text("previous\n")
    chattr = shutil.which("chattr")
    if chattr and subprocess.run([chattr, "+i", d], capture_output=True).returncode == 0:
        yield d
        subprocess.run([chattr, "-i", d], check=True)
        return
    if os.geteuid() == 0:
        pytest.skip("root ignores permission bits and chattr +i is unavailable here")
    d.chmod(0o555)
    yield d
    d.chmod(0o755)


@pytest.mark.slow
def test_outputs_into_a_read_only_directory_are_refused(read_only, tmp_path):
    """Refused before any work (status 2), nothing changed."""
    code, err = run(["report", *QUICK, "-o", read_only / "r.html"], cwd=tmp_path)
    assert code == 2 and "not writable" in err, err
    code, err = run(analyze_args(read_only / "out"), cwd=tmp_path)
    assert code == 2 and "not writable" in err, err
    assert sorted(p.name for p in read_only.iterdir()) == ["r.html"]
    assert (read_only / "r.html").read_text() == "previous\n"


# --------------------------------------------------------------------------------------------
# two runs into one directory
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_second_run_into_a_held_directory_is_refused(previous, tmp_path):
    """Run A holds ``DIR`` (paused before its swap); run B into ``DIR`` is refused at once
    with status 2 naming A's pid; A then completes, and ``DIR`` is A's set."""
    out = copy_previous(previous, tmp_path)
    gate = tmp_path / "go"
    a = start(analyze_args(out), cwd=tmp_path, fault=f"swap=@{gate}")
    wait_for(a, "fault point swap")
    code, err = run(analyze_args(out, OLD), cwd=tmp_path)
    assert code == 2, err
    assert f"another pbtools run (pid {a.pid})" in err
    assert state(out) == "old"
    gate.touch()
    assert finish(a) == 0, a.stderr_text
    assert state(out) == "new"


@pytest.mark.slow
def test_two_concurrent_runs_leave_one_complete_set(previous, tmp_path):
    """Two runs started together: each finishes (0) or is refused (2), at least one
    finishes, and ``DIR`` is one whole set."""
    out = copy_previous(previous, tmp_path)
    procs = [start(analyze_args(out), cwd=tmp_path), start(analyze_args(out), cwd=tmp_path)]
    codes = sorted(finish(p) for p in procs)
    assert codes in ([0, 0], [0, 2]), [p.stderr_text for p in procs]
    assert state(out) == "new"
    assert leftovers(tmp_path) == []


# --------------------------------------------------------------------------------------------
# targets that are not regular files
# --------------------------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_target_is_refused_before_any_work(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, err = run(["report", *QUICK, "-o", fifo], cwd=tmp_path)
    assert code == 2 and "a FIFO (named pipe), not a regular file" in err, err
    assert fifo.is_fifo()
