"""``pbtools reproduce`` and :mod:`pbtools.papers.reproduce`: the registry, the command line,
the result set with its provenance, how the data were read (run identity, repairs), and the
paths over several collections."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pbtools.cli import main
from pbtools.errors import InputError
from pbtools.papers import reading
from pbtools.papers import reproduce as rep

ROOT = Path(__file__).resolve().parents[2]


def write_track(path: Path, *, shared_tag: bool = False, blank_line: bool = False) -> Path:
    """A tiny TRACK layout: 3 topics, 4 runs of 2 organisations; with ``shared_tag`` the files
    input.p1 and input.p2 both carry the tag ``p`` (as TREC-2's input.prc1/prc2)."""
    (path / "QRels").mkdir(parents=True)
    (path / "Runs").mkdir()
    docs = [f"D{i}" for i in range(12)]
    qrels = [f"{q} 0 {d} {int(i % 3 == 0)}" for q in (1, 2, 3) for i, d in enumerate(docs[:8])]
    (path / "QRels" / "qrels").write_text("\n".join(qrels) + "\n")
    runs = {
        "a1": "a1",
        "a2": "a2",
        "p1": "p" if shared_tag else "p1",
        "p2": "p" if shared_tag else "p2",
    }
    for k, (file, tag) in enumerate(runs.items()):
        lines = [
            f"{q} Q0 {docs[(i + 2 * k) % 12]} {i + 1} {10 - i} {tag}"
            for q in (1, 2, 3)
            for i in range(6)
        ]
        if blank_line and k == 0:
            lines.insert(2, "")
        (path / "Runs" / f"input.{file}").write_text("\n".join(lines) + "\n")
    desc = "".join(
        f"<runs><tag>{n}</tag><organization>{'A' if n.startswith('a') else 'P'}"
        "</organization></runs>"
        for n in runs
    )
    (path / "desc.xml").write_text(f"<set>{desc}</set>\n")
    return path


def test_registry_lists_the_four_papers():
    assert set(rep.PAPERS) == {"lipani2015", "webber2009", "sakai2008", "buckley2006"}
    for name in ("lipani2015", "buckley2006"):  # the contract (pbtools.papers)
        m = rep.paper_module(name)
        assert callable(m.run) and callable(m.report) and isinstance(m.DEFAULTS, dict)
        assert callable(m.figures) and all(c.id == k for k, c in m.CLAIMS.items())
    with pytest.raises(InputError, match="unknown paper"):
        rep.paper_module("lipani2016")


def test_lazy_top_level_reproduce():
    import pbtools

    assert pbtools.reproduce is rep.reproduce


def test_auto_run_identity_splits_files_sharing_a_tag(tmp_path):
    """Two files carrying one tag are two runs (by file) under auto and file, one merged run
    under tag; the reading row says so."""
    t = write_track(tmp_path / "T", shared_tag=True)
    auto, row = reading.read_track(t, "T", run_id="auto")
    assert sorted(auto.runs["name"].astype(str).unique()) == ["a1", "a2", "p1", "p2"]
    assert "tag 'p': runs p1, p2" in row["by_file"] and row["runs"] == 4
    assert auto.unmapped == []  # p1, p2 are in desc.xml by file name
    tag, trow = reading.read_track(t, "T", run_id="tag")
    assert sorted(tag.runs["name"].astype(str).unique()) == ["a1", "a2", "p"]
    assert "1 × run tag shared with another file" in trow["by_kind"]
    with pytest.raises(InputError):
        reading.read_track(t, "T", run_id="name")


def test_auto_run_identity_uses_tags_when_unique(tmp_path):
    t = write_track(tmp_path / "T")
    (t / "Runs" / "input.a1").rename(t / "Runs" / "input.other")  # file name ≠ tag
    col, _ = reading.read_track(t, "T", run_id="auto")
    assert "a1" in set(col.runs["name"].astype(str))  # named by its (unique) tag
    col, _ = reading.read_track(t, "T", run_id="file")
    assert "other" in set(col.runs["name"].astype(str))


@pytest.mark.slow
def test_repairs_are_shown_by_kind(tmp_path):
    t = write_track(tmp_path / "T", blank_line=True)
    res = rep.reproduce("buckley2006", t, depths=(None,), progress=False, jobs=1)
    r = res["reading"].iloc[0]
    assert r["repairs"] == 1 and r["by_kind"] == "1 × blank line"
    assert "1 repairs: 1 × blank line" in reading.reading_lines(res["reading"])[0]


@pytest.mark.slow
def test_cli_reproduce_writes_one_result_set_with_provenance(tmp_path, capsys):
    t = write_track(tmp_path / "T", shared_tag=True)
    out = tmp_path / "out"
    code = main(["reproduce", "buckley2006", str(t), "--depths", "d", "3", "-o", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "Claims on" in text and "read leniently as 4 runs" in text
    manifest = json.loads((out / "manifest.json").read_text())
    params = manifest["parameters"]
    assert manifest["pbtools_version"] and params["depths"] == [None, 3]
    inputs = {Path(i["path"]).name: i["sha256"] for i in params["inputs"]}
    assert set(inputs) == {"qrels", "input.a1", "input.a2", "input.p1", "input.p2", "desc.xml"}
    assert all(len(h) == 64 for h in inputs.values())
    for f in ("claims.md", "claims.parquet", "reading.parquet", "depth.png", "depth.svg"):
        assert f in manifest["files"] and (out / f).is_file()
    assert "How the data were read" in (out / "claims.md").read_text()
    from pbtools.io.results import read_results

    tables = read_results(out)  # every file checked against the manifest
    assert set(tables["claims"]["id"]) >= {"U1", "D1", "B1"}
    assert tables["claims"].attrs["metadata"]["inputs"]  # provenance in each table too


@pytest.mark.parametrize(
    "argv",
    [
        ["reproduce", "lipani2016", "x"],
        ["reproduce", "buckley2006", "/nonexistent/track"],
        ["reproduce", "buckley2006", "--depths", "x"],
        ["reproduce"],
    ],
)
def test_cli_reproduce_refuses_with_status_2(argv, capsys):
    assert main(argv) == 2


def test_cli_reproduce_lists_papers(capsys):
    assert main(["reproduce", "--list"]) == 0
    assert "sakai2008" in capsys.readouterr().out
    assert main(["reproduce", "lipani2015", "--help"]) == 0
    assert "--protocol" in capsys.readouterr().out and True


def test_unknown_option_is_refused(tmp_path):
    t = write_track(tmp_path / "T")
    with pytest.raises(InputError, match="unknown option"):
        rep.reproduce("buckley2006", t, alpha=3)


def test_several_paths_name_tracks_apart(tmp_path):
    a = write_track(tmp_path / "X" / "Adhoc")
    b = write_track(tmp_path / "Y" / "Adhoc")
    names = [n for n, _ in reading.find([a, b])]
    assert names == ["X/Adhoc", "Y/Adhoc"]
    names = [n for n, _ in reading.find([tmp_path])]  # one root holding both
    assert names == ["X/Adhoc", "Y/Adhoc"]


@pytest.mark.slow
def test_lipani_over_a_directory_of_two_tracks_checks_the_multi_collection_claims(tmp_path):
    """``reproduce lipani2015 ROOT`` over two tracks: W1 and W3 get a verdict across both,
    G1 (a correlation over collections) says it needs 4."""
    from pbtools import synth

    for i in range(2):
        col = synth.generate(
            topics=6, docs=120, runs=8, orgs=4, run_length=40, depth=10, unpooled=0, seed=i
        )
        col.write(tmp_path / "root" / f"S{i}" / "Adhoc")
    res = rep.reproduce(
        "lipani2015",
        tmp_path / "root",
        protocol="default",
        cutoffs=(5, 10),
        alphas=(0.0, 1.0),
        indicators=("lambda", "always"),
        progress=False,
        jobs=1,
    )
    c = res["claims"].set_index("id")
    assert c.loc["W1", "track"] == "2 collections"
    assert c.loc["W1", "holds"] in ("true", "false") and c.loc["W3", "holds"] in ("true", "false")
    assert c.loc["G1", "holds"] == "n.a." and "needs ≥ 4 collections" in c.loc["G1", "note"]
    assert set(res["table2"]["track"]) == {"S0/Adhoc", "S1/Adhoc"}


def test_papers_are_in_the_wheel():
    """pbtools.papers is a package the wheel's package discovery includes (pyproject.toml's
    ``include``), with every paper module, so ``pip install pbtools`` ships ``pbtools
    reproduce`` (.ci/run builds the wheel and runs ``pbtools reproduce`` from it)."""
    from fnmatch import fnmatch

    tomllib = pytest.importorskip("tomllib")
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    include = cfg["packages"]["find"]["include"]
    assert any(fnmatch("pbtools.papers", pat) for pat in include)
    assert not any(
        fnmatch("pbtools.papers", pat) for pat in cfg["packages"]["find"].get("exclude", [])
    )
    papers = ROOT / "pbtools" / "papers"
    assert (papers / "__init__.py").is_file()
    mods = {p.stem for p in papers.glob("*.py")}
    assert {"reproduce", "lipani2015", "buckley2006", "claims", "common", "summary"} <= mods
    assert {m.split(".")[-1] for m, _ in rep.PAPERS.values()} <= mods
    assert (ROOT / "pbtools" / "cli" / "reproduce.py").is_file()


@pytest.mark.slow
def test_papers_import_outside_the_source_tree(tmp_path):
    """No sys.path edits: the registry imports from any working directory."""
    out = subprocess.run(
        [sys.executable, "-c", "import pbtools.papers.reproduce as r; print(len(r.PAPERS))"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == "4", out.stderr
