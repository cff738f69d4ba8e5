"""Reports of a bias analysis: the terminal report and the self-contained HTML bias report.

:func:`text_report` is what ``pbtools analyze`` prints (and :meth:`Analysis.report` returns):
the collection's properties in words, one error table per leave-out configuration (80 columns;
``wide``: one table for all; MAE, SRE, SRE* and Kendall's tau each in its own columns), a legend
of the estimators and error measures, and the summary sentences of every setup.
:func:`~pbtools.experiments.htmlreport.html_report` is what ``pbtools report`` writes: one HTML
page with no external resource (figures inline as SVG, no script) that shows the collection's
bias at a glance.

Both take their words from one place: :data:`ESTIMATOR_HELP` and :data:`MEASURE_HELP` (one
sentence each), :func:`properties_text` (the header) and
:mod:`pbtools.experiments.sentences` (the sentences a researcher can quote, e.g. "a run whose
organization did not contribute to the pool loses on average 0.0081 P@10; Webber & Park cut
the error by 2%, Lipani et al. by 2%"), computed from the analysis' own tables.

Examples
--------
>>> from pbtools.experiments.analysis import SAMPLE, analyze
>>> a = analyze(SAMPLE, measures=("P@10",), leave_out=("org",), run_sets=("all",), progress=False)
>>> print(properties_text(a))  # doctest: +NORMALIZE_WHITESPACE
collection sample: |R| = 12 runs, |O| = 6 organizations, |R_p| = 10 pooled runs,
d = 20 pool depth (each pooled run's top 20 documents per topic judged), |T| = 20 topics; 2
runs outside the pool: o03r1, o06r1
>>> max(len(line) for line in text_report(a).splitlines()) <= 80
True
"""

from __future__ import annotations

import textwrap

import pandas as pd

from pbtools.corrections.registry import Described
from pbtools.experiments.noise import best_estimator, noise_rows
from pbtools.experiments.noise import pct as signed_pct
from pbtools.experiments.sentences import (
    RUN_SETS,
    SETUPS,
    fmt,
    headline,
    left_out_unit,
    measures_of,
    summary,
    summary_text,
    unit_words,
)
from pbtools.io.desc import EACH_RUN_ITS_OWN

__all__ = [
    "ESTIMATOR_HELP",
    "MEASURE_HELP",
    "best_estimator",
    "headline",
    "measures_of",
    "summary",
    "summary_text",
    "properties_text",
    "text_report",
    "unit_words",
    "left_out_unit",
    "error_blocks",
    "fmt",
]

#: one sentence per estimator (terminal legend and HTML report): each class's ``description``
#: (a live view of the registry, :class:`pbtools.corrections.registry.Described`)
ESTIMATOR_HELP = Described("description")
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
_BY, _RUN_SETS = SETUPS, RUN_SETS
WIDTH = 80


def _count(value) -> str:
    return "-" if value is None or pd.isna(value) else str(int(value))


def error_blocks():
    """The column blocks of an error table: ``(title, column, formatter)`` per measure."""
    return [
        ("MAE", "mae", fmt),
        ("SRE", "sre", _count),
        ("SRE*", "sre_star", _count),
        ("Kendall's tau", "tau", fmt),
    ]


def _cell(row, column, formatter) -> str:
    return formatter(row[column])


def _table(frame: pd.DataFrame, keys: list[tuple[str, str]], ests: list[str], width: int):
    """Text table: key columns, then per measure block one column per estimator. Blocks go on
    as many bands as ``width`` needs (one band when they fit)."""
    blocks = error_blocks()
    rows = [
        (key if isinstance(key, tuple) else (key,), grp)
        for key, grp in frame.groupby([k for k, _ in keys], sort=False, observed=True)
    ]
    cells = {}
    for i, (_, grp) in enumerate(rows):
        first: dict = {}  # each estimator's first row in the group
        for j, est in enumerate(grp["estimator"].to_numpy()):
            first.setdefault(est, j)
        for e in ests:
            row = grp.iloc[first[e]] if e in first else None
            for b, (_, col, f) in enumerate(blocks):
                cells[i, b, e] = "-" if row is None else _cell(row, col, f)
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
    if any(e in ests for e in analysis.params.get("skipped", {})):
        items.append(("-", "no estimate: the estimator does not correct this measure."))
    lines = ["what the columns mean:"]
    for key, text in items:
        lines += textwrap.wrap(
            text,
            width=width,
            initial_indent=f"  {key:<9s}",
            subsequent_indent=" " * 11,
        )
    return lines


def _wrap(text: str, width: int, **indents) -> list[str]:
    """``textwrap.wrap`` that keeps a symbol with its value (``|R_p| = 35``, ``d = 100``)."""
    import re

    glued = re.sub(r"(\S+) = (\S+)", lambda m: "\xa0=\xa0".join(m.groups()), text)
    return [
        line.replace("\xa0", " ")
        for line in textwrap.wrap(glued, width=width, break_on_hyphens=False, **indents)
    ]


def properties_text(analysis) -> str:
    """The collection's properties in words (Lipani et al. Table 2's symbols explained):
    ``|R| = 37 runs (38 files), |O| = 22 organizations, |R_p| = 35 pooled runs (36 files),
    d = 100 pool depth (…), |T| = 50 topics; 2 runs outside the pool: rutfmed, uicah``."""
    p = analysis.properties.iloc[0]
    n_r, n_rp = int(p["R"]), int(p["R_p"])
    r_files = f" ({int(p['R_files'])} files)" if int(p["R_files"]) != n_r else ""
    rp_files = f" ({int(p['R_p_files'])} files)" if int(p["R_p_files"]) != n_rp else ""
    d = int(p["d"])
    depth = (
        f"d = {d} pool depth (each pooled run's top {d} documents per topic judged)"
        if analysis.params.get("pool", "inferred") == "inferred"
        else f"d = {d} depth of the given pool (the deepest best rank of a judged document)"
    )
    text = (
        f"collection {p['collection']}: |R| = {n_r} runs{r_files}, |O| = {int(p['O'])} "
        f"organizations, |R_p| = {n_rp} pooled runs{rp_files}, {depth}, |T| = {int(p['T'])} "
        "topics"
    )
    if r_files:
        text += "; files that share a run tag are one run"
    out = unpooled_runs(analysis)
    if out:
        names = ", ".join(out[:5]) + (f", … ({len(out)} in all)" if len(out) > 5 else "")
        text += f"; {len(out)} run{'s' if len(out) != 1 else ''} outside the pool: {names}"
    return text


def unpooled_runs(analysis) -> list[str]:
    """The collection's runs that are not in its pool (``params["pooled_runs"]``), sorted."""
    import json

    p = analysis.properties.iloc[0]
    pooled = set(analysis.params.get("pooled_runs") or json.loads(p["pooled_runs"]))
    names = (
        set(analysis.scores["name"].astype(str))
        if analysis.frames is None
        # the distinct names first: a str copy of the column is a string a line of the runs
        else set(map(str, analysis.frames[0]["name"].unique()))
    )
    return sorted(names - pooled)


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
        Properties, error tables, legend and the summary sentences, lines of at most ``width``
        characters (``wide``: the table may be wider).
    """
    lines = _wrap(properties_text(analysis), width, subsequent_indent="  ")
    if analysis.params.get("protocol"):
        lines.append(f"  protocol: {analysis.params['protocol']}")
    if analysis.params.get("one_org_per_run"):
        lines += textwrap.wrap(
            f"organizations: {analysis.params['one_org_per_run']}, so {EACH_RUN_ITS_OWN}",
            width=width,
            initial_indent="  ",
            subsequent_indent="  ",
        )
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
                f"{unit_words(analysis, by)}, {_RUN_SETS.get(runs, runs)} "
                f"({_evaluated(analysis.scores, by, runs)} runs evaluated)"
            )
            lines += ["", *textwrap.wrap(title, width=width, subsequent_indent="  ")]
            lines += _table(grp, [("measure", "measure")], ests, width=width)
    lines += _noise_lines(analysis, ests, width)
    lines += [""] + _legend(analysis, ests, width)
    lines += ["", "in short (the error of an estimate: its MAE over the evaluated runs):"]
    for paragraph in summary_text(analysis).splitlines():
        lines += _wrap(paragraph, width, initial_indent="- ", subsequent_indent="  ")
    if verbose and analysis.timings:
        t = analysis.timings
        lines += [
            "",
            f"time: parse {t['parse']:.2f} s, analysis {t['analysis']:.2f} s "
            f"({t['analysis'] / max(t['parse'], 1e-9):.2f}× the parse time)",
        ]
    return "\n".join(lines)
