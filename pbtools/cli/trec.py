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


def _values(frame: pd.DataFrame, kinds: np.ndarray) -> np.ndarray:
    """The printed values: ``%6.4f``, ``%ld`` for counts, ``'text'`` for strings."""
    import numpy as np

    value = frame["value"].to_numpy(dtype=np.float64)
    out = np.empty(len(value), dtype=object)
    for kind, fmt in (("float", "{:.4f}"), ("summary", "{:.4f}"), ("long", "{:.0f}")):
        mask = kinds == kind
        if mask.any():
            v = np.trunc(value[mask]) if kind == "long" else value[mask]
            u, inv = np.unique(v, return_inverse=True)
            out[mask] = np.array([fmt.format(x) for x in u.tolist()], dtype=object)[inv.ravel()]
    mask = kinds == "text"
    if mask.any():
        out[mask] = ("'" + frame["text"].astype(str).to_numpy(dtype=object)[mask] + "'").astype(
            object
        )
    return out


def _rows(frame: pd.DataFrame, lines: list, skip: str, qid: str | None) -> pd.DataFrame:
    """``frame``'s rows as printed lines (one per TrecLine of its measure, ``skip`` kinds out),
    with the run, the topic and the line's position for ordering."""
    import numpy as np
    import pandas as pd

    table = pd.DataFrame(
        [(str(t.measure), i, t.name, t.kind) for i, t in enumerate(lines) if t.measure is not None]
        or [("", 0, "", "")],
        columns=["measure", "pos", "shown", "kind"],
    )
    table = table[table["kind"] != skip]
    cols = ["name", "measure", "value"] + (["text"] if "text" in frame.columns else [])
    f = frame[cols + ([] if qid else ["qid"])].astype({"measure": str, "name": str})
    f = f.merge(table, on="measure", how="inner")
    text = _values(f, f["kind"].to_numpy())
    q = qid if qid else f["qid"].astype(str).to_numpy(dtype=object)
    shown = np.array([f"{s:<22s}" for s in f["shown"]], dtype=object)
    f["line"] = shown + "\t" + q + "\t" + text
    return f


def trec_report(
    per: pd.DataFrame,
    avg: pd.DataFrame,
    lines: list,
    *,
    per_topic: bool,
    summary: bool,
    strict: bool,
) -> str:
    """trec_eval's output of ``lines`` (:func:`trec_lines_of`), one block per run: per-topic lines
    (``per_topic``: topics in order, each with its lines in ``lines``' order), then (``summary``)
    ``runid``, ``num_q`` and the averages. The rows are formatted at once; the loop over runs
    joins each run's lines."""
    import numpy as np
    import pandas as pd

    names = list(pd.unique(avg["name"].astype(str))) if len(avg) else []
    names += [n for n in pd.unique(per["name"].astype(str)) if n not in names]
    order = {n: i for i, n in enumerate(names)}
    qids = pd.unique(per["qid"].astype(str))
    qorder = {q: i for i, q in enumerate(sorted(qids))}
    blocks = {n: [] for n in names}
    if per_topic:
        f = _rows(per, lines, "summary", None)
        key = np.lexsort([f["pos"], f["qid"].astype(str).map(qorder), f["name"].map(order)])
        for n, chunk in f.iloc[key].groupby("name", sort=False)["line"]:
            blocks[n].extend(chunk.tolist())
    if summary:
        asked = {t.name for t in lines if t.measure is None} if strict else {"runid", "num_q"}
        num_q = per.groupby(per["name"].astype(str).to_numpy(), sort=False)["qid"].nunique()
        f = _rows(avg, lines, "text", "all")
        f = f.iloc[np.lexsort([f["pos"], f["name"].map(order)])]
        grouped = dict(tuple(f.groupby("name", sort=False)["line"]))
        for n in names:
            if "runid" in asked:
                blocks[n].append(f"{'runid':<22s}\tall\t{n}")
            if "num_q" in asked:
                blocks[n].append(f"{'num_q':<22s}\tall\t{int(num_q.get(n, 0))}")
            if n in grouped:
                blocks[n].extend(grouped[n].tolist())
    return "".join("\n".join(b) + "\n" for b in blocks.values() if b)
