"""Parts of the HTML bias report (:mod:`pbtools.experiments.htmlreport`): tables, and the
sections on the collection's unpooled runs and on its input.

* :func:`unpooled_scores`: the runs of the collection that really were left out of its pool
  (``Analysis.params["pooled_runs"]``, from :func:`pbtools.pooling.infer_pool` or the strategy
  that built the pool), scored by every estimator of the analysis on its measures with
  :func:`pbtools.corrections.correct` (R_p: every pooled run; the analysis' protocol, depth and
  topic averaging). There is no true score for them: these are the numbers the analysis exists
  to correct.
* :func:`repair_counts`: the repairs of ``lenient=True`` (``Analysis.repairs``) counted by kind
  (:func:`pbtools.io.repairs.problem_kinds`) and file.
* :func:`topic_gaps`: the runs that lack judged topics, or answer topics the qrels do not judge
  (:func:`pbtools.measures.topic_coverage`).
"""

from __future__ import annotations

import html

import pandas as pd

__all__ = [
    "esc",
    "input_section",
    "repair_counts",
    "table",
    "topic_gaps",
    "unpooled_scores",
    "unpooled_section",
]


def esc(value) -> str:
    """``value`` as HTML text (quotes escaped too)."""
    return html.escape(str(value), quote=True)


def table(header: list[str], rows: list[list], left: int = 1, best=None) -> str:
    """An HTML table; the first ``left`` columns left-aligned; ``best`` marks bold cells."""
    th = "".join(
        f'<th class="l">{esc(h)}</th>' if i < left else f"<th>{esc(h)}</th>"
        for i, h in enumerate(header)
    )
    body = []
    for r, row in enumerate(rows):
        cells = []
        for i, v in enumerate(row):
            cls = "l" if i < left else ("best" if best is not None and best[r][i] else "")
            cells.append(f'<td class="{cls}">{esc(v)}</td>' if cls else f"<td>{esc(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def unpooled_scores(analysis) -> pd.DataFrame:
    """Every estimator's score of the collection's runs outside the pool.

    Parameters
    ----------
    analysis
        An :class:`~pbtools.experiments.analysis.Analysis` with its ``frames``.

    Returns
    -------
    DataFrame
        ``name``, ``measure``, ``estimator``, ``value`` (+ the estimators' indicator columns),
        one row per unpooled run, measure and estimator that supports the measure; empty when
        every run is pooled.

    Examples
    --------
    >>> from pbtools.experiments.analysis import SAMPLE, analyze
    >>> a = analyze(SAMPLE, measures=("P@10",), leave_out=("org",), run_sets=("all",))
    >>> unpooled_scores(a)[["name", "estimator"]].drop_duplicates().shape
    (6, 2)
    """
    import warnings

    from pbtools.corrections.correct import correct
    from pbtools.corrections.registry import SkippedMeasuresWarning

    if analysis.frames is None:
        raise ValueError("the analysis has no frames (read back from Parquet?): rerun analyze()")
    runs, qrels, orgs = analysis.frames
    p = analysis.params
    names = runs["name"].astype(str)
    pooled = names.isin(set(p["pooled_runs"]))
    if pooled.all() or not pooled.any():
        return pd.DataFrame(columns=["name", "measure", "estimator", "value"])
    ests = [e for e in p["estimators"] if e != "true"]
    with warnings.catch_warnings():  # the analysis said once which measures it skipped
        warnings.simplefilter("ignore", SkippedMeasuresWarning)
        out = correct(
            runs[~pooled.to_numpy()],
            (runs[pooled.to_numpy()], qrels, orgs),
            p["measures"],
            estimators=ests,
            protocol=p.get("protocol"),
            depth=int(p["depth"]),
            topics=p.get("topics"),
        )
    out["name"] = out["name"].astype(str)
    return out


def unpooled_section(analysis, ests: list[str], label, fmt) -> str:
    """The section on the runs outside the pool: per run and measure, every estimator's score
    (``label``: an estimator's display name; ``fmt``: the number format)."""
    scores = unpooled_scores(analysis)
    head = '<section id="unpooled"><h2>5. The runs outside the pool</h2>'
    if scores.empty:
        return head + "<p>Every run of the collection is in the pool.</p></section>"
    runs = sorted(scores["name"].unique())
    wide = scores.pivot_table(
        index=["name", "measure"], columns="estimator", values="value", observed=True
    )
    order = list(dict.fromkeys(analysis.params["measures"]))
    cols = [e for e in ests if e in wide.columns]
    rows = [
        [name, m, *(fmt(wide.at[(name, m), e]) if (name, m) in wide.index else "-" for e in cols)]
        for name in runs
        for m in order
        if (name, m) in wide.index
    ]
    header = ["run", "measure", *[label(e) for e in cols]]
    return (
        head + f"<p>{_n(len(runs), 'run')} of the collection "
        f"({esc(', '.join(runs))}) did not contribute to the pool: their documents were judged "
        "only where pooled runs retrieved them too. These are the scores the analysis exists "
        "to correct: each estimator's score of each of them, with every pooled run in R_p "
        "(there is no true score to compare with; sections 3-4 show how far each estimator "
        "is from the truth on runs left out on purpose). <code>reduced</code> is the run's "
        "score on the collection's qrels, its unjudged documents counted non-relevant. For a "
        "bootstrap interval "
        "over topics: <code>pbtools correct --bootstrap 200</code> or "
        "<code>pbtools.correct</code>.</p>" + table(header, rows, left=2) + "</section>"
    )


def repair_counts(repairs: pd.DataFrame | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The repairs counted by kind and by file.

    Returns
    -------
    by_kind : DataFrame
        ``kind``, ``repairs`` (count), ``files`` (how many files had one), most frequent first.
    by_file : DataFrame
        ``file``, ``repairs``, ``kinds`` (``"1015 × duplicate document, 1 × …"``).

    Examples
    --------
    >>> rep = pd.DataFrame({"file": ["a", "a", "b"], "line": [1, 2, 5],
    ...                     "problem": ["blank line", "blank line", "7 fields, expected 6"],
    ...                     "action": "skipped"})
    >>> repair_counts(rep)[0].to_numpy().tolist()
    [['blank line', 2, 1], ['wrong field count', 1, 1]]
    """
    from pbtools.io.repairs import problem_kinds

    if repairs is None or len(repairs) == 0:
        return (
            pd.DataFrame(columns=["kind", "repairs", "files"]),
            pd.DataFrame(columns=["file", "repairs", "kinds"]),
        )
    f = pd.DataFrame(
        {"file": repairs["file"].astype(str).to_numpy(), "kind": problem_kinds(repairs["problem"])}
    )
    by_kind = (
        f.groupby("kind", sort=False)
        .agg(repairs=("file", "size"), files=("file", "nunique"))
        .reset_index()
        .sort_values("repairs", ascending=False, kind="stable")
        .reset_index(drop=True)
    )
    counts = f.groupby(["file", "kind"], sort=False).size().reset_index(name="n")
    counts["text"] = counts["n"].astype(str) + " × " + counts["kind"]
    g = counts.groupby("file", sort=False)
    by_file = pd.DataFrame(
        {"repairs": g["n"].sum().astype(int), "kinds": g["text"].agg(", ".join)}
    ).reset_index()
    return by_kind, by_file


def topic_gaps(analysis) -> pd.DataFrame:
    """The runs whose topics differ from the judged ones: ``name``, ``n_missing``, ``missing``,
    ``n_unjudged``, ``unjudged`` (:func:`pbtools.measures.topic_coverage`)."""
    from pbtools.measures import topic_coverage

    runs, qrels, _ = analysis.frames
    return topic_coverage(runs, qrels)


_AVERAGED = {
    "judged": "their averages are over the judged topics they answered (trec_eval's default)",
    "all": "they score 0 on the topics they lack (every qrels topic counts: trec_eval -c)",
    "answered": "their averages are over every topic they answered (the 2015 code)",
}


def _n(count: int, noun: str) -> str:
    """``1 run``, ``2 runs``, ``32,702 repairs``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _listed(qids: list[str], at_most: int = 8) -> str:
    return ", ".join(qids[:at_most]) + (", …" if len(qids) > at_most else "")


def input_section(analysis) -> str:
    """The section on the input: the repairs of ``lenient=True`` by kind and by file, and the
    runs that lack judged topics (or answer unjudged ones)."""
    parts = ['<section id="input"><h2>6. The input</h2><h3>Repairs</h3>']
    rep = analysis.repairs
    if rep is None:
        parts.append(
            "<p>The analysis was given frames, or read its input under a protocol preset: its "
            "repairs, if any, were reported on standard error when it was read.</p>"
        )
    elif len(rep) == 0:
        parts.append("<p>The input was read without any repair.</p>")
    else:
        by_kind, by_file = repair_counts(rep)
        lines = int(rep["line"].notna().sum())
        parts.append(
            f"<p>{_n(len(rep), 'repair')} were made reading the input "
            f"(<code>--lenient</code>) in {_n(by_file.shape[0], 'file')}, {lines:,} of them of "
            "single lines; the repairs frame "
            "(<code>io.read_collection(…, lenient=True).repairs</code>) lists each with its "
            "file, line, problem and action.</p>"
            + table(
                ["kind of problem", "repairs", "files"],
                [[r.kind, f"{r.repairs:,}", r.files] for r in by_kind.itertuples(index=False)],
            )
            + "<details><summary>per file</summary>"
            + table(
                ["file", "repairs", "kinds"],
                [[r.file, f"{r.repairs:,}", r.kinds] for r in by_file.itertuples(index=False)],
                left=1,
            )
            + "</details>"
        )
    parts.append("<h3>Runs that lack topics</h3>")
    gaps = topic_gaps(analysis)
    lack = gaps[gaps["n_missing"] > 0] if len(gaps) else gaps
    extra = gaps[gaps["n_unjudged"] > 0] if len(gaps) else gaps
    mode = str(analysis.params.get("topics", "judged"))
    if lack.empty:
        parts.append("<p>Every run answers every judged topic.</p>")
    else:
        n_topics = int(analysis.properties.iloc[0]["T"])
        parts.append(
            f"<p>{_n(len(lack), 'run')} {'lacks' if len(lack) == 1 else 'lack'} judged topics: "
            f"{esc(_AVERAGED.get(mode, mode))}.</p>"
            + table(
                ["run", "the judged topics it lacks", "how many"],
                [
                    [r.name, _listed(list(r.missing)), f"{r.n_missing} of {n_topics}"]
                    for r in lack.itertuples(index=False)
                ],
                left=2,
            )
        )
    if not extra.empty:
        qids = sorted({q for r in extra.itertuples(index=False) for q in r.unjudged})
        parts.append(
            f"<p>{_n(len(extra), 'run')} {'answers' if len(extra) == 1 else 'answer'} topics "
            "the qrels do "
            f"not judge ({esc(_listed(qids))}): those topics are "
            + ("scored 0." if mode == "answered" else "not evaluated.")
            + "</p>"
        )
    parts.append("</section>")
    return "".join(parts)
