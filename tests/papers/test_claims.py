"""The claims machinery of the paper scripts (benchmarks/claims.py, benchmarks/summary.py) and
the experiment-frame adapter of benchmarks/_common.py."""

from __future__ import annotations

import doctest
import importlib.util
import sys
from pathlib import Path

import pandas as pd
import pytest

from pbtools import io

ROOT = Path(__file__).resolve().parents[2]


_PAPERS = {
    "claims": "claims",
    "_common": "common",
    "lipani2015": "lipani2015",
    "webber2009": "webber2009",
    "sakai2008": "sakai2008",
    "buckley2006": "buckley2006",
    "summary": "summary",
}


def _load(name: str):
    """Import ``benchmarks/<name>.py`` as a module (benchmarks/ is on sys.path for its
    siblings)."""
    if name in _PAPERS:  # moved into the package (issue 27)
        return importlib.import_module(f"pbtools.papers.{_PAPERS[name]}")
    if str(ROOT / "benchmarks") not in sys.path:
        sys.path.insert(0, str(ROOT / "benchmarks"))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def claims():
    return _load("claims")


@pytest.fixture(scope="module")
def summary():
    return _load("summary")


@pytest.mark.parametrize("name", ["claims", "_common", "summary"])
def test_doctests(name):
    mod = _load(name)
    res = doctest.testmod(mod)
    assert res.attempted > 0 and res.failed == 0


def test_verdicts(claims):
    assert [claims.verdict(v) for v in (True, False, None, float("nan"))] == [
        "true",
        "false",
        "n.a.",
        "n.a.",
    ]
    import numpy as np

    assert claims.verdict(np.bool_(True)) == "true"
    assert claims.verdict("n.a.") == "n.a."
    with pytest.raises(ValueError):
        claims.verdict("maybe")


def test_claims_frame(claims):
    c = claims.Claims("Paper 2000", "T/A")
    c.add("X1", "a | b", ".5", ".4", False, "note")
    c.add("X2", "c", "", "", None)
    with pytest.raises(ValueError, match="duplicate"):
        c.add("X1", "again", "", "", True)
    f = c.frame()
    assert list(f.columns) == claims.COLUMNS
    assert f["holds"].tolist() == ["false", "n.a."]
    assert claims.counts(f) == {"true": 0, "false": 1, "n.a.": 1}
    md = claims.to_markdown(f)
    assert "a \\| b" in md  # a pipe in a cell does not break the table
    assert md.count("\n") == 3  # header, rule, two rows
    assert "| track |" not in md.splitlines()[0]
    both = claims.concat([f, f.assign(track="T/B")])
    assert claims.to_markdown(both).startswith("| track |")


def test_write_round_trip(claims, tmp_path):
    c = claims.Claims("Paper 2000", "T/A")
    c.add("X1", "claim", "1", "2", True, "n")
    claims.write(c.frame(), tmp_path, {"script": "paper2000", "seed": 1}, "Paper (2000)")
    back = io.read_parquet(tmp_path / "claims.parquet")
    pd.testing.assert_frame_equal(back.reset_index(drop=True), c.frame(), check_dtype=False)
    assert back.attrs["metadata"]["title"] == "Paper (2000)"
    md = (tmp_path / "claims.md").read_text()
    assert md.startswith("# Claims of Paper (2000)")
    assert "T/A: 1 hold, 0 do not hold, 0 n.a." in md


def _two_papers(claims, tmp_path) -> list[Path]:
    dirs = []
    for script, verdicts in (("a2001", (True, False)), ("b2002", (None, True))):
        c = claims.Claims(script, "T/A")
        for i, v in enumerate(verdicts):
            c.add(f"C{i}", f"claim {i}", "p", "o", v)
        d = tmp_path / script
        claims.write(c.frame(), d, {"script": script, "B": 10}, f"Title {script}")
        dirs.append(d)
    return dirs


def test_summary_block(claims, summary, tmp_path):
    dirs = _two_papers(claims, tmp_path)
    text = summary.block(summary.load(dirs))
    assert text.startswith(summary.BEGIN) and text.rstrip().endswith(summary.END)
    assert "#### Title a2001" in text and "#### Title b2002" in text
    assert "**T/A**: 1 claims hold, 1 do not hold, 0 cannot be tested" in text
    assert "**T/A**: 1 claims hold, 0 do not hold, 1 cannot be tested" in text
    assert "`pbtools reproduce a2001` (B = 10)." in text
    assert summary.extract("intro\n" + text + "outro\n") == text
    assert summary.extract("no block") is None


def test_summary_cli(claims, summary, tmp_path, capsys):
    dirs = [str(d) for d in _two_papers(claims, tmp_path)]
    out = tmp_path / "block.md"
    assert summary.main([*dirs, "-o", str(out)]) == 0
    readme = tmp_path / "README.md"
    readme.write_text("# Project\n\n" + out.read_text() + "\nmore\n")
    assert summary.main([*dirs, "--check", str(readme)]) == 0
    readme.write_text(
        readme.read_text().replace("1 claims hold, 1 do not", "2 claims hold, 0 do not")
    )
    assert summary.main([*dirs, "--check", str(readme)]) == 1
    assert summary.main([str(tmp_path / "nowhere")]) == 2
    assert "no claims file" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    io.write_parquet(pd.DataFrame({"x": [1]}), bad / "claims.parquet")
    assert summary.main([str(bad)]) == 2


def test_with_cutoff_accepts_both_layouts():
    common = _load("_common")
    old = pd.DataFrame({"n": [5, 100], "mae": [0.1, 0.2]})
    new = pd.DataFrame({"measure": ["P@5", "P@100"], "mae": [0.1, 0.2]})
    a, b = common.with_cutoff(old), common.with_cutoff(new)
    assert a["measure"].tolist() == ["P@5", "P@100"]
    assert b["n"].tolist() == [5, 100] and b["n"].dtype == "int64"
    pd.testing.assert_frame_equal(a[["n", "measure", "mae"]], b[["n", "measure", "mae"]])
    neither = pd.DataFrame({"x": [1]})
    assert common.with_cutoff(neither) is neither


def test_readme_claims_block_is_the_generated_one():
    """README.md carries the block benchmarks/summary.py generated into benchmarks/README.md."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    pat = re.compile(r"^<!-- claims:begin -->\n.*?^<!-- claims:end -->", re.S | re.M)
    ours = pat.search((root / "README.md").read_text())
    generated = pat.search((root / "benchmarks" / "README.md").read_text())
    assert ours is not None and generated is not None
    assert ours.group(0) == generated.group(0)
