"""The reports of a bias analysis: terminal report, summary sentence, HTML page, progress.

The HTML page is checked twice: statically (no external resource, unique ids, every section and
number present) and in headless Chromium (renders with no console message; screenshot), which
is skipped with a reason where no Chromium is installed (.ci/run installs Debian's).
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import re
import shutil
import struct
import subprocess
import warnings
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from pbtools import measures
from pbtools.cli import main
from pbtools.experiments import figures, htmlparts, htmlreport, report
from pbtools.experiments.analysis import SAMPLE, Analysis, analyze
from pbtools.frames import TrecFormatWarning


@pytest.fixture(scope="module")
def result():
    return analyze(SAMPLE, measures=("P@5", "P@10", "P@20"), progress=False)


@pytest.fixture(scope="module")
def page(result):
    return htmlreport.html_report(result)


# --------------------------------------------------------------------------------------------
# the terminal report
# --------------------------------------------------------------------------------------------


def test_text_report_fits_80_columns_and_explains_itself(result):
    text = report.text_report(result)
    assert max(len(line) for line in text.splitlines()) <= 80
    # one table per configuration, each with its title
    assert text.count("leave-one-organization-out, all pooled runs") == 1
    assert text.count("leave-one-run-out, top 75% of the runs") == 1
    # the legend names every estimator and error measure
    legend = text[text.index("what the columns mean:") :]
    for word in ("reduced", "webber", "lipani", "MAE", "SRE", "SRE*", "tau"):
        assert re.search(rf"^  {re.escape(word)} ", legend, re.M), word
    assert "Leave-one-organization-out, all pooled runs (10 runs): a run whose" in text
    assert "time:" not in text  # timing only when verbose
    assert "-0.0000" not in text


def _blocks(text: str, title: str) -> dict[str, dict[str, list[str]]]:
    """The table under ``title``, read back: block title → measure → the estimators' cells."""
    lines = text[text.index(title) :].splitlines()[1:]
    out: dict[str, dict[str, list[str]]] = {}
    i = 0
    while i + 1 < len(lines) and lines[i].startswith(" "):  # a band's block titles
        blocks = re.split(r" {2,}", lines[i].strip())
        n = len(lines[i + 1].split()) - 1  # estimators × blocks
        k = n // len(blocks)
        i += 2
        while i < len(lines) and lines[i].strip():
            measure, *cells = lines[i].split()
            for j, b in enumerate(blocks):
                out.setdefault(b, {})[measure] = cells[j * k : (j + 1) * k]
            i += 1
        i += 1  # the blank line between bands
    return out


def test_sre_and_sre_star_have_their_own_columns(result):
    text = report.text_report(result)
    assert "SRE / SRE*" not in text and not re.search(r"\d/\d", text)  # no "25/4" cells
    title = "leave-one-organization-out, all pooled runs"
    table = _blocks(text, title)
    assert list(table) == ["MAE", "SRE", "SRE*", "Kendall's tau"]
    e = result.errors.query("leave_out == 'org' and runs == 'all' and measure == 'P@10'")
    e = e.set_index("estimator")
    for block, col in (("SRE", "sre"), ("SRE*", "sre_star"), ("MAE", "mae")):
        want = [
            report.fmt(e.at[x, col]) if col == "mae" else str(int(e.at[x, col]))
            for x in ("reduced", "webber", "lipani")
        ]
        assert table[block]["P@10"] == want, (block, table[block]["P@10"], want)
    rows = [line for line in text.splitlines() if re.match(r"^ {1,2}P@(5|10|20)\s", line)]
    assert len(rows) == 4 * 3 * 2  # configurations × cut-offs × two bands of 80 columns
    for line in rows:
        assert all(re.fullmatch(r"\d+|\d\.\d{4}|-", c) for c in line.split()[1:]), line


def test_wide_and_verbose(result):
    wide = report.text_report(result, wide=True, verbose=True)
    assert len(re.findall(r"^  out  runs +measure", wide, re.M)) == 1  # one table for all
    assert "leave-one-organization-out, all pooled runs" not in wide
    assert max(len(line) for line in wide.splitlines()) > 80
    assert "time: parse" in wide and "× the parse time" in wide
    assert result.report(wide=True, verbose=True) == wide  # Analysis.report delegates


def test_fmt_never_prints_negative_zero():
    assert report.fmt(-0.0) == "0.0000"
    assert report.fmt(-0.00004) == "0.0000"
    assert report.fmt(-0.00005, 3) == "0.000"
    assert report.fmt(-0.5) == "-0.5000"
    assert report.fmt(np.nan) == "-"


# --------------------------------------------------------------------------------------------
# the summary sentence
# --------------------------------------------------------------------------------------------


def test_summary_numbers_come_from_the_scores(result):
    paragraphs = report.summary_text(result).splitlines()
    setups = result.errors[["leave_out", "runs"]].drop_duplicates().itertuples(index=False)
    assert len(paragraphs) == 4  # one per setup, each naming it
    s = result.scores
    for text, (by, runs) in zip(paragraphs, setups, strict=True):
        sel = s[(s["leave_out"] == by) & (s["runs"] == runs) & (s["measure"] == "P@10")]
        mae = sel.groupby("estimator").apply(
            lambda g: np.mean(np.abs(g["true"] - g["estimate"])), include_groups=False
        )
        red = sel[sel["estimator"] == "reduced"]
        name = {"org": "Leave-one-organization-out", "run": "Leave-one-run-out"}[by]
        run_set = {"all": "all pooled runs", "top75": "top 75% of the runs"}[runs]
        assert text.startswith(f"{name}, {run_set} ({red['name'].nunique()} runs): a run ")
        loss = (red["true"] - red["estimate"]).mean()
        assert f"loses on average {loss:.4f} P@10" in text
        for est, label in (("webber", "Webber & Park"), ("lipani", "Lipani et al.")):
            pct = int(abs(1 - mae[est] / mae["reduced"]) * 100 + 0.5)
            verb = "cut the error " if mae[est] < mae["reduced"] else "increase the error "
            assert re.search(rf"{re.escape(label)} ({verb})?by {pct}%", text), (est, text)
        assert "At P@20 the loss is" in text  # the deepest cut-off, too
    h = report.headline(result, measure="P@20")
    assert h["measure"] == "P@20" and h["loss"] == pytest.approx(h["mae"]["reduced"])
    text = report.text_report(result)
    assert "in short" in text and text.count("\n- Leave-one-") == 4


def _fake(true, estimates, measures=("P@10",)):
    """A one-setup Analysis with hand-made scores (three runs); ``estimates``: estimator →
    values (the same at every measure) or measure → values."""
    rows, errs = [], []
    for m in measures:
        key = {"leave_out": "run", "runs": "all", "measure": m}
        for est, values in estimates.items():
            values = values.get(m) if isinstance(values, dict) else values
            if values is None:  # the estimator does not support the measure
                continue
            for name, t, v in zip(("a", "b", "c"), true, values, strict=True):
                rows.append(
                    {**key, "estimator": est, "name": name, "true": t, "estimate": v,
                     "left_out": name}
                )  # fmt: skip
            mae = float(np.mean(np.abs(np.subtract(true, values))))
            errs.append({**key, "estimator": est, "sre": 0, "sre_star": 0, "tau": 1.0, "mae": mae})
    props = pd.DataFrame([dict(collection="fake", R=3, O=3, R_p=3, d=10, T=1, R_files=3,
                               R_p_files=3, pooled_runs="[]")])  # fmt: skip
    return Analysis(
        properties=props,
        scores=pd.DataFrame(rows),
        truth=pd.DataFrame(),
        significance=pd.DataFrame(),
        errors=pd.DataFrame(errs),
        params={"estimators": list(estimates), "alpha": 0.05, "measures": list(measures)},
    )


def test_summary_says_when_a_correction_adds_error_or_there_is_no_bias():
    true = [0.5, 0.4, 0.3]
    a = _fake(
        true, {"reduced": [0.4, 0.3, 0.3], "webber": [0.5, 0.4, 0.3], "lipani": [0.2, 0.1, 0.3]}
    )
    s = report.summary(a)
    assert s.startswith("Leave-one-run-out, all pooled runs (3 runs): a run that did not ")
    assert "loses on average 0.0667 P@10" in s
    assert "Webber & Park cut the error by 100%" in s
    assert "Lipani et al. increase the error by 200% (worse than no correction)" in s
    none = _fake(true, {"reduced": true, "webber": true, "lipani": [0.5, 0.4, 0.2]})
    s = report.summary(none)
    assert "loses no P@10 on average and the uncorrected score has no error" in s
    assert "Webber & Park stays exact, Lipani et al. adds an error of 0.0333" in s
    assert "the uncorrected score has no error" in report.text_report(none)
    same = _fake(true, {"reduced": [0.4, 0.4, 0.3], "webber": [0.4, 0.4, 0.3]})
    assert "Webber & Park leave the error unchanged." in report.summary(same)
    gain = _fake(true, {"reduced": [0.6, 0.4, 0.3], "webber": [0.5, 0.4, 0.3]})
    assert "a run that did not contribute to the pool gains on average 0.0333 P@10" in (
        report.summary(gain)
    )
    tiny = _fake(true, {"reduced": [0.5, 0.4, 0.2], "webber": [0.5, 0.4, 0.2001]})
    assert "Webber & Park change the error by less than 1%" in report.summary(tiny)


def test_summary_covers_every_measure_an_estimator_is_worse_at_and_missing_ones():
    true = [0.5, 0.4, 0.3]
    red = [0.4, 0.3, 0.3]
    a = _fake(
        true,
        {
            "reduced": red,
            "webber": {"P@5": [0.2, 0.1, 0.3], "P@10": [0.5, 0.4, 0.3], "AP": [0.5, 0.4, 0.3]},
            "lipani": {"P@5": red, "P@10": [0.45, 0.35, 0.3]},  # no AP estimate
        },
        measures=("P@5", "P@10", "AP"),
    )
    s = report.summary(a)
    # the headline (P@10) and the deepest measure (AP), then the rest where it is worse
    assert "Webber & Park cut the error by 100%, Lipani et al. by 50%." in s
    assert "At AP the loss is 0.0667; Webber & Park cut the error by 100%, Lipani et al. " \
        "gives no estimate." in s  # fmt: skip
    assert s.endswith(
        "Webber & Park's estimate is worse than no correction at P@5 (MAE 0.2000 against 0.0667)."
    )
    worse_at_headline = _fake(
        true, {"reduced": red, "webber": {"P@5": [0.2, 0.1, 0.3], "P@10": [0.2, 0.1, 0.3]}},
        measures=("P@5", "P@10"),
    )  # fmt: skip
    s = report.summary(worse_at_headline)
    assert "Webber & Park increase the error by 200% (worse than no correction)" in s
    assert s.endswith("Webber & Park's estimate is also worse than no correction at P@5 (MAE "
                      "0.2000 against 0.0667).")  # fmt: skip


@pytest.fixture(scope="module")
def trec2(trec2_dir):
    """TREC-2 analysed leniently at P@5 and P@10 over all pooled runs (its repairs kept)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrecFormatWarning)
        warnings.simplefilter("ignore", measures.CoverageWarning)
        return analyze(
            trec2_dir, lenient=True, measures=("P@5", "P@10"), run_sets=("all",), progress=False
        )


@pytest.mark.slow
def test_summary_on_trec2_says_webber_is_worse_at_leave_one_run_out(trec2):
    a = trec2
    org, run = report.summary_text(a).splitlines()
    assert org.startswith("Leave-one-organization-out, all pooled runs (34 runs): ")
    assert (
        "loses on average 0.0081 P@10; Webber & Park's change of the error (-16% to +22%) is "
        "within the run-to-run noise" in org
    )
    assert "Webber & Park's estimate is worse than no correction at P@5 (MAE 0.0064 " in org
    assert run.startswith("Leave-one-run-out, all pooled runs (34 runs): a run that did not ")
    assert (
        "Webber & Park increase the error by 48% (95% interval 12-176%; worse than no "
        "correction)" in run
    )
    assert run.endswith(
        "Webber & Park's estimate is also worse than no correction at P@5 (MAE 0.0064 against "
        "0.0035)."
    )
    text = report.text_report(a)
    assert text.startswith("collection TREC-2/Adhoc: |R| = 37 runs (38 files), |O| = 22 ")
    assert "2 runs outside the pool: rutfmed, uicah" in " ".join(text.split())


# --------------------------------------------------------------------------------------------
# the HTML page
# --------------------------------------------------------------------------------------------


class _Refs(HTMLParser):
    """Every tag, id and resource reference of a page."""

    def __init__(self):
        super().__init__()
        self.tags, self.ids, self.refs = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for k, v in attrs:
            if k == "id":
                self.ids.append(v)
            if k in ("src", "href", "xlink:href", "action", "data", "poster", "srcset"):
                self.refs.append(v)


def test_page_is_self_contained(page):
    parser = _Refs()
    parser.feed(page)
    assert not {"script", "link", "img", "iframe", "object"} & set(parser.tags)
    assert all(ref.startswith("#") for ref in parser.refs), [
        r for r in parser.refs if not r.startswith("#")
    ]
    assert not re.findall(r"url\((?!#)", page)  # CSS/SVG urls only point inside the page
    assert "@import" not in page
    dupes = pd.Series(parser.ids).value_counts()
    assert dupes.max() == 1, dupes[dupes > 1].index.tolist()[:5]  # ids unique across figures


def test_page_shows_the_bias_at_a_glance(page, result):
    assert page.count("<svg ") == 5  # topics, unjudged, bias, scatter, errors
    assert html.escape(report.summary(result)) in page
    for e in ("reduced", "webber", "lipani"):
        assert html.escape(report.ESTIMATOR_HELP[e]) in page
        assert figures.ESTIMATOR_COLOURS[e] in page  # one palette, in the legend and the plots
    for m in ("MAE", "SRE", "SRE*", "Kendall’s τ-b"):
        assert f"<dt>{m}</dt>" in page
    p = result.properties.iloc[0]
    for key in ("R", "O", "R_p", "d", "T"):
        assert f"<td>{int(p[key])}</td>" in page
    for name in result.scores["name"].unique():
        assert f">{name}<" in page  # every run in the per-run table


def test_collection_profile_agrees_with_the_pool(result):
    topics, unjudged = htmlreport.collection_profile(result)
    # the sample is pooled to depth 20: a pooled run's top 20 is judged, an unpooled one's not
    shallow = unjudged[unjudged["n"] <= 20]
    assert (shallow.loc[shallow["pooled"], "value"] == 0).all()
    assert (shallow.loc[~shallow["pooled"], "value"] > 0).all()
    assert unjudged["pooled"].sum() == 10 * 3 and (~unjudged["pooled"]).sum() == 2 * 3
    # judged share per topic, recomputed by hand: judged docs in each run's top 20, over 20
    runs, qrels, _ = result.frames
    top = runs[runs["rank"] <= 20][["name", "qid", "docno"]].astype(str)
    judged = top.merge(qrels[["qid", "docno"]].astype(str), how="left", indicator=True)
    share = (
        ((judged["_merge"] == "both").groupby([judged["name"], judged["qid"]]).mean())
        .groupby("qid")
        .mean()
    )
    assert len(topics) == 20 and (topics["judged"] > topics["relevant"]).all()
    # the page's share is at the deepest cut-off (20 here)
    got = topics.set_index("qid")["judged_share"]
    pd.testing.assert_series_equal(got.reindex(share.index), share, check_names=False)
    rel = measures.evaluate(runs, qrels, ["NumRel"], per_topic=True, warn=False)
    assert topics["relevant"].sum() == rel.groupby("qid", observed=True)["value"].first().sum()


def _section(page: str, sid: str) -> str:
    """The text of the page's section ``sid``, tags removed, whitespace collapsed."""
    part = page[page.index(f'<section id="{sid}">') :]
    part = re.sub(r"</?(code|b|i)>", "", part[: part.index("</section>")])
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", part)).split())


def test_page_scores_the_runs_outside_the_pool(result, page):
    import pbtools

    text = _section(page, "unpooled")
    assert "2 runs of the collection (o03r1, o06r1) did not contribute to the pool" in text
    runs, qrels, orgs = result.frames
    for name in ("o03r1", "o06r1"):  # the one-liner infers the pool on its own
        new = runs[runs["name"].astype(str) == name]
        rest = runs[runs["name"].astype(str) != name]
        got = pbtools.correct(new, (rest, qrels, orgs), ["P@5", "P@10", "P@20"], n_boot=1)
        wide = got.pivot_table(index="measure", columns="estimator", values="value")
        for m in ("P@5", "P@10", "P@20"):
            cells = " ".join(report.fmt(wide.at[m, e]) for e in ("reduced", "webber", "lipani"))
            assert f"{name} {m} {cells}" in text, (name, m, cells)
    assert "The input was read without any repair." in _section(page, "input")
    assert "Every run answers every judged topic." in _section(page, "input")
    assert '<a href="#unpooled">' in page and '<a href="#input">' in page


@pytest.mark.slow  # a whole analysis and its HTML page
def test_page_reports_repairs_and_runs_that_lack_topics(tmp_path):
    track = tmp_path / "DIRTY" / "Adhoc"
    shutil.copytree(SAMPLE, track, ignore=shutil.ignore_patterns("truth"))
    run = track / "Runs" / "input.o02r1"
    lines = run.read_text().splitlines()
    run.write_text("\n".join([lines[0], "", lines[1], "", lines[1], *lines[2:]]) + "\n")
    lacking = track / "Runs" / "input.o04r2"
    kept = [line for line in lacking.read_text().splitlines() if not line.startswith("003 ")]
    lacking.write_text("\n".join(kept) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrecFormatWarning)
        a = analyze(track, lenient=True, measures=("P@10",), run_sets=("all",), progress=False)
    assert a.params["collection"] == "DIRTY/Adhoc"
    text = _section(htmlreport.html_report(a), "input")
    assert "3 repairs were made reading the input (--lenient) in 1 file, 3 of them" in text
    assert "blank line 2 1 duplicate document 1 1" in text
    assert f"{run} 3 2 × blank line, 1 × duplicate document" in text
    assert "1 run lacks judged topics: their averages are over the judged topics" in text
    assert "o04r2 003 1 of 20" in text


@pytest.mark.slow
def test_page_on_trec2_shows_rutfmed_uicah_and_the_repairs(trec2):
    page = htmlreport.html_report(trec2)
    text = _section(page, "unpooled")
    assert "2 runs of the collection (rutfmed, uicah) did not contribute" in text
    assert re.search(r"rutfmed P@10 0\.4042 \d\.\d{4} 0\.4042", text)  # the official score
    inp = _section(page, "input")
    assert "32,702 repairs were made reading the input (--lenient) in 8 files, 32,700 of" in inp
    assert "duplicate document 31,421 6 wrong field count 1,254 2 blank line 25 1" in inp
    assert "rutcomb1 106, 108, 109, 112, 113, 114, 115, 119, … 25 of 50" in inp
    assert "rutfmed 106, 108, 109, 111, 112, 113, 114, 115, … 26 of 50" in inp
    assert "Pool bias report: TREC-2/Adhoc" in page


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _render(browser: str, html_file, png) -> list[str]:
    """Render ``html_file`` headless, screenshot to ``png``; return the console messages."""
    proc = subprocess.run(
        [
            browser,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,2400",
            f"--screenshot={png}",
            html_file.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert png.is_file(), proc.stderr[-2000:]
    return [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.slow
def test_page_renders_in_headless_chromium(tmp_path, page):
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium on PATH (Debian: apt-get install chromium)")
    # the check itself works: a page with a console error is caught
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><body><script>console.error('boom')</script></body></html>"
    )
    assert any("boom" in m for m in _render(browser, bad, tmp_path / "bad.png"))
    good = tmp_path / "report.html"
    good.write_text(page, encoding="utf-8")
    png = tmp_path / "report.png"
    assert _render(browser, good, png) == []
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1200, 2400)
    assert len(data) > 50_000  # text and figures, not a blank page


# --------------------------------------------------------------------------------------------
# the commands
# --------------------------------------------------------------------------------------------


@pytest.mark.slow  # a whole analysis and its HTML page
def test_cli_report_writes_the_page(capsys, tmp_path):
    out = tmp_path / "r.html"
    code = main(["report", "-m", "P@10", "--run-sets", "all", "--no-progress", "-o", str(out)])
    msg = capsys.readouterr().out
    assert code == 0, msg
    assert out.is_file() and out.read_text().startswith("<!DOCTYPE html>")
    assert f"wrote {out}" in msg


@pytest.mark.parametrize("where", ["missing/r.html", "."])
def test_cli_report_refuses_a_bad_output_before_work(capsys, tmp_path, where):
    code = main(["report", "--no-progress", "-o", str(tmp_path / where)])
    err = capsys.readouterr().err
    assert code == 2 and "pbtools: error: -o" in err


def test_cli_analyze_wide_and_verbose(capsys):
    base = ["analyze", "-m", "P@10", "--run-sets", "all", "--no-progress"]
    assert main(base) == 0
    narrow = capsys.readouterr().out
    assert "time:" not in narrow and max(map(len, narrow.splitlines())) <= 80
    assert main([*base, "--wide", "--verbose"]) == 0
    wide = capsys.readouterr().out
    assert "time: parse" in wide and "out  runs" in wide


def test_cli_analyze_refuses_unknown_leave_out(capsys):
    assert main(["analyze", "--leave-out", "team", "--no-progress"]) == 2
    assert "--leave-out: 'team'" in capsys.readouterr().err


def test_track_name_is_the_path_below_the_root():
    from pbtools import io

    assert io.track_name("data/trec/TREC-2/Adhoc") == "TREC-2/Adhoc"  # not "Adhoc"
    assert io.track_name("data/trec/TREC-2/Adhoc/", "data/trec") == "TREC-2/Adhoc"
    assert io.track_name("data/trec/TOY", "data/trec") == "TOY"
    assert io.track_name("data/trec/TOY", "data/trec/TOY") == "trec/TOY"  # the root itself
    assert io.track_name(["x/T/Adhoc/QRels/q", "x/T/Adhoc/Runs"]) == "T/Adhoc"  # QRELS RUNS
    from pbtools.experiments.load import collection_name

    assert collection_name(None) == collection_name(SAMPLE) == "sample"  # the bundled one


@pytest.mark.slow  # a whole analysis and its HTML page
def test_cli_names_the_track_by_its_path_or_name(capsys, tmp_path):
    track = tmp_path / "TREC-9" / "Web"
    shutil.copytree(SAMPLE, track, ignore=shutil.ignore_patterns("truth"))
    base = ["-m", "P@10", "--leave-out", "org", "--run-sets", "all", "--no-progress"]
    assert main(["analyze", str(track), *base]) == 0
    out = capsys.readouterr().out
    assert out.startswith("collection TREC-9/Web: |R| = 12 runs, |O| = 6 organizations,")
    assert "On Web" not in out and "collection Web" not in out
    qrels, runs = str(track / "QRels" / "qrels"), str(track / "Runs")
    assert main(["analyze", qrels, runs, "--desc", str(track / "desc.xml"), *base]) == 0
    assert capsys.readouterr().out.startswith("collection TREC-9/Web: ")
    assert main(["analyze", str(track), "--name", "my track", *base]) == 0
    assert capsys.readouterr().out.startswith("collection my track: ")
    page = tmp_path / "r.html"
    assert main(["report", str(track), "--name", "Web 2000", *base, "-o", str(page)]) == 0
    assert "<title>Pool bias report: Web 2000</title>" in page.read_text()
    assert main(["analyze", "--name", " ", *base]) == 2
    assert "--name needs a non-empty name" in capsys.readouterr().err


def test_header_explains_the_symbols_in_words(result):
    text = report.text_report(result)
    head = " ".join(text[: text.index("\n\n")].split())
    assert head == (
        "collection sample: |R| = 12 runs, |O| = 6 organizations, |R_p| = 10 pooled runs, "
        "d = 20 pool depth (each pooled run's top 20 documents per topic judged), |T| = 20 "
        "topics; 2 runs outside the pool: o03r1, o06r1"
    )
    for line in text[: text.index("\n\n")].splitlines():  # a symbol stays with its value
        assert not re.search(r"(\||\bd) ?$", line) and not line.strip().startswith("="), line
    given = dataclasses.replace(result, params={**result.params, "pool": "given"})
    assert "d = 20 depth of the given pool (the deepest best rank of a judged document)" in (
        report.properties_text(given)
    )  # a strategy's pool (analyze --strategy) is not a depth-d pool


@pytest.mark.slow  # a whole analysis and its HTML page
def test_page_when_every_run_is_pooled():
    every = [f"o{o:02d}r{r}" for o in range(1, 7) for r in (1, 2)]
    a = analyze(
        SAMPLE, measures=["P@10"], leave_out=["org"], run_sets=["all"], pooled=every, depth=20
    )
    assert a.params["pool"] == "given" and htmlparts.unpooled_scores(a).empty
    assert "2 runs outside the pool" not in report.properties_text(a)
    assert "Every run of the collection is in the pool." in htmlreport.html_report(a)


def test_help_texts_print_no_escaped_percent(capsys):
    from pbtools.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert "%%" not in parser.format_help()
    for name, sp in sub.choices.items():
        text = sp.format_help()
        assert "%%" not in text, name
    assert "the top 75%: every run" in " ".join(sub.choices["analyze"].format_help().split())
    assert main(["analyze", "--help"]) == 0
    out = capsys.readouterr().out
    assert "75%" in out and "75%%" not in out


# --------------------------------------------------------------------------------------------
# progress
# --------------------------------------------------------------------------------------------


def test_analyze_shows_every_stage(capsys):
    pytest.importorskip("tqdm")
    analyze(SAMPLE, measures=("P@10",), leave_out=("org",), run_sets=("all",), progress=True)
    err = capsys.readouterr().err
    for name in ("reading", "pool inference", "leave-outs and truth", "significance"):
        assert f"analyze: {name}" in err, name


def test_no_progress_off_a_terminal(capsys):
    analyze(SAMPLE, measures=("P@10",), leave_out=("org",), run_sets=("all",))  # stderr: not a tty
    assert capsys.readouterr().err == ""


def test_stage_progress_closes_on_error():
    from pbtools import progress as prog

    @prog.staged("one", "two", desc="demo")
    def fails(progress=None):
        prog.stage("one")
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        fails(progress=False)
    assert prog._STAGES.get() is None  # the stage context is gone with the function
    with pytest.raises(ValueError, match="unknown stage"):
        prog.StageProgress(["a"], progress=False)("b")
