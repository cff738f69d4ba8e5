"""The ``pbtools`` command line: one module per sub-command, registered in :data:`COMMANDS`.

Sub-commands (``pbtools COMMAND --help`` for each):

* ``evaluate QRELS RUN_OR_DIR... -m P@10 -m AP`` — trec_eval-exact measures;
* ``compare QRELS RUN_OR_DIR... [--baseline NAME]`` — paired tests, a table with significance
  marks (Markdown or LaTeX);
* ``pool TRACK_DIR`` — collection properties, inferred pool, reduced qrels, unique contributions;
* ``correct QRELS RUNS_DIR NEW_RUN -m P@10`` — every estimator's score for a new run;
* ``analyze [TRACK_DIR]`` — the whole bias analysis of a collection (default: the bundled sample);
* ``report [TRACK_DIR] [-o report.html]`` — that analysis as one self-contained HTML page;
* ``reproduce PAPER TRACK_OR_ROOT... [-o DIR]`` — a paper of :mod:`pbtools.papers` on your
  collections: tables, figures, claims and provenance.

A new command is one module with ``register(sub)`` (its sub-parser, ``set_defaults(func=run,
validate=validate)``), ``validate(args)`` (every argument and output path checked before any
work, messages naming the flag) and ``run(args) -> int``, plus one line in :data:`COMMANDS`.

Exit status: 0 done; 2 refused input or arguments (a ``file:line: problem`` message, or one
naming the flag), never a traceback; 1 only for a bug in pbtools (a one-line message;
``--debug`` shows the traceback). After a refusal that ``--lenient`` would repair, a hint says
so; ``docs/input.md`` lists what each kind of problem gets.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
import warnings

from pbtools.cli import analyze, compare, correct, evaluate, pool, report, reproduce
from pbtools.cli.streams import StandardOutput, StandardOutputError, quiet_broken_pipe
from pbtools.errors import InputError

# numpy, pandas and pyarrow are imported once a command runs (main, after the arguments are
# parsed), never at import: `pbtools --help` and `--version` start without them
# (benchmarks/startup.py)

#: the sub-command modules, in the order ``pbtools --help`` lists them
COMMANDS = (evaluate, compare, pool, correct, analyze, report, reproduce)

#: Python parameter names in library messages, and the flags that say the same on the CLI
CLI_WORDS = (
    ("run_id='file'", "--run-id file"),
    ("run_id='tag'", "--run-id tag"),
    ("lenient=True", "--lenient"),
    ("topics='all'", "--all-topics (-c)"),
    ("float32=True", "--float32"),
    ("no desc.xml given", "no desc.xml given (--desc)"),
    ("input_limits(gunzip_ratio=N) or PBTOOLS_GUNZIP_RATIO=N", "--gunzip-ratio N"),
    ("input_limits(xml_limit=BYTES) or PBTOOLS_XML_LIMIT=BYTES", "--xml-limit BYTES"),
)


def build_parser(commands=COMMANDS) -> argparse.ArgumentParser:
    """The argument parser of the ``pbtools`` command (one sub-parser per module of
    ``commands``, default every command)."""
    parser = argparse.ArgumentParser(
        prog="pbtools", description="Pool-bias tools for IR test collections."
    )
    parser.add_argument(
        "--version", action="version", version=f"pbtools {__import__('pbtools').__version__}"
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in commands:
        command.register(sub)
    for sp in sub.choices.values():
        sp.add_argument(
            "--debug",
            action="store_true",
            default=argparse.SUPPRESS,
            help="show tracebacks of errors",
        )
    return parser


def commands_of(argv: list[str]) -> tuple:
    """The command modules the parser needs for ``argv``: only the one named (registering a
    command may import what only that command uses, e.g. the pool policies for ``pool``, so
    ``pbtools evaluate`` starts without them), or all of them when no known command is named
    (``pbtools --help``, a typo: argparse lists every choice).

    Examples
    --------
    >>> [c.__name__ for c in commands_of(["--debug", "evaluate", "q", "r"])]
    ['pbtools.cli.evaluate']
    >>> len(commands_of(["--help"])) == len(COMMANDS)
    True
    """
    word = next((a for a in argv if not a.startswith("-")), None)
    named = [c for c in COMMANDS if c.__name__.rsplit(".", 1)[-1] == word]
    return tuple(named) or COMMANDS


def cli_words(text: str) -> str:
    """``text`` with Python parameter names replaced by the command-line flags (:data:`CLI_WORDS`).

    Examples
    --------
    >>> cli_words("use run_id='file' or lenient=True to merge")
    'use --run-id file or --lenient to merge'
    """
    for py, flag in CLI_WORDS:
        text = text.replace(py, flag)
    return text


def entry() -> None:
    """The ``pbtools`` console script and ``python -m pbtools``: :func:`main`, then exit.

    A command that sets ``exit_fast`` (``evaluate``) and returns ends the process without the
    interpreter's teardown — freeing every object of a run frame one by one, ~0.2 s of a
    ~3 s TREC-2 ``evaluate`` (``benchmarks/evaluate_speed.py``): the standard streams are
    flushed and the ``atexit`` handlers run first, so nothing written is lost. Any other
    command, an error and an interrupt exit normally. A failure to write standard output is
    an error (status 2, ``cannot write standard output: …``), never a silent loss; only a
    reader that stopped early (``| head``) ends it quietly (:mod:`pbtools.cli.streams`).
    ``SIGTERM`` is raised as :class:`Terminated` (exit status 143), so an output being written
    is cleaned up as after ``SIGINT``.
    """
    import atexit
    import gc

    # the process is the command's: the modules imported so far (pandas, pyarrow, pbtools) live
    # until it exits, so the cyclic collector need not scan their ~50,000 objects again
    # (``gc.freeze``; not in :func:`main`, which tests call in their own process)
    gc.freeze()
    if sys.stderr is None:  # started with standard error closed: messages are lost, not fatal
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115  (open until the process ends)
    signal.signal(signal.SIGTERM, _terminate)
    code = main()
    try:  # main flushed what the command wrote; anything left fails here, not in silence
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:  # a reader that stopped early (`| head`)
        quiet_broken_pipe(sys.stdout)
    except (OSError, ValueError) as err:  # a full or closed stream
        _say(f"pbtools: error: cannot write standard output: {getattr(err, 'strerror', 0) or err}")
        code = code or 2
    if not _STATE.get("exit_fast"):
        sys.exit(code)
    try:
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed stream: nothing more can be said
        pass
    atexit._run_exitfuncs()
    os._exit(code)


class Terminated(KeyboardInterrupt):
    """``SIGTERM`` (a scheduler's pre-emption, ``kill``), raised like an interrupt so that the
    output being written is cleaned up (:mod:`pbtools.io.atomic`); exit status 143."""


def _terminate(signum, frame):
    raise Terminated()


#: what :func:`main` tells :func:`entry` about the command it ran
_STATE: dict = {}


def main(argv: list[str] | None = None) -> int:
    """Run the ``pbtools`` command line on ``argv`` (default ``sys.argv[1:]``); returns the exit
    status (the console script is :func:`entry`)."""
    _STATE.clear()

    parser = build_parser(commands_of(sys.argv[1:] if argv is None else argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2), already printed
        return e.code if isinstance(e.code, int) else 2
    from pbtools.errors import TrecFormatWarning

    if not getattr(args, "pandas_free", False):
        # a command that makes no frame (`pbtools evaluate`, issue 30) imports no pandas: it
        # registers DataFrame.pb itself where it falls back on frames
        from pbtools import register_accessor

        register_accessor()  # pandas, imported with the collector paused (pbtools.paused_gc)
    from pbtools.io.limits import gunzip_limit, input_limits, xml_limit
    from pbtools.measures.topics import CoverageWarning

    use_system_allocator()
    stdout = StandardOutput(sys.stdout)
    sys.stdout = stdout
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default", TrecFormatWarning)
            warnings.simplefilter("default", CoverageWarning)  # topics leaving an average
            warnings.showwarning = _show_warning
            validate = getattr(args, "validate", None)
            if validate is not None:
                validate(args)
            limits = {k: getattr(args, k, None) for k in ("gunzip_ratio", "xml_limit")}
            with input_limits(**limits):  # --gunzip-ratio, --xml-limit
                gunzip_limit(0), xml_limit()  # PBTOOLS_GUNZIP_RATIO, PBTOOLS_XML_LIMIT checked
                code = int(args.func(args) or 0)
                stdout.flush()  # a full disk fails here, not silently at exit
            _STATE["exit_fast"] = bool(getattr(args, "exit_fast", False))
            return code
    except BrokenPipeError as err:
        if not stdout.reader_gone:  # not standard output's reader: a file that failed
            return _refused(args, err)
        quiet_broken_pipe(stdout.stream)  # e.g. `pbtools ... | head`
        return 0
    except KeyboardInterrupt as err:  # SIGINT, or SIGTERM (Terminated) under entry()
        _debug(args)
        term = isinstance(err, Terminated)
        _say(f"pbtools: {'terminated' if term else 'interrupted'}")
        return 143 if term else 130
    except (InputError, OSError) as err:
        return _refused(args, err)
    except MemoryError:
        _debug(args)
        _say("pbtools: error: out of memory")
        return 1
    except Exception as err:  # a bug: one line, the traceback with --debug
        _debug(args)
        debug = getattr(args, "debug", False)
        _say(
            f"pbtools: internal error (a bug in pbtools): {type(err).__name__}: {err}"
            + (
                " — please report it with the command and this traceback"
                if debug
                else " — rerun with --debug and report the traceback"
            )
        )
        return 1
    finally:
        sys.stdout = stdout.stream


def _refused(args, err: BaseException) -> int:
    """Report a refusal (an :class:`~pbtools.errors.InputError`, a file the system cannot read
    or write): one line, the ``--lenient`` hint when it would repair the problem; status 2."""
    from pbtools.io.repairs import RepairableError

    _debug(args)
    _say(f"pbtools: error: {cli_words(_message(err))}")
    if isinstance(err, RepairableError) and not getattr(args, "lenient", True):
        _say(
            "pbtools: hint: --lenient repairs this kind of problem and reports each repair "
            "(docs/input.md)"
        )
    return 2


def use_system_allocator() -> None:
    """Arrow's buffers from the C library's allocator in a command's process (unless
    ``ARROW_DEFAULT_MEMORY_POOL`` chooses one).

    A command reads its files once and keeps a fraction of what parsing them allocated; the
    readers then hand the freed pages back (``release_unused``: ``malloc_trim`` for the system
    allocator), which mimalloc, Arrow's default, mostly keeps. TREC-2 ``evaluate``: peak RSS
    371 → 276 MiB at the same CPU time (``benchmarks/evaluate_speed.py``).
    """
    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        import pyarrow as pa

        pa.set_memory_pool(pa.system_memory_pool())


def _message(err: BaseException) -> str:
    """An exception as one line: ``OSError``s with their file name, the rest as they are."""
    if isinstance(err, StandardOutputError):
        return str(err)
    from pbtools.errors import TrecFormatError

    if isinstance(err, OSError) and not isinstance(err, TrecFormatError):
        if err.filename is not None:
            return f"{err.filename}: {err.strerror or err}"
        return str(err.strerror or err) if err.strerror else str(err)
    return str(err)


def _debug(args) -> None:
    if getattr(args, "debug", False):
        try:
            traceback.print_exc()
        except (OSError, ValueError):  # standard error closed: nothing can be said
            pass


def _say(text: str) -> None:
    """``text`` as a line on standard error; nothing when standard error cannot be written."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a closed stream
        pass


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as one ``pbtools: warning: ...`` line (no source line of pbtools' own code)."""
    from pbtools.progress import write

    write(f"pbtools: warning: {cli_words(str(message))}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
