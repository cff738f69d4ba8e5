"""Bad input (issue 10, issue 14 items 3 and 5): a refusal (exit status 2, naming the file, the
line and the problem) or a documented repair that ``--lenient`` reports — never a traceback,
never a silent acceptance. ``docs/input.md`` is the contract these cases check.

Every case runs the command line in-process and asserts the exit status, the message, the
absence of a traceback, whether the ``--lenient`` hint is printed, and for every ``--lenient``
case the exact number of rows kept (through the API, which the command line calls) and of
repairs reported (on stderr and in the repairs frame).
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pbtools import TrecFormatWarning, experiments, io
from pbtools.cli import main

REPO = Path(__file__).resolve().parents[2]
QRELS = ["1 0 d1 1", "1 0 d2 0", "1 0 d3 1", "2 0 d1 1", "2 0 d4 0", "2 0 d5 1"]
RUN = [
    "1 Q0 d1 1 3.0 r",
    "1 Q0 d2 2 2.0 r",
    "1 Q0 d3 3 1.0 r",
    "2 Q0 d1 1 3.0 r",
    "2 Q0 d4 2 2.0 r",
    "2 Q0 d5 3 1.0 r",
]
DESC_ENTRY = "<runs><tag>{t}</tag><organization>{o}</organization></runs>"
DESC = "<set>\n" + "\n".join(DESC_ENTRY.format(t=t, o=t.upper()) for t in "abc") + "\n</set>\n"
HINT = "--lenient repairs"


def lines_bytes(lines: list[str], end: str = "\n") -> bytes:
    return (end.join(lines) + end).encode()


def run_of(tag: str) -> list[str]:
    return [line[:-1] + tag for line in RUN]


def make_base(d: Path) -> None:
    """``d/qrels`` and a track ``d/T/{QRels/qrels, Runs/input.{a,b,c}, desc.xml}``."""
    (d / "qrels").write_text("\n".join(QRELS) + "\n")
    track = d / "T"
    (track / "Runs").mkdir(parents=True)
    (track / "QRels").mkdir()
    (track / "QRels" / "qrels").write_text("\n".join(QRELS) + "\n")
    for t in "abc":
        (track / "Runs" / f"input.{t}").write_bytes(lines_bytes(run_of(t)))
    (track / "desc.xml").write_text(DESC)


@dataclass(frozen=True)
class Case:
    """One bad input: ``setup(d)`` writes files under ``d`` (the base already there) and returns
    the argv; the rest is what must happen. ``{d}`` in ``says`` is the directory."""

    cls: str
    id: str
    setup: Callable[[Path], list]
    rc: int
    says: tuple[str, ...] = ()
    hint: bool = False
    rows: int | None = None
    repairs: int | None = None
    api: Callable[[Path], object] | None = None


CASES: list[Case] = []


def case(cls, name, setup, rc, says=(), **kw) -> None:
    CASES.append(Case(cls, name, setup, rc, tuple([says] if isinstance(says, str) else says), **kw))


# --------------------------------------------------------------------------------------------
# builders
# --------------------------------------------------------------------------------------------


def evaluate_file(content, *flags, name="input.r"):
    """``evaluate qrels d/name`` where ``content`` (lines or bytes) is written to ``d/name``."""

    def setup(d: Path) -> list:
        data = content if isinstance(content, bytes) else lines_bytes(content)
        (d / name).write_bytes(data)
        return ["evaluate", d / "qrels", d / name, "-m", "P@5", *flags]

    return setup


def line3(text: str) -> list[str]:
    """RUN with its third line replaced by ``text``."""
    return RUN[:2] + [text] + RUN[3:]


def read_run(name="input.r", **kw):
    def api(d: Path):
        return io.read_runs(d / name, lenient=True, **kw)

    return api


def read_track(d: Path):
    return io.read_collection(d / "T", lenient=True)


def argv(*args):
    """A setup that only builds the argv (``{d}`` in an argument is the directory)."""
    return lambda d: [str(a).replace("{d}", str(d)) for a in args]


def with_files(prepare, *args):
    def setup(d: Path) -> list:
        prepare(d)
        return argv(*args)(d)

    return setup


# --------------------------------------------------------------------------------------------
# scores: non-finite, out of range (issue 14 item 3)
# --------------------------------------------------------------------------------------------

for lit, words in [
    ("nan", "score 'nan' is NaN"),
    ("NaN", "score 'NaN' is NaN"),
    ("-nan", "score '-nan' is NaN"),
    ("inf", "score 'inf' is infinite"),
    ("-inf", "score '-inf' is infinite"),
    ("Infinity", "score 'Infinity' is infinite"),
    ("+INF", "score '+INF' is infinite"),
    ("1e309", "score '1e309' overflows a double"),
    ("-1e309", "score '-1e309' overflows a double"),
    ("1e-400", "score '1e-400' underflows a double"),
    ("-2.5e-330", "score '-2.5e-330' underflows a double"),
]:
    case(
        "scores",
        f"strict {lit}",
        evaluate_file(line3(f"1 Q0 d3 3 {lit} r")),
        2,
        f"{{d}}/input.r:3: {words}",
        hint=True,
    )
case(
    "scores",
    "strict float32 overflow",
    evaluate_file(line3("1 Q0 d3 3 1e39 r"), "--float32"),
    2,
    "{d}/input.r:3: score '1e39' overflows a 32-bit float (--float32)",
    hint=True,
)
case(
    "scores",
    "strict float32 underflow",
    evaluate_file(line3("1 Q0 d3 3 1e-50 r"), "--float32"),
    2,
    "{d}/input.r:3: score '1e-50' underflows a 32-bit float (--float32)",
    hint=True,
)
case(
    "scores",
    "strict non-numeric score is not repairable",
    evaluate_file(line3("1 Q0 d3 3 high r")),
    2,
    "{d}/input.r:3: non-numeric score 'high'",
)
case(
    "scores",
    "lenient non-numeric score is still refused",
    evaluate_file(line3("1 Q0 d3 3 high r"), "--lenient"),
    2,
    "{d}/input.r:3: non-numeric score 'high'",
)
for lit in ("nan", "inf", "1e309", "1e-400"):
    case(
        "scores",
        f"lenient {lit}",
        evaluate_file(line3(f"1 Q0 d3 3 {lit} r"), "--lenient"),
        0,
        "{d}/input.r: 1 repair(s)",
        rows=6,
        repairs=1,
        api=read_run(),
    )
case(
    "scores",
    "lenient three NaN lines",
    evaluate_file(
        ["1 Q0 d1 1 nan r", "1 Q0 d2 2 NaN r", *RUN[2:5], "2 Q0 d5 3 nan r"], "--lenient"
    ),
    0,
    "3 × NaN score",
    rows=6,
    repairs=3,
    api=read_run(),
)
case(
    "scores",
    "lenient float32 overflow",
    evaluate_file(line3("1 Q0 d3 3 1e39 r"), "--lenient", "--float32"),
    0,
    "1 × score overflow",
    rows=6,
    repairs=1,
    api=read_run(float32=True),
)
for lit in ("0.0e-999", "-0", "1e-310", "+.5e-3"):
    case(
        "scores",
        f"accepted {lit} (a zero literal, a subnormal, a plain number)",
        evaluate_file(line3(f"1 Q0 d3 3 {lit} r")),
        0,
    )

# --------------------------------------------------------------------------------------------
# the rank column (issue 14 item 5)
# --------------------------------------------------------------------------------------------

case(
    "rank",
    "strict non-numeric rank",
    evaluate_file(line3("1 Q0 d3 a 1.0 r")),
    2,
    "{d}/input.r:3: non-numeric rank 'a'",
    hint=True,
)
case(
    "rank",
    "strict NaN rank",
    evaluate_file(line3("1 Q0 d3 nan 1.0 r")),
    2,
    "{d}/input.r:3: non-numeric rank 'nan'",
    hint=True,
)
case(
    "rank",
    "lenient non-numeric rank",
    evaluate_file(line3("1 Q0 d3 a 1.0 r"), "--lenient"),
    0,
    "1 × non-numeric rank",
    rows=6,
    repairs=1,
    api=read_run(),
)
case(
    "rank",
    "lenient every rank a word",
    evaluate_file([" ".join(x.split()[:3] + ["r1", *x.split()[4:]]) for x in RUN], "--lenient"),
    0,
    "6 × non-numeric rank",
    rows=6,
    repairs=6,
    api=read_run(),
)

# --------------------------------------------------------------------------------------------
# byte-level oddities
# --------------------------------------------------------------------------------------------

BOM = b"\xef\xbb\xbf"
case(
    "bytes",
    "strict BOM",
    evaluate_file(BOM + lines_bytes(RUN)),
    2,
    "{d}/input.r:1: UTF-8 byte-order mark",
    hint=True,
)
case(
    "bytes",
    "lenient BOM",
    evaluate_file(BOM + lines_bytes(RUN), "--lenient"),
    0,
    "1 × byte-order mark",
    rows=6,
    repairs=1,
    api=read_run(),
)
case(
    "bytes",
    "strict BOM and a control byte",
    evaluate_file(BOM + lines_bytes(line3("1 Q0 d3 3 1.0\x1f r"))),
    2,
    "{d}/input.r:1: UTF-8 byte-order mark",
    hint=True,
)
case(
    "bytes",
    "lenient BOM and a control byte",
    evaluate_file(BOM + lines_bytes(line3("1 Q0 d3 3 1.0\x1f r")), "--lenient"),
    0,
    ("1 × byte-order mark", "1 × control byte"),
    rows=5,
    repairs=2,
    api=read_run(),
)
case(
    "bytes",
    "strict NUL in a docno",
    evaluate_file(line3("1 Q0 d\x003 3 1.0 r")),
    2,
    "{d}/input.r:3: control byte 0x00 (NUL)",
    hint=True,
)
case(
    "bytes",
    "lenient NUL in a docno",
    evaluate_file(line3("1 Q0 d\x003 3 1.0 r"), "--lenient"),
    0,
    "1 × control byte",
    rows=5,
    repairs=1,
    api=read_run(),
)
case(
    "bytes",
    "strict vertical tab",
    evaluate_file(RUN[:4] + ["2 Q0 d4\x0b2 2.0 r", RUN[5]]),
    2,
    "{d}/input.r:5: control byte 0x0b (VT)",
    hint=True,
)
case(
    "bytes",
    "strict DEL",
    evaluate_file(RUN[:5] + ["2 Q0 d5\x7f 3 1.0 r"]),
    2,
    "{d}/input.r:6: control byte 0x7f (DEL)",
    hint=True,
)
case(
    "bytes",
    "lenient ESC on two lines",
    evaluate_file(["1 Q0 d1 1 3.0 r\x1b", *RUN[1:5], "\x1b[0m"], "--lenient"),
    0,
    "2 × control byte",
    rows=4,
    repairs=2,
    api=read_run(),
)
CR_RUN = [f"{q} Q0 d{i} {i} {200 - i} r" for q in (1, 2) for i in range(150)]
case(
    "bytes",
    "strict CR-only line ends",
    evaluate_file(lines_bytes(CR_RUN, "\r")),
    2,
    "{d}/input.r:1: bare carriage return",
    hint=True,
)
case(
    "bytes",
    "lenient CR-only line ends",
    evaluate_file(lines_bytes(CR_RUN, "\r"), "--lenient"),
    0,
    "1 × CR-only line ends",
    rows=300,
    repairs=1,
    api=read_run(),
)
case("bytes", "CRLF line ends are fine", evaluate_file(lines_bytes(RUN, "\r\n")), 0)
case(
    "bytes",
    "strict a bare CR among CRLF",
    evaluate_file(lines_bytes(RUN[:3], "\r\n") + lines_bytes(RUN[3:], "\r")),
    2,
    "{d}/input.r:4: bare carriage return",
    hint=True,
)
case(
    "bytes",
    "strict invalid UTF-8 (no hint)",
    evaluate_file(lines_bytes(RUN[:3]) + b"2 Q0 d\xff 1 3.0 r\n"),
    2,
    "{d}/input.r:4: invalid UTF-8",
)
case(
    "bytes",
    "lenient invalid UTF-8 is refused",
    evaluate_file(lines_bytes(RUN[:3]) + b"2 Q0 d\xff 1 3.0 r\n", "--lenient"),
    2,
    "{d}/input.r:4: invalid UTF-8",
)
case(
    "bytes",
    "corrupt gzip (no hint)",
    evaluate_file(gzip.compress(lines_bytes(RUN))[:30], name="input.r.gz"),
    2,
    "{d}/input.r.gz: corrupt gzip data",
)
#: a gzip bomb: one run line, then 80 MiB of zeros (81 KB compressed, past the 64 MiB floor)
BOMB = gzip.compress(lines_bytes(RUN) + bytes(80 << 20), 9)
case(
    "bytes",
    "gzip bomb refused (no hint)",
    evaluate_file(BOMB, name="input.r.gz"),
    2,
    ("{d}/input.r.gz: gzip data expands to more than 67,108,864 bytes", "--gunzip-ratio N"),
)
case(
    "arguments",
    "--gunzip-ratio negative",
    evaluate_file(RUN, "--gunzip-ratio", "-1"),
    2,
    "--gunzip-ratio must be a number >= 0",
)


def write_qrels(data: bytes):
    def prepare(d: Path) -> None:
        (d / "qrels").write_bytes(data)
        (d / "input.r").write_bytes(lines_bytes(RUN))

    return with_files(prepare, "evaluate", "{d}/qrels", "{d}/input.r", "-m", "P@5")


case(
    "bytes",
    "strict qrels BOM",
    write_qrels(BOM + lines_bytes(QRELS)),
    2,
    "{d}/qrels:1: UTF-8 byte-order mark",
    hint=True,
)
case(
    "bytes",
    "strict qrels control byte",
    write_qrels(lines_bytes(QRELS[:4] + ["2 0 d4\x00 0", QRELS[5]])),
    2,
    "{d}/qrels:5: control byte 0x00 (NUL)",
    hint=True,
)
case(
    "bytes",
    "lenient qrels CR-only line ends",
    lambda d: write_qrels(lines_bytes(QRELS, "\r"))(d) + ["--lenient"],
    0,
    "{d}/qrels: 1 repair(s): 1 × CR-only line ends",
    rows=6,
    repairs=1,
    api=lambda d: io.read_qrels(d / "qrels", lenient=True),
)

# --------------------------------------------------------------------------------------------
# filesystem oddities
# --------------------------------------------------------------------------------------------

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def in_runs(kind: str, name: str = "input.x"):
    """Put something odd named ``name`` into ``T/Runs``."""

    def prepare(d: Path) -> None:
        p = d / "T" / "Runs" / name
        if kind == "dangling":
            p.symlink_to(d / "nowhere")
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "loop":
            p.symlink_to(p)
        elif kind == "dir":
            p.mkdir()

    return prepare


for kind, words in [
    ("dangling", "a dangling symbolic link"),
    ("fifo", "a FIFO (named pipe), not a regular file"),
    ("loop", "a symbolic link loop"),
    ("dir", "a directory, not a file"),
]:
    case(
        "filesystem",
        f"pool strict {kind} Runs/input.x",
        with_files(in_runs(kind), "pool", "{d}/T"),
        2,
        (f"{{d}}/T/Runs/input.x: {words}", "(in directory {d}/T/Runs)"),
        hint=True,
    )
    case(
        "filesystem",
        f"pool lenient {kind} Runs/input.x",
        with_files(in_runs(kind), "pool", "{d}/T", "--lenient"),
        0,
        ("{d}/T/Runs/input.x: 1 repair(s): 1 × not a regular file", "|R|    3"),
        rows=18,
        repairs=1,
        api=read_track,
    )


def special(kind: str, name: str = "odd"):
    def prepare(d: Path) -> None:
        p = d / name
        if kind == "fifo":
            os.mkfifo(p)
        elif kind == "loop":
            p.symlink_to(d / (name + "2"))
            (d / (name + "2")).symlink_to(p)
        elif kind == "dangling":
            p.symlink_to(d / "nowhere")

    return prepare


case(
    "filesystem",
    "FIFO given as a run",
    with_files(special("fifo"), "evaluate", "{d}/qrels", "{d}/odd"),
    2,
    "{d}/odd: a FIFO (named pipe), not a regular file",
)
case(
    "filesystem",
    "/dev/null given as a run",
    argv("evaluate", "{d}/qrels", "/dev/null", "--lenient"),
    2,
    "/dev/null: a character device, not a regular file",
)
case(
    "filesystem",
    "symlink loop given as a run",
    with_files(special("loop"), "evaluate", "{d}/qrels", "{d}/odd"),
    2,
    "{d}/odd: a symbolic link loop",
)
case(
    "filesystem",
    "dangling symlink given as a run",
    with_files(special("dangling"), "evaluate", "{d}/qrels", "{d}/odd"),
    2,
    "{d}/odd: a dangling symbolic link",
)
case(
    "filesystem",
    "FIFO given as qrels",
    with_files(special("fifo"), "evaluate", "{d}/odd", "{d}/T/Runs/input.a"),
    2,
    "{d}/odd: a FIFO (named pipe), not a regular file",
)
case(
    "filesystem",
    "/dev/null given as qrels",
    argv("evaluate", "/dev/null", "{d}/T/Runs/input.a"),
    2,
    "/dev/null: a character device, not a regular file",
)
case(
    "filesystem",
    "FIFO in QRels/",
    with_files(lambda d: os.mkfifo(d / "T" / "QRels" / "more"), "pool", "{d}/T"),
    2,
    "{d}/T/QRels/more: a FIFO (named pipe), not a regular file",
    hint=True,
)
case(
    "filesystem",
    "FIFO given as --desc",
    with_files(special("fifo"), "pool", "{d}/qrels", "{d}/T/Runs", "--desc", "{d}/odd"),
    2,
    "{d}/odd: a FIFO (named pipe), not a regular file",
)
case(
    "filesystem",
    "desc.xml a dangling symlink",
    with_files(
        lambda d: ((d / "T" / "desc.xml").unlink(), (d / "T" / "desc.xml").symlink_to("gone")),
        "pool",
        "{d}/T",
        "--lenient",
    ),
    2,
    "{d}/T/desc.xml: a dangling symbolic link",
)
case(
    "filesystem",
    "missing run named",
    argv("evaluate", "{d}/qrels", "{d}/nope"),
    2,
    "no such file or directory: {d}/nope",
)
case(
    "filesystem",
    "strict the same run file twice",
    argv("evaluate", "{d}/qrels", "{d}/T/Runs/input.a", "{d}/T/Runs/input.a"),
    2,
    "{d}/T/Runs/input.a: the same file as {d}/T/Runs/input.a (given twice)",
    hint=True,
)
case(
    "filesystem",
    "strict the same file through a directory and by name",
    argv("evaluate", "{d}/qrels", "{d}/T/Runs", "{d}/T/Runs/input.b"),
    2,
    "{d}/T/Runs/input.b: the same file as {d}/T/Runs/input.b (given twice)",
    hint=True,
)
case(
    "filesystem",
    "strict the same file through a symlink",
    with_files(
        lambda d: (d / "alias").symlink_to(d / "T" / "Runs" / "input.a"),
        "evaluate",
        "{d}/qrels",
        "{d}/T/Runs/input.a",
        "{d}/alias",
    ),
    2,
    "{d}/alias: the same file as {d}/T/Runs/input.a (given twice)",
    hint=True,
)
case(
    "filesystem",
    "lenient the same run file twice",
    argv("evaluate", "{d}/qrels", "{d}/T/Runs/input.a", "{d}/T/Runs/input.a", "--lenient"),
    0,
    "1 × file given twice",
    rows=6,
    repairs=1,
    api=lambda d: io.read_runs([d / "T/Runs/input.a", d / "T/Runs/input.a"], lenient=True),
)

# --------------------------------------------------------------------------------------------
# desc.xml safety
# --------------------------------------------------------------------------------------------


def desc(text: str, *flags):
    def prepare(d: Path) -> None:
        (d / "T" / "desc.xml").write_text(text)

    return with_files(prepare, "pool", "{d}/T", *flags)


LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE set [\n <!ENTITY l0 "lol">\n'
    + "".join(f' <!ENTITY l{i} "{f"&l{i - 1};" * 10}">\n' for i in range(1, 6))
    + "]>\n<set>\n"
    + DESC_ENTRY.format(t="a", o="&l5;")
    + "\n</set>\n"
)
EXTERNAL = (
    '<?xml version="1.0"?>\n<!DOCTYPE set [\n <!ENTITY ext SYSTEM "file:///etc/hostname">\n]>\n'
    "<set>\n" + DESC_ENTRY.format(t="a", o="&ext;") + "\n</set>\n"
)


def desc_with(a_org="A", a_tag="a", extra=""):
    rows = [
        DESC_ENTRY.format(t=a_tag, o=a_org),
        *(DESC_ENTRY.format(t=t, o=t.upper()) for t in "bc"),
    ]
    return "<set>\n" + "\n".join(rows) + "\n" + extra + "</set>\n"


entity = "desc.xml files with entity declarations are refused"
case(
    "desc", "billion laughs", desc(LAUGHS), 2, ("{d}/T/desc.xml:3: entity declaration 'l0'", entity)
)
case(
    "desc",
    "billion laughs, lenient",
    desc(LAUGHS, "--lenient"),
    2,
    "{d}/T/desc.xml:3: entity declaration",
)
case(
    "desc",
    "external SYSTEM entity",
    desc(EXTERNAL),
    2,
    ("{d}/T/desc.xml:3:", "SYSTEM 'file:///etc/hostname'"),
)
case(
    "desc",
    "external SYSTEM entity, lenient",
    desc(EXTERNAL, "--lenient"),
    2,
    ("{d}/T/desc.xml:3:", entity),
)
case(
    "desc",
    "parameter entity",
    desc('<!DOCTYPE set [\n<!ENTITY % p "x">\n]>\n' + DESC),
    2,
    "{d}/T/desc.xml:2: parameter entity declaration 'p'",
)
case(
    "desc",
    "unparsed entity",
    desc('<!DOCTYPE set [\n<!NOTATION n SYSTEM "n">\n<!ENTITY u SYSTEM "u" NDATA n>\n]>\n' + DESC),
    2,
    "{d}/T/desc.xml:3: unparsed entity declaration 'u'",
)
case(
    "desc",
    "entity of an unread external DTD",
    desc('<!DOCTYPE set SYSTEM "set.dtd">\n' + desc_with(a_org="&org;")),
    2,
    "{d}/T/desc.xml:3: reference to entity 'org'",
)
case(
    "desc",
    "a DTD without entities is fine",
    desc("<!DOCTYPE set [\n<!ELEMENT set ANY>\n]>\n" + DESC),
    0,
)
case("desc", "predefined entities are fine", desc(desc_with(a_org="A &amp; B &lt;C&gt;")), 0)
case(
    "desc",
    "whitespace-only organization",
    desc(desc_with(a_org=" \n\t ")),
    2,
    "{d}/T/desc.xml:2: empty <organization>",
)
case(
    "desc",
    "whitespace-only organization, lenient",
    desc(desc_with(a_org="   "), "--lenient"),
    2,
    "{d}/T/desc.xml:2: empty <organization>",
)
case(
    "desc",
    "empty organization element",
    desc(desc_with().replace("<organization>A</organization>", "<organization/>")),
    2,
    "{d}/T/desc.xml:2: empty <organization>",
)
case(
    "desc",
    "mixed markup organization",
    desc(desc_with(a_org="Univ. <b>of</b> A")),
    2,
    "{d}/T/desc.xml:2: <organization> contains markup (<b>)",
)
case(
    "desc",
    "mixed markup tag",
    desc(desc_with(a_tag="a<i>x</i>")),
    2,
    "{d}/T/desc.xml:2: <tag> contains markup (<i>)",
)
case(
    "desc",
    "tag with whitespace",
    desc(desc_with(a_tag="a x")),
    2,
    "{d}/T/desc.xml:2: run tag 'a x' contains whitespace",
)
case(
    "desc",
    "two organizations in one entry",
    desc(
        desc_with().replace(
            "<organization>A</organization>",
            "<organization>A</organization><organization>Z</organization>",
        )
    ),
    2,
    "{d}/T/desc.xml:2: desc.xml entry has 2 <organization> elements",
)
case(
    "desc",
    "strict tag listed twice",
    desc(desc_with(extra=DESC_ENTRY.format(t="b", o="B2") + "\n")),
    2,
    "{d}/T/desc.xml:5: run tag 'b' listed twice (first at line 3)",
    hint=True,
)
case(
    "desc",
    "lenient tag listed twice (its own label)",
    desc(desc_with(extra=DESC_ENTRY.format(t="b", o="B2") + "\n"), "--lenient"),
    0,
    "{d}/T/desc.xml: 1 repair(s): 1 × tag listed twice in desc.xml",
    rows=18,
    repairs=1,
    api=read_track,
)
case(
    "desc",
    "desc.xml over --xml-limit",
    desc(DESC, "--xml-limit", "50"),
    2,
    (
        f"{{d}}/T/desc.xml: desc.xml holds {len(DESC)} bytes, over the limit of 50 bytes",
        "--xml-limit BYTES",
    ),
)
case(
    "desc",
    "gzipped desc.xml over --xml-limit once gunzipped",
    with_files(
        lambda d: (d / "T" / "desc.xml").write_bytes(gzip.compress(DESC.encode() * 3)),
        "pool",
        "{d}/T",
        "--xml-limit",
        str(len(DESC) * 2),
    ),
    2,
    "{d}/T/desc.xml: gunzipped desc.xml holds more than ",
)
case(
    "desc",
    "malformed XML (no hint)",
    desc("<set>\n<runs><tag>a</tag>\n</set>\n"),
    2,
    "{d}/T/desc.xml:3: malformed XML",
)

# a track without organizations (issue 24 item 4): not a problem of the input, a layout; each
# run is its own organization, said once (a warning) and in the output, in both modes
ONE_ORG_PER_RUN = (
    "each run is its own organization (leave-one-organization-out = leave-one-run-out)"
)
for mode in ((), ("--lenient",)):
    for what, prepare, reason in (
        ("missing", lambda d: (d / "T" / "desc.xml").unlink(), "no desc.xml in {d}/T"),
        ("empty", lambda d: (d / "T" / "desc.xml").write_text(""), "{d}/T/desc.xml is empty"),
        ("blank", lambda d: (d / "T" / "desc.xml").write_text(" \n\n"), "is empty"),
        ("no entry", lambda d: (d / "T" / "desc.xml").write_text("<set/>\n"), "lists no run"),
    ):
        case(
            "desc",
            f"{'lenient' if mode else 'strict'} desc.xml {what}: each run its own organization",
            with_files(prepare, "pool", "{d}/T", *mode),
            0,
            (f"{reason}: {ONE_ORG_PER_RUN}", "  |O|    3", "organizations: "),
        )
case(
    "desc",
    "lenient a run desc.xml lacks",
    desc(desc_with().replace(DESC_ENTRY.format(t="c", o="C"), ""), "--lenient"),
    0,
    ("1 × run not in desc.xml", "runs without an organization: c"),
    rows=18,
    repairs=1,
    api=read_track,
)
case(
    "filesystem",
    "strict an empty run file",
    with_files(lambda d: (d / "T" / "Runs" / "input.c").write_text("\n  \n"), "pool", "{d}/T"),
    2,
    "{d}/T/Runs/input.c: empty file (no run lines)",
    hint=True,
)
case(
    "filesystem",
    "lenient an empty run file",
    with_files(
        lambda d: (d / "T" / "Runs" / "input.c").write_text(""), "pool", "{d}/T", "--lenient"
    ),
    0,
    ("1 × empty file", "|R|    2"),
    rows=12,
    repairs=1,
    api=read_track,
)

# --------------------------------------------------------------------------------------------
# argument validation: before any work, naming the flag
# --------------------------------------------------------------------------------------------

CORRECT = ("correct", "{d}/qrels", "{d}/T/Runs", "{d}/T/Runs/input.a")
EVALUATE = ("evaluate", "{d}/qrels", "{d}/T/Runs")
#: (case, argv, the message); every one exits with status 2 before any input is read
REFUSED_ARGUMENTS = [
    *(
        (
            f"pool --tolerance {v}",
            ("pool", "{d}/T", "--tolerance", v),
            "--tolerance must be in [0, 1)",
        )
        for v in ("-1", "5", "nan", "1", "inf")
    ),
    (
        "analyze --jobs -3",
        ("analyze", "{d}/T", "--jobs", "-3"),
        "--jobs must be >= 1 (or 0 for every core)",
    ),
    (
        "analyze -m nDCG@x",
        ("analyze", "{d}/T", "-m", "nDCG@x"),
        "-m nDCG@x: unknown measure 'nDCG@x'",
    ),
    (
        "analyze -m P@0",
        ("analyze", "{d}/T", "-m", "P@0"),
        "-m P@0: measure 'P@0': the cut-off must be ≥ 1",
    ),
    (
        "analyze --leave-out org,foo",
        ("analyze", "{d}/T", "--leave-out", "org,foo"),
        "--leave-out: 'foo' is not one of org, run",
    ),
    (
        "analyze --leave-out org,org",
        ("analyze", "{d}/T", "--leave-out", "org,org"),
        "--leave-out: org listed twice",
    ),
    (
        "analyze --run-sets top50",
        ("analyze", "{d}/T", "--run-sets", "top50"),
        "--run-sets: 'top50' is not one of all, top75",
    ),
    (
        "analyze --run-sets ''",
        ("analyze", "{d}/T", "--run-sets", ""),
        "--run-sets needs at least one of all, top75",
    ),
    (
        "analyze --estimators true,reduced",
        ("analyze", "{d}/T", "--estimators", "true,reduced"),
        "--estimators: 'true' is not one of reduced, webber, lipani, condensed",
    ),
    (
        "correct --estimators reduced,foo",
        (*CORRECT, "--estimators", "reduced,foo"),
        "--estimators: 'foo' is not one of true, reduced, webber, lipani, condensed",
    ),
    (
        "correct -m P@0",
        (*CORRECT, "-m", "P@0"),
        "-m P@0: measure 'P@0': the cut-off must be ≥ 1",
    ),
    (
        "correct -m RBP(p=2)@10",
        (*CORRECT, "-m", "RBP(p=2)@10"),
        "-m RBP(p=2)@10: measure 'RBP(p=2)@10': RBP needs 0 < p < 1",
    ),
    (
        "pool --leave-out without -o",
        ("pool", "{d}/T", "--leave-out", "org"),
        "--leave-out needs -o FILE.parquet",
    ),
    (
        "pool -o without --leave-out",
        ("pool", "{d}/T", "-o", "{d}/x.parquet"),
        "-o is used only with --leave-out",
    ),
    (
        "pool -m without --unique",
        ("pool", "{d}/T", "-m", "AP"),
        "-m/--measure is used only with --unique",
    ),
    (
        "evaluate --format parquet without -o",
        (*EVALUATE, "--format", "parquet"),
        "--format parquet needs -o FILE",
    ),
    (
        "evaluate --trec --format tsv",
        (*EVALUATE, "--trec", "--format", "tsv"),
        "--trec prints trec_eval's layout; it cannot be combined with --format tsv",
    ),
    ("an unknown option (argparse)", (*EVALUATE, "--bogus"), "unrecognized arguments: --bogus"),
]
for name, args, says in REFUSED_ARGUMENTS:
    case("arguments", name, argv(*args), 2, says)
case("arguments", "pool --tolerance 0.1 is fine", argv("pool", "{d}/T", "--tolerance", "0.1"), 0)
case(
    "arguments",
    "unknown measure before a malformed run is read",
    evaluate_file(line3("1 Q0 d3 3 high r"), "-m", "Pfoo@5"),
    2,
    "-m Pfoo@5: unknown measure 'Pfoo@5'",
)
case(
    "arguments",
    "two files, one tag: the message names --run-id and --lenient",
    with_files(
        lambda d: (d / "T" / "Runs" / "input.a2").write_bytes(lines_bytes(run_of("a"))),
        *EVALUATE,
    ),
    2,
    (
        "{d}/T/Runs/input.a2: run 'a' is also carried by {d}/T/Runs/input.a",
        "--run-id file or --lenient",
    ),
    hint=True,
)

# --------------------------------------------------------------------------------------------
# output paths: checked before the work starts
# --------------------------------------------------------------------------------------------

REFUSED_OUTPUTS = [
    (
        "evaluate -o /proc/version",
        (*EVALUATE, "-o", "/proc/version"),
        "-o /proc/version: is under /proc, a pseudo file system",
    ),
    (
        "evaluate -o in a missing directory",
        (*EVALUATE, "-o", "{d}/missing/out.tsv"),
        "-o {d}/missing/out.tsv: the directory {d}/missing does not exist",
    ),
    (
        "evaluate -o a directory",
        (*EVALUATE, "-o", "{d}/T"),
        "-o {d}/T: is a directory, expected a file name",
    ),
    (
        "evaluate -o an input run",
        (*EVALUATE, "-o", "{d}/T/Runs/input.b"),
        "-o {d}/T/Runs/input.b: is an input file (of {d}/T/Runs)",
    ),
    (
        "pool --leave-out -o /proc/version",
        ("pool", "{d}/T", "--leave-out", "org", "-o", "/proc/version"),
        "-o /proc/version: is under /proc, a pseudo file system",
    ),
    (
        "correct -o in a missing directory",
        (*CORRECT, "-o", "{d}/no/x.tsv"),
        "-o {d}/no/x.tsv: the directory {d}/no does not exist",
    ),
    (
        "analyze -o in a missing directory",
        ("analyze", "{d}/T", "-o", "{d}/no/such/dir"),
        "-o {d}/no/such/dir: the directory {d}/no/such does not exist",
    ),
]
for name, args, says in REFUSED_OUTPUTS:
    case("output", name, argv(*args), 2, says)
case(
    "output",
    "analyze -o an existing file",
    with_files(lambda d: (d / "out").write_text("keep me"), "analyze", "{d}/T", "-o", "{d}/out"),
    2,
    "-o {d}/out: exists and is not a directory",
)
case(
    "output",
    "evaluate -o a dangling symlink",
    with_files(lambda d: (d / "link").symlink_to(d / "nowhere" / "x"), *EVALUATE, "-o", "{d}/link"),
    2,
    "-o {d}/link: is a dangling symbolic link",
)

# --------------------------------------------------------------------------------------------
# reporting
# --------------------------------------------------------------------------------------------

case(
    "reporting",
    "the hint after a repairable duplicate document",
    evaluate_file(line3("1 Q0 d1 3 1.0 r")),
    2,
    "{d}/input.r:3: duplicate document 'd1' for topic '1' in run 'r' (first at line 1)",
    hint=True,
)
case(
    "reporting",
    "no hint after a non-integer qrels label",
    write_qrels(lines_bytes(QRELS[:2] + ["1 0 d3 high"] + QRELS[3:])),
    2,
    "{d}/qrels:3: non-integer relevance label 'high'",
)
case(
    "reporting",
    "no hint under --lenient",
    evaluate_file(line3("1 Q0 d3 3 x r"), "--lenient"),
    2,
    "{d}/input.r:3: non-numeric score 'x'",
)
case(
    "reporting",
    "an empty result is a message",
    evaluate_file([line.replace("1 Q0", "7 Q0").replace("2 Q0", "8 Q0") for line in RUN]),
    2,
    "no result: no run answers a topic that the qrels judge (run topics: 7, 8; qrels topics: 1, 2)",
)
case(
    "reporting",
    "lenient repairs of several kinds, one summary per file",
    evaluate_file(
        ["", *RUN[:2], "1 Q0 d3 3 nan r extra", "1 Q0 d1 9 0.5 r", *RUN[3:]], "--lenient"
    ),
    0,
    "{d}/input.r: 4 repair(s): 1 × blank line, 1 × wrong field count, 1 × NaN score, "
    "1 × duplicate document",
    rows=6,
    repairs=4,
    api=read_run(),
)


# --------------------------------------------------------------------------------------------
# probable mistakes (issue 24 item 4): the wrong file, not a dirty one; refused in both modes,
# naming the mistake, and without the --lenient hint (--lenient would not repair them)
# --------------------------------------------------------------------------------------------

ELF = b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x03\x00>\x00\r\n" + bytes(range(256)) * 4
NOISE = bytes((i * 37 + 11) % 256 for i in range(4096))  # NULs, bare CRs, invalid UTF-8
UTF16 = lines_bytes(RUN).decode().encode("utf-16")  # with its byte-order mark
UTF16LE = lines_bytes(RUN).decode().encode("utf-16-le")  # without

for mode in ((), ("--lenient",)):
    tag = "lenient" if mode else "strict"
    case(
        "mistakes",
        f"{tag} a run given as the qrels",
        argv("evaluate", "{d}/T/Runs/input.a", "{d}/qrels", *mode),
        2,
        (
            "{d}/T/Runs/input.a:1: every line has 6 fields, the layout of a run file "
            "(qid Q0 docno rank score tag), not of qrels",
            "a run file given as the qrels?",
        ),
    )
    case(
        "mistakes",
        f"{tag} a qrels file given as a run",
        argv("evaluate", "{d}/qrels", "{d}/qrels", *mode),
        2,
        ("{d}/qrels:1: every line has 4 fields, the layout of a qrels file", "given as a run?"),
    )
    case(
        "mistakes",
        f"{tag} a qrels file given as the new run of correct",
        argv("correct", "{d}/qrels", "{d}/T/Runs", "{d}/qrels", "-m", "P@5", *mode),
        2,
        "{d}/qrels:1: every line has 4 fields, the layout of a qrels file",
    )
    case(
        "mistakes",
        f"{tag} a 3-column run: no line can be a run line",
        evaluate_file(["1 d1 3.0", "1 d2 2.0", "2 d1 1.0"], *mode),
        2,
        (
            "{d}/input.r:1: no line has the 6 fields of a run line (its lines have 3)",
            "--lenient cannot repair it",
        ),
    )
    case(
        "mistakes",
        f"{tag} a run of short lines of several lengths",
        evaluate_file(["1 Q0 d1 1 3.0", "1 d2 2.0", "", "2 d1"], *mode),
        2,
        "{d}/input.r:1: no line has the 6 fields of a run line (its lines have 2, 3, 5)",
    )
    case(
        "mistakes",
        f"{tag} 3-column qrels",
        with_files(
            lambda d: (d / "q3").write_text("1 d1 1\n1 d2 0\n"),
            "evaluate",
            "{d}/q3",
            "{d}/T/Runs/input.a",
            *mode,
        ),
        2,
        "{d}/q3:1: no line has the 4 fields of a qrels line (its lines have 3)",
    )
    case(
        "mistakes",
        f"{tag} a runs directory given as the qrels",
        argv("evaluate", "{d}/T/Runs", "{d}/T/Runs/input.a", *mode),
        2,
        "{d}/T/Runs: a directory of run files (input.*) given as the qrels",
    )
    case(
        "mistakes",
        f"{tag} a track directory given as the qrels",
        argv("evaluate", "{d}/T", "{d}/T/Runs/input.a", *mode),
        2,
        ("{d}/T: a track directory (QRels/, Runs/) given as the qrels", "pbtools analyze {d}/T"),
    )
    case(
        "mistakes",
        f"{tag} a runs directory given as the qrels of analyze",
        argv("analyze", "{d}/T/Runs", "{d}/T/Runs/input.a", *mode),
        2,
        "{d}/T/Runs: a directory of run files (input.*) given as the qrels",
    )
    for name, data, says in (
        ("an executable", ELF, "{d}/input.r: an executable program or library (ELF), not a TREC"),
        ("binary noise", NOISE, "{d}/input.r: a binary file (NUL bytes"),
        ("a Parquet file", b"PAR1\x15\x04\x00\r" + bytes(64), "a Parquet file (read it with"),
        ("an xz file", b"\xfd7zXZ\x00\x00\x04" + bytes(32), "an xz-compressed file (decompress"),
        ("UTF-16 text", UTF16, "{d}/input.r: UTF-16 text (convert it to UTF-8"),
        ("UTF-16 without BOM", UTF16LE, "{d}/input.r: UTF-16 text (convert it to UTF-8"),
        ("a gzipped executable", gzip.compress(ELF), "an executable program or library (ELF)"),
    ):
        case("mistakes", f"{tag} {name} as a run", evaluate_file(data, *mode), 2, says)
    case(
        "mistakes",
        f"{tag} a binary file as the qrels",
        with_files(
            lambda d: (d / "qb").write_bytes(NOISE), "evaluate", "{d}/qb", "{d}/T/Runs", *mode
        ),
        2,
        "{d}/qb: a binary file (NUL bytes",
    )
case(
    "mistakes",
    "analyze with a qrels file alone",
    argv("analyze", "{d}/qrels"),
    2,
    "expected TRACK_DIR, or QRELS followed by run files or a runs directory",
)


# --------------------------------------------------------------------------------------------
# the runner
# --------------------------------------------------------------------------------------------

IDS = [f"{c.cls}: {c.id}" for c in CASES]
assert len(set(IDS)) == len(IDS), "case ids must be unique"


def repairs_reported(err: str) -> int:
    return sum(int(n) for n in re.findall(r"(\d+) repair\(s\)", err))


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_bad_input(c: Case, tmp_path, capsys):
    if ("fifo" in c.id.lower()) and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    d = tmp_path
    make_base(d)
    args = [str(a) for a in c.setup(d)]
    if args[0] == "analyze":
        args.append("--no-progress")
    code = main(args)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code == c.rc, err
    for words in c.says:
        assert words.replace("{d}", str(d)) in out + err, err
    if c.rc == 2:
        assert "error: " in err
    assert (HINT in err) == c.hint, err
    if c.repairs is None:
        assert "repair(s)" not in err, err
        return
    assert repairs_reported(err) == c.repairs, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrecFormatWarning)
        got = c.api(d)
    frame, repairs = (
        (got.runs, got.repairs) if hasattr(got, "runs") else (got, got.attrs["repairs"])
    )
    assert len(frame) == c.rows
    assert len(repairs) == c.repairs


def test_at_least_60_cases_over_every_class():
    counts = Counter(c.cls for c in CASES)
    assert sum(counts.values()) >= 60
    assert set(counts) == {
        "scores",
        "rank",
        "bytes",
        "filesystem",
        "desc",
        "arguments",
        "output",
        "reporting",
        "mistakes",
    }
    assert min(counts.values()) >= 4
    assert sum(c.repairs is not None for c in CASES) >= 15  # lenient cases with exact counts


# --------------------------------------------------------------------------------------------
# what the cases cannot show in one line
# --------------------------------------------------------------------------------------------


def test_lenient_nan_is_last_in_its_topic_and_inf_first(tmp_path):
    p = tmp_path / "input.r"
    p.write_text(
        "1 Q0 a 1 nan r\n1 Q0 b 2 1 r\n1 Q0 c 3 NaN r\n1 Q0 d 4 -inf r\n1 Q0 e 5 inf r\n"
        "2 Q0 f 1 nan r\n2 Q0 g 2 0.5 r\n"
    )
    with pytest.warns(TrecFormatWarning, match="5 repair"):
        df = io.read_run(p, lenient=True)
    assert df["docno"].astype(str).tolist() == ["e", "b", "d", "c", "a", "g", "f"]
    assert df["rank"].tolist() == [1, 2, 3, 4, 5, 1, 2]
    rep = df.attrs["repairs"]
    assert rep["line"].tolist() == [1, 3, 4, 5, 6]
    assert rep["action"].tolist()[:2] == ["kept; ordered last in its topic"] * 2


def test_nan_scores_do_not_change_measures_of_the_other_documents(tmp_path):
    (tmp_path / "qrels").write_text("\n".join(QRELS) + "\n")
    p = tmp_path / "input.r"
    p.write_text("\n".join(["1 Q0 d9 0 nan r", *RUN]) + "\n")
    with pytest.warns(TrecFormatWarning):
        runs = io.read_run(p, lenient=True)
    qrels = io.read_qrels(tmp_path / "qrels")
    clean = io.read_run(_write(tmp_path / "input.c", RUN))
    from pbtools import measures

    a = measures.evaluate(runs, qrels, ["P@3", "AP"])
    b = measures.evaluate(clean, qrels, ["P@3", "AP"])
    assert np.allclose(a["value"].to_numpy(), b["value"].to_numpy())


def _write(path: Path, lines) -> Path:
    path.write_bytes(lines_bytes(lines))
    return path


def test_analyze_refuses_an_existing_file_before_reading(tmp_path, capsys, monkeypatch):
    from pbtools.experiments import analysis

    called = []
    monkeypatch.setattr(analysis, "analyze", lambda *a, **k: called.append(1))
    make_base(tmp_path)
    (tmp_path / "out").write_text("x")
    assert main(["analyze", str(tmp_path / "T"), "-o", str(tmp_path / "out")]) == 2
    assert called == []
    assert (tmp_path / "out").read_text() == "x"


def test_a_bug_is_status_1_with_one_line_and_debug_shows_the_traceback(
    tmp_path, capsys, monkeypatch
):
    from pbtools.cli import evaluate

    def boom(args):
        raise RuntimeError("kaboom")

    make_base(tmp_path)
    monkeypatch.setattr(evaluate, "run", boom)
    argv_ = ["evaluate", str(tmp_path / "qrels"), str(tmp_path / "T" / "Runs")]
    from pbtools.cli import build_parser

    assert build_parser().parse_args(argv_).func is boom
    assert main(argv_) == 1
    _, err = capsys.readouterr()
    assert "internal error (a bug in pbtools): RuntimeError: kaboom" in err
    assert "Traceback" not in err and "--debug" in err
    assert main(["--debug", *argv_]) == 1
    _, err = capsys.readouterr()
    assert "Traceback" in err and "kaboom" in err
    assert main([*argv_, "--debug"]) == 1
    assert "Traceback" in capsys.readouterr()[1]


def test_a_separate_process_exits_2_without_a_traceback(tmp_path):
    make_base(tmp_path)
    bad = tmp_path / "input.r"
    bad.write_text("\n".join(line3("1 Q0 d3 3 inf r")) + "\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "pbtools", "evaluate", str(tmp_path / "qrels"), str(bad)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 2
    assert f"{bad}:3: score 'inf' is infinite" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "pbtools", "--debug", "evaluate", str(tmp_path / "qrels"), str(bad)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" in proc.stderr


def test_protocol_preset_reports_its_repairs(tmp_path):
    make_base(tmp_path)
    runs = tmp_path / "T" / "Runs"
    (runs / "input.a").write_text("\n".join(["", *run_of("a"), "1 Q0 d1 4 0.5 a"]) + "\n")
    with pytest.warns(TrecFormatWarning) as record:
        R, Q, O = experiments.load(tmp_path / "T", protocol="lipani2015")
    msgs = [str(w.message) for w in record]
    assert any("input.a: 2 repair(s): 1 × blank line, 1 × duplicate document" in m for m in msgs)
    assert len(R) == 18 and sorted(O["org"]) == ["A", "B", "C"]


def test_protocol_preset_reads_qrels_and_runs_and_desc(tmp_path):
    make_base(tmp_path)
    R, Q, O = experiments.load(
        [tmp_path / "qrels", tmp_path / "T" / "Runs"],
        protocol="lipani2015",
        desc=tmp_path / "T" / "desc.xml",
    )
    assert len(R) == 18 and len(Q) == 6 and sorted(O["name"]) == ["a", "b", "c"]


# --------------------------------------------------------------------------------------------
# the API: Parquet round trips
# --------------------------------------------------------------------------------------------


def test_judged_frame_round_trips_through_parquet(tmp_path):
    import pbtools  # noqa: F401  (the .pb accessor)

    make_base(tmp_path)
    runs = io.read_runs(tmp_path / "T" / "Runs")
    qrels = io.read_qrels(tmp_path / "qrels")
    judged = runs.pb.judge(qrels)
    io.write_parquet(judged, tmp_path / "j.parquet")
    back = io.read_parquet(tmp_path / "j.parquet")
    pd.testing.assert_frame_equal(back, judged)
    pd.testing.assert_frame_equal(back.attrs["pbtools_qrels"], judged.attrs["pbtools_qrels"])
    pd.testing.assert_frame_equal(back.pb.measure(["P@2", "AP"]), judged.pb.measure(["P@2", "AP"]))


def test_lenient_repairs_round_trip_through_parquet(tmp_path):
    p = _write(tmp_path / "input.r", [*RUN, "2 Q0 d9 4 inf r", "2 Q0 d8 x 1 r"])
    with pytest.warns(TrecFormatWarning):
        runs = io.read_run(p, lenient=True)
    io.write_parquet(runs, tmp_path / "r.parquet")
    back = io.read_parquet(tmp_path / "r.parquet")
    pd.testing.assert_frame_equal(back.attrs["repairs"], runs.attrs["repairs"])
    assert np.isinf(back["score"]).sum() == 1


def test_write_parquet_names_an_attr_it_cannot_store(tmp_path):
    df = pd.DataFrame({"a": [1]})
    df.attrs["thing"] = {"ok": 1, "bad": object()}
    with pytest.raises(TypeError, match=r"attrs\['thing'\]\['bad'\] \(a object\)"):
        io.write_parquet(df, tmp_path / "x.parquet")
