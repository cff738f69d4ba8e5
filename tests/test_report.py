"""The reports of a bias analysis: terminal report, summary sentence, HTML page, progress.

The HTML page is checked twice: statically (no external resource, unique ids, every section and
number present) and in headless Chromium (renders with no console message; screenshot), which
is skipped with a reason where no Chromium is installed (.ci/run installs Debian's).
"""

from __future__ import annotations

import html
import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from pbtools import measures
from pbtools.cli import main
from pbtools.experiments import figures, htmlreport, report
from pbtools.experiments.analysis import SAMPLE, Analysis, analyze


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
    assert report.summary(result).split(";")[0].split(", a run")[0] in text
    assert "time:" not in text  # timing only when verbose
    assert "-0.0000" not in text


def test_text_report_counts_are_integers(result):
    text = report.text_report(result)
    rows = [line for line in text.splitlines() if re.match(r"^ {1,2}P@(5|10|20)\s", line)]
    assert len(rows) == 4 * 3  # configurations × cut-offs
    for line in rows:
        cells = line.split()
        pairs = cells[4:7]  # SRE/SRE* of the three estimators
        assert all(re.fullmatch(r"\d+/(\d+|-)", c) for c in pairs), line
    e = result.errors
    q = "leave_out == 'org' and runs == 'all' and measure == 'P@10' and estimator == 'webber'"
    row = e.query(q).iloc[0]
    assert f"{int(row['sre'])}/{int(row['sre_star'])}" in text


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
    s = result.scores
    sel = s[(s["leave_out"] == "org") & (s["runs"] == "all") & (s["measure"] == "P@10")]
    mae = sel.groupby("estimator").apply(lambda g: np.mean(np.abs(g["true"] - g["estimate"])))
    red = sel[sel["estimator"] == "reduced"]
    loss = (red["true"] - red["estimate"]).mean()
    sentence = report.summary(result)
    assert f"loses on average {loss:.4f} P@10" in sentence
    assert f"(mean over {red['name'].nunique()} runs)" in sentence
    for est, label in (("webber", "Webber & Park"), ("lipani", "Lipani et al.")):
        pct = int(abs(1 - mae[est] / mae["reduced"]) * 100 + 0.5)
        assert re.search(rf"{re.escape(label)} (cut that error )?by {pct}%", sentence), est
    h = report.headline(result, measure="P@20")
    assert h["measure"] == "P@20" and h["loss"] == pytest.approx(h["mae"]["reduced"])


def _fake(true, estimates):
    """A one-configuration Analysis with hand-made scores (three runs, P@10)."""
    rows, errs = [], []
    key = {"leave_out": "org", "runs": "all", "measure": "P@10"}
    for est, values in estimates.items():
        for name, t, v in zip(("a", "b", "c"), true, values, strict=True):
            rows.append(
                {**key, "estimator": est, "name": name, "true": t, "estimate": v, "left_out": name}
            )
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
        params={"estimators": list(estimates), "alpha": 0.05, "measures": ["P@10"]},
    )


def test_summary_says_when_a_correction_adds_error_or_there_is_no_bias():
    true = [0.5, 0.4, 0.3]
    a = _fake(
        true, {"reduced": [0.4, 0.3, 0.3], "webber": [0.5, 0.4, 0.3], "lipani": [0.2, 0.1, 0.3]}
    )
    s = report.summary(a)
    assert "loses on average 0.0667 P@10" in s
    assert "Webber & Park cut that error by 100%" in s
    assert "Lipani et al. increase it by 200%" in s
    none = _fake(true, {"reduced": true, "webber": true})
    assert "loses no P@10 on average" in report.summary(none)
    assert "no bias to correct" in report.text_report(none)


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
