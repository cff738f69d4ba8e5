"""trec_eval's command line inside ``pbtools evaluate``: its flags and its output.

``-m`` takes trec_eval's measure arguments (``official``, ``all_trec``, ``set``, ``P.5,10``,
``ndcg_cut.10``, ``relstring.20``: :mod:`pbtools.measures.trec`) beside pbtools' names;
``-l N`` (relevance level of the binary measures), ``-M N`` (the first N documents of each
ranking), ``-J`` (judged documents only), ``-N N`` (documents in the collection), ``-n`` (no
summary), ``-q`` and ``-c`` act as in trec_eval. With ``--trec`` the output is trec_eval's:
when every ``-m`` is a trec_eval argument (or none is given: ``official``), exactly the lines
trec_eval prints, in its order (``runid`` and ``num_q`` only when asked for, as by
``official``/``all_trec``); with pbtools names, ``runid`` and ``num_q`` then the measures in the
order given. One block per run.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

from pbtools.cli.common import UsageError

if TYPE_CHECKING:  # numpy and pandas load only when a command runs (pbtools --help is fast)
    import numpy as np
    import pandas as pd

__all__ = ["add_trec_options", "check_trec_options", "trec_lines_of", "trec_report"]


def _positive(flag: str, low: int):
    def parse(text: str) -> int:
        value = int(text) if re.fullmatch(r"\s*[+-]?\d+\s*", text) else low - 1
        if value < low:
            raise argparse.ArgumentTypeError(f"{flag} must be an integer >= {low}, got {text!r}")
        return value

    return parse


def add_trec_options(p: argparse.ArgumentParser) -> None:
    """trec_eval's ``-l``, ``-M``, ``-J``, ``-N``, ``-n`` (``-q``, ``-c``, ``-m``: evaluate's)."""
    p.add_argument(
        "-l",
        "--level-for-rel",
        type=_positive("-l", 1),
        default=1,
        metavar="N",
        help="labels >= N are relevant for the binary measures (trec_eval -l; default 1)",
    )
    p.add_argument(
        "-M",
        "--max-per-topic",
        type=_positive("-M", 1),
        metavar="N",
        help="evaluate the first N documents of each ranking only (trec_eval -M)",
    )
    p.add_argument(
        "-J",
        "--judged-only",
        action="store_true",
        help="remove unjudged documents before any measure: condensed lists (trec_eval -J)",
    )
    p.add_argument(
        "-N",
        "--num-docs",
        type=_positive("-N", 0),
        default=0,
        metavar="N",
        help="documents in the collection, for utility's fourth term (trec_eval -N)",
    )
    p.add_argument(
        "-n",
        "--no-summary",
        action="store_true",
        help="no averages, per-topic lines only (trec_eval -n; needs -q)",
    )


def _is_trec(spec: str) -> bool:
    from pbtools.measures.trec import NICKNAMES, ORDER

    name = str(spec).partition(".")[0]
    return name in NICKNAMES or name in ORDER


def trec_lines_of(args: argparse.Namespace, default) -> tuple[list, bool]:
    """The :class:`~pbtools.measures.trec.TrecLine` list of ``-m`` and whether it is trec_eval's
    own (every ``-m`` a trec_eval argument). Refusals name ``-m``."""
    import warnings

    from pbtools.errors import InputError
    from pbtools.measures import parse
    from pbtools.measures.trec import TrecLine, apply_flags, trec_measures

    specs = list(args.measure or (["official"] if args.trec else default))
    flags = dict(rel_level=args.level_for_rel, judged_only=args.judged_only, num_docs=args.num_docs)
    strict = all(_is_trec(s) for s in specs)
    if strict:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                lines = trec_measures(specs, **flags)
            except InputError as e:  # its message names the -m argument
                raise UsageError(str(e)) from None
        for w in caught:  # trec_eval measures this pbtools lacks: said once, at the CLI
            warnings.warn(str(w.message), stacklevel=2)
        return lines, True
    lines = [TrecLine("runid", None, "text"), TrecLine("num_q", None, "long")]
    for spec in specs:
        try:
            if _is_trec(spec):
                lines += [t for t in trec_measures([spec], **flags) if t.measure is not None]
                continue
            m = apply_flags(parse(spec), **flags)
        except InputError as e:
            raise UsageError(str(e) if str(e).startswith("-m") else f"-m {spec}: {e}") from None
        kind = "long" if m.summed else "text" if m.text else "float"
        lines.append(TrecLine(m.trec_name, m, "summary" if m.geometric else kind))
    return lines, False


def check_trec_options(args: argparse.Namespace) -> None:
    """Refuse flag combinations trec_eval's options cannot honour, naming the flag."""
    if args.no_summary and not args.per_topic:
        raise UsageError("-n (no summary) needs -q (per-topic lines): nothing would be printed")
    if args.no_summary and not args.trec:
        raise UsageError("-n (no summary) applies to trec_eval's output: add --trec")


def truncate(runs: pd.DataFrame, n: int | None) -> pd.DataFrame:
    """trec_eval ``-M n``: each ranking's first ``n`` documents in trec order."""

    if n is None:
        return runs
    from pbtools.frames import ranked

    runs = ranked(runs)
    return runs[runs["rank"].to_numpy() <= n].reset_index(drop=True)


def _codes(column) -> tuple[np.ndarray, list[str]]:
    """Each row's index into the column's distinct values (as strings), and those values (a
    frame's column or a :class:`~pbtools.cli.table.Coded` one)."""
    from pbtools.cli.table import Coded

    if isinstance(column, Coded):
        return column.codes, column.strings
    import pandas as pd

    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), [str(c) for c in column.cat.categories]
    codes, uniq = pd.factorize(column.astype(str))
    return codes, [str(u) for u in uniq]


def _values(value: np.ndarray, text, kinds: np.ndarray) -> np.ndarray:
    """The printed values: ``%6.4f``, ``%ld`` for counts, ``'text'`` for strings (``text``: a
    function giving the strings of a row mask). Each distinct value is formatted once."""
    import numpy as np

    out = np.empty(len(value), dtype=object)
    for kind, fmt in (("float", "{:.4f}"), ("summary", "{:.4f}"), ("long", "{:.0f}")):
        mask = kinds == kind
        if mask.any():
            v = np.trunc(value[mask]) if kind == "long" else value[mask]
            u, inv = np.unique(v, return_inverse=True)
            out[mask] = np.array([fmt.format(x) for x in u.tolist()], dtype=object)[inv.ravel()]
    mask = kinds == "text"
    if mask.any():
        out[mask] = ("'" + text(mask) + "'").astype(object)
    return out


def _rows(frame: pd.DataFrame, lines: list, skip: str) -> dict:
    """``frame``'s rows as printed lines, one per TrecLine of its measure (``skip`` kinds out),
    without the topic: ``head`` (the line's name, padded, and a tab), ``value`` (the printed
    value), ``name`` (the run's code in ``runs``), ``qid`` (its code in ``qids``, when
    ``frame`` has one) and ``pos`` (the line's place in ``lines``). No Python loop over rows:
    the measures' lines are looked up by the measure's code."""
    import numpy as np

    mcode, measures = _codes(frame["measure"])
    where = {m: i for i, m in enumerate(measures)}
    hits: list[list[int]] = [[] for _ in measures]  # the lines showing each measure
    for i, t in enumerate(lines):
        if t.measure is not None and t.kind != skip and str(t.measure) in where:
            hits[where[str(t.measure)]].append(i)
    head = np.array([f"{t.name:<22s}\t" for t in lines] or [""], dtype=object)
    kind = np.array([t.kind for t in lines] or [""], dtype=object)
    parts = []
    for k in range(max(map(len, hits), default=0)):  # a measure shown by k+1 lines (rare)
        line_of = np.array([h[k] if len(h) > k else -1 for h in hits] or [-1], dtype=np.int64)
        pos = line_of[mcode]
        parts.append((np.flatnonzero(pos >= 0), pos[pos >= 0]))
    rows = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    pos = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
    value = np.asarray(frame["value"], dtype=np.float64)[rows]
    has_text = "text" in frame.columns

    def text(mask):
        if not has_text:
            return ""
        col = frame["text"]
        cells = col if isinstance(col, np.ndarray) else col.astype(str).to_numpy(dtype=object)
        return np.asarray(cells, dtype=object)[rows[mask]].astype(str).astype(object)

    ncode, runs = _codes(frame["name"])
    out = dict(head=head[pos], value=_values(value, text, kind[pos]), pos=pos, runs=runs)
    out["name"] = ncode[rows]
    if "qid" in frame.columns:
        qcode, out["qids"] = _codes(frame["qid"])
        out["qid"] = qcode[rows]
    return out


def _first_seen(column) -> list[str]:
    """The column's distinct strings in order of first appearance."""
    import numpy as np

    codes, strings = _codes(column)
    if not len(codes):
        return []
    _, first = np.unique(codes, return_index=True)
    return [strings[codes[i]] if codes[i] >= 0 else "nan" for i in np.sort(first).tolist()]


def trec_report(
    per,
    avg,
    lines: list,
    *,
    per_topic: bool,
    summary: bool,
    strict: bool,
) -> str:
    """trec_eval's output of ``lines`` (:func:`trec_lines_of`), one block per run: per-topic lines
    (``per_topic``: topics in order, each with its lines in ``lines``' order), then (``summary``)
    ``runid``, ``num_q`` and the averages. The rows are formatted at once and put in order by
    one sort of (run, part, topic, line); only ``runid`` and ``num_q`` are made per run.
    ``per`` and ``avg``: frames, or :class:`~pbtools.cli.table.Columns` (no pandas)."""
    import numpy as np

    names = _first_seen(avg["name"]) if len(avg) else []
    names += [n for n in _first_seen(per["name"]) if n not in names]
    order = {n: i for i, n in enumerate(names)}
    pcode, pnames = _codes(per["name"])
    qcode, qids = _codes(per["qid"])
    run_of = np.array([order.get(n, -1) for n in pnames] or [-1], dtype=np.int64)
    text, run, part, topic, pos = [], [], [], [], []  # one entry per group of lines

    def add(t, r, p, q, o):
        n = len(t)
        text.append(t)
        run.append(np.broadcast_to(np.asarray(r, dtype=np.int64), n))
        part.append(np.full(n, p, dtype=np.int64))
        topic.append(np.broadcast_to(np.asarray(q, dtype=np.int64), n))
        pos.append(np.broadcast_to(np.asarray(o, dtype=np.int64), n))

    if per_topic:
        f = _rows(per, lines, "summary")
        rank = np.argsort(np.argsort(np.array(f["qids"], dtype=object), kind="stable"))
        qtext = np.array(f["qids"], dtype=object)
        fn = np.array([order[n] for n in f["runs"]] or [-1], dtype=np.int64)
        add(
            f["head"] + qtext[f["qid"]] + "\t" + f["value"],
            fn[f["name"]],
            0,
            rank[f["qid"]],
            f["pos"],
        )
    if summary:
        asked = {t.name for t in lines if t.measure is None} if strict else {"runid", "num_q"}
        pairs = np.unique(pcode.astype(np.int64) * max(len(qids), 1) + qcode)
        num_q = np.bincount(run_of[pairs // max(len(qids), 1)], minlength=len(names))
        if "runid" in asked:
            add(
                np.array([f"{'runid':<22s}\tall\t{n}" for n in names], dtype=object),
                np.arange(len(names)),
                1,
                0,
                0,
            )
        if "num_q" in asked:
            add(
                np.array([f"{'num_q':<22s}\tall\t{int(q)}" for q in num_q], dtype=object),
                np.arange(len(names)),
                2,
                0,
                0,
            )
        f = _rows(avg, lines, "text")
        fn = np.array([order[n] for n in f["runs"]] or [-1], dtype=np.int64)
        add(f["head"] + "all\t" + f["value"], fn[f["name"]], 3, 0, f["pos"])
    if not text or not sum(map(len, text)):
        return ""
    key = np.lexsort([np.concatenate(c) for c in (pos, topic, part, run)])
    return "\n".join(np.concatenate(text)[key].tolist()) + "\n"
