"""A track without organizations (issue 24 item 4): no ``desc.xml``, an empty one, or none
given with ``QRELS RUNS``. Each run is then its own organization: said once on standard error,
in each command's output (header, Parquet metadata), and leave-one-organization-out is reported
as what it then is, leave-one-run-out (the same numbers).

The probable mistakes of the same item (a qrels file given as a run …) are cases of
``tests/cli/test_bad_input.py`` (class ``mistakes``).
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from pbtools import io
from pbtools.cli import main
from pbtools.experiments.analysis import analyze
from pbtools.io.desc import OrganizationsWarning

NOTE = "each run is its own organization (leave-one-organization-out = leave-one-run-out)"


@pytest.fixture
def no_desc(toy_dir: Path, tmp_path: Path) -> Path:
    """The TOY track without its desc.xml (a copy in the test's directory)."""
    track = tmp_path / "T"
    shutil.copytree(toy_dir, track)
    (track / "desc.xml").unlink()
    return track


def test_the_reader_makes_each_run_its_own_organization_and_says_it_once(no_desc):
    with pytest.warns(OrganizationsWarning, match=f"no desc.xml in {no_desc}: ") as record:
        col = io.read_collection(no_desc)
    assert len([w for w in record if w.category is OrganizationsWarning]) == 1
    assert col.orgs["name"].astype(str).tolist() == col.orgs["org"].astype(str).tolist()
    assert sorted(col.orgs["name"].astype(str)) == sorted(col.runs["name"].cat.categories)
    assert col.orgs.attrs["one_org_per_run"] == f"no desc.xml in {no_desc}"
    assert col.unmapped == [] and len(col.repairs) == 0  # a layout, not a repair


@pytest.mark.parametrize(
    "content, reason", [("", "is empty"), ("  \n", "is empty"), ("<set></set>", "lists no run")]
)
def test_an_empty_desc_is_no_organizations(no_desc, content, reason):
    (no_desc / "desc.xml").write_text(content)
    with pytest.warns(OrganizationsWarning, match=reason):
        col = io.read_collection(no_desc)
    assert len(col.orgs) == col.runs["name"].nunique()
    assert reason in col.orgs.attrs["one_org_per_run"]


def test_a_desc_with_entries_gives_no_note(toy_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("error", OrganizationsWarning)
        col = io.read_collection(toy_dir)
    assert "one_org_per_run" not in col.orgs.attrs


def test_analyze_without_desc_reports_org_out_as_run_out(no_desc, capsys, tmp_path):
    out_dir = tmp_path / "out"
    argv = ["analyze", str(no_desc), "--no-progress", "-m", "P@5", "-o", str(out_dir)]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert _org_warnings(err) == 1 and f"no desc.xml in {no_desc}: {NOTE}" in err
    assert "organizations: no desc.xml in" in out
    assert "leave-one-organization-out (= leave-one-run-out: no organizations)" in out
    assert "a run that did not contribute to the pool" in out  # the summary's unit
    meta = io.read_parquet(out_dir / "errors.parquet").attrs["metadata"]
    assert meta["one_org_per_run"] == f"no desc.xml in {no_desc}"


def test_leaving_out_an_organization_is_leaving_out_a_run(no_desc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrganizationsWarning)
        a = analyze(no_desc, measures=("P@5", "P@10"), run_sets=("all",), progress=False)
    e = a.errors.set_index(["runs", "measure", "estimator"])
    org, run = e[e["leave_out"] == "org"], e[e["leave_out"] == "run"]
    cols = ["mae", "sre", "sre_star", "tau"]
    pd.testing.assert_frame_equal(org[cols], run[cols])
    assert a.params["one_org_per_run"] == f"no desc.xml in {no_desc}"


def test_analyze_qrels_runs_without_desc_says_so(no_desc, capsys):
    argv = ["analyze", str(no_desc / "QRels" / "qrels"), str(no_desc / "Runs"), "--no-progress"]
    assert main([*argv, "-m", "P@5"]) == 0
    out, err = capsys.readouterr()
    assert f"no desc.xml given (--desc): {NOTE}" in err and _org_warnings(err) == 1
    assert "organizations: no desc.xml given" in out


def test_analyze_without_desc_under_the_paper_protocol(no_desc, capsys):
    argv = ["analyze", str(no_desc), "--no-progress", "-m", "P@5", "--protocol", "lipani2015"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "(5 runs evaluated)" in out and "no organizations" in out


@pytest.mark.slow
def test_report_without_desc(no_desc, tmp_path, capsys):
    html = tmp_path / "r.html"
    argv = ["report", str(no_desc), "-o", str(html), "--no-progress", "-m", "P@5"]
    assert main(argv) == 0
    assert _org_warnings(capsys.readouterr().err) == 1
    text = html.read_text()
    assert f"no organizations (no desc.xml in {no_desc}): {NOTE}" in text
    assert "3. The bias: leave-one-organization-out (= leave-one-run-out" in text


def test_pool_without_desc(no_desc, capsys, tmp_path):
    assert main(["pool", str(no_desc)]) == 0
    out, err = capsys.readouterr()
    assert _org_warnings(err) == 1
    assert f"  organizations: no desc.xml in {no_desc}, so {NOTE}" in out
    assert "  |O|    5" in out
    reduced = tmp_path / "reduced.parquet"
    assert main(["pool", str(no_desc), "--leave-out", "org", "-o", str(reduced)]) == 0
    assert io.read_parquet(reduced).attrs["metadata"]["one_org_per_run"]


def test_correct_leave_out_org_without_desc_is_leave_out_run(no_desc, capsys, tmp_path):
    base = [
        "correct",
        str(no_desc / "QRels" / "qrels"),
        str(no_desc / "Runs"),
        str(no_desc / "Runs" / "input.A"),
        "-m",
        "P@5",
    ]
    assert main([*base, "--leave-out", "org"]) == 0
    out, err = capsys.readouterr()
    assert "leaving out each new run's org (= its run: no desc.xml given" in out
    assert _org_warnings(err) == 1
    by_org, by_run = tmp_path / "org.parquet", tmp_path / "run.parquet"
    for unit, path in (("org", by_org), ("run", by_run)):
        argv = [*base, "--leave-out", unit, "--format", "parquet", "-o", str(path)]
        assert main(argv) == 0
    a, b = io.read_parquet(by_org), io.read_parquet(by_run)
    pd.testing.assert_series_equal(a["value"], b["value"])
    assert a.attrs["metadata"]["one_org_per_run"] == "no desc.xml given"


# --------------------------------------------------------------------------------------------
# what counts as a binary file (the refusal itself: tests/cli/test_bad_input.py, class mistakes)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, words",
    [
        (b"PAR1\x15\x04\x00", "a Parquet file"),
        (b"PK\x03\x04\x14\x00", "a zip archive"),
        (b"\xfd7zXZ\x00\x00", "an xz-compressed file"),
        (b"\x28\xb5\x2f\xfd\x00", "a zstd-compressed file"),
        (b"BZh91AY&SY\x00", "a bzip2-compressed file"),
        (b"\x7fELF\x02\x01", "an executable program"),
        (b"%PDF-1.7\n", "a PDF document"),
        (bytes(257) + b"ustar\x0000" + bytes(100), "a tar archive"),
        ("1 Q0 d1 1 2.5 r\n".encode("utf-16-le"), "UTF-16 text"),
        ("1 Q0 d1 1 2.5 r\n".encode("utf-16"), "UTF-16 text"),
        (b"\x00\x01\xfe\xff\x80abc" * 10, "a binary file (NUL bytes"),
    ],
)
def test_binary_kinds(data, words):
    from pbtools.io.mistakes import binary_kind

    assert binary_kind(data).startswith(words)


@pytest.mark.parametrize(
    "data",
    [
        b"1 Q0 d1 1 2.5 r\n",
        "1 Q0 caf\u00e9 1 2.5 r\n".encode("latin-1"),  # not UTF-8 but no NUL: the UTF-8 rule
        b"1 Q0 d\x001 1 2.5 r\n" * 20,  # a lone NUL per line: the control-byte rule
        ("1 Q0 \u6587\u732e 1 2.5 r\n" * 700).encode()[:8190] + b"\x00",  # cut at 8 KB
        b"BZh is a docno\n",
    ],
)
def test_text_is_not_binary(data):
    from pbtools.io.mistakes import binary_kind

    assert binary_kind(data) is None


def _org_warnings(err: str) -> int:
    """The warnings that say the runs have no organizations (other warnings — a tie at the
    top-75 % cut, an extrapolated interval — may come too)."""
    return sum(
        line.startswith("pbtools: warning:") and "desc.xml" in line for line in err.splitlines()
    )
