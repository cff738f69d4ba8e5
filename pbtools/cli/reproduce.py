"""``pbtools reproduce PAPER TRACK_OR_ROOT... [-o DIR] [paper options]``: a paper of
:mod:`pbtools.papers` on your collections (:func:`pbtools.papers.reproduce.reproduce`)."""

from __future__ import annotations

import argparse
import sys
import time

from pbtools.errors import InputError

NAMES = ("lipani2015", "webber2009", "sakai2008", "buckley2006")


def register(sub) -> None:
    """Add this command's sub-parser to ``sub``."""
    rp = sub.add_parser(
        "reproduce",
        help="reproduce a paper (lipani2015, webber2009, sakai2008, buckley2006) on collections",
        description="Run a paper's experiments on one collection or a directory of them, print "
        "its tables and claims, and write the tables (Parquet), figures (PNG, SVG, PDF), "
        "claims.md/claims.parquet, how the data were read and the provenance to -o DIR as one "
        "result set. `pbtools reproduce PAPER --help` lists the paper's options.",
        epilog="papers: " + ", ".join(NAMES) + " (`pbtools reproduce --list`)",
        add_help=False,
    )
    rp.add_argument("-h", "--help", action="store_true", help="show this help (of PAPER if given)")
    rp.add_argument("--list", action="store_true", help="list the papers and exit")
    rp.add_argument("paper", nargs="?", help="the paper: " + ", ".join(NAMES))
    rp.add_argument("rest", nargs=argparse.REMAINDER, help="TRACK_OR_ROOT... and paper options")
    rp.set_defaults(func=run, validate=None, parser=rp)


def paper_parser(paper: str):
    """The parser of ``pbtools reproduce PAPER``: the paths, ``-o``, ``--jobs``,
    ``--no-progress`` and the paper's options
    (:func:`pbtools.papers.reproduce.add_paper_options`)."""
    from pbtools.papers import reproduce as rep

    module = rep.paper_module(paper)
    ap = argparse.ArgumentParser(
        prog=f"pbtools reproduce {paper}",
        description=rep.PAPERS[paper][1],
        epilog=(module.__doc__ or "").split("\n\n", 1)[-1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("paths", nargs="*", metavar="TRACK_OR_ROOT", help="tracks or directories")
    ap.add_argument("-o", "--out", help="output directory (one result set); default: none")
    ap.add_argument("--jobs", type=int, default=None, help="workers (default: every core)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    names = rep.add_paper_options(ap, module)
    return ap, names


def run(args: argparse.Namespace) -> int:
    """Parse the paper's options, run it, print its report; exit 2 for a bad paper or path."""
    from pbtools.papers import reading
    from pbtools.papers import reproduce as rep

    if args.list:
        print(rep.listing())
        return 0
    if args.paper is None:
        if args.help:
            args.parser.print_help()
            print("\n" + rep.listing())
            return 0
        raise InputError("name a paper: " + ", ".join(NAMES) + " (pbtools reproduce --list)")
    ap, names = paper_parser(args.paper)
    rest = list(args.rest) + (["--help"] if args.help else [])
    try:
        a = ap.parse_args(rest)
    except SystemExit as e:  # --help (0) or a usage error (2), already printed
        return e.code if isinstance(e.code, int) else 2
    params = rep.paper_params(a, names)
    t0 = time.perf_counter()
    res = rep.reproduce(
        args.paper,
        *a.paths,
        out=a.out,
        progress=False if a.no_progress else None,
        jobs=a.jobs,
        **params,
    )
    module = rep.paper_module(args.paper)
    for line in reading.reading_lines(res.get("reading")):
        print(line)
    print(module.report(res))
    print(
        f"\n{args.paper}: {time.perf_counter() - t0:.1f} s"
        + (f"; wrote {a.out}" if a.out else " (no -o: nothing written)"),
        file=sys.stderr,
    )
    return 0
