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
1's sab05ror1 need Robust 2005. The claims about the paper's fifteen collections (W1, W3 and
Figure 2's correlation G1) are checked across the collections given, and say "needs ≥ k
collections" with fewer. Runs are read as PROTOCOL item 1 says under the preset (by file, the
organisation by the file's tag), otherwise ``--run-id`` (default ``auto``: by tag, by file
where files share a tag); the repairs of the lenient reading are counted by kind in
``reading.parquet``, the terminal and ``claims.md``.

Outputs in ``-o DIR`` (default ``out/lipani2015``), one result set with ``manifest.json``
(pbtools version, parameters, SHA-256 of every input file and output):

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
``claims.parquet``, ``claims.md``  the paper's claims (:mod:`lipani2015_claims`) checked on
                       each track, and across the tracks for W1, W3, G1
``reading.parquet``    how each track was read: run identity, repairs by kind
``table2.md``, ``table2.tex``  Table 2 laid out as in the paper (top 75 %), with the top /
                       worst performer counts
Figures (PNG, PDF, SVG; one colour per estimator in all of them): ``figure1`` (ΔP@10, ΔP̄@10
against the residual, λ on its own axis), ``figure2`` (MAE change against Eρ² and Φ), ``figure3``,
``figure4`` (MAE and SRE against n; solid: all runs, dashed: top 75 %), ``sweep`` (MAE against
α and per indicator).

Usage::

    pbtools reproduce lipani2015 ../shared/data/trec -o out/lipani2015   # every track, preset
    pbtools reproduce lipani2015 ../shared/data/trec/TREC-2/Adhoc --protocol default
    python -m pbtools.papers.lipani2015 --synthetic --jobs 2
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

from pbtools import experiments, grid, stats
from pbtools.experiments import analysis
from pbtools.frames import TrecFormatWarning
from pbtools.papers import common as _common
from pbtools.papers import reading
from pbtools.papers.common import load_tracks, with_cutoff
from pbtools.papers.lipani2015_claims import (
    CLAIMS,
    ESTIMATORS,
    PAPER_ADHOC2,
    PAPER_FIG2,
    across,
    claims_table,
    compare_adhoc2,
)
from pbtools.papers.lipani2015_report import (  # noqa: F401  (public here as before)
    COLOURS,
    LABELS,
    documents,
    figures,
    report,
)
from pbtools.papers.lipani2015_tables import (  # noqa: F401  (public here as before)
    gtheory,
    sre_tests,
)
from pbtools.progress import progress_bar

__all__ = [
    "CLAIMS",
    "DEFAULTS",
    "PAPER_ADHOC2",
    "PAPER_FIG2",
    "TITLE",
    "compare_adhoc2",
    "figures",
    "report",
    "run",
]

TITLE = (
    'Lipani, Lupu & Hanbury (2015), "Splitting water: precision and anti-precision to reduce '
    'pool bias"'
)
CUTOFFS = (5, 10, 20, 30, 100)
ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
INDICATORS = ("lambda", "dP", "dAntiP", "always")
PROTOCOLS = ("lipani2015", "default")

#: the parameters of :func:`run` (the ``pbtools reproduce lipani2015`` options)
#: what each parameter of :data:`DEFAULTS` means (``pbtools reproduce lipani2015 --help``)
OPTIONS = {
    "protocol": "lipani2015 (the paper's choices, PROTOCOL-lipani2015.md) or default (pbtools')",
    "synthetic": "run on a pbtools.synth collection with complete judgments",
    "seed": "seed of the random choices",
    "cutoffs": "the n of P@n (paper: 5 10 20 30 100)",
    "alphas": "the alphas of Lipani's estimator in the sweep",
    "indicators": "the indicators deciding when to correct (lambda, dP, dAntiP, always)",
}
DEFAULTS = dict(
    protocol="lipani2015",
    run_id=None,
    synthetic=False,
    seed=0,
    cutoffs=CUTOFFS,
    alphas=ALPHAS,
    indicators=INDICATORS,
)


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


def check_adhoc2(table: pd.DataFrame) -> list[str]:
    """The cells of the TREC-2 top-75 % leave-one-org-out rows that differ from the paper."""
    return compare_adhoc2(table)[1]


# --------------------------------------------------------------------------------------------
# the whole run
# --------------------------------------------------------------------------------------------


def read(path, name: str, protocol, run_id: str | None):
    """``((runs, qrels, orgs), reading row)`` of one track, read once.

    Under the ``lipani2015`` protocol (and ``run_id`` None) as PROTOCOL items 1-2 say: runs by
    file, each file's organisation looked up by its tag (a tag ``desc.xml`` lacks — TREC-2's
    ``prceo1`` of ``input.prc1``/``input.prc2`` — keeps its runs in the pool, never evaluated),
    scores as float32. Otherwise with ``run_id`` (default ``"auto"``, :mod:`reading`)."""
    from pbtools.experiments.load import orgs_by_tag
    from pbtools.presets import resolve

    preset = protocol is not None and run_id is None
    opts = resolve(protocol)
    rid = "file" if preset else (run_id or "auto")
    col, row = reading.read_track(
        path, name, lenient=True, run_id=rid, float32=bool(opts["float32"])
    )
    orgs = col.orgs
    if preset and "one_org_per_run" not in orgs.attrs:
        orgs = orgs_by_tag(col.files, col.orgs)
        row["run_id"] = "lipani2015"
        row["by_file"] = "by file, organisation by the file's tag (PROTOCOL-lipani2015 item 1)"
    return (col.runs, col.qrels, orgs), row


def run(
    root=None,
    out=None,
    *,
    protocol="lipani2015",
    run_id=None,
    synthetic=False,
    seed=0,
    jobs=1,
    dask=None,
    progress=None,
    cutoffs=CUTOFFS,
    alphas=ALPHAS,
    indicators=INDICATORS,
) -> dict[str, pd.DataFrame]:
    """Everything for every track under ``root`` (a path or several); writes the result set
    (Parquet, ``claims.md``, ``table2.md``/``.tex``, the figures, the provenance) to ``out``
    (None: write nothing). ``protocol``: ``"lipani2015"`` (the paper's choices) or
    ``"default"`` / None (pbtools' principled ones); ``run_id``: how runs are identified
    (None: the protocol's; ``"auto"``, ``"file"``, ``"tag"``: :mod:`reading`). The claims
    about several collections (W1, W3, G1) are checked across the tracks given."""
    t0 = time.perf_counter()
    protocol = None if protocol in (None, "default") else protocol
    if run_id is not None:
        reading.check_run_id(run_id)
    if synthetic:
        tr = load_tracks(synthetic=True, seed=seed)[0]
        sources = [(tr.name, lambda tr=tr: ((tr.runs, tr.qrels, tr.orgs), tr.reading))]
        protocol = None
    else:
        sources = [
            (name, lambda t=t, name=name: read(t, name, protocol, run_id))
            for name, t in reading.find(root)
        ]
    results, rows = [], []
    bar = progress_bar(len(sources), progress if len(sources) > 1 else False, "tracks")
    for name, load in sources:
        frames, row = load()
        rows.append(row)
        results.append(
            run_track(
                frames,
                name,
                protocol=protocol,
                cutoffs=cutoffs,
                alphas=alphas,
                indicators=indicators,
                jobs=jobs,
                dask=dask,
                progress=progress,
            )
        )
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    res = {
        k: pd.concat([r[k] for r in results], ignore_index=True)
        for k in ("table2", "sre_tests", "sweep", "scores", "gtheory", "properties", "claims")
    }
    res["claims"] = _common.claims.concat([res["claims"], across(res)])
    res["reading"] = reading.reading_frame(rows)
    if out is not None:
        params = dict(
            protocol=protocol or "default",
            run_id=run_id,
            synthetic=synthetic,
            seed=seed,
            cutoffs=cutoffs,
            alphas=alphas,
            indicators=indicators,
        )
        meta = _common.metadata("lipani2015", root, params)
        meta["seconds"] = time.perf_counter() - t0
        _common.write_outputs(res, Path(out), meta, figures, TITLE, documents(res))
    return res


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
    _common.add_run_id(ap, default=None)
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
        run_id=args.run_id,
        synthetic=args.synthetic,
        seed=args.seed,
        jobs=args.jobs,
        dask=args.dask,
        progress=False if args.no_progress else None,
    )
    print("\n".join(reading.reading_lines(res["reading"])))
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
