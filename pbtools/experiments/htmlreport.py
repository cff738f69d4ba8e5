"""The HTML bias report of a collection: what ``pbtools report`` writes.

:func:`html_report` turns an :class:`~pbtools.experiments.analysis.Analysis` into one
self-contained HTML page — the figures are inline SVG (:mod:`pbtools.experiments.figures`), the
style sheet is inline, there is no script and no external resource, so the page opens from disk
with no network. It shows, in order:

1. the properties in words (:func:`pbtools.experiments.report.properties_text`) and the summary
   sentences of every setup (:mod:`pbtools.experiments.sentences`);
2. the collection: |R|, |O|, |R_p|, d, |T| and per topic the judged and relevant documents and
   the judged share of the runs' top n (1 − the mean ``Unjudged@n`` over the runs);
3. the unjudged share (``Unjudged@n``, :mod:`pbtools.measures`) of every run at each cut-off,
   on the collection's qrels: the runs outside the pool stand out;
4. the bias: per run, its true score and every estimator's score when its organization is left
   out of the pool (leave-one-organization-out, all pooled runs), and per measure the error of
   every run against its true score;
5. each estimator's error (MAE, SRE, SRE*, Kendall's τ-b) per configuration, with one sentence
   on each estimator and each measure (:data:`~pbtools.experiments.report.ESTIMATOR_HELP`,
   :data:`~pbtools.experiments.report.MEASURE_HELP`; the tables:
   :mod:`pbtools.experiments.htmltables`);
6. the collection's runs that really were left out of the pool, scored by every estimator
   (:func:`pbtools.experiments.htmlparts.unpooled_scores`);
7. the input: the repairs of ``--lenient`` by kind and file, and the runs that lack judged
   topics (:func:`pbtools.experiments.htmlparts.input_section`).

Examples
--------
>>> from pbtools.experiments.analysis import SAMPLE, analyze
>>> a = analyze(SAMPLE, measures=("P@5", "P@10"), run_sets=("all",), progress=False)
>>> page = html_report(a)
>>> page.startswith("<!DOCTYPE html>"), page.count("<svg "), "http" in page.split("<svg")[0]
(True, 5, False)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pbtools.corrections.registry import skipped_message
from pbtools.experiments import figures
from pbtools.experiments.htmlparts import esc as _esc
from pbtools.experiments.htmlparts import input_section, unpooled_section
from pbtools.experiments.htmlparts import table as _table
from pbtools.experiments.htmltables import errors_table, legend_html, prediction_table
from pbtools.experiments.report import (
    fmt,
    headline,
    left_out_unit,
    properties_text,
    summary_text,
    unit_words,
)
from pbtools.io.desc import EACH_RUN_ITS_OWN

__all__ = ["collection_profile", "html_report", "legend_html", "unjudged_cutoffs", "write_html"]

_BY = {"org": "leave-one-organization-out", "run": "leave-one-run-out"}
_RUN_SETS = {"all": "all pooled runs", "top75": "top 75% of the runs"}

_CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:#1a1a1a;background:#fff;margin:0}
main{max-width:1120px;margin:0 auto;padding:24px 32px 48px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:36px 0 8px;
border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:16px;margin:20px 0 6px}
.meta{color:#555;font-size:13px;margin:0 0 16px}
.summary{font-size:16px;background:#f3f6fa;border-left:4px solid #1f77b4;padding:4px 16px;
margin:16px 0}.summary p{margin:8px 0}
figure{margin:12px 0 20px}figure svg{max-width:100%;height:auto;display:block}
figcaption{color:#444;font-size:13px;margin-top:4px}
table{border-collapse:collapse;font-size:13px;margin:8px 0 16px}
th,td{padding:3px 10px;text-align:right;border-bottom:1px solid #eee}
th{background:#fafafa;font-weight:600}td.l,th.l{text-align:left}
td.best{font-weight:700}.errors th{text-align:right;white-space:nowrap}
.errors th,.errors td{padding:3px 6px}
.errors th.g,.errors td.g{border-left:1px solid #ccc}
.errors thead tr:first-child th.g{text-align:center}
.props td:first-child{font-weight:600;text-align:left;white-space:nowrap}
.props td:nth-child(2){font-variant-numeric:tabular-nums}
.props td:last-child{text-align:left;color:#444}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:8px 0 16px}
dt{font-weight:600;white-space:nowrap}dd{margin:0}
.sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;
vertical-align:baseline}
details{margin:8px 0 16px}summary{cursor:pointer;color:#1f4e99}
nav a{margin-right:14px}footer{margin-top:40px;color:#666;font-size:12px}
code{font-size:13px}.scroll{overflow-x:auto}
"""


def unjudged_cutoffs(analysis) -> list[int]:
    """The cut-offs of the analysed measures (P@10 → 10, nDCG@20 → 20), else 10 and the pool
    depth."""
    from pbtools import measures

    cuts = {measures.parse(m).cutoff for m in analysis.params["measures"]} - {None}
    return sorted(cuts) if cuts else sorted({10, int(analysis.params["depth"])})


def collection_profile(analysis) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per topic and per run, how much of what the runs retrieved is judged.

    From one :func:`pbtools.measures.evaluate` of ``Unjudged@n`` (at :func:`unjudged_cutoffs`)
    and ``NumRel`` on the analysed runs and the collection's qrels.

    Returns
    -------
    topics : DataFrame
        ``qid``, ``judged`` (judged documents), ``relevant`` (NumRel), ``judged_share`` (1 − the
        mean Unjudged@n over the runs that answered the topic, n the largest cut-off).
    unjudged : DataFrame
        ``name``, ``n``, ``value`` (Unjudged@n averaged over the topics the run answered),
        ``pooled`` (whether the run is in the pool).
    """
    from pbtools import measures

    if analysis.frames is None:
        raise ValueError("the analysis has no frames (read back from Parquet?): rerun analyze()")
    runs, qrels, _ = analysis.frames
    cutoffs = unjudged_cutoffs(analysis)
    names = [f"Unjudged@{n}" for n in cutoffs]
    per = measures.evaluate(runs, qrels, [*names, "NumRel"], per_topic=True, warn=False)
    for c in ("name", "qid", "measure"):
        per[c] = per[c].astype(str)
    unj = per[per["measure"] != "NumRel"].copy()
    unj["n"] = unj["measure"].map(dict(zip(names, cutoffs, strict=True)))
    unjudged = unj.groupby(["name", "n"], sort=True)["value"].mean().reset_index()
    unjudged["pooled"] = unjudged["name"].isin(set(analysis.params["pooled_runs"]))
    top = unj[unj["n"] == cutoffs[-1]].groupby("qid")["value"].mean()
    rel = per[per["measure"] == "NumRel"].groupby("qid")["value"].first()
    judged = qrels.groupby(qrels["qid"].astype(str), observed=True).size()
    topics = pd.DataFrame({"judged": judged})
    topics["relevant"] = rel.reindex(topics.index).fillna(0).astype(int)
    topics["judged_share"] = 1 - top.reindex(topics.index)
    topics = topics.rename_axis("qid").reset_index()
    return topics, unjudged


def _worst(scores: pd.DataFrame, measure: str, unit: str) -> str:
    """The sentence naming the run that loses most on the reduced pool on ``measure``."""
    red = scores[(scores["measure"] == measure) & (scores["estimator"] == "reduced")]
    if red.empty:
        return ""
    loss = (red["true"] - red["estimate"]).to_numpy()
    i = int(np.argmax(loss))
    row = red.iloc[i]
    return (
        f"On {measure}, {int((loss > 0).sum())} of {len(red)} runs lose score; the most is run "
        f"{row['name']}, which loses {fmt(loss[i])} (true {fmt(row['true'])}, reduced "
        f"{fmt(row['estimate'])}) when its {unit}, {row['left_out']}, is left out."
    )


def _figure(fig, name: str, caption: str) -> str:
    return (
        f'<figure id="fig-{name}">{figures.svg(fig, name)}'
        f"<figcaption>{caption}</figcaption></figure>"
    )


def html_report(analysis, *, title: str | None = None) -> str:
    """The self-contained HTML bias report of ``analysis`` (module docstring: its sections).

    Parameters
    ----------
    analysis
        The result of :func:`pbtools.experiments.analysis.analyze` (with its ``frames``).
    title
        The page title (default: "Pool bias report: <collection>").

    Returns
    -------
    str
        One HTML document: inline CSS and SVG, no script, no external resource.
    """
    import pbtools

    p = analysis.properties.iloc[0]
    params = analysis.params
    name = str(p["collection"])
    title = title or f"Pool bias report: {name}"
    present = set(analysis.errors["estimator"].astype(str))
    ests = [e for e in params.get("estimators", sorted(present)) if e in present]
    h = headline(analysis)
    topics, unjudged = collection_profile(analysis)
    headline_text = summary_text(analysis)
    n_max = unjudged_cutoffs(analysis)[-1]
    share = topics["judged_share"]
    low = topics.loc[share.idxmin()] if share.notna().any() else None
    props = [
        ("|R|", int(p["R"]), "runs submitted to the track"),
        (
            "|O|",
            int(p["O"]),
            f"no organizations ({params['one_org_per_run']}): {EACH_RUN_ITS_OWN}"
            if params.get("one_org_per_run")
            else "organizations that submitted them",
        ),
        ("|R_p|", int(p["R_p"]), "runs whose documents were judged: the pool"),
        (
            "d",
            int(p["d"]),
            "pool depth: each pooled run's top d documents per topic were judged"
            if params.get("pool", "inferred") == "inferred"
            else "depth of the given pool: the deepest best rank of a judged document",
        ),
        ("|T|", int(p["T"]), "topics"),
        (
            "judged share",
            f"{100 * share.mean():.1f}%",
            f"of the runs' top {n_max} documents, averaged over runs and topics"
            + (
                f" (lowest: topic {low['qid']}, {100 * low['judged_share']:.1f}%)"
                if low is not None
                else ""
            ),
        ),
    ]
    if int(p["R_files"]) != int(p["R"]):
        props.append(
            ("run files", int(p["R_files"]), "several files share a run tag (one run each)")
        )
    prop_rows = "".join(
        f"<tr><td>{_esc(k)}</td><td>{_esc(v)}</td><td>{_esc(d)}</td></tr>" for k, v, d in props
    )
    s = analysis.scores
    bias_scores = s[(s["leave_out"] == h["leave_out"]) & (s["runs"] == h["runs"])]
    unit = "organization" if left_out_unit(analysis, h["leave_out"]) == "org" else "run"
    cutoffs = sorted(unjudged["n"].unique())
    unj_wide = unjudged.pivot_table(index="name", columns="n", values="value")
    pooled = unjudged.groupby("name")["pooled"].first()
    unj_rows = [
        [
            run,
            "yes" if pooled[run] else "no",
            *(fmt(100 * unj_wide.loc[run, n], 1) for n in cutoffs),
        ]
        for run in unj_wide.sort_values(cutoffs[-1], kind="stable").index
    ]
    topic_rows = [
        [r.qid, int(r.judged), int(r.relevant), fmt(100 * r.judged_share, 1)]
        for r in topics.itertuples(index=False)
    ]
    sections = [
        f'<section id="collection"><h2>1. The collection</h2><table class="props">'
        f"<tbody>{prop_rows}</tbody></table>",
        _figure(
            figures.topics_figure(topics, n_max),
            "topics",
            f"Per topic: judged and relevant documents in the qrels (top), and the share of the "
            f"runs' top {n_max} documents that is judged, averaged over the runs (bottom).",
        ),
        "<details><summary>per-topic numbers</summary>"
        + _table(["topic", "judged", "relevant", f"judged share of top {n_max} (%)"], topic_rows)
        + "</details></section>",
        '<section id="unjudged"><h2>2. Unjudged documents per run</h2>'
        "<p>The share of each run's top <i>n</i> documents that has no judgment in the qrels "
        "(<code>Unjudged@n</code> of <code>pbtools.measures</code>, averaged over the topics the "
        "run answered). The pooled runs are (nearly all) judged down to the pool depth; a run "
        "outside the pool is scored as if its unjudged documents were not relevant — the pool "
        "bias.</p>",
        _figure(
            figures.unjudged_figure(unjudged),
            "unjudged",
            "Unjudged share of every run's top n against the cut-off n; runs outside the pool "
            "in red, named.",
        ),
        "<details><summary>per-run numbers</summary>"
        + _table(["run", "pooled", *[f"Unjudged@{n} (%)" for n in cutoffs]], unj_rows)
        + "</details></section>",
        f'<section id="bias"><h2>3. The bias: {_esc(unit_words(analysis, h["leave_out"]))}'
        "</h2>"
        f"<p>Each pooled run is scored as if its {unit} had not contributed to the pool "
        f"({_esc(_RUN_SETS.get(h['runs'], h['runs']))}): the <b>reduced</b> score is what a new "
        f"run from outside the pool would get; the true score is the run's score on the whole "
        f"pool. {_esc(_worst(bias_scores, h['measure'], unit))}</p>",
        _figure(
            figures.bias_figure(bias_scores, h["measure"], ests),
            "bias",
            f"{h['measure']} of every evaluated run with its {unit} left out of the pool. Left: "
            "true score (black) and reduced-pool score (green). Right: each estimator's error, "
            "estimate − true; zero is the true score.",
        ),
        _figure(
            figures.error_scatter_figure(bias_scores, ests),
            "scatter",
            "Estimate − true score of every run against its true score, per measure; below "
            "zero the run is scored too low.",
        ),
        "</section>",
        '<section id="errors"><h2>4. How well each estimator corrects the bias</h2>',
        legend_html(ests, float(params.get("alpha", 0.05))),
        _figure(
            figures.errors_figure(analysis.errors, ests),
            "errors",
            "Error of each estimator per measure and leave-out configuration.",
        ),
    ]
    sections.append(
        "<p>The numbers, per configuration; MAE and SRE with their 95% interval over the evaluated "
        "runs (paired bootstrap: another set of systems would give other errors). Bold: the "
        "best estimator on MAE or SRE, only where its advantage over every other estimator "
        "exceeds that run-to-run noise (the 95% interval of the difference excludes 0)"
        + (f"; -: {_esc(skipped_message(skips))}" if (skips := params.get("skipped")) else "")
        + ".</p>"
    )
    for (by, runs), grp in analysis.errors.groupby(["leave_out", "runs"], sort=False):
        sections.append(
            f"<h3>{_esc(unit_words(analysis, by))}, {_esc(_RUN_SETS.get(runs, runs))}</h3>"
            + errors_table(grp, ests, analysis)
        )
    sections.append(prediction_table(analysis, ests))
    sections.append("</section>")
    sections.append(unpooled_section(analysis, ests, figures.estimator_label, fmt))
    sections.append(input_section(analysis))
    t = analysis.timings or {}
    made = (
        f"pbtools {_esc(pbtools.__version__)}; "
        f"measures {_esc(', '.join(params['measures']))}; leave-out "
        f"{_esc(', '.join(params['leave_out']))}; run sets "
        f"{_esc(', '.join(params['run_sets']))}; "
        + (f"protocol {_esc(params['protocol'])}" if params.get("protocol") else "default choices")
        + (
            f"; parse {t['parse']:.1f} s, analysis {t['analysis']:.1f} s"
            if "parse" in t and "analysis" in t
            else ""
        )
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body><main>"
        f"<h1>{_esc(title)}</h1>"
        f'<p class="meta">{_esc(properties_text(analysis))}</p>'
        '<div class="summary">'
        + "".join(f"<p>{_esc(t)}</p>" for t in headline_text.splitlines())
        + "</div>"
        '<nav><a href="#collection">collection</a><a href="#unjudged">unjudged documents</a>'
        '<a href="#bias">the bias</a><a href="#errors">estimators\' errors</a>'
        '<a href="#unpooled">runs outside the pool</a><a href="#input">the input</a></nav>'
        + "\n".join(sections)
        + f"<footer>Made by {made}.</footer></main></body></html>\n"
    )


def write_html(analysis, path) -> Path:
    """Write :func:`html_report` of ``analysis`` to ``path`` (UTF-8); return the path."""
    from pbtools.io.atomic import write_text

    return write_text(path, html_report(analysis))
