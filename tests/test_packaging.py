"""Packaging: the bundled sample ships in the package, every third-party import is declared.

The wheel itself is built, installed into a fresh venv and run outside the source tree by
``.ci/run``; these tests check the declarations that make that work, in milliseconds.
"""

from __future__ import annotations

import ast
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from pbtools.experiments.analysis import SAMPLE

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python >= 3.11")
ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _requirement_name(req: str) -> str:
    name = req
    for sep in "[<>=!~; ":
        name = name.split(sep)[0]
    return name.lower().replace("_", "-")


def test_sample_is_package_data():
    package = ROOT / "pbtools"
    assert SAMPLE.is_relative_to(package) and SAMPLE.is_dir()
    files = {p.relative_to(package) for p in SAMPLE.rglob("*") if p.is_file()}
    assert {Path("data/sample/desc.xml"), Path("data/sample/QRels/qrels")} <= files
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["pbtools"]
    shipped = {p.relative_to(package) for pat in patterns for p in package.glob(pat)}
    assert files <= shipped, sorted(map(str, files - shipped))
    assert (ROOT / "data" / "README.md").is_file()  # the top-level data/ points to the sample


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize(
    ("folder", "groups"),
    [("pbtools", ("dependencies", "plots", "progress", "dask", "fast")), ("tests", None)],
)
def test_every_third_party_import_is_declared(folder, groups):
    """Each module imported by pbtools/ (tests/) comes from a distribution that pyproject.toml
    declares: the dependencies or an extra (any extra, for tests)."""
    project = PYPROJECT["project"]
    extras = project["optional-dependencies"]
    reqs = list(project["dependencies"])
    reqs += [r for g, rs in extras.items() if groups is None or g in groups for r in rs]
    declared = {_requirement_name(r) for r in reqs}
    dists = packages_distributions()
    local = {"pbtools", "conftest", "_common"} | {p.stem for p in (ROOT / "tests").rglob("*.py")}
    missing = {}
    for path in (ROOT / folder).rglob("*.py"):
        for mod in _imports(path) - set(sys.stdlib_module_names) - local:
            names = {d.lower().replace("_", "-") for d in dists.get(mod, [mod])}
            if not names & declared:
                missing.setdefault(mod, str(path.relative_to(ROOT)))
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_statsmodels_only_for_tests():
    deps = {_requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    test = {_requirement_name(r) for r in PYPROJECT["project"]["optional-dependencies"]["test"]}
    assert "statsmodels" not in deps and "statsmodels" in test
    assert not any("statsmodels" in _imports(p) for p in (ROOT / "pbtools").rglob("*.py"))


@pytest.mark.parametrize("enabled", [True, False])
def test_import_leaves_the_garbage_collector_as_it_was(enabled):
    # pbtools pauses the collector while it imports pandas (start-up time) and must restore
    # it; `import pbtools` alone imports no pandas, nor does `import pbtools.io` (its names are
    # imported on first use); its first pandas name registers DataFrame.pb
    import subprocess

    code = (
        "import gc, sys\n"
        f"gc.enable() if {enabled} else gc.disable()\n"
        "import pbtools\n"
        "assert 'pandas' not in sys.modules and 'numpy' not in sys.modules\n"
        "import pbtools.io\n"
        "assert 'pandas' not in sys.modules\n"
        "from pbtools.io import read_runs\n"
        "import pandas\n"
        "assert hasattr(pandas.DataFrame(), 'pb')\n"
        "print(gc.isenabled())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == str(enabled)
