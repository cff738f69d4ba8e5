"""Exit statuses mean what they say (issue 24 item 3) and standard output is an output (issue 25
item 3).

A refusal of the user's input or arguments is a :class:`pbtools.InputError` and leaves with 2;
any other exception is a bug: status 1, one line that says so, the traceback only with
``--debug``. A failure to write standard output (a full disk, a closed descriptor) is an error
(status 2, ``cannot write standard output: …``); a reader that stopped early (``| head``) is the
only quiet ending.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pbtools import InputError, TrecFormatError
from pbtools.cli import main

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def evaluate_argv(track: Path) -> list[str]:
    return ["evaluate", str(track / "QRels" / "qrels"), str(track / "Runs"), "-m", "P@5"]


# --------------------------------------------------------------------------------------------
# a bug: status 1, one line, the traceback only with --debug
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [ValueError, KeyError, RuntimeError, TypeError, IndexError])
def test_an_internal_failure_is_status_1_with_one_line(kind, tiny_collection, capsys, monkeypatch):
    from pbtools.measures import encoded

    def broken(*args, **kwargs):
        raise kind("inner trouble")

    monkeypatch.setattr(encoded, "score_encoded", broken)  # the command line's scoring
    argv = evaluate_argv(tiny_collection)
    assert main(argv) == 1
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("pbtools: internal error (a bug in pbtools): " + kind.__name__)
    assert "inner trouble" in lines[0] and "--debug" in lines[0] and "report" in lines[0]
    assert "Traceback" not in err and out == ""
    assert main(["--debug", *argv]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "in broken" in err and "report it" in err


def test_a_value_error_deep_in_reading_is_a_bug_not_a_refusal(tiny_collection, capsys, monkeypatch):
    """A plain ``ValueError`` (not an InputError) is no longer read as "your input"."""
    from pbtools.io import parse

    def broken(*args, **kwargs):
        raise ValueError("could not broadcast")

    monkeypatch.setattr(parse, "check_run_id", broken)
    assert main(evaluate_argv(tiny_collection)) == 1
    assert "internal error" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# refusals: status 2, the dedicated type
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra, says",
    [
        (["-m", "Pfoo@5"], "-m Pfoo@5: unknown measure"),
        (["-m", "RBP(p=abc)@10"], "p='abc' is not a number"),
        (["-m", "AP(rel=x)"], "rel='x' is not an integer"),
    ],
)
def test_refused_arguments_are_status_2(extra, says, tiny_collection, capsys):
    assert main([*evaluate_argv(tiny_collection), *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and "internal error" not in err and "Traceback" not in err


def test_refusals_reachable_from_the_cli_are_input_errors():
    """The API raises the same type the command line turns into status 2."""
    from pbtools import measures
    from pbtools.corrections.registry import get as get_estimator
    from pbtools.pooling.strategies import parse as parse_strategy

    for call in (
        lambda: measures.parse("nope@5"),
        lambda: parse_strategy("rbp:7"),
        lambda: parse_strategy("nope"),
        lambda: get_estimator("nope"),
    ):
        with pytest.raises(InputError):
            call()
    assert issubclass(TrecFormatError, InputError) and issubclass(InputError, ValueError)


def test_pbtools_threads_is_refused_as_input(tiny_collection, capsys, monkeypatch):
    monkeypatch.setenv("PBTOOLS_THREADS", "two")
    assert main(["analyze", str(tiny_collection), "--no-progress"]) == 2
    assert "PBTOOLS_THREADS must be an integer >= 1, got 'two'" in capsys.readouterr().err


def test_the_command_line_has_no_blanket_value_error_handler():
    """A bug must not pass for a refusal: no ``except ValueError`` (or a tuple holding it) in
    the command-line modules but around a write to a closed stream; refusals are caught by
    their type, InputError."""
    pattern = re.compile(r"except\s*\(?[^:]*\bValueError\b")
    for path in sorted((REPO / "pbtools" / "cli").glob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line) and "closed" not in line:  # a stream: not a refusal
                pytest.fail(f"{path.name}:{n}: {line.strip()}")


# --------------------------------------------------------------------------------------------
# standard output (subprocesses: the real descriptors)
# --------------------------------------------------------------------------------------------


def pbtools(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pbtools", *map(str, args)],
        env=ENV,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        **kwargs,
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this platform")
@pytest.mark.parametrize(
    "command", ["evaluate", "evaluate-trec", pytest.param("analyze", marks=pytest.mark.slow)]
)
def test_a_full_disk_on_standard_output_is_an_error(command, tiny_collection):
    argv = {
        "evaluate": evaluate_argv(tiny_collection),
        "evaluate-trec": [*evaluate_argv(tiny_collection), "--trec"],  # the fast-exit path
        "analyze": ["analyze", "--no-progress"],  # the bundled sample
    }[command]
    with open("/dev/full", "w") as full:
        proc = pbtools(*argv, stdout=full)
    assert proc.returncode == 2, proc.stderr
    assert "pbtools: error: cannot write standard output: No space left on device" in proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


@pytest.mark.parametrize("command", ["evaluate", pytest.param("analyze", marks=pytest.mark.slow)])
def test_a_closed_standard_output_is_an_error(command, tiny_collection):
    argv = (
        [*evaluate_argv(tiny_collection)] if command == "evaluate" else ["analyze", "--no-progress"]
    )
    script = (
        "import os, runpy, sys; os.close(1); sys.argv = ['pbtools', *sys.argv[1:]]; "
        "runpy.run_module('pbtools', run_name='__main__')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, *map(str, argv)],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "pbtools: error: cannot write standard output" in proc.stderr
    assert "Traceback" not in proc.stderr and "AttributeError" not in proc.stderr


def closed_at_start(*argv) -> subprocess.CompletedProcess:
    """``pbtools argv…`` started with descriptor 1 closed (``>&-``): Python has no
    ``sys.stdout`` at all."""
    return pbtools(*argv, stdout=subprocess.DEVNULL, preexec_fn=lambda: os.close(1))


def test_a_closed_standard_output_at_start_is_an_error(tiny_collection):
    proc = closed_at_start(*evaluate_argv(tiny_collection))
    assert proc.returncode == 2, proc.stderr
    assert "pbtools: error: cannot write standard output: it is closed" in proc.stderr


@pytest.mark.parametrize("command", ["evaluate", pytest.param("analyze", marks=pytest.mark.slow)])
def test_a_reader_that_stopped_early_is_quiet(command, tiny_collection):
    """The pipe's reading end is closed before pbtools writes: every write is EPIPE."""
    argv = (
        [*evaluate_argv(tiny_collection), "-q"]
        if command == "evaluate"
        else ["analyze", "--no-progress"]
    )
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = pbtools(*argv, stdout=write_end)
    finally:
        os.close(write_end)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


def test_head_reads_one_line_and_nothing_is_said(tiny_collection):
    argv = " ".join([sys.executable, "-m", "pbtools", *evaluate_argv(tiny_collection), "-q"])
    proc = subprocess.run(
        ["sh", "-c", f"{argv} | head -1"], env=ENV, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0 and proc.stdout.count("\n") == 1
    assert proc.stderr == ""


def test_a_closed_standard_output_is_no_error_when_nothing_is_written_to_it(
    tiny_collection, tmp_path
):
    out = tmp_path / "out.tsv"
    proc = closed_at_start(*evaluate_argv(tiny_collection), "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().startswith("name")
