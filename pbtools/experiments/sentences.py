"""The summary sentences of a bias analysis, generated from its own numbers.

One paragraph per setup (leave-one-organization-out / leave-one-run-out × all pooled runs / top
75 %), each naming its setup: what a run outside the pool loses at the headline measure (P@10,
else the middle one) and at the deepest cut-off, by how much each estimator changes the error of
the uncorrected (reduced-pool) score there, and every other measure at which an estimator is
worse than no correction. "Error" is the mean absolute error (MAE) over the evaluated runs, as
in the tables. Each clause follows from the numbers: a loss, a gain or no change; an error cut,
increased (worse than no correction), unchanged or changed by less than 1 %; no error to
correct; an estimator that gives no estimate at a measure.

Examples
--------
>>> from pbtools.experiments.analysis import SAMPLE, analyze
>>> a = analyze(SAMPLE, measures=("P@10",), leave_out=("org",), run_sets=("all",), progress=False)
>>> print(summary(a))  # doctest: +NORMALIZE_WHITESPACE
Leave-one-organization-out, all pooled runs (10 runs): a run whose organization did not
contribute to the pool loses on average 0.1965 P@10; Webber & Park cut the error by 58% (95%
interval 51-68%), Lipani et al. by 12% (95% interval 8-18%).
"""

from __future__ import annotations

import math

import pandas as pd

from pbtools.experiments.figures import estimator_label
from pbtools.experiments.noise import pct as signed_pct

__all__ = [
    "SETUPS",
    "RUN_SETS",
    "fmt",
    "headline",
    "left_out_unit",
    "measures_of",
    "summary",
    "summary_text",
    "unit_words",
]

#: the leave-out units and run sets in words
SETUPS = {"org": "leave-one-organization-out", "run": "leave-one-run-out"}
RUN_SETS = {"all": "all pooled runs", "top75": "top 75% of the runs"}
_UNIT = {
    "org": "a run whose organization did not contribute to the pool",
    "run": "a run that did not contribute to the pool",
}


def left_out_unit(analysis, by: str) -> str:
    """The unit a leave-out really withdrew: ``"run"`` for ``"org"`` when each run is its own
    organization (no desc.xml: ``params["one_org_per_run"]``)."""
    return "run" if by == "org" and analysis.params.get("one_org_per_run") else by


def unit_words(analysis, by: str) -> str:
    """The name of a leave-out setup (``"leave-one-organization-out"`` …), said as what it is
    when each run is its own organization."""
    if left_out_unit(analysis, by) != by:
        return f"{SETUPS[by]} (= {SETUPS['run']}: no organizations)"
    return SETUPS.get(by, by)


def fmt(value, decimals: int = 4) -> str:
    """``value`` with ``decimals`` decimals, ``-`` for a missing value, never ``-0.0000``.

    >>> fmt(-0.00001), fmt(float("nan")), fmt(0.1234567)
    ('0.0000', '-', '0.1235')
    """
    if value is None or pd.isna(value):
        return "-"
    text = f"{float(value):.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def measures_of(errors: pd.DataFrame) -> list[str]:
    """The measures of an error (or score) table, in the order the analysis listed them."""
    return [str(m) for m in dict.fromkeys(errors["measure"])]


def headline(
    analysis, leave_out: str | None = None, runs: str | None = None, measure: str | None = None
):
    """The numbers behind :func:`summary` for one setup and measure, as a dict.

    The setup defaults to leave-one-organization-out over all pooled runs (the first analysed
    otherwise) and the measure to P@10 (the middle measure otherwise). Keys: ``leave_out``,
    ``runs``, ``measure``, ``n_runs`` (runs evaluated), ``loss`` (mean true − reduced score:
    what a run loses by not being pooled; negative: it gains), ``mae`` (estimator → MAE, NaN
    for an estimator without an estimate at the measure) and ``cut`` (corrected estimator →
    the share of the reduced pool's MAE it removes; negative when it adds error, NaN when the
    reduced pool has no error or no MAE).
    """
    e = analysis.errors
    units = set(e["leave_out"])
    leave_out = leave_out or ("org" if "org" in units else str(e["leave_out"].iloc[0]))
    runs = runs or ("all" if "all" in set(e["runs"]) else str(e["runs"].iloc[0]))
    names = measures_of(e)
    measure = measure or ("P@10" if "P@10" in names else names[len(names) // 2])
    cfg = e[(e["leave_out"] == leave_out) & (e["runs"] == runs) & (e["measure"] == measure)]
    mae = dict(zip(cfg["estimator"].astype(str), cfg["mae"].astype(float), strict=True))
    s = analysis.scores
    sel = s[(s["leave_out"] == leave_out) & (s["runs"] == runs) & (s["measure"] == measure)]
    red = sel[sel["estimator"] == "reduced"]
    loss = float((red["true"] - red["estimate"]).mean()) if len(red) else float("nan")
    base = mae.get("reduced", float("nan"))
    order = [x for x in analysis.params.get("estimators", list(mae)) if x != "reduced"]
    order += [x for x in mae if x != "reduced" and x not in order]
    mae = {**{k: float("nan") for k in order}, **mae}
    cut = {k: (1 - mae[k] / base) if base > 0 else float("nan") for k in order}
    d = getattr(analysis, "differences", None)
    cut_ci = {}  # estimator -> (low, high, significant): the cut's run-to-run interval
    if d is not None and len(d):
        sel_d = d[
            (d["leave_out"] == leave_out)
            & (d["runs"] == runs)
            & (d["measure"] == measure)
            & (d["estimator_b"] == "reduced")
        ]
        for r in sel_d.itertuples(index=False):
            cut_ci[str(r.estimator_a)] = (r.cut_low, r.cut_high, bool(r.significant))
    return {
        "leave_out": leave_out,
        "unit": left_out_unit(analysis, leave_out),
        "runs": runs,
        "measure": measure,
        "n_runs": int(sel["name"].nunique()),
        "loss": loss,
        "mae": mae,
        "cut": cut,
        "cut_ci": cut_ci,
    }


def _bias(h: dict, first: bool) -> str:
    """What a run outside the pool loses (or gains) at the measure: the sentence's subject
    (``first``) or a follow-up sentence's opening."""
    m, loss = h["measure"], h["loss"]
    unit = _UNIT.get(h.get("unit", h["leave_out"]), "a run outside the pool")
    if math.isnan(loss):
        return f"at {m}" if first else f"At {m}"
    small = fmt(loss) == fmt(0.0)
    if loss == 0:
        return f"{unit} loses no {m} on average" if first else f"At {m} there is no loss"
    if small:
        how = "loses" if loss > 0 else "gains"
        text = f"{how} less than 0.0001 {m} on average"
        return f"{unit} {text}" if first else f"At {m} a run {text}"
    if loss > 0:
        return (
            f"{unit} loses on average {fmt(loss)} {m}"
            if first
            else (f"At {m} the loss is {fmt(loss)}")
        )
    text = f"gains on average {fmt(-loss)} {m}"
    return f"{unit} {text}" if first else f"At {m} a run {text}"


def _clauses(h: dict) -> list[str]:
    """How each estimator changes the error of the uncorrected score at the measure."""
    base = h["mae"].get("reduced", float("nan"))
    out, previous = [], None
    for est, mae in h["mae"].items():
        if est == "reduced":
            continue
        label = estimator_label(est)
        if math.isnan(mae):
            out.append(f"{label} gives no estimate")
            previous = None
            continue
        if math.isnan(base):
            out.append(f"{label}'s error is {fmt(mae)}")
            previous = None
            continue
        if base == 0:
            verb = None
            clause = f"{label} stays exact" if mae == 0 else f"{label} adds an error of {fmt(mae)}"
        else:
            pct = int(abs(1 - mae / base) * 100 + 0.5)
            if mae == base:
                verb, clause = None, f"{label} leave the error unchanged"
            elif pct == 0:
                verb, clause = None, f"{label} change the error by less than 1%"
            elif (ci := h.get("cut_ci", {}).get(est)) is not None and not ci[2]:
                # the difference's interval over runs includes 0: no claim of a cut or a rise
                verb = None
                clause = (
                    f"{label}'s change of the error ({signed_pct(-ci[1])} to "
                    f"{signed_pct(-ci[0])}) is within the run-to-run noise"
                )
            else:
                verb = "cut the error by" if mae < base else "increase the error by"
                notes = [] if mae < base else ["worse than no correction"]
                if ci is not None and pd.notna(ci[0]) and pd.notna(ci[1]):
                    a, b = sorted((abs(ci[0]), abs(ci[1])))
                    notes.insert(0, f"95% interval {int(a * 100 + 0.5)}-{int(b * 100 + 0.5)}%")
                tail = f" ({'; '.join(notes)})" if notes else ""
                lead = f"{label} by" if verb == previous else f"{label} {verb}"
                clause = f"{lead} {pct}%{tail}"
        out.append(clause)
        previous = verb
    return out


def _sentence(h: dict, first: bool) -> str:
    base = h["mae"].get("reduced", float("nan"))
    bias = _bias(h, first)
    if not math.isnan(base) and base == 0:
        bias += " and the uncorrected score has no error"
    clauses = _clauses(h)
    return bias + ("; " + ", ".join(clauses) if clauses else "") + "."


def _worse(analysis, leave_out: str, runs: str, skip: set[str], said: set[str]) -> list[str]:
    """Per estimator, the measures but ``skip`` at which its MAE is above the reduced pool's
    (``said``: the estimators already said to be worse)."""
    e = analysis.errors
    cfg = e[(e["leave_out"] == leave_out) & (e["runs"] == runs)]
    wide = cfg.pivot_table(index="measure", columns="estimator", values="mae", observed=True)
    if "reduced" not in wide.columns:
        return []
    order = [m for m in measures_of(cfg) if m not in skip and m in wide.index]
    out = []
    for est in [x for x in analysis.params.get("estimators", wide.columns) if x in wide.columns]:
        if est == "reduced":
            continue
        bad = [
            f"{m} (MAE {fmt(wide.at[m, est])} against {fmt(wide.at[m, 'reduced'])})"
            for m in order
            if wide.at[m, est] > wide.at[m, "reduced"]
            and fmt(wide.at[m, est]) != fmt(wide.at[m, "reduced"])
        ]
        if bad:
            also = " also" if est in said else ""
            out.append(
                f"{estimator_label(est)}'s estimate is{also} worse than no correction at "
                + ", ".join(bad)
                + "."
            )
    return out


def summary(analysis, *, leave_out: str | None = None, runs: str | None = None) -> str:
    """The sentences a researcher can quote about one setup (default: the first analysed of
    leave-one-organization-out over all pooled runs), naming it, with the analysis' own
    numbers (:func:`headline`): the headline measure, the deepest cut-off when it is another
    one, and the other measures at which an estimator is worse than no correction."""
    h = headline(analysis, leave_out=leave_out, runs=runs)
    names = measures_of(analysis.errors)
    setup = (
        f"{unit_words(analysis, h['leave_out'])}, "
        f"{RUN_SETS.get(h['runs'], h['runs'])} ({h['n_runs']} runs)"
    )
    parts = [f"{setup[0].upper()}{setup[1:]}: {_sentence(h, True)}"]
    said, told = {h["measure"]}, [h]
    if names[-1] != h["measure"]:
        deep = headline(analysis, leave_out=h["leave_out"], runs=h["runs"], measure=names[-1])
        parts.append(_sentence(deep, False))
        said.add(names[-1])
        told.append(deep)
    worse = {k for t in told for k, v in t["mae"].items() if v > t["mae"].get("reduced", math.inf)}
    parts += _worse(analysis, h["leave_out"], h["runs"], said, worse)
    return " ".join(parts)


def summary_text(analysis) -> str:
    """:func:`summary` of every setup of the analysis, in the order of its error table, one
    paragraph (line) each."""
    e = analysis.errors
    setups = e[["leave_out", "runs"]].astype(str).drop_duplicates().itertuples(index=False)
    return "\n".join(summary(analysis, leave_out=lo, runs=r) for lo, r in setups)
