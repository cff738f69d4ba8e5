"""Reports of a bias analysis: the terminal report and the self-contained HTML bias report.

:func:`text_report` is what ``pbtools analyze`` prints (and :meth:`Analysis.report` returns):
the collection's properties, one error table per leave-out configuration (80 columns; ``wide``:
one table for all), a legend of the estimators and error measures, and the summary sentence.
:func:`html_report` is what ``pbtools report`` writes: one HTML page with no external resource
(figures inline as SVG, no script) that shows the collection's bias at a glance.

Both take their words from one place: :data:`ESTIMATOR_HELP` and :data:`MEASURE_HELP` (one
sentence each) and :func:`summary` (the sentence a researcher can quote, e.g. "a run whose
organization did not contribute to the pool loses on average 0.0081 P@10; Webber & Park cut
that error by 2%, Lipani et al. by 1%"), computed from the analysis' own tables.

Examples
--------
>>> from pbtools.experiments.analysis import SAMPLE, analyze
>>> a = analyze(SAMPLE, measures=("P@10",), leave_out=("org",), run_sets=("all",), progress=False)
>>> print(summary(a))  # doctest: +NORMALIZE_WHITESPACE
On sample, a run whose organization did not contribute to the pool loses on average 0.1965 P@10
(mean over 10 runs); Webber & Park cut that error by 58% (95% interval 51-68%), Lipani et al. by
12% (95% interval 8-18%).
>>> max(len(line) for line in text_report(a).splitlines()) <= 80
True
"""

from __future__ import annotations

import textwrap

import pandas as pd

from pbtools.experiments.figures import estimator_label
from pbtools.experiments.noise import best_estimator, noise_rows
from pbtools.experiments.noise import pct as signed_pct

__all__ = [
    "ESTIMATOR_HELP",
    "MEASURE_HELP",
    "best_estimator",
    "headline",
    "measures_of",
    "summary",
    "summary_text",
    "text_report",
    "error_blocks",
    "fmt",
]

#: one sentence per estimator (terminal legend and HTML report)
ESTIMATOR_HELP = {
    "reduced": "the run's score on the pool without the left-out organization's (or run's) "
    "documents, unjudged documents counted non-relevant: the uncorrected, biased score.",
    "webber": "Webber & Park 2009: the reduced score plus the mean error that the pooled runs "
    "show when each is left out of the pool in turn.",
    "lipani": "Lipani et al. 2015: the reduced score plus a share of the run's unjudged "
    "documents, estimated by merging its ranking with the pooled runs'.",
    "condensed": "Sakai 2008: the score of the ranking with its unjudged documents removed "
    "(biased upwards).",
}
#: one sentence per error measure (terminal legend and HTML report)
MEASURE_HELP = {
    "MAE": "mean absolute error |true - estimate| over the evaluated runs (lower is better).",
    "SRE": "system rank error: the rank positions the runs move in the true ranking when "
    "their estimate replaces their true score, summed (lower is better).",
    "SRE*": "SRE counting only the moves past runs whose true difference is significant "
    "(two-way Tukey HSD over topics, alpha = {alpha:g}; lower is better).",
    "tau": "Kendall's tau-b between the true and the estimated ranking of the runs "
    "(1 = same order).",
}
_BY = {"org": "leave-one-organization-out", "run": "leave-one-run-out"}
_RUN_SETS = {"all": "all pooled runs", "top75": "top 75% of the runs"}
_UNIT = {
    "org": "a run whose organization did not contribute to the pool",
    "run": "a run that did not contribute to the pool",
}
WIDTH = 80


def fmt(value, decimals: int = 4) -> str:
    """``value`` with ``decimals`` decimals, ``-`` for a missing value, never ``-0.0000``.

    >>> fmt(-0.00001), fmt(float("nan")), fmt(0.1234567)
    ('0.0000', '-', '0.1235')
    """
    if value is None or pd.isna(value):
        return "-"
    text = f"{float(value):.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _count(value) -> str:
    return "-" if value is None or pd.isna(value) else str(int(value))


def measures_of(errors: pd.DataFrame) -> list[str]:
    """The measures of an error (or score) table, in the order the analysis listed them."""
    return [str(m) for m in dict.fromkeys(errors["measure"])]


def headline(
    analysis, leave_out: str | None = None, runs: str | None = None, measure: str | None = None
):
    """The numbers behind :func:`summary`, as a dict.

    The configuration defaults to leave-one-organization-out over all pooled runs (the first
    analysed otherwise) and the measure to P@10 (the middle measure otherwise). Keys:
    ``leave_out``, ``runs``, ``measure``, ``n_runs`` (runs evaluated), ``loss`` (mean true −
    reduced score: what a run loses by not being pooled), ``mae`` (estimator → MAE), ``cut``
    (corrected estimator → the share of the reduced pool's MAE it removes; negative when it
    adds error) and ``cut_ci`` (corrected estimator → ``(low, high, significant)``: the 95 %
    paired bootstrap interval of that share over the evaluated runs and whether the MAE
    difference's interval excludes 0, from ``analysis.differences``; absent without it).
    """
    e = analysis.errors
    units = set(e["leave_out"])
    leave_out = leave_out or ("org" if "org" in units else str(e["leave_out"].iloc[0]))
    runs = runs or ("all" if "all" in set(e["runs"]) else str(e["runs"].iloc[0]))
    names = measures_of(e)
    measure = measure or ("P@10" if "P@10" in names else names[len(names) // 2])
    cfg = e[(e["leave_out"] == leave_out) & (e["runs"] == runs) & (e["measure"] == measure)]
    mae = dict(zip(cfg["estimator"].astype(str), cfg["mae"].astype(float), strict=True))
    s = analysis.scores
    sel = s[(s["leave_out"] == leave_out) & (s["runs"] == runs) & (s["measure"] == measure)]
    red = sel[sel["estimator"] == "reduced"]
    loss = float((red["true"] - red["estimate"]).mean()) if len(red) else float("nan")
    base = mae.get("reduced", float("nan"))
    cut = {
        k: (1 - v / base) if base > 0 else float("nan") for k, v in mae.items() if k != "reduced"
    }
    order = [x for x in analysis.params.get("estimators", list(mae)) if x in cut]
    d = getattr(analysis, "differences", None)
    cut_ci = {}
    if d is not None and len(d):
        sel_d = d[
            (d["leave_out"] == leave_out)
            & (d["runs"] == runs)
            & (d["measure"] == measure)
            & (d["estimator_b"] == "reduced")
        ]
        for r in sel_d.itertuples(index=False):
            cut_ci[str(r.estimator_a)] = (r.cut_low, r.cut_high, bool(r.significant))
    return {
        "leave_out": leave_out,
        "runs": runs,
        "measure": measure,
        "n_runs": int(sel["name"].nunique()),
        "loss": loss,
        "mae": mae,
        "cut": {k: cut[k] for k in order},
        "cut_ci": cut_ci,
    }


def summary(analysis, *, short: bool = False, **where) -> str:
    """The sentence a researcher can quote, with the analysis' own numbers (:func:`headline`;
    ``where`` picks ``leave_out``, ``runs``, ``measure``). ``short``: the follow-up form for
    another measure ("At P@100 the loss is 0.0235; Webber & Park cut it by 42%, …")."""
    h = headline(analysis, **where)
    name = analysis.properties.iloc[0]["collection"]
    measure = h["measure"]
    if not h["loss"] > 0:
        if short:
            return f"At {measure} there is no loss to correct."
        return (
            f"On {name}, {_UNIT[h['leave_out']]} loses no {measure} on average "
            f"(mean over {h['n_runs']} runs): at this cut-off there is no bias to correct."
        )
    clauses, previous = [], None
    for est, cut in h["cut"].items():
        pct = int(abs(cut) * 100 + 0.5)
        verb = ("cut it by" if short else "cut that error by") if cut >= 0 else "increase it by"
        ci = h["cut_ci"].get(est)
        if ci is not None and not ci[2]:  # within the run-to-run noise: no claim of a cut
            clause, verb = (
                f"{estimator_label(est)}'s change ({signed_pct(-ci[1])} to "
                f"{signed_pct(-ci[0])}) is within the run-to-run noise",
                None,
            )
        elif pct == 0:
            clause, verb = f"{estimator_label(est)} change it by less than 1%", None
        elif verb == previous:
            clause = f"{estimator_label(est)} by {pct}%"
        else:
            clause = f"{estimator_label(est)} {verb} {pct}%"
        if ci is not None and ci[2] and pct and pd.notna(ci[0]) and pd.notna(ci[1]):
            a, b = sorted((abs(ci[0]), abs(ci[1])))
            clause += f" (95% interval {int(a * 100 + 0.5)}-{int(b * 100 + 0.5)}%)"
        clauses.append(clause)
        previous = verb
    if short:
        text = f"At {measure} the loss is {fmt(h['loss'])}"
    else:
        text = (
            f"On {name}, {_UNIT[h['leave_out']]} loses on average {fmt(h['loss'])} {measure} "
            f"(mean over {h['n_runs']} runs)"
        )
    return text + ("; " + ", ".join(clauses) if clauses else "") + "."


def summary_text(analysis) -> str:
    """:func:`summary` at the headline measure, followed by its short form at the last measure
    of the analysis (the deepest cut-off, where the bias is usually largest) when that is
    another one."""
    text = summary(analysis)
    last = measures_of(analysis.errors)[-1]
    if last != headline(analysis)["measure"]:
        text += " " + summary(analysis, short=True, measure=last)
    return text


def error_blocks():
    """The column blocks of an error table: ``(title, column, formatter)`` per measure."""
    return [
        ("MAE", "mae", fmt),
        ("SRE / SRE*", ("sre", "sre_star"), None),
        ("Kendall's tau", "tau", fmt),
    ]


def _cell(row, column, formatter) -> str:
    if isinstance(column, tuple):
        return "/".join(_count(row[c]) for c in column)
    return formatter(row[column])


def _table(frame: pd.DataFrame, keys: list[tuple[str, str]], ests: list[str], width: int):
    """Text table: key columns, then per measure block one column per estimator. Blocks go on
    as many bands as ``width`` needs (one band when they fit)."""
    blocks = error_blocks()
    rows = [
        (key if isinstance(key, tuple) else (key,), grp)
        for key, grp in frame.groupby([k for k, _ in keys], sort=False, observed=True)
    ]
    cells = {
        (i, b, e): _cell(grp[grp["estimator"] == e].iloc[0], col, f)
        if (grp["estimator"] == e).any()
        else "-"
        for i, (_, grp) in enumerate(rows)
        for b, (_, col, f) in enumerate(blocks)
        for e in ests
    }
    colw = max([len(e) for e in ests] + [len(c) for c in cells.values()]) + 1
    keyw = [
        max([len(label)] + [len(str(key[j])) for key, _ in rows])
        for j, (_, label) in enumerate(keys)
    ]

    def widths(spacer):
        return [max(colw * len(ests), len(t) + 1) + spacer for t, _, _ in blocks]

    # one band if it fits (tighter spacing if that makes it fit), else as many bands as needed
    indent, spacer = 2, 1
    if sum(keyw) + 2 * len(keyw) + sum(widths(1)) > width:
        if sum(keyw) + len(keyw) + sum(widths(0)) <= width:
            indent, spacer = 1, 0
    lead = sum(keyw) + indent * len(keyw)
    bands, band, used = [], [], lead
    for b, w in enumerate(widths(spacer)):
        if band and used + w > width:
            bands.append(band)
            band, used = [], lead
        band.append((b, w))
        used += w
    bands.append(band)
    pad = " " * indent
    lines = []
    for band in bands:
        top = " " * lead + "".join(
            f"{' ' * (w - colw * len(ests))} {blocks[b][0]:<{colw * len(ests) - 1}s}"
            for b, w in band
        )
        head = "".join(f"{pad}{label:<{kw}s}" for (_, label), kw in zip(keys, keyw, strict=True))
        head += "".join(
            " " * (w - colw * len(ests)) + "".join(f"{e:>{colw}s}" for e in ests) for b, w in band
        )
        lines += [top.rstrip(), head.rstrip()]
        for i, (key, _) in enumerate(rows):
            text = "".join(f"{pad}{str(k):<{kw}s}" for k, kw in zip(key, keyw, strict=True))
            text += "".join(
                " " * (w - colw * len(ests)) + "".join(f"{cells[i, b, e]:>{colw}s}" for e in ests)
                for b, w in band
            )
            lines.append(text.rstrip())
        lines.append("")
    return lines[:-1]


def _evaluated(scores: pd.DataFrame, by: str, runs: str) -> int:
    sel = scores[(scores["leave_out"] == by) & (scores["runs"] == runs)]
    return int(sel.groupby("measure", observed=True)["name"].nunique().max())


def _noise_lines(analysis, ests: list[str], width: int) -> list[str]:
    """The headline configuration's MAE with its run-bootstrap interval, and each corrected
    estimator's change of the reduced pool's MAE with its interval ("*": beyond the noise)."""
    if "mae_low" not in analysis.errors.columns:
        return []
    h = headline(analysis)
    title = (
        f"run-to-run noise (leave-out {h['leave_out']}, run set {h['runs']}): MAE with its "
        "95% paired bootstrap interval over the evaluated runs; the change of the reduced "
        "pool's MAE (* beyond the noise)"
    )
    lines = ["", *textwrap.wrap(title, width=width)]
    lines.append(f"    {'measure':<9s}{'estimator':<10s}{'MAE':>7s}  {'95% interval':<15s}change")
    for r in noise_rows(analysis, h["leave_out"], h["runs"], ests).itertuples(index=False):
        change = ""
        if pd.notna(r.cut) and pd.notna(r.cut_low):
            change = f"{signed_pct(-r.cut)} ({signed_pct(-r.cut_high)} to {signed_pct(-r.cut_low)})"
            change += "*" if r.significant else ""
        lines.append(
            f"    {r.measure:<9s}{r.estimator:<10s}{fmt(r.mae):>7s}  "
            f"{fmt(r.mae_low) + '-' + fmt(r.mae_high):<15s}{change}".rstrip()
        )
    return lines


def _legend(analysis, ests: list[str], width: int) -> list[str]:
    alpha = analysis.params.get("alpha", 0.05)
    items = [(e, ESTIMATOR_HELP[e]) for e in ests if e in ESTIMATOR_HELP]
    items += [(m, text.format(alpha=alpha)) for m, text in MEASURE_HELP.items()]
    lines = ["what the columns mean:"]
    for key, text in items:
        lines += textwrap.wrap(
            text,
            width=width,
            initial_indent=f"  {key:<9s}",
            subsequent_indent=" " * 11,
        )
    return lines


def text_report(analysis, *, wide: bool = False, verbose: bool = False, width=WIDTH) -> str:
    """The terminal report of an :class:`~pbtools.experiments.analysis.Analysis`.

    Parameters
    ----------
    analysis
        The result of :func:`pbtools.experiments.analysis.analyze`.
    wide
        One table for every configuration (leave-out unit × run set) instead of one table per
        configuration; it may be wider than ``width``.
    verbose
        Add the timing line (parse and analysis time).
    width
        The terminal width every line keeps to (unless ``wide``).

    Returns
    -------
    str
        Properties, error tables, legend and the summary sentence, lines of at most ``width``
        characters (``wide``: the table may be wider).
    """
    p = analysis.properties.iloc[0]
    props = (
        f"collection {p['collection']}: |R| = {int(p['R'])} runs, |O| = {int(p['O'])} "
        f"organizations, |R_p| = {int(p['R_p'])} pooled runs, pool depth d = {int(p['d'])}, "
        f"|T| = {int(p['T'])} topics"
    )
    lines = textwrap.wrap(props, width=width, subsequent_indent="  ")
    if int(p["R_files"]) != int(p["R"]):
        lines += textwrap.wrap(
            f"({int(p['R_files'])} run files, {int(p['R_p_files'])} of them pooled: several "
            "files share a run tag)",
            width=width,
            initial_indent="  ",
            subsequent_indent="  ",
        )
    if analysis.params.get("protocol"):
        lines.append(f"  protocol: {analysis.params['protocol']}")
    errors = analysis.errors
    present = set(errors["estimator"].astype(str))
    ests = [e for e in analysis.params.get("estimators", sorted(present)) if e in present]
    if wide:
        lines += ["", "every configuration (out: the unit left out; runs: the run set)"]
        keys = [("leave_out", "out"), ("runs", "runs"), ("measure", "measure")]
        lines += _table(errors, keys, ests, width=10**6)
    else:
        for (by, runs), grp in errors.groupby(["leave_out", "runs"], sort=False, observed=True):
            title = (
                f"{_BY.get(by, by)}, {_RUN_SETS.get(runs, runs)} "
                f"({_evaluated(analysis.scores, by, runs)} runs evaluated)"
            )
            lines += ["", title]
            lines += _table(grp, [("measure", "measure")], ests, width=width)
    lines += _noise_lines(analysis, ests, width)
    lines += [""] + _legend(analysis, ests, width)
    lines += [""] + textwrap.wrap(summary_text(analysis), width=width)
    if verbose and analysis.timings:
        t = analysis.timings
        lines += [
            "",
            f"time: parse {t['parse']:.2f} s, analysis {t['analysis']:.2f} s "
            f"({t['analysis'] / max(t['parse'], 1e-9):.2f}× the parse time)",
        ]
    return "\n".join(lines)
