"""Lipani, Lupu & Hanbury (SIGIR 2015), "Splitting water": Table 2, Figures 1-4.

For every track under ROOT (``ROOT/<TREC-N>/<Track>/{QRels/,Runs/,desc.xml}``, or ROOT itself, or
``--synthetic``), a leave-one-organization-out experiment (and, for §5's comparison, a
leave-one-run-out one) over all pooled runs and over the top 75 %
(``experiments.analysis.analyze``) scores every evaluated run at P@5, 10, 20, 30 and 100 with the
reduced pool, Webber & Park and Lipani et al. (α = 1, λ indicator), and measures each against
the truth: MAE, SRE, SRE* (two-way Tukey HSD on the true per-topic scores) and Kendall's τ-b.
Then, as §5.1 describes, an **α sweep** (α = 0, 0.25, 0.5, 0.75, 1) and an **indicator
comparison** (λ against ΔP > 0, ΔP̄ < 0 and "always") of the Lipani estimator, and, as §5.2, the
**generalizability coefficients** Eρ² and Φ (``pbtools.stats.generalizability``, on the true
per-topic P@n of the pooled runs) against the MAE change of the correction (Figure 2). The
paper's claims are checked on each track (``claims.parquet`` / ``claims.md``).

The paper's procedure is the default: ``--protocol lipani2015`` applies every choice of
``../shared/PROTOCOL-lipani2015.md``; with it, TREC-2 reproduces all 30 MAE and SRE values of the
"Ad Hoc 2" rows exactly, and the script checks it (exit status 1 if a value differs).
``--protocol default`` is the departure: pbtools' principled choices (trec_eval topic averaging,
run identity by tag, …). SRE* cannot be reproduced: the paper's p-values are not published. The
synthetic collection is always run with the principled choices (the preset is about how the
TREC files were read). What the data cannot support, and the script says so: Table 1 and Figure
1's sab05ror1 need Robust 2005; Figure 2's correlation needs several collections (the paper has
15).

Outputs in ``-o DIR`` (default ``out/lipani2015``):

``table2.parquet``     ``track``, ``n``, ``measure``, ``estimator`` (``lipani``, ``webber``,
                       ``reduced``), ``by`` (``org``/``run``), ``runs`` (``all``/``top75``),
                       ``mae``, ``sre``, ``sre_star``, ``tau``
``sre_tests.parquet``  SRE* of every configuration per test (``test``: ``hsd``, ``t``) and
                       ``topics`` (``ranked``: each run's own topics, as ``analyze``;
                       ``filled``: unanswered topics scored 0, for comparison)
``sweep.parquet``      the same columns for the α sweep and indicator variants; ``estimator``
                       reads ``lipani(alpha=0.5)``, ``lipani(indicator=dP)``, …
``scores.parquet``     every run's true and estimated score with the indicators (``dP``,
                       ``dAntiP``, ``dk``, ``lam``, …) — what the figures are drawn from
``gtheory.parquet``    per track and n: ``var_system``, ``var_topic``, ``var_residual``,
                       ``e_rho2``, ``phi`` and ``mae_change_pct`` (Lipani vs reduced pool,
                       top 75 %) — Figure 2
``claims.parquet``, ``claims.md``  the paper's claims checked on each track (:mod:`claims`)
``table2.md``, ``table2.tex``  Table 2 laid out as in the paper (top 75 %), with the top /
                       worst performer counts
Figures (PNG, PDF, SVG; one colour per estimator in all of them): ``figure1`` (ΔP@10, ΔP̄@10
and λ against the residual), ``figure2`` (MAE change against Eρ² and Φ), ``figure3``,
``figure4`` (MAE and SRE against n; solid: all runs, dashed: top 75 %), ``sweep`` (MAE against
α and per indicator).

Usage::

    python benchmarks/lipani2015.py ../shared/data/trec                 # every track, preset
    python benchmarks/lipani2015.py ../shared/data/trec/TREC-2/Adhoc --protocol default
    python benchmarks/lipani2015.py --synthetic --jobs 2
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from pbtools import experiments, grid, stats
from pbtools.experiments import analysis
from pbtools.frames import TrecFormatWarning
from pbtools.measures import round_half_up
from pbtools.papers import common as _common
from pbtools.papers.claims import num, share
from pbtools.papers.common import load_tracks, with_cutoff
from pbtools.stats.table2 import TOP, WORST

TITLE = (
    'Lipani, Lupu & Hanbury (2015), "Splitting water: precision and anti-precision to reduce '
    'pool bias"'
)
CUTOFFS = (5, 10, 20, 30, 100)
ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
INDICATORS = ("lambda", "dP", "dAntiP", "always")
ESTIMATORS = ("lipani", "webber", "reduced")
PROTOCOLS = ("lipani2015", "default")
#: one colour per estimator (and Lipani variant) in every figure
COLOURS = {
    "lipani": "#1f77b4",
    "webber": "#ff7f0e",
    "reduced": "#2ca02c",
    "lambda": "#1f77b4",
    "dP": "#9467bd",
    "dAntiP": "#8c564b",
    "always": "#7f7f7f",
}
LABELS = {"lipani": "Lipani et al.", "webber": "Webber & Park", "reduced": "reduced pool"}

#: Table 2 of the paper, "Ad Hoc 2" rows (top 75 %): (MAE, SRE, SRE*) per estimator and n
PAPER_ADHOC2 = {
    ("lipani", 5): (0.0063, 19, 0),
    ("lipani", 10): (0.0082, 32, 0),
    ("lipani", 20): (0.0132, 50, 0),
    ("lipani", 30): (0.0149, 51, 0),
    ("lipani", 100): (0.0216, 88, 2),
    ("webber", 5): (0.0069, 18, 0),
    ("webber", 10): (0.0084, 27, 0),
    ("webber", 20): (0.0119, 48, 0),
    ("webber", 30): (0.0129, 42, 0),
    ("webber", 100): (0.0169, 61, 2),
    ("reduced", 5): (0.0065, 19, 0),
    ("reduced", 10): (0.0085, 32, 0),
    ("reduced", 20): (0.0138, 52, 0),
    ("reduced", 30): (0.0164, 56, 0),
    ("reduced", 100): (0.0293, 122, 4),
}
#: the paper's Figure 2 Spearman correlations (P@10, P@100) of the MAE change with Eρ², Φ
PAPER_FIG2 = {10: (0.48, 0.36), 100: (0.17, 0.09)}


def sweep_task(variant: dict, *, frames, runs, cutoffs, protocol, pooled, depth) -> pd.DataFrame:
    """One Lipani variant (``alpha`` and/or ``indicator``) of the leave-one-org-out experiment."""
    res = experiments.leave_one_out_experiment(
        frames,
        measures=[f"P@{n}" for n in cutoffs],
        leave_out="org",
        runs=runs,
        estimators=("lipani",),
        protocol=protocol,
        pooled=pooled,
        depth=depth,
        # the merge's α (Eq. 2) is the library's ``weight``; labels keep the paper's name
        **{("weight" if k == "alpha" else k): v for k, v in variant.items()},
    )
    label = ",".join(
        f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in variant.items()
    )
    res = with_cutoff(res)
    res["estimator"] = f"lipani({label})"
    return res


def gtheory(truth: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Figure 2: Eρ² and Φ of the true per-topic P@n of all pooled runs, per n, beside the MAE
    change of Lipani's correction against the reduced pool (top 75 %, leave-one-org-out)."""
    rows = []
    t = truth[truth["runs"] == "all"]
    # the balanced design: the topics every run has (a run's average may hold more under
    # ``topics="answered"``, a topic the qrels lack)
    t = t[
        t.groupby(["n", "qid"])["name"].transform("size")
        == t.groupby("n")["name"].transform("nunique")
    ]
    top = table[(table["runs"] == "top75") & (table["by"] == "org")].set_index(["n", "estimator"])
    for n, g in t.groupby("n", sort=True):
        gt = stats.generalizability(g[["name", "qid", "value"]]).iloc[0]
        lip, red = top.loc[(n, "lipani"), "mae"], top.loc[(n, "reduced"), "mae"]
        rows.append(
            {
                "n": int(n),
                "var_system": gt["var_system"],
                "var_topic": gt["var_topic"],
                "var_residual": gt["var_residual"],
                "n_topics": int(gt["n_topics"]),
                "e_rho2": gt["e_rho2"],
                "phi": gt["phi"],
                "mae_change_pct": 100.0 * (lip - red) / red if red > 0 else np.nan,
            }
        )
    return with_cutoff(pd.DataFrame(rows))


def sre_tests(main) -> pd.DataFrame:
    """SRE* of every configuration under each test of :data:`pbtools.stats.SRE_TESTS`, on the
    topics of each run's average (``ranked``, what ``analyze`` does) and, for comparison, with
    the topics a run did not answer filled with 0 (``filled``, pbtools before issue 24)."""
    keys = ["leave_out", "runs", "measure", "estimator"]
    keyed = main.scores[[*keys, "name", "true", "estimate"]]
    parts = []
    for test in stats.SRE_TESTS:
        for topics, truth in (
            ("ranked", main.truth),
            ("filled", main.truth.drop(columns="ranked")),
        ):
            sig = stats.pair_significance(truth, test, by=["runs", "measure"])
            e = stats.error_table(keyed, sig, by=keys)[[*keys, "sre_star"]]
            parts.append(e.assign(test=test, topics=topics))
    return with_cutoff(pd.concat(parts, ignore_index=True))


def _analyze(source, cutoffs, protocol, jobs, dask, progress):
    """``experiments.analysis.analyze`` with the script's settings (both leave-out modes)."""
    return analysis.analyze(
        source,
        measures=[f"P@{n}" for n in cutoffs],
        leave_out=("org", "run"),
        run_sets=("all", "top75"),
        estimators=ESTIMATORS,
        protocol=protocol,
        lenient=True,
        jobs=jobs,  # the cores: threads of this process (workers only beyond 4 cores)
        dask=dask,
        progress=progress,
    )


def run_track(
    source,
    track: str,
    *,
    protocol=None,
    cutoffs=CUTOFFS,
    alphas=ALPHAS,
    indicators=INDICATORS,
    jobs=1,
    dask=None,
    progress=None,
) -> dict:
    """Table 2 rows, the sweeps, Figure 2 and the scores of one collection (a path or frames)."""
    # the configurations share one merge in a single process; the sweep uses every core
    with warnings.catch_warnings():  # TREC archives are dirty: the repairs are the preset's
        warnings.simplefilter("ignore", TrecFormatWarning)
        main = _analyze(source, cutoffs, protocol, jobs, dask, progress)
    frames = main.frames
    pooled, depth = main.params["pooled_runs"], main.params["depth"]
    significance = with_cutoff(main.significance)
    variants = [{"alpha": float(a)} for a in alphas if float(a) != 1.0]
    variants += [{"indicator": i} for i in indicators if i != "lambda"]
    tasks = [{"variant": v, "runs": rs} for v in variants for rs in ("all", "top75")]
    parts = grid.run_grid(
        sweep_task,
        tasks,
        jobs=jobs,
        dask=dask,
        progress=progress,
        desc=f"{track} sweep",
        shared={
            "frames": frames,
            "cutoffs": list(cutoffs),
            "protocol": protocol,
            "pooled": pooled,
            "depth": depth,
        },
    )
    keys = ["runs", "n", "estimator"]
    sweep_scores = pd.concat(parts, ignore_index=True)
    sweep = stats.error_table(
        sweep_scores[[*keys, "name", "true", "estimate"]], significance, by=keys
    )
    sweep = sweep.merge(
        stats.kendall_tau(sweep_scores[[*keys, "name", "true", "estimate"]], by=keys), on=keys
    )
    base = with_cutoff(main.errors)
    org = base[base["by"] == "org"].drop(columns="by")
    lam1 = org[org["estimator"] == "lipani"].assign(estimator="lipani(alpha=1)")
    sweep = with_cutoff(pd.concat([sweep, lam1], ignore_index=True))
    table = base.assign(track=track)[
        ["track", "n", "measure", "estimator", "by", "runs", "mae", "sre", "sre_star", "tau"]
    ]
    g = gtheory(with_cutoff(main.truth), table).assign(track=track)
    out = {
        "table2": table,
        "sre_tests": sre_tests(main).assign(track=track),
        "sweep": sweep.assign(track=track),
        "scores": with_cutoff(main.scores).assign(track=track),
        "gtheory": g,
        "properties": main.properties,
    }
    out["claims"] = claims_table(out, track, protocol)
    return out


def compare_adhoc2(table: pd.DataFrame) -> tuple[int, list[str]]:
    """How many of the 30 MAE and SRE values of the TREC-2 top-75 % leave-one-org-out rows
    equal the paper's (MAE to 4 decimals), and the cells that differ."""
    t = table[(table["runs"] == "top75") & table["track"].str.endswith("TREC-2/Adhoc")]
    if "by" in t.columns:
        t = t[t["by"] == "org"]
    equal, bad = 0, []
    for (est, n), (mae, sre, _) in PAPER_ADHOC2.items():
        row = t[(t["estimator"] == est) & (t["n"] == n)]
        if row.empty:
            bad.append(f"{est} P@{n}: missing")
            continue
        got_mae, got_sre = float(row["mae"].iloc[0]), int(row["sre"].iloc[0])
        same = (f"{got_mae:.4f}" == f"{mae:.4f}", got_sre == sre)
        equal += sum(same)
        if not all(same):
            bad.append(f"{est} P@{n}: pbtools {got_mae:.4f}/{got_sre}, paper {mae:.4f}/{sre}")
    return equal, bad


def check_adhoc2(table: pd.DataFrame) -> list[str]:
    """The cells of the TREC-2 top-75 % leave-one-org-out rows that differ from the paper."""
    return compare_adhoc2(table)[1]


# --------------------------------------------------------------------------------------------
# the paper's claims
# --------------------------------------------------------------------------------------------


def _counts(top: pd.DataFrame) -> dict:
    """Top / worst performer counts of :func:`pbtools.stats.table2` (MAE rounded to 4
    decimals, as the paper prints and compares it)."""
    t = top.assign(mae=round_half_up(top["mae"].to_numpy(), 4))
    lay = stats.table2(t.drop(columns=["by", "measure"]), estimators=list(ESTIMATORS))
    return {"top": lay.loc[(TOP, "")], "worst": lay.loc[(WORST, "")]}


def claims_table(result: dict, track: str, protocol) -> pd.DataFrame:
    """Lipani et al.'s claims checked on one track (see :mod:`claims` for the columns)."""
    c = _common.claims.Claims("Lipani et al. 2015", track)
    t2 = result["table2"]
    top = t2[(t2["runs"] == "top75") & (t2["by"] == "org")].assign(track=track)
    ns = sorted(top["n"].unique())
    v = top.set_index(["estimator", "n"]).sort_index()
    is_adhoc2 = track.endswith("TREC-2/Adhoc")
    if is_adhoc2:
        ok, bad = compare_adhoc2(t2)
        c.add(
            "T2",
            "§5.1, Table 2: MAE and SRE of the three methods on Ad Hoc 2 (TREC-2), top 75 %, "
            "leave-one-organization-out, P@5-P@100",
            "30 values",
            f"{ok} of 30 equal",
            ok == 30,
            "under the lipani2015 protocol (PROTOCOL-lipani2015.md)"
            if protocol == "lipani2015"
            else "the principled defaults depart from the paper's choices; run with "
            "--protocol lipani2015 to reproduce",
        )
        star = [
            f"{e} P@{n} {int(v.loc[(e, n), 'sre_star'])} ({PAPER_ADHOC2[(e, n)][2]})"
            for e in ESTIMATORS
            for n in ns
            if (e, n) in PAPER_ADHOC2 and int(v.loc[(e, n), "sre_star"]) != PAPER_ADHOC2[(e, n)][2]
        ]
        c.add(
            "T2s",
            "§5.1, Table 2: SRE* (reversals of significantly different pairs, Tukey's HSD) on "
            "Ad Hoc 2",
            "0-4 per cell",
            f"{15 - len(star)} of 15 equal; differ: {'; '.join(star)}" if star else "15 of 15",
            None,
            "the paper names Tukey's HSD but not its design, and its p-values (pValues.<metric>"
            ".csv) are not published: analyze --sre-pvalues DIR reproduces the column from them; "
            "here two-way HSD on each run's own topics (sre_tests.parquet: the other tests)",
        )
    cnt = _counts(top)
    n_tests = 3 * len(ns)
    lip_top = sum(int(cnt["top"][("lipani", m)]) for m in ("MAE", "SRE", "SRE*"))
    lip_worst = sum(int(cnt["worst"][("lipani", m)]) for m in ("MAE", "SRE", "SRE*"))
    c.add(
        "W1",
        "§5.1: our method outperforms the reduced pool and Webber & Park in a majority of cases",
        "top performer in 46/75 MAE, 35/75 SRE, 20/75 SRE* tests (15 collections)",
        "top performer in "
        + ", ".join(
            f"{int(cnt['top'][('lipani', m)])}/{len(ns)} {m}" for m in ("MAE", "SRE", "SRE*")
        ),
        lip_top > n_tests / 2,
        f"strictly best (ties not counted), MAE to 4 decimals; holds if in more than half of "
        f"the {n_tests} tests ({lip_top})",
    )
    c.add(
        "W2",
        "§5.1: the proposed method is the worst performer exactly three times in the 675 tests "
        "of Table 2",
        "2 MAE + 3 SRE + 1 SRE* of 225 (15 collections)",
        f"{lip_worst} of {n_tests}",
        lip_worst <= max(1, round(0.05 * n_tests)),
        "holds if it is the worst in at most 5 % of the tests (at least 1 allowed)",
    )
    web_worse = [
        (n, m)
        for n in ns
        for m in ("mae", "sre")
        if v.loc[("webber", n), m] > v.loc[("reduced", n), m]
    ]
    c.add(
        "W3",
        "§5.1: Webber & Park is too aggressive: in the majority of cases it obtains worse scores "
        "and rankings than the reduced pool",
        "worst performer 26/75 MAE, 18/75 SRE (15 collections)",
        f"worse than the reduced pool in {share(len(web_worse), 2 * len(ns))} MAE/SRE tests",
        len(web_worse) > len(ns),
        "holds if Webber's MAE or SRE exceeds the reduced pool's in more than half of the tests",
    )
    damaged = [
        n for n in ns if v.loc[("lipani", n), "sre_star"] > v.loc[("reduced", n), "sre_star"]
    ]
    c.add(
        "W4",
        "§5.1, §6: the correction never damages significant rank orders (SRE* no worse than the "
        "reduced pool)",
        "worse once in 75 (Medical 2011, P@100)",
        "SRE* lipani vs reduced: "
        + ", ".join(
            f"P@{n} {int(v.loc[('lipani', n), 'sre_star'])}/"
            f"{int(v.loc[('reduced', n), 'sre_star'])}"
            for n in ns
        ),
        not damaged,
        "holds if Lipani's SRE* ≤ the reduced pool's at every n",
    )
    better = [
        n
        for n in ns
        if v.loc[("lipani", n), "mae"] <= v.loc[("reduced", n), "mae"]
        and v.loc[("lipani", n), "sre"] <= v.loc[("reduced", n), "sre"]
    ]
    c.add(
        "W5",
        "Abstract: the correction reduces the system ranking error and the absolute score error "
        "(against the reduced pool)",
        "Ad Hoc 2: lower or equal MAE and SRE at every n",
        "MAE lipani/reduced: "
        + ", ".join(
            f"P@{n} {num(v.loc[('lipani', n), 'mae'], 4)}/{num(v.loc[('reduced', n), 'mae'], 4)}"
            for n in ns
        ),
        len(better) == len(ns),
        f"holds if MAE and SRE are no worse at every n ({share(len(better), len(ns))})",
    )
    allr = t2[(t2["runs"] == "all") & (t2["estimator"] == "reduced")].set_index(["by", "n"])
    if {"run", "org"} <= set(allr.index.get_level_values(0)):
        cons = [n for n in ns if allr.loc[("run", n), "mae"] < allr.loc[("org", n), "mae"]]
        c.add(
            "W6",
            "§5: leave-one-run-out is more conservative than leave-one-organization-out (a run's "
            "siblings keep its documents in the pool)",
            "stated",
            "reduced-pool MAE run/org: "
            + ", ".join(
                f"P@{n} {num(allr.loc[('run', n), 'mae'], 4)}/{num(allr.loc[('org', n), 'mae'], 4)}"
                for n in ns
            ),
            len(cons) == len(ns),
            "all pooled runs; holds if leaving one run out errs less than leaving its "
            "organization out at every n",
        )
    sw = result["sweep"]
    sw = sw[sw["runs"] == "top75"].set_index(["estimator", "n"]).sort_index()
    alphas = sorted(
        float(e.split("=")[1].rstrip(")"))
        for e in sw.index.get_level_values(0).unique()
        if e.startswith("lipani(alpha=")
    )
    if 0.0 in alphas:
        same = [
            n
            for n in ns
            if abs(sw.loc[("lipani(alpha=0)", n), "mae"] - v.loc[("reduced", n), "mae"]) < 1e-12
        ]
        c.add(
            "A1",
            "§5.1: with α = 0 the method no longer changes the existing runs (it equals the "
            "reduced pool)",
            "stated",
            f"MAE(α = 0) = MAE(reduced pool) at {share(len(same), len(ns))} cut-offs",
            len(same) == len(ns),
            "top 75 %; holds if equal at every n",
        )
    if len(alphas) > 2:
        best = []
        for n in ns:
            red = v.loc[("reduced", n), "mae"]
            eff = {a: abs(sw.loc[(f"lipani(alpha={a:g})", n), "mae"] - red) for a in alphas}
            if eff[max(alphas)] >= max(eff.values()) - 1e-12:
                best.append(n)
        c.add(
            "A2",
            "§5.1: the effect of the correction is largest for α = 1 (the reported setting)",
            "maximum effects at α = 1",
            f"largest |MAE change| at α = 1 for {share(len(best), len(ns))} cut-offs",
            len(best) == len(ns),
            "top 75 %; effect = |MAE(α) − MAE(reduced pool)|; holds at every n",
        )
    inds = [
        e.split("=")[1].rstrip(")")
        for e in sw.index.get_level_values(0).unique()
        if e.startswith("lipani(indicator=")
    ]
    rivals = [i for i in inds if i in ("dP", "dAntiP")]
    if rivals:
        lam = {n: v.loc[("lipani", n), "mae"] for n in ns}
        lose = [
            f"{i} P@{n} {num(sw.loc[(f'lipani(indicator={i})', n), 'mae'], 4)} < λ {num(lam[n], 4)}"
            for i in rivals
            for n in ns
            if sw.loc[(f"lipani(indicator={i})", n), "mae"] < lam[n] - 1e-12
        ]
        c.add(
            "I1",
            "§5.1: replacing λ with ΔP or ΔP̄ as the trigger gives consistently lower performance",
            "stated",
            f"λ's MAE is lowest in {len(rivals) * len(ns) - len(lose)} of "
            f"{len(rivals) * len(ns)} comparisons" + (f"; not: {'; '.join(lose)}" if lose else ""),
            not lose,
            "top 75 %; holds if λ's MAE is no higher than ΔP's and ΔP̄'s at every n",
        )
    g = result["gtheory"].set_index("n")
    c.add(
        "G1",
        "§5.2, Figure 2: the MAE change of the correction correlates weakly with Eρ² and Φ for "
        "P@10 (less error for less stable collections), not for P@100",
        "Spearman P@10: Eρ² 0.48, Φ 0.36; P@100: 0.17, 0.09 (15 collections)",
        "one collection: "
        + ", ".join(
            f"P@{n} Eρ² {num(g.loc[n, 'e_rho2'])}, Φ {num(g.loc[n, 'phi'])}, MAE "
            f"{g.loc[n, 'mae_change_pct']:+.0f} %"
            for n in g.index
            if n in (10, 100)
        ),
        None,
        "a correlation across collections: needs several tracks (run on a directory of "
        "tracks); Figure 2 shows this track's points",
    )
    c.add(
        "R1",
        "§3.2, Table 1, Figure 1: when left out, the routing run sab05ror1 (Robust 2005) has "
        "P@10 .4220, k@10 .444, ΔP@10 .0065, ΔP̄@10 −.1053, and λ sets it apart",
        ".4220 / .444 / .0065 / −.1053",
        "",
        None,
        "needs the TREC 2005 Robust track, which the data do not include",
    )
    return c.frame()


def cross_track_claims(gt: pd.DataFrame) -> pd.DataFrame | None:
    """Figure 2's correlations over several tracks (None for fewer than 4): Spearman ρ of the
    MAE change with Eρ² and Φ at P@10 and P@100, one claims row per cut-off."""
    from scipy.stats import spearmanr

    if gt["track"].nunique() < 4:
        return None
    c = _common.claims.Claims("Lipani et al. 2015", f"{gt['track'].nunique()} tracks")
    for n, (pe, pp) in PAPER_FIG2.items():
        g = gt[gt["n"] == n].dropna(subset=["mae_change_pct"])
        if len(g) < 4:
            continue
        re = spearmanr(g["e_rho2"], g["mae_change_pct"])
        rp = spearmanr(g["phi"], g["mae_change_pct"])
        weak_pos = 0 < re.statistic < 0.7 if n == 10 else abs(re.statistic) < 0.3
        c.add(
            f"G1-P@{n}",
            f"§5.2, Figure 2: Spearman correlation of the MAE change with Eρ² and Φ at P@{n}",
            f"Eρ² {pe:.2f}, Φ {pp:.2f}",
            f"Eρ² {re.statistic:.2f} (p {re.pvalue:.2f}), Φ {rp.statistic:.2f} (p {rp.pvalue:.2f})",
            bool(weak_pos),
            "P@10: holds if weakly positive (0 < ρ < .7); P@100: if |ρ| < .3",
        )
    return c.frame()


# --------------------------------------------------------------------------------------------
# the whole run
# --------------------------------------------------------------------------------------------


def run(
    root=None,
    out="out/lipani2015",
    *,
    protocol="lipani2015",
    synthetic=False,
    seed=0,
    jobs=1,
    dask=None,
    progress=None,
    cutoffs=CUTOFFS,
    alphas=ALPHAS,
    indicators=INDICATORS,
) -> dict[str, pd.DataFrame]:
    """Everything for every track; writes Parquet, Markdown, LaTeX and the figures to ``out``
    (None: write nothing). ``protocol``: ``"lipani2015"`` (the paper's choices) or
    ``"default"`` / None (pbtools' principled ones)."""
    t0 = time.perf_counter()
    protocol = None if protocol in (None, "default") else protocol
    if synthetic:
        tr = load_tracks(synthetic=True, seed=seed)[0]
        sources = [(tr.name, (tr.runs, tr.qrels, tr.orgs))]
        protocol = None
    else:
        from pbtools.io import find_tracks

        root_p = Path(root)
        sources = [
            (
                (
                    str(t.relative_to(root_p))
                    if t != root_p
                    else f"{root_p.resolve().parent.name}/{root_p.resolve().name}"
                ),
                t,
            )
            for t in find_tracks(root_p)
        ]
    results = [
        run_track(
            src,
            name,
            protocol=protocol,
            cutoffs=cutoffs,
            alphas=alphas,
            indicators=indicators,
            jobs=jobs,
            dask=dask,
            progress=progress,
        )
        for name, src in sources
    ]
    res = {
        k: pd.concat([r[k] for r in results], ignore_index=True)
        for k in ("table2", "sre_tests", "sweep", "scores", "gtheory", "properties", "claims")
    }
    cross = cross_track_claims(res["gtheory"])
    if cross is not None:
        res["claims"] = _common.claims.concat([res["claims"], cross])
    if out is None:
        return res
    out_p = Path(out)
    out_p.mkdir(parents=True, exist_ok=True)
    meta = {
        "script": "lipani2015",
        "root": None if root is None else str(root),
        "protocol": protocol or "default",
        "cutoffs": list(cutoffs),
        "alphas": list(alphas),
        "indicators": list(indicators),
        "seed": seed,
        "synthetic": synthetic,
        "seconds": time.perf_counter() - t0,
    }
    _common.write_outputs(res, out_p, meta, title=TITLE)
    top = res["table2"][(res["table2"]["runs"] == "top75") & (res["table2"]["by"] == "org")]
    layout = stats.table2(top.drop(columns=["by", "measure"]), estimators=list(ESTIMATORS))
    (out_p / "table2.md").write_text(stats.to_markdown(layout) + "\n")
    (out_p / "table2.tex").write_text(stats.to_latex(layout) + "\n")
    plot(res, out_p)
    return res


# --------------------------------------------------------------------------------------------
# figures and report
# --------------------------------------------------------------------------------------------


def plot(res: dict, out: Path) -> None:
    """Figures 1-4 and the sweep plot (PNG, PDF, SVG; Agg backend)."""
    plt = _common.pyplot()
    from matplotlib.ticker import MaxNLocator

    table, tracks = res["table2"], list(pd.unique(res["table2"]["track"]))
    table = table[table["by"] == "org"]
    ns = sorted(table["n"].unique())
    for fig_no, col, label in ((3, "mae", "MAE of P@n"), (4, "sre", "SRE (rank positions)")):
        fig, axes = plt.subplots(1, len(tracks), figsize=(4.4 * len(tracks), 3.3), squeeze=False)
        for ax, tr in zip(axes[0], tracks, strict=True):
            for est in ESTIMATORS:
                for runs, ls in (("all", "-"), ("top75", "--")):
                    g = table[
                        (table["track"] == tr)
                        & (table["estimator"] == est)
                        & (table["runs"] == runs)
                    ].sort_values("n")
                    ax.plot(
                        g["n"],
                        g[col],
                        ls=ls,
                        marker="o",
                        ms=3,
                        color=COLOURS[est],
                        label=f"{LABELS[est]} ({'all runs' if runs == 'all' else 'top 75 %'})",
                    )
            _common.log_ticks(ax, ns)
            ax.set_title(tr)
            ax.set_xlabel("cut-off n of P@n (documents)")
            ax.set_ylabel(label)
            ax.set_ylim(bottom=0)
        _common.legend_outside(axes[0][-1])
        fig.suptitle(f"Figure {fig_no}: {label.split(' (')[0]} against n, leave-one-org-out")
        fig.tight_layout()
        _common.save_figure(fig, out, f"figure{fig_no}")

    s = res["scores"]
    s = s[(s["estimator"] == "lipani") & (s["runs"] == "all") & (s["n"] == 10)]
    if "by" in s.columns:
        s = s[s["by"] == "org"]
    fig, axes = plt.subplots(1, len(tracks), figsize=(4.4 * len(tracks), 3.3), squeeze=False)
    for ax, tr in zip(axes[0], tracks, strict=True):
        g = s[s["track"] == tr]
        resid = g["true"] - g["P"]
        ax.scatter(resid, g["dP"], s=14, color="#1f77b4", label="ΔP@10")
        ax.scatter(resid, g["dAntiP"], s=14, marker="x", color="#d62728", label="ΔP̄@10")
        ax.scatter(resid, g["lam"], s=14, marker="^", color="#2ca02c", label="λ")
        ax.axhline(0, color="grey", lw=0.6)
        ax.set_xlabel("residual ε̂: true − reduced-pool P@10")
        ax.set_ylabel("indicator value")
        ax.set_title(tr)
    _common.legend_outside(axes[0][-1])
    fig.suptitle("Figure 1: indicators against the residual, leave-one-organization-out")
    fig.tight_layout()
    _common.save_figure(fig, out, "figure1")

    gt = res["gtheory"]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.3), sharey=True)
    cmap = plt.get_cmap("viridis")
    for ax, col, name in (
        (axes[0], "e_rho2", "generalizability coefficient Eρ²"),
        (axes[1], "phi", "dependability Φ"),
    ):
        for i, n in enumerate(ns):
            g = gt[gt["n"] == n]
            ax.scatter(
                g[col],
                g["mae_change_pct"],
                s=22,
                color=cmap(i / max(len(ns) - 1, 1)),
                label=f"P@{n}",
            )
            for _, row in g.iterrows():
                if gt["track"].nunique() > 1:
                    ax.annotate(
                        row["track"].split("/")[0], (row[col], row["mae_change_pct"]), fontsize=6
                    )
        ax.axhline(0, color="grey", lw=0.6)
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.set_xlabel(name)
    axes[0].set_ylabel("MAE change, Lipani vs reduced pool (%)")
    _common.legend_outside(axes[1])
    fig.suptitle("Figure 2: MAE change against the stability of the collection (top 75 %)")
    fig.tight_layout()
    _common.save_figure(fig, out, "figure2")

    sw = res["sweep"]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.3))
    alpha_rows = sw[sw["estimator"].str.startswith("lipani(alpha=")].copy()
    alpha_rows["alpha"] = alpha_rows["estimator"].str.extract(r"alpha=([0-9.]+)")[0].astype(float)
    for (tr, n), g in alpha_rows[alpha_rows["runs"] == "top75"].groupby(["track", "n"]):
        g = g.sort_values("alpha")
        axes[0].plot(
            g["alpha"],
            g["mae"],
            marker="o",
            ms=3,
            color=cmap(ns.index(n) / max(len(ns) - 1, 1)),
            label=f"P@{n}" + (f" {tr}" if len(tracks) > 1 else ""),
        )
    axes[0].set_xlabel("merge weight α")
    axes[0].set_ylabel("MAE (top 75 %)")
    _common.legend_outside(axes[0])
    ind = sw[sw["estimator"].str.startswith("lipani(indicator=")]
    ind = pd.concat(
        [ind, sw[sw["estimator"] == "lipani(alpha=1)"].assign(estimator="lipani(indicator=lambda)")]
    )
    piv = ind[ind["runs"] == "top75"].pivot_table(
        index="n", columns="estimator", values="mae", aggfunc="mean"
    )
    width = 0.8 / max(len(piv.columns), 1)
    x = np.arange(len(piv.index))
    for j, est in enumerate(piv.columns):
        key = est.split("=")[1].rstrip(")")
        axes[1].bar(
            x - 0.4 + (j + 0.5) * width,
            piv[est],
            width,
            color=COLOURS.get(key),
            label={"lambda": "λ > 0", "dP": "ΔP > 0", "dAntiP": "ΔP̄ < 0", "always": "always"}.get(
                key, key
            ),
        )
    axes[1].set_xticks(x, [f"P@{n}" for n in piv.index])
    axes[1].set_xlabel("cut-off")
    axes[1].set_ylabel("MAE (top 75 %, mean over tracks)")
    _common.legend_outside(axes[1], title="correct when")
    fig.suptitle("§5.1: the α sweep and the bias indicators of Lipani's correction")
    fig.tight_layout()
    _common.save_figure(fig, out, "sweep")


def report(res: dict) -> str:
    """Table 2 (top 75 %) as Markdown, the top/worst counts, the sweeps, Figure 2 and the
    claims, for the terminal."""
    t2 = res["table2"]
    top = t2[(t2["runs"] == "top75") & (t2["by"] == "org")]
    lines = [
        "Table 2 (leave-one-organization-out, top 75% of the pooled runs)",
        "",
        stats.to_markdown(
            stats.table2(top.drop(columns=["by", "measure"]), estimators=list(ESTIMATORS))
        ),
        "",
    ]
    st = res["sre_tests"]
    st = st[(st["runs"] == "top75") & (st["by"] == "org")]
    lines += [
        "SRE* by test (top 75%, leave-one-organization-out): ranked = on the topics of each "
        "run's average (analyze), filled = unanswered topics scored 0",
        st.pivot_table(
            index=["track", "test", "topics", "estimator"], columns="n", values="sre_star"
        ).to_string(),
        "",
    ]
    sw = res["sweep"][res["sweep"]["runs"] == "top75"]
    piv = sw.pivot_table(index=["track", "n"], columns="estimator", values="mae")
    lines += ["Lipani variants, MAE (top 75%)", piv.round(4).to_string(), ""]
    lines += [
        "Figure 2: generalizability of the true P@n (all pooled runs) and the MAE change",
        res["gtheory"][["track", "n", "e_rho2", "phi", "mae_change_pct"]]
        .round(3)
        .to_string(index=False),
        "",
        "Table 1 / Figure 1's sab05ror1 (Robust 2005) is not in the data: not reproduced.",
    ]
    lines.append(_common.claims.report(res["claims"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[-1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("root", nargs="?", help="a track or a directory of tracks")
    ap.add_argument("-o", "--out", default="out/lipani2015", help="output directory")
    ap.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="lipani2015",
        help="lipani2015 (default): the paper's choices (PROTOCOL-lipani2015.md); default: "
        "departure to pbtools' principled choices",
    )
    ap.add_argument("--synthetic", action="store_true", help="a pbtools.synth collection")
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic collection")
    ap.add_argument("--jobs", type=int, default=0, help="worker processes (default 0: every core)")
    ap.add_argument("--dask", help="a Dask scheduler address: run the grid there")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", TrecFormatWarning)  # lenient repairs of TREC archives
    if not args.root and not args.synthetic:
        ap.error("give ROOT or --synthetic")
    t0 = time.perf_counter()
    res = run(
        args.root,
        args.out,
        protocol=args.protocol,
        synthetic=args.synthetic,
        seed=args.seed,
        jobs=args.jobs,
        dask=args.dask,
        progress=False if args.no_progress else None,
    )
    print(report(res))
    print(f"\noutputs in {args.out} ({time.perf_counter() - t0:.1f} s)")
    if args.protocol == "lipani2015" and res["table2"]["track"].str.endswith("TREC-2/Adhoc").any():
        bad = check_adhoc2(res["table2"])
        if bad:
            print("Ad Hoc 2 differs from the paper:\n  " + "\n  ".join(bad))
            return 1
        print("Ad Hoc 2: all 30 MAE and SRE values equal the paper's.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
