"""The ``pbtools`` command line: one module per sub-command, registered in :data:`COMMANDS`.

Sub-commands (``pbtools COMMAND --help`` for each):

* ``evaluate QRELS RUN_OR_DIR... -m P@10 -m AP`` — trec_eval-exact measures;
* ``compare QRELS RUN_OR_DIR... [--baseline NAME]`` — paired tests, a table with significance
  marks (Markdown or LaTeX);
* ``pool TRACK_DIR`` — collection properties, inferred pool, reduced qrels, unique contributions;
* ``correct QRELS RUNS_DIR NEW_RUN -m P@10`` — every estimator's score for a new run;
* ``analyze [TRACK_DIR]`` — the whole bias analysis of a collection (default: the bundled sample);
* ``report [TRACK_DIR] [-o report.html]`` — that analysis as one self-contained HTML page.

A new command is one module with ``register(sub)`` (its sub-parser, ``set_defaults(func=run)``)
and ``run(args) -> int``, plus one line in :data:`COMMANDS`.

Bad input exits with status 2 and a ``file:line: problem`` message, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from pbtools.cli import analyze, compare, correct, evaluate, pool, report
from pbtools.frames import TrecFormatError, TrecFormatWarning

#: the sub-command modules, in the order ``pbtools --help`` lists them
COMMANDS = (evaluate, compare, pool, correct, analyze, report)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pbtools`` command (one sub-parser per command)."""
    parser = argparse.ArgumentParser(
        prog="pbtools", description="Pool-bias tools for IR test collections."
    )
    parser.add_argument(
        "--version", action="version", version=f"pbtools {__import__('pbtools').__version__}"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pbtools`` console script."""
    import pbtools.accessor  # noqa: F401  (registers .pb)

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default", TrecFormatWarning)
            warnings.showwarning = _show_warning
            return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `pbtools ... | head`
        sys.stderr.close()
        return 0
    except TrecFormatError as err:
        print(f"pbtools: error: {err}", file=sys.stderr)
        if not getattr(args, "lenient", True):
            print(
                "pbtools: hint: --lenient repairs dirty TREC files and reports each repair",
                file=sys.stderr,
            )
        return 2
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as err:
        print(f"pbtools: error: {err}", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"pbtools: error: {err}", file=sys.stderr)
        return 2


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as one ``pbtools: warning: ...`` line (no source line of pbtools' own code)."""
    from pbtools.progress import write

    write(f"pbtools: warning: {message}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
