"""The tables of the HTML bias report (:mod:`pbtools.experiments.htmlreport`, its section on the
estimators' errors): each configuration's errors (:func:`errors_table`), the prediction half-widths
(:func:`prediction_table`) and the legend of the estimators and error measures
(:func:`legend_html`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.experiments import figures
from pbtools.experiments.htmlparts import esc, table
from pbtools.experiments.noise import best_estimator, prediction_halfwidths
from pbtools.experiments.report import ESTIMATOR_HELP, MEASURE_HELP, fmt, headline

__all__ = ["errors_table", "legend_html", "prediction_table"]


def errors_table(errors: pd.DataFrame, ests: list[str], analysis=None) -> str:
    """One configuration's errors per measure and estimator (two header rows), MAE with its
    interval over the runs; bold: :func:`~pbtools.experiments.noise.best_estimator`.

    ``errors``: one configuration's rows of ``Analysis.errors`` (``measure``, ``estimator``,
    ``mae``, ``sre``, ``sre_star``, ``tau``; ``mae_low``/``mae_high`` … when intervals were
    computed); ``analysis`` (optional) marks the best estimator of each measure.

    Examples
    --------
    >>> e = pd.DataFrame({"measure": "P@10", "estimator": ["reduced", "webber"],
    ...                   "mae": [0.0123, 0.01], "sre": [3, 1], "sre_star": 0, "tau": 0.9})
    >>> page = errors_table(e, ["reduced", "webber"])
    >>> page.count("<tr>"), '<td class="g">0.0123</td>' in page
    (3, True)
    """
    blocks = [("MAE", "mae"), ("SRE", "sre"), ("SRE*", "sre_star"), ("Kendall’s τ-b", "tau")]
    top = '<th class="l" rowspan="2">measure</th>' + "".join(
        f'<th class="g" colspan="{len(ests)}">{esc(m)}</th>' for m, _ in blocks
    )
    sub = "".join(
        f'<th class="{"g" if i == 0 else ""}"><span class="sw" style="background:'
        f'{figures.estimator_colour(e)}"></span>{esc(e)}</th>'
        for _ in blocks
        for i, e in enumerate(ests)
    )
    rows, best = [], []
    for measure, grp in errors.groupby("measure", sort=False):
        g = grp.set_index("estimator")
        row, mark = [str(measure)], [False]
        for _, col in blocks:
            vals = g[col].reindex(ests).astype(float)
            winner = None
            if analysis is not None and col in ("mae", "sre"):
                r0 = grp.iloc[0]
                winner = best_estimator(analysis, r0["leave_out"], r0["runs"], measure, col)
            mark += [winner is not None and e == winner[0] for e in ests]
            cells = [
                fmt(v) if col in ("mae", "tau") else ("-" if pd.isna(v) else str(int(v)))
                for v in vals
            ]
            if col in ("mae", "sre") and f"{col}_low" in g.columns:
                lo, hi = g[f"{col}_low"].reindex(ests), g[f"{col}_high"].reindex(ests)
                f = fmt if col == "mae" else (lambda v: f"{float(v):g}")
                cells = [
                    c if pd.isna(a) else f"{c} [{f(a)}, {f(b)}]"
                    for c, a, b in zip(cells, lo, hi, strict=True)
                ]
            row += cells
        rows.append(row)
        best.append(mark)
    body = "".join(
        "<tr>"
        + "".join(
            _td(
                v,
                "l"
                if i == 0
                else ("best" if b else "") + (" g" if (i - 1) % len(ests) == 0 else ""),
            )
            for i, (v, b) in enumerate(zip(row, mark, strict=True))
        )
        + "</tr>"
        for row, mark in zip(rows, best, strict=True)
    )
    return (
        f'<div class="scroll"><table class="errors"><thead><tr>{top}</tr><tr>{sub}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def prediction_table(analysis, ests: list[str]) -> str:
    """The 95 % prediction half-widths (:func:`pbtools.experiments.noise.prediction_halfwidths`)."""
    h = headline(analysis)
    q = prediction_halfwidths(analysis, h["leave_out"], h["runs"], ests)
    w = q.pivot_table(index="measure", columns="estimator", values="q", sort=False)
    show = {e: [("unbounded" if np.isinf(v) else fmt(v)) for v in w.get(e, [])] for e in ests}
    rows = [[m, *(show[e][i] if e in w else "-" for e in ests)] for i, m in enumerate(w.index)]
    n = int(q["n"].max()) if len(q) else 0
    return (
        "<h3>How far a new run's corrected score can be from its pooled score</h3>"
        f"<p>Half-width q of the 95% prediction interval estimate ± q for a new "
        f"organization's run, from the leave-one-out errors of the {n} evaluated runs "
        "(split conformal: it covers the pooled score of 95% of runs like the pooled ones; "
        "unbounded below 19 runs). <code>pbtools.correct</code> returns it as "
        "<code>pi_low</code>, <code>pi_high</code>, clipped to [0, 1] and, for P@n, to "
        "[reduced, reduced + unjudged share].</p>" + table(["measure", *ests], rows)
    )


def _td(value, cls: str) -> str:
    cls = cls.strip()
    return f'<td class="{cls}">{esc(value)}</td>' if cls else f"<td>{esc(value)}</td>"


def _greek(text: str) -> str:
    """The terminal's ASCII names of τ and α, in Greek for the page."""
    return text.replace("Kendall's tau-b", "Kendall’s τ-b").replace("alpha =", "α =")


def legend_html(ests: list[str], alpha: float) -> str:
    """The report's legend: the true score and each estimator of ``ests`` — its colour, label,
    name and description, read from its class (:mod:`pbtools.corrections.registry`) — then the
    error measures (``alpha``: the significance level of SRE*)."""
    items = [
        f'<dt><span class="sw" style="background:{figures.estimator_colour(e)}"></span>'
        f"{esc(figures.estimator_label(e))} <code>{esc(e)}</code></dt>"
        f"<dd>{esc(ESTIMATOR_HELP.get(e, ''))}</dd>"
        for e in ests
    ]
    items.insert(
        0,
        f'<dt><span class="sw" style="background:{figures.estimator_colour("true")}"></span>'
        f"{esc(figures.estimator_label('true'))}</dt>"
        f"<dd>{esc(ESTIMATOR_HELP.get('true', ''))}</dd>",
    )
    measures = [
        f"<dt>{esc('Kendall’s τ-b' if m == 'tau' else m)}</dt>"
        f"<dd>{esc(_greek(text.format(alpha=alpha)))}</dd>"
        for m, text in MEASURE_HELP.items()
    ]
    return (
        "<h3>The estimators</h3><dl>" + "".join(items) + "</dl>"
        "<h3>The error measures</h3><dl>" + "".join(measures) + "</dl>"
    )
