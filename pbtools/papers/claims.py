"""Claims tables: what a paper states, what the data say, and whether the statement holds.

Every paper script (``lipani2015.py``, ``sakai2008.py``, ``webber2009.py``, ``buckley2006.py``)
ends by checking the paper's claims on each track it ran on and writes ``claims.parquet`` and
``claims.md`` beside its other outputs, one row per (track, claim):

==========  ===================================================================================
``paper``   the paper (e.g. ``Sakai 2008``)
``track``   the collection the claim was checked on (``TREC-2/Adhoc``, ``synthetic``, …)
``id``      a short stable identifier (``F1a``, ``T1``, …): tests and the README refer to it
``claim``   the paper's statement, in its words or close to them, with its section or table
``paper``   the paper's number behind the statement (text; ``""`` when it gives none)
``ours``    the same quantity on the track (text)
``holds``   ``"true"``, ``"false"`` or ``"n.a."`` (the data cannot support the claim)
``note``    one line: how the verdict was decided, or why it is n.a.
==========  ===================================================================================

The column holding the paper's number is ``paper_value`` in the frame (``paper`` names the
paper). :mod:`pbtools.papers.summary` gathers the claims files of several papers into one
Markdown block for the project README, so that the README's summary comes from these files only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

#: the columns of a claims frame, in order
COLUMNS = ["paper", "track", "id", "claim", "paper_value", "ours", "holds", "note"]
#: the values of ``holds``
VERDICTS = ("true", "false", "n.a.")


def verdict(holds) -> str:
    """``"true"`` / ``"false"`` for a truth value (numpy booleans too), ``"n.a."`` for None/NaN.

    >>> verdict(True), verdict(False), verdict(None), verdict(float("nan"))
    ('true', 'false', 'n.a.', 'n.a.')
    """
    if holds is None or (isinstance(holds, float) and math.isnan(holds)):
        return "n.a."
    if isinstance(holds, str):
        if holds not in VERDICTS:
            raise ValueError(f"a verdict is one of {VERDICTS}, got {holds!r}")
        return holds
    return "true" if bool(holds) else "false"


def num(x, digits: int = 3, signed: bool = False) -> str:
    """``x`` with ``digits`` decimals, the leading zero dropped as IR papers print scores
    (``.571``); ``"–"`` for NaN.

    >>> num(0.5714), num(-0.25, 2), num(1.0), num(0.12, 2, signed=True), num(float("nan"))
    ('.571', '−.25', '1.000', '+.12', '–')
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    s = f"{abs(float(x)):.{digits}f}"
    if s.startswith("0."):
        s = s[1:]
    sign = "−" if float(x) < 0 and float(s) != 0 else ("+" if signed else "")
    return sign + s


def pct(x, digits: int = 1, signed: bool = True) -> str:
    """A percentage: ``pct(5.28)`` → ``'+5.3 %'``; ``"–"`` for NaN.

    >>> pct(5.28), pct(-0.4, 2), pct(12, 0, signed=False)
    ('+5.3 %', '−0.40 %', '12 %')
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    s = f"{abs(float(x)):.{digits}f}"
    sign = "−" if float(x) < 0 and float(s) != 0 else ("+" if signed else "")
    return f"{sign}{s} %"


def share(k: int, n: int) -> str:
    """``"k/n"``: how many of n cases show the effect.

    >>> share(3, 4)
    '3/4'
    """
    return f"{int(k)}/{int(n)}"


#: The one reading of "generally" (and "in general", "mostly", "usually") for every paper: the
#: statement holds in at least two thirds of the cases it covers. A bare majority (> 1/2) would
#: call a coin toss "general"; "every case" would make a paper's own tables contradict it (the
#: papers say "generally" exactly where they report exceptions). Chosen from the wording alone,
#: before any data (issue 27).
GENERALLY = 2 / 3


def generally(k: int, n: int) -> bool | None:
    """Whether ``k`` of ``n`` cases are "generally" (:data:`GENERALLY`); None (n.a.) when n = 0.

    >>> generally(2, 3), generally(3, 5), generally(0, 0)
    (True, False, None)
    """
    if n == 0:
        return None
    return k >= GENERALLY * n - 1e-12


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, declared from the paper alone, before any data is read.

    Parameters
    ----------
    id : short stable identifier (``"F1a"``); tests and the README refer to it
    section : where the paper states it (``"§5.1, Table 2"``)
    quote : the paper's words (or a close paraphrase, marked as such)
    quantity : what is computed on a collection to check it, in words
    criterion : how the verdict is decided, including how the paper's wording is read
        (e.g. "generally = in ≥ 2/3 of the comparisons, :data:`GENERALLY`")
    paper_value : the paper's own number behind the statement (text; ``""`` when none)
    min_collections : claims about several collections are checked across the collections
        given and are n.a. ("needs ≥ k collections") with fewer; 1 for a per-collection claim
    extension : True for a statement pbtools checks that the paper does not make (shown as such)

    >>> c = Claim("X1", "§3", "pools are biased", "mean loss of left-out runs", "loss > 0")
    >>> c.row("TREC-2/Adhoc", "+.02", True)["holds"]
    'true'
    >>> Claim("W1", "§5", "q", "k", "c", min_collections=2).row("T", "", True)["holds"]
    'n.a.'
    """

    id: str
    section: str
    quote: str
    quantity: str
    criterion: str
    paper_value: str = ""
    min_collections: int = 1
    extension: bool = False

    @property
    def text(self) -> str:
        """The claim as the claims table shows it: section, quote (and "extension")."""
        tag = " [extension: not claimed by the paper]" if self.extension else ""
        return f"{self.section}: {self.quote}{tag}"

    def row(self, track: str, ours, holds, note: str = "", *, collections: int = 1) -> dict:
        """The claims-table row of this claim on ``track`` (``collections``: how many
        collections the verdict was computed over)."""
        if collections < self.min_collections:
            holds = None
            note = (
                f"needs ≥ {self.min_collections} collections (given {collections}); "
                "run over a directory of tracks"
            )
        return {
            "track": track,
            "id": self.id,
            "claim": self.text,
            "paper_value": str(self.paper_value),
            "ours": str(ours),
            "holds": verdict(holds),
            "note": note or self.criterion,
        }


def declared(*claims: Claim) -> dict[str, Claim]:
    """A paper's catalogue of :class:`Claim` objects by id (ids must be unique).

    >>> sorted(declared(Claim("A", "§1", "q", "k", "c"), Claim("B", "§2", "q", "k", "c")))
    ['A', 'B']
    """
    out: dict[str, Claim] = {}
    for c in claims:
        if c.id in out:
            raise ValueError(f"duplicate claim id {c.id!r}")
        out[c.id] = c
    return out


@dataclass
class Claims:
    """The claims of one paper checked on one track; :meth:`add` one row per claim.

    >>> c = Claims("Sakai 2008", "TREC-2/Adhoc")
    >>> c.add("F1a", "condensed-list metrics overestimate new systems", "+1.9 %", "+5.3 %", True,
    ...       "mean over teams")
    >>> c.add("T1", "titlestat", ".719", "", None, "needs document text")
    >>> c.frame()[["id", "holds"]].to_dict("list")
    {'id': ['F1a', 'T1'], 'holds': ['true', 'n.a.']}
    """

    paper: str
    track: str
    rows: list[dict] = field(default_factory=list)

    def add(self, cid: str, claim: str, paper, ours, holds, note: str = "") -> None:
        """One claim: its id ``cid``, the statement, the paper's number, ours, the verdict
        (True / False / None = n.a., see :func:`verdict`) and a one-line note."""
        if any(r["id"] == cid for r in self.rows):
            raise ValueError(f"duplicate claim id {cid!r}")
        self.rows.append(
            {
                "paper": self.paper,
                "track": self.track,
                "id": cid,
                "claim": claim,
                "paper_value": str(paper),
                "ours": str(ours),
                "holds": verdict(holds),
                "note": note,
            }
        )

    def check(self, claim: Claim, ours, holds, note: str = "", *, collections: int = 1) -> None:
        """Add the verdict of a declared :class:`Claim` (see :meth:`Claim.row`)."""
        if any(r["id"] == claim.id for r in self.rows):
            raise ValueError(f"duplicate claim id {claim.id!r}")
        row = claim.row(self.track, ours, holds, note, collections=collections)
        self.rows.append({"paper": self.paper, **row})

    def frame(self) -> pd.DataFrame:
        """The claims as a frame with :data:`COLUMNS` (all strings)."""
        return pd.DataFrame(self.rows, columns=COLUMNS).astype(str)


def concat(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Claims frames of several tracks, one frame (:data:`COLUMNS`)."""
    frames = [f for f in frames if f is not None and len(f)]
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def counts(frame: pd.DataFrame) -> dict[str, int]:
    """How many claims hold, do not hold and are n.a.: ``{"true": …, "false": …, "n.a.": …}``."""
    c = frame["holds"].value_counts()
    return {v: int(c.get(v, 0)) for v in VERDICTS}


def _cell(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def to_markdown(frame: pd.DataFrame, *, track: bool | None = None) -> str:
    """A Markdown table of claims: id, claim, paper, ours, holds, note (and the track when the
    frame has several, or ``track=True``)."""
    track = frame["track"].nunique() > 1 if track is None else track
    cols = (["track"] if track else []) + ["id", "claim", "paper_value", "ours", "holds", "note"]
    head = {"paper_value": "paper", "holds": "holds"}
    lines = [
        "| " + " | ".join(head.get(c, c) for c in cols) + " |",
        "|" + "|".join("---" for _ in cols) + "|",
    ]
    for row in frame[cols].itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines)


def markdown_document(frame: pd.DataFrame, title: str, reading: list[str] | None = None) -> str:
    """``claims.md``: a title, how the data were read (``reading``: one line per track, see
    :func:`pbtools.papers.reading.reading_lines`), the verdict counts per track, the table."""
    lines = [f"# Claims of {title}", ""]
    if reading:
        lines += ["How the data were read:", ""] + [f"- {r}" for r in reading] + [""]
    for tr, g in frame.groupby("track", sort=False):
        c = counts(g)
        lines.append(
            f"- {tr}: {c['true']} hold, {c['false']} do not hold, {c['n.a.']} n.a. "
            f"({len(g)} claims)"
        )
    lines += ["", to_markdown(frame), ""]
    return "\n".join(lines)


def write(frame: pd.DataFrame, out, meta: dict, title: str) -> None:
    """``out`` as a result set (all or nothing, :func:`pbtools.io.results.write_results`):
    ``claims.parquet`` (with ``meta`` and ``title`` in the metadata) and ``claims.md``."""
    from pbtools.io.results import write_results

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    text = markdown_document(frame, title)
    write_results(
        out,
        {"claims": frame.reset_index(drop=True)},
        params=meta,
        metadata={**meta, "title": title},
        extra=lambda d: (d / "claims.md").write_text(text),
    )


def stability(by_seed: dict[int, pd.DataFrame]) -> pd.DataFrame:
    """The verdicts of the same claims computed with several seeds, side by side.

    ``by_seed``: ``{seed: claims frame}``. Returns ``track``, ``id``, one ``holds@<seed>``
    column per seed and ``stable`` (True when every seed gives the same verdict).

    >>> a = Claims("P", "T"); a.add("C1", "c", "", "", True); a.add("C2", "d", "", "", False)
    >>> b = Claims("P", "T"); b.add("C1", "c", "", "", True); b.add("C2", "d", "", "", True)
    >>> stability({1: a.frame(), 2: b.frame()})["stable"].tolist()
    [True, False]
    """
    out = None
    for seed, f in by_seed.items():
        col = f[["track", "id", "holds"]].rename(columns={"holds": f"holds@{seed}"})
        out = col if out is None else out.merge(col, on=["track", "id"], how="outer", sort=False)
    cols = [c for c in out.columns if c.startswith("holds@")]
    out["stable"] = out[cols].nunique(axis=1, dropna=False).eq(1)
    return out


def write_stability(table: pd.DataFrame, out, meta: dict) -> None:
    """``out`` as a result set (all or nothing): ``stability.parquet`` and ``stability.md``
    (see :func:`stability`)."""
    from pbtools.io.results import write_results

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    n, k = len(table), int(table["stable"].sum())
    text = [f"# Verdicts across seeds: {k} of {n} claims give the same verdict", ""]
    cols = list(table.columns)
    text.append("| " + " | ".join(cols) + " |")
    text.append("|" + "|".join("---" for _ in cols) + "|")
    for row in table.itertuples(index=False):
        text.append("| " + " | ".join(_cell(v) for v in row) + " |")
    write_results(
        out,
        {"stability": table.reset_index(drop=True)},
        params=meta,
        metadata=meta,
        extra=lambda d: (d / "stability.md").write_text("\n".join(text) + "\n"),
    )


def report(frame: pd.DataFrame) -> str:
    """The claims for the terminal: one line per claim with its verdict."""
    lines = []
    for tr, g in frame.groupby("track", sort=False):
        c = counts(g)
        lines.append(f"\nClaims on {tr}: {c['true']} hold, {c['false']} do not, {c['n.a.']} n.a.")
        for r in g.itertuples(index=False):
            lines.append(f"  [{r.holds:>5s}] {r.id}: {r.claim}")
            lines.append(f"          paper {r.paper_value or '–'}; ours {r.ours or '–'}. {r.note}")
    return "\n".join(lines)
