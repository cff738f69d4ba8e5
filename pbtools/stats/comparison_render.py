"""Markdown and LaTeX tables of a :class:`pbtools.stats.comparison.Comparison`, ranx style.

Each run is lettered (a, b, …); a run's mean carries as superscript the letters of the runs it
is significantly better than; the best mean of each measure is bold; a note (Markdown) or the
caption (LaTeX) says which test, correction and level decided.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

#: Unicode superscript letters (ranx's table; Unicode has no superscript q, ranx uses ۹)
SUPERSCRIPT = dict(zip("abcdefghijklmnopqrstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ۹ʳˢᵗᵘᵛʷˣʸᶻ", strict=True))

TEST_LABELS = {
    "t": ("paired t-test", "paired $t$-test"),
    "wilcoxon": ("Wilcoxon signed-rank test", "Wilcoxon signed-rank test"),
    "randomisation": ("paired randomisation test", "paired randomisation test"),
    "tukey": ("Tukey's HSD test", "Tukey's HSD test"),
}
CORRECTION_LABELS = {
    "holm": "Holm-corrected",
    "bonferroni": "Bonferroni-corrected",
    "bh": "Benjamini–Hochberg-corrected",
    "none": "uncorrected",
}


def _layout(cmp, test: str, digits: int):
    """Rows (label, name, {measure: (text, marks, rest, bold, ci)}) and the measures."""
    s = cmp.summary
    measures = list(pd.unique(s["measure"]))
    runs = s.drop_duplicates("name")[["label", "name"]].itertuples(index=False)
    runs = sorted(runs, key=lambda r: (len(r.label), r.label))
    labels = {r.name: r.label for r in runs}
    t = cmp.tests[cmp.tests["test"] == test]
    better = {}  # (measure, run) -> labels of the runs it significantly beats
    sig = t[t["reject"].to_numpy(bool)]
    for m, a, b, d in zip(sig["measure"], sig["name_a"], sig["name_b"], sig["diff"], strict=True):
        win, lose = (a, b) if d > 0 else (b, a)
        if d != 0:
            better.setdefault((m, win), set()).add(labels[lose])
    cells = {}
    for m in measures:
        sm = s[s["measure"] == m]
        rounded = np.round(sm["mean"].to_numpy(dtype=np.float64), digits)
        best = np.nanmax(rounded) if len(rounded) else np.nan
        for name, mean, lo, hi in zip(
            sm["name"], rounded, sm["ci_low"], sm["ci_high"], strict=True
        ):
            marks = sorted(better.get((m, name), set()), key=lambda x: (len(x), x))
            rest = [lab for lab in labels.values() if lab not in marks and lab != labels[name]]
            cells[(m, name)] = (f"{mean:.{digits}f}", marks, rest, mean == best, (lo, hi))
    return runs, measures, cells


def _rows(cmp, runs, measures, cells, cell, escape):
    """(label, escaped name, formatted cells) per run; a run without a measure gets ""."""
    for r in runs:
        row = [cell(*cells[(m, r.name)]) if (m, r.name) in cells else "" for m in measures]
        yield r.label, escape(r.name) + (" (baseline)" if r.name == cmp.baseline else ""), row


def _n_topics(cmp) -> str:
    n = cmp.summary["n_topics"]
    return f"{n.min()} topics" if n.min() == n.max() else f"{n.min()}–{n.max()} topics"


def _decision(cmp, test: str, latex: bool) -> str:
    label = TEST_LABELS[test][1 if latex else 0]
    corr = "" if test == "tukey" else CORRECTION_LABELS[cmp.correction] + " "
    lt = "$p < " + f"{cmp.alpha:g}$" if latex else f"p < {cmp.alpha:g}"
    against = " Each run was tested against the baseline only." if cmp.baseline else ""
    return f"({label}, {corr}{lt}, {_n_topics(cmp)}).{against}"


def _sup_unicode(marks: list[str]) -> str:
    if not marks:
        return ""
    if all(len(x) == 1 for x in marks):
        return "".join(SUPERSCRIPT[x] for x in marks)
    return "^(" + ",".join(marks) + ")"


def render_markdown(cmp, test: str, digits: int = 4, ci: bool = False) -> str:
    """See :meth:`pbtools.stats.comparison.Comparison.to_markdown`."""
    runs, measures, cells = _layout(cmp, test, digits)
    lines = [
        "| # | run | " + " | ".join(measures) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in measures) + " |",
    ]

    def cell(text, marks, _rest, bold, interval) -> str:
        out = (f"**{text}**" if bold else text) + _sup_unicode(marks)
        if ci:
            out += f" [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"
        return out

    for label, name, row in _rows(cmp, runs, measures, cells, cell, str):
        lines.append(f"| {label} | {name} | " + " | ".join(row) + " |")
    note = (
        "Superscripts: significantly better than the lettered run "
        + _decision(cmp, test, latex=False)
        + " Bold: the best mean of each measure."
    )
    if ci:
        note += f" Brackets: {1 - cmp.alpha:.0%} t confidence interval of the mean."
    # wrapped for a terminal, never inside "p < alpha"
    note = textwrap.fill(note.replace("p < ", "p\0<\0"), width=80, break_on_hyphens=False)
    return "\n".join(lines) + "\n\n" + note.replace("\0", " ") + "\n"


def _p(value: float, digits: int) -> str:
    """A p-value: ``digits`` decimals, or ``< 0.0001`` when it would print as zero."""
    if np.isnan(value):
        return ""
    return f"{value:.{digits}f}" if value >= 10**-digits else f"< {10**-digits:.{digits}f}"


def render_details(cmp, digits: int = 4) -> str:
    """See :meth:`pbtools.stats.comparison.Comparison.details_markdown`."""
    t = cmp.tests
    corr = CORRECTION_LABELS[cmp.correction].replace("-corrected", "")
    lines = [
        f"| measure | run | vs | test | diff | p | p ({corr}) | significant |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | --- |",
    ]
    for r in t.itertuples(index=False):
        pc = _p(r.p_corrected, digits) + (" (Tukey)" if r.correction == "tukey" else "")
        lines.append(
            f"| {r.measure} | {r.name_a} | {r.name_b} | {TEST_LABELS[r.test][0]} "
            f"| {r.diff:+.{digits}f} | {_p(r.p_value, digits)} | {pc} "
            f"| {'yes' if r.reject else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (for run and measure names)."""
    out = []
    for ch in str(text):
        if ch in "&%$#_{}":
            out.append("\\" + ch)
        elif ch == "\\":
            out.append(r"\textbackslash{}")
        elif ch == "~":
            out.append(r"\textasciitilde{}")
        elif ch == "^":
            out.append(r"\textasciicircum{}")
        else:
            out.append(ch)
    return "".join(out)


def render_latex(cmp, test: str, digits: int = 4, caption: bool = True) -> str:
    """See :meth:`pbtools.stats.comparison.Comparison.to_latex`."""
    runs, measures, cells = _layout(cmp, test, digits)
    sep = "" if all(len(r.label) == 1 for r in runs) else ","
    body = [
        r"\begin{tabular}{ll" + "r" * len(measures) + "}",
        r"\toprule",
        r"\# & Run & " + " & ".join(latex_escape(m) for m in measures) + r" \\",
        r"\midrule",
    ]

    def cell(text, marks, rest, bold, _interval) -> str:
        out = rf"\textbf{{{text}}}" if bold else text
        if marks:
            out += "$^{" + sep.join(marks) + "}$"
        if rest:
            out += r"\hphantom{$^{" + sep.join(rest) + "}$}"
        return out

    for label, name, row in _rows(cmp, runs, measures, cells, cell, latex_escape):
        body.append(f"{label} & {name} & " + " & ".join(row) + r" \\")
    body += [r"\bottomrule", r"\end{tabular}"]
    if not caption:
        return "\n".join(body) + "\n"
    text = (
        "Mean effectiveness. Superscripts mark the runs that a run is significantly better "
        + "than "
        + _decision(cmp, test, latex=True)
        + " The best mean of each measure is in bold."
    )
    head = [r"\begin{table}[t]", r"\centering", rf"\caption{{{text}}}", r"\label{tab:compare}"]
    return "\n".join(head + body + [r"\end{table}"]) + "\n"
