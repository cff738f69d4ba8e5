"""Every documented command is a test (issue 24, item 2).

The ```bash, ```console and ```python blocks of README.md and docs/*.md are extracted and run:
shell commands with ``pbtools`` replaced by ``sys.executable -m pbtools`` (this checkout's code),
in a temporary directory (examples that write files write there), the relative paths of the
docs (``../shared``, ``pbtools/data/sample``) made absolute; Python blocks of one file in order,
in one namespace, from the repository root. A block that reads ``../shared`` skips with a
reason when it is absent; blocks on TREC-2 are slow. A ```console block's output lines are
checked (digits may differ: they describe the machine); a number in a shell comment after a
command (``# |R| 37 tags``) must appear in what the command prints.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: commands a doc shows but the suite must not run, and why
NOT_RUN = {
    "python3 -m pip install": "installs the package (the suite runs on the installed checkout)",
    "python3 -m pytest": "runs this test suite",
}
#: Python blocks that need what the test machine lacks, and why
PY_NOT_RUN = {
    "tcp://scheduler:8786": "needs a running Dask cluster and a TREC-3 track",
}


def blocks(path: Path) -> list[tuple[str, int, str]]:
    """``(language, line, text)`` of every fenced block of ``path`` with a language."""
    out, lang, start, lines = [], None, 0, []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("```"):
            if lang is None and line[3:].strip():
                lang, start, lines = line[3:].strip(), i, []
            elif lang is not None:
                out.append((lang, start, "\n".join(lines)))
                lang = None
            continue
        if lang is not None:
            lines.append(line)
    return out


def _split_comment(line: str) -> tuple[str, str]:
    command, _, comment = line.partition(" #")
    return command.strip(), comment.strip()


def shell_commands(text: str) -> list[tuple[str, str]]:
    """``(command, trailing comment)`` of a ```bash block: continuation lines joined, ``a &&
    b`` as two commands."""
    out = []
    for line in re.sub(r"\\\n\s*", " ", text).splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        command, comment = _split_comment(line)
        out += [(re.sub(r"\s+", " ", c.strip()), comment) for c in command.split("&&")]
    return out


def console_commands(text: str) -> list[tuple[str, list[str]]]:
    """``(command, expected output lines)`` of a ```console block (``$ `` prompts)."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            out.append((_split_comment(line[2:])[0], []))
        elif line.strip() and out:
            out[-1][1].append(line.strip())
    return out


def _cases():
    for path in DOCS:
        name = path.relative_to(REPO).as_posix()
        for lang, line, text in blocks(path):
            if lang in ("bash", "console"):
                yield pytest.param(name, lang, text, id=f"{name}:{line}", marks=_marks(text))
    for path in DOCS:
        name = path.relative_to(REPO).as_posix()
        py = [(line, text) for lang, line, text in blocks(path) if lang == "python"]
        if py:
            text = "\n".join(t for _, t in py)
            yield pytest.param(name, "python", py, id=f"{name}:python", marks=_marks(text))


def _marks(text: str):
    if "../shared" in text:
        return [pytest.mark.slow, pytest.mark.shared]
    # a whole bias analysis in a fresh process (5-15 s): the full suite runs it
    return [pytest.mark.slow] if re.search(r"pbtools (analyze|report)\b", text) else []


def _absolute(command: str) -> str:
    command = re.sub(r"(?<![\w/.])\.\./shared", str(SHARED), command)
    command = re.sub(r"(?<![\w/.])pbtools/data/sample", str(REPO / "pbtools/data/sample"), command)
    return re.sub(r"^pbtools ", f"{shlex.quote(sys.executable)} -m pbtools ", command)


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        _absolute(command), shell=True, cwd=cwd, env=env, capture_output=True, text=True
    )


def _needs_shared(text: str) -> None:
    if "../shared" in text and not SHARED.is_dir():
        pytest.skip("../shared is absent: this documented example reads it")


def test_every_doc_has_its_blocks_collected():
    """The extraction sees the blocks the docs have (a renamed fence would drop them)."""
    langs = {p.name: [b[0] for b in blocks(p)] for p in DOCS}
    assert langs["README.md"].count("bash") == 2 and "console" in langs["README.md"]
    assert langs["README.md"].count("python") == 2
    assert langs["extending.md"].count("python") == 5 and langs["pooling.md"].count("python") == 4
    assert shell_commands("a \\\n  b  # x 1\nc && d") == [("a b", "x 1"), ("c", ""), ("d", "")]


@pytest.mark.parametrize(("doc", "lang", "text"), list(_cases()))
def test_documented_example_runs(doc, lang, text, tmp_path):
    if lang == "python":
        _run_python(doc, text)
        return
    _needs_shared(text)
    if lang == "console":
        for command, expected in console_commands(text):
            res = _run(command, tmp_path)
            assert res.returncode == 0, f"{doc}: {command}\n{res.stderr}"
            said = (res.stdout + res.stderr).splitlines()
            for line in expected:  # the machine's numbers may differ, nothing else
                pat = re.sub(r"\d+", r"\\d+", re.escape(line))
                assert any(re.fullmatch(pat, s.strip()) for s in said), (line, said)
        return
    ran = 0
    for command, comment in shell_commands(text):
        if any(command.startswith(skip) for skip in NOT_RUN):
            continue
        res = _run(command, tmp_path)
        assert res.returncode == 0, f"{doc}: {command}\n{res.stderr[-2000:]}"
        printed = res.stdout + res.stderr
        for number in re.findall(r"\d+", comment):  # "# |R| 37 tags ...": the output's numbers
            assert re.search(rf"(?<![\d.]){number}(?![\d.])", printed), (number, command)
        ran += 1
    assert ran


def _run_python(doc: str, parts: list[tuple[int, str]]) -> None:
    namespace: dict = {}
    cwd = os.getcwd()
    try:
        os.chdir(REPO)  # the docs' paths are relative to the repository root
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for line, text in parts:
                why = [r for k, r in PY_NOT_RUN.items() if k in text]
                if why:
                    continue  # listed in PY_NOT_RUN with its reason
                _needs_shared(text)
                exec(compile(text, f"{doc}:{line}", "exec"), namespace)  # noqa: S102
    finally:
        os.chdir(cwd)
    if doc == "README.md":
        assert len(namespace["sim"].qrels) == 50 * 50  # the fixed-cost pool: 50 per topic
    if doc in ("docs/extending.md", "docs/pooling.md"):  # the examples undo their registrations
        from pbtools.corrections.registry import ESTIMATORS
        from pbtools.pooling import strategies

        assert "optimistic" not in ESTIMATORS and "mostruns" not in strategies.REGISTRY


@pytest.mark.slow
@pytest.mark.shared
def test_readme_headline_sentence_is_what_analyze_prints(tmp_path):
    """The README quotes ``pbtools analyze TREC-2 --lenient -m P@10 -m AP``: word for word."""
    readme = (REPO / "README.md").read_text()
    found = re.search(
        r"\(`(pbtools analyze ../shared[^`]*)`\) it reads: \*\"(.*?)\"\*", readme, re.S
    )
    assert found, "the README's headline command and quote"
    command, quote = re.sub(r"\s+", " ", found.group(1)), re.sub(r"\s+", " ", found.group(2))
    _needs_shared(command)
    res = _run(command, tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    assert quote in re.sub(r"\s+", " ", res.stdout)
