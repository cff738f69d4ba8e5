"""Lipani, Lupu & Hanbury (SIGIR 2015), "Splitting water": Table 2, Figures 1, 3 and 4.

For every track under ROOT (``ROOT/<TREC-N>/<Track>/{QRels/,Runs/,desc.xml}``, or ROOT itself, or
``--synthetic``), a leave-one-organization-out experiment over all pooled runs and over the top
75 % (``experiments.analysis.analyze``) scores every evaluated run at P@5, 10, 20, 30 and 100 with
the reduced pool, Webber & Park and Lipani et al. (α = 1, λ indicator), and measures each against
the truth: MAE, SRE, SRE* (two-way Tukey HSD on the true per-topic scores) and Kendall's τ-b.
Then, as §5.1 of the paper describes, an **α sweep** (α = 0, 0.25, 0.5, 0.75, 1) and an
**indicator comparison** (λ against ΔP > 0, ΔP̄ < 0 and "always") of the Lipani estimator.

``--protocol lipani2015`` applies every choice of ``../shared/PROTOCOL-lipani2015.md``; with it,
TREC-2 reproduces all 30 MAE and SRE values of the "Ad Hoc 2" rows exactly, and the script checks
it (exit status 1 if a value differs). SRE* cannot be reproduced: the paper's p-values are not
published (see benchmarks/README.md).

Outputs in ``-o DIR`` (default ``out/lipani2015``):

``table2.parquet``     ``track``, ``n``, ``estimator`` (``lipani``, ``webber``, ``reduced``),
                       ``runs`` (``all``/``top75``), ``mae``, ``sre``, ``sre_star``, ``tau``
``sweep.parquet``      the same columns for the α sweep and indicator variants; ``estimator``
                       reads ``lipani(alpha=0.5)``, ``lipani(indicator=dP)``, …
``scores.parquet``     every run's true and estimated score with the indicators (``dP``,
                       ``dAntiP``, ``dk``, ``lam``, …) — what the figures are drawn from
``table2.md``, ``table2.tex``  Table 2 laid out as in the paper (top 75 %), with the top /
                       worst performer counts
``figure1.png``        ΔP@10, ΔP̄@10 and λ against the residual (true − reduced), per track
``figure3.png``, ``figure4.png``  MAE and SRE against n per track (solid: all runs, dashed:
                       top 75 %)
``sweep.png``          MAE against α and per indicator

Usage::

    python benchmarks/lipani2015.py ../shared/data/trec --protocol lipani2015
    python benchmarks/lipani2015.py --synthetic --jobs 2
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from _common import load_tracks  # noqa: E402  (puts the repository on sys.path for pbtools)

from pbtools import experiments, grid, io, stats  # noqa: E402
from pbtools.experiments import analysis  # noqa: E402
from pbtools.frames import TrecFormatWarning  # noqa: E402

CUTOFFS = (5, 10, 20, 30, 100)
ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
INDICATORS = ("lambda", "dP", "dAntiP", "always")
ESTIMATORS = ("lipani", "webber", "reduced")

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
    res["estimator"] = f"lipani({label})"
    return with_cutoff(res)


def with_cutoff(df: pd.DataFrame) -> pd.DataFrame:
    """The library names measures (``measure`` = "P@10") and leave-out units (``leave_out``);
    this script's tables are keyed by the cut-off ``n`` and ``by``."""
    out = df.copy()
    if "measure" in out.columns and "n" not in out.columns:
        out["n"] = out["measure"].astype(str).str.slice(2).astype(int)
    if "leave_out" in out.columns and "by" not in out.columns:
        out["by"] = out["leave_out"]
    return out


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
    """Table 2 rows, the sweeps and the scores of one collection (a path or frames tuple)."""
    # the two configurations share one merge in a single process; the sweep uses every core
    main = analysis.analyze(
        source,
        measures=[f"P@{n}" for n in cutoffs],
        leave_out=("org",),
        run_sets=("all", "top75"),
        estimators=ESTIMATORS,
        protocol=protocol,
        lenient=True,
        jobs=1 if dask is None else jobs,
        dask=dask,
        progress=progress,
    )
    for table in ("scores", "errors", "significance", "truth"):
        setattr(main, table, with_cutoff(getattr(main, table)))
    frames = main.frames
    pooled, depth = main.params["pooled_runs"], main.params["depth"]
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
        sweep_scores[[*keys, "name", "true", "estimate"]], main.significance, by=keys
    )
    sweep = sweep.merge(
        stats.kendall_tau_by(sweep_scores[[*keys, "name", "true", "estimate"]], by=keys), on=keys
    )
    base = main.errors.drop(columns=["by", "leave_out", "measure"])
    lam1 = base[base["estimator"] == "lipani"].assign(estimator="lipani(alpha=1)")
    sweep = pd.concat([sweep, lam1], ignore_index=True)
    table = base.assign(track=track)[
        ["track", "n", "estimator", "runs", "mae", "sre", "sre_star", "tau"]
    ]
    return {
        "table2": table,
        "sweep": sweep.assign(track=track),
        "scores": main.scores.drop(columns=["by", "leave_out"]).assign(track=track),
        "properties": main.properties,
        "timings": main.timings,
    }


def check_adhoc2(table: pd.DataFrame) -> list[str]:
    """The cells of the TREC-2 top-75 % rows that differ from the paper's MAE / SRE."""
    t = table[(table["runs"] == "top75") & table["track"].str.endswith("TREC-2/Adhoc")]
    bad = []
    for (est, n), (mae, sre, _) in PAPER_ADHOC2.items():
        row = t[(t["estimator"] == est) & (t["n"] == n)]
        if row.empty:
            bad.append(f"{est} P@{n}: missing")
            continue
        got_mae, got_sre = float(row["mae"].iloc[0]), int(row["sre"].iloc[0])
        if f"{got_mae:.4f}" != f"{mae:.4f}" or got_sre != sre:
            bad.append(f"{est} P@{n}: pbtools {got_mae:.4f}/{got_sre}, paper {mae:.4f}/{sre}")
    return bad


def run(
    root=None,
    out="out/lipani2015",
    *,
    protocol=None,
    synthetic=False,
    seed=0,
    jobs=1,
    dask=None,
    progress=None,
    cutoffs=CUTOFFS,
    alphas=ALPHAS,
    indicators=INDICATORS,
) -> dict[str, pd.DataFrame]:
    """Everything for every track; writes Parquet, Markdown, LaTeX and PNG files to ``out``."""
    t0 = time.perf_counter()
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
        for k in ("table2", "sweep", "scores")
    }
    res["properties"] = pd.concat([r["properties"] for r in results], ignore_index=True)
    out_p = Path(out)
    out_p.mkdir(parents=True, exist_ok=True)
    meta = {
        "script": "lipani2015",
        "protocol": protocol,
        "cutoffs": list(cutoffs),
        "alphas": list(alphas),
        "indicators": list(indicators),
        "seed": seed,
        "seconds": time.perf_counter() - t0,
    }
    for k in ("table2", "sweep", "scores", "properties"):
        io.write_parquet(res[k], out_p / f"{k}.parquet", metadata=meta)
    top = res["table2"][res["table2"]["runs"] == "top75"]
    layout = stats.table2(top, estimators=list(ESTIMATORS))
    (out_p / "table2.md").write_text(stats.to_markdown(layout) + "\n")
    (out_p / "table2.tex").write_text(stats.to_latex(layout) + "\n")
    plot(res, out_p)
    return res


def plot(res: dict, out: Path) -> None:
    """Figures 1, 3, 4 and the sweep plot as PNG (matplotlib, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table, tracks = res["table2"], list(pd.unique(res["table2"]["track"]))
    colours = {"lipani": "tab:blue", "webber": "tab:orange", "reduced": "tab:green"}
    for fig_no, col, label in ((3, "mae", "MAE"), (4, "sre", "SRE")):
        fig, axes = plt.subplots(1, len(tracks), figsize=(4.5 * len(tracks), 3.6), squeeze=False)
        for ax, tr in zip(axes[0], tracks, strict=True):
            for (est, runs), g in table[table["track"] == tr].groupby(["estimator", "runs"]):
                g = g.sort_values("n")
                ax.plot(
                    g["n"],
                    g[col],
                    ls="-" if runs == "all" else "--",
                    marker="o",
                    ms=3,
                    color=colours.get(est),
                    label=f"{est} ({runs})",
                )
            ax.set_xscale("log")
            ax.set_xticks(list(CUTOFFS), [str(n) for n in CUTOFFS])
            ax.set_title(tr)
            ax.set_xlabel("P@n")
            ax.set_ylabel(label)
        axes[0][0].legend(fontsize=7)
        fig.suptitle(
            f"Figure {fig_no}: {label} against n, leave-one-organization-out\n"
            "(solid: all runs, dashed: top 75%)",
            fontsize=9,
        )
        fig.tight_layout()
        fig.savefig(out / f"figure{fig_no}.png", dpi=110)
        plt.close(fig)

    s = res["scores"]
    s = s[(s["estimator"] == "lipani") & (s["runs"] == "all") & (s["n"] == 10)]
    fig, axes = plt.subplots(1, len(tracks), figsize=(4.5 * len(tracks), 3.6), squeeze=False)
    for ax, tr in zip(axes[0], tracks, strict=True):
        g = s[s["track"] == tr]
        resid = g["true"] - g["P"]
        ax.scatter(resid, g["dP"], s=12, label="ΔP@10")
        ax.scatter(resid, g["dAntiP"], s=12, marker="x", label="ΔP̄@10")
        ax.scatter(resid, g["lam"], s=12, marker="^", label="λ")
        ax.axhline(0, color="grey", lw=0.5)
        ax.set_xlabel("residual (true − reduced P@10)")
        ax.set_title(tr)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(
        "Figure 1: indicators against the residual,\nleave-one-organization-out", fontsize=9
    )
    fig.tight_layout()
    fig.savefig(out / "figure1.png", dpi=110)
    plt.close(fig)

    sw = res["sweep"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    alpha_rows = sw[sw["estimator"].str.startswith("lipani(alpha=")].copy()
    alpha_rows["alpha"] = alpha_rows["estimator"].str.extract(r"alpha=([0-9.]+)")[0].astype(float)
    for (tr, n), g in alpha_rows[alpha_rows["runs"] == "top75"].groupby(["track", "n"]):
        g = g.sort_values("alpha")
        axes[0].plot(g["alpha"], g["mae"], marker="o", ms=3, label=f"{tr} P@{n}")
    axes[0].set_xlabel("α")
    axes[0].set_ylabel("MAE (top 75%)")
    axes[0].legend(fontsize=6)
    ind = sw[sw["estimator"].str.startswith("lipani(indicator=")]
    ind = pd.concat(
        [ind, sw[sw["estimator"] == "lipani(alpha=1)"].assign(estimator="lipani(indicator=lambda)")]
    )
    piv = ind[ind["runs"] == "top75"].pivot_table(
        index="n", columns="estimator", values="mae", aggfunc="mean"
    )
    piv.plot.bar(ax=axes[1])
    axes[1].set_ylabel("MAE (top 75%, mean over tracks)")
    axes[1].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "sweep.png", dpi=110)
    plt.close(fig)


def report(res: dict) -> str:
    """Table 2 (top 75 %) as Markdown, the top/worst counts, and the sweeps, for the terminal."""
    top = res["table2"][res["table2"]["runs"] == "top75"]
    lines = [
        "Table 2 (leave-one-organization-out, top 75% of the pooled runs)",
        "",
        stats.to_markdown(stats.table2(top, estimators=list(ESTIMATORS))),
        "",
    ]
    sw = res["sweep"][res["sweep"]["runs"] == "top75"]
    piv = sw.pivot_table(index=["track", "n"], columns="estimator", values="mae")
    lines += ["Lipani variants, MAE (top 75%)", piv.round(4).to_string(), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", help="a track or a directory of tracks")
    ap.add_argument("-o", "--out", default="out/lipani2015")
    ap.add_argument(
        "--protocol",
        choices=("lipani2015",),
        help="reproduce the paper's choices (PROTOCOL-lipani2015.md)",
    )
    ap.add_argument("--synthetic", action="store_true", help="a pbtools.synth collection")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=0, help="worker processes (default 0: every core)")
    ap.add_argument("--dask", help="a Dask scheduler address: run the grid there")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", TrecFormatWarning)  # lenient repairs of TREC archives
    if not args.root and not args.synthetic:
        ap.error("give ROOT or --synthetic")
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
    print(f"outputs in {args.out}")
    if args.protocol == "lipani2015" and res["table2"]["track"].str.endswith("TREC-2/Adhoc").any():
        bad = check_adhoc2(res["table2"])
        if bad:
            print("Ad Hoc 2 differs from the paper:\n  " + "\n  ".join(bad))
            return 1
        print("Ad Hoc 2: all 30 MAE and SRE values equal the paper's.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
