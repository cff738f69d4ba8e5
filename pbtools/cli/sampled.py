"""``pbtools evaluate`` on a sampled pool's qrels: the estimators, as NIST's ``sample_eval.pl``.

A qrels file whose first line has five fields (``qid iter docno stratum label``, the format
``sample_eval.pl`` reads and ``pbtools pool --strategy uniform|stratified`` writes) is a sampled
pool's: label −1 marks a document of the universe that was not sampled. ``pbtools evaluate``
then scores the estimators of :mod:`pbtools.measures.sampled` (``xinfAP``, ``infNDCG``,
``statAP``, ``infP@n``, ``infIPrec@x``, ``infNumRelRet``, ``infNumRel``, trec_eval's ``infAP``,
``NumRet``), by default ``infP@10``, ``xinfAP``, ``infNDCG`` and ``statAP``. With ``--trec`` and
no ``-m`` it prints what ``sample_eval.pl -q`` prints, under the script's names and in its order
(its ``infAP`` is pbtools' ``xinfAP``; its ``inum_rel`` average sums R̂ over every qrels
topic, answered or not), in trec_eval's layout. A plain measure (AP, P@10, …)
would count the unsampled documents as unjudged — mostly as non-relevant — so it is refused
unless ``--plain`` asks for it. ``-q``, ``-c``, ``-n``, ``-M``, ``-l`` act as for any qrels;
``-J`` (condensed lists) has no meaning for an estimator and is refused.
"""

from __future__ import annotations

import argparse

from pbtools.cli.common import UsageError
from pbtools.cli.trec import trec_lines_of, truncate

__all__ = ["DEFAULT_SAMPLED", "SAMPLE_EVAL", "is_sampled_qrels", "score", "sampled_lines"]

#: ``pbtools evaluate`` on a sampled qrels without ``-m``
DEFAULT_SAMPLED = ("infP@10", "xinfAP", "infNDCG", "statAP")
_LEVELS = ("0.00", "0.10", "0.20", "0.30", "0.40", "0.50", "0.60", "0.70", "0.80", "0.90", "1.00")
#: what ``sample_eval.pl -q`` prints, in its order: (its name, pbtools' measure, line kind);
#: its interpolated precisions are averages only ("summary")
SAMPLE_EVAL = (
    ("infAP", "xinfAP", "float"),
    ("infNDCG", "infNDCG", "float"),
    *((f"iprec@rec{x}", f"infIPrec@{float(x):g}", "summary") for x in _LEVELS),
    ("iP10", "infP@10", "float"),
    ("iP50", "infP@50", "float"),
    ("iP1000", "infP@1000", "float"),
    ("inum_rel_ret", "infNumRelRet", "float"),
    ("inum_rel", "infNumRel", "float"),
    ("num_ret", "NumRet", "long"),
)


def is_sampled_qrels(path) -> bool:
    """Whether ``path`` holds five-column qrels (:func:`pbtools.io.mistakes.is_sampled_qrels`)."""
    from pbtools.io.mistakes import is_sampled_qrels as sniff

    return sniff(path)


def sampled_lines(args: argparse.Namespace) -> tuple[list, bool]:
    """The printed lines (:class:`~pbtools.measures.trec.TrecLine`) for a sampled qrels and
    whether they are a fixed set (``sample_eval.pl``'s: no ``runid``/``num_q`` lines)."""
    from pbtools.measures import parse
    from pbtools.measures.sampled import SAMPLED, plain_measures
    from pbtools.measures.trec import TrecLine, apply_flags

    if args.judged_only:
        raise UsageError(
            "-J (judged documents only) has no meaning on a sampled qrels: the estimators read "
            "the whole universe, sampled or not"
        )
    if not args.measure and args.trec:
        lines = [
            TrecLine(name, apply_flags(parse(m), rel_level=args.level_for_rel), kind)
            for name, m, kind in SAMPLE_EVAL
        ]
        return lines, True
    ns = argparse.Namespace(**{**vars(args), "measure": args.measure or list(DEFAULT_SAMPLED)})
    lines, strict = trec_lines_of(ns, DEFAULT_SAMPLED)
    asked = [t.measure for t in lines if t.measure is not None]
    plain = plain_measures(asked)
    if plain and not args.plain:
        names = ", ".join(str(m) for m in plain)
        raise UsageError(
            f"-m: {args.qrels} is a sampled pool's qrels (five columns; label -1: not sampled): "
            f"{names} would count the unsampled documents as unjudged, mostly as non-relevant. "
            "Use the estimators (xinfAP, infNDCG, statAP, infP@n, infIPrec@x, infNumRel, infAP), "
            "or add --plain to score plain measures anyway"
        )
    # the estimated counts are not integers: printed as sample_eval.pl prints them, 4 decimals
    lines = [
        TrecLine(t.name, t.measure, "float")
        if t.measure is not None and t.measure.base in SAMPLED and t.kind == "long"
        else t
        for t in lines
    ]
    return lines, strict


def score(args: argparse.Namespace):
    """Read the sampled qrels and the runs, score the lines: ``(runs, qrels, per, avg, lines,
    strict)`` for :func:`pbtools.cli.evaluate.output`."""
    from pbtools import io
    from pbtools.io.sampled import read_sampled_qrels
    from pbtools.measures import aggregate
    from pbtools.measures.sampled import evaluate_sampled, stratum_counts

    lines, strict = sampled_lines(args)
    qrels = read_sampled_qrels(args.qrels, lenient=args.lenient)
    runs = io.read_runs(args.runs, lenient=args.lenient, float32=args.float32, run_id=args.run_id)
    runs = truncate(runs, args.max_per_topic)  # -M
    names = list(dict.fromkeys(str(t.measure) for t in lines if t.measure is not None))
    mode = "all" if args.all_topics else None
    per = evaluate_sampled(runs, qrels, names, per_topic=True, topics=mode)
    avg = aggregate(per)
    if strict and mode is None:  # sample_eval.pl's inum_rel `all`: R̂ of every qrels topic
        (r_hat,) = [t.measure for t in lines if t.name == "inum_rel"]
        every = stratum_counts(qrels, r_hat.rel).query("n > 0")
        total = float((every["r"] * (every["N"] / every["n"])).sum())
        avg.loc[avg["measure"].astype(str) == str(r_hat), "value"] = total
    return runs, qrels, per, avg, lines, strict
