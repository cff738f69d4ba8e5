"""Fit once, predict many (issue 29 item 2): an estimator's ``predict`` of new runs one at a time
against ``predict`` of all of them in one call, and what each call spends encoding the pool.

``python benchmarks/predict_speed.py [--track DIR] [--repeat N]`` reads a track (default
TREC-2 ad hoc, leniently), fits ``ReducedPool``, ``WebberOnRuns`` (P@10, AP) and ``Lipani``
(P@10) on its pooled runs, then predicts five runs — the two unpooled ones and three pooled ones
renamed (scored as new runs, R_p every pooled run) — one call per run and in one call,
alternated ``--repeat`` times (default 3), and prints the best times and their ratio; the two
results are checked identical (``assert_frame_equal(check_exact=True)``). It also times the
encoded problem of one run (``Estimator.problem``: the run added to the pool that ``fit``
encoded, :class:`pbtools.engine.build.FittedPool`) against the same problem after a fit on no
pooled run: what encoding the pool still costs a ``predict`` call (before ``fit`` kept the
encoding, every call re-encoded it: on TREC-2 1.19 s with the pool, 0.23 s for the run alone).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import pandas as pd
from pandas.testing import assert_frame_equal

import pbtools
from pbtools import corrections, pooling

TREC2 = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec" / "TREC-2" / "Adhoc"


def best(f, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--track", default=str(TREC2))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    col = pbtools.read_collection(args.track, lenient=True)
    info = pooling.infer_pool(col.runs, col.qrels)
    pooled = info.pooled(col.runs)
    unpooled = [n for n in col.runs["name"].astype(str).unique() if n not in info.pooled_runs]
    extra = list(info.pooled_runs)[: max(0, 5 - len(unpooled))]
    new = pd.concat(
        [col.runs[col.runs["name"] == n].assign(name=n) for n in unpooled[:5]]
        + [col.runs[col.runs["name"] == n].assign(name=f"new_{n}") for n in extra]
    )
    names = list(dict.fromkeys(new["name"].astype(str)))
    print(f"load average {os.getloadavg()[0]:.1f}; d = {info.depth}; new runs: {names}")
    key = ["name", "measure"]
    for cls, ms in (
        (corrections.ReducedPool, ["P@10", "AP"]),
        (corrections.WebberOnRuns, ["P@10", "AP"]),
        (corrections.Lipani, ["P@10"]),
    ):
        t = time.perf_counter()
        est = cls(measures=ms, depth=info.depth).fit(pooled, col.qrels, col.orgs)
        t_fit = time.perf_counter() - t
        parts: dict[str, pd.DataFrame] = {}

        def one_by_one(est=est, parts=parts):
            parts["one"] = pd.concat([est.predict(new[new["name"] == n]) for n in names])

        def together(est=est, parts=parts):
            parts["all"] = est.predict(new)

        t_one = best(one_by_one, args.repeat)
        t_all = best(together, args.repeat)
        a = parts["one"].sort_values(key).reset_index(drop=True)
        b = parts["all"].sort_values(key).reset_index(drop=True)
        assert_frame_equal(a, b, check_exact=True)
        print(
            f"{cls.__name__:>12}: fit {t_fit:.2f} s; {len(names)} runs one at a time "
            f"{t_one:.2f} s, in one predict {t_all:.2f} s: {t_one / t_all:.1f}x (identical)"
        )
    first = new[new["name"] == names[0]]
    fitted = corrections.ReducedPool(measures=["P@10"], depth=info.depth).fit(pooled, col.qrels)
    empty = corrections.ReducedPool(measures=["P@10"], depth=info.depth)
    empty = empty.fit(pooled.iloc[:0], col.qrels)
    with_pool = best(lambda: fitted.problem(first), args.repeat)
    alone = best(lambda: empty.problem(first), args.repeat)
    print(
        f"encoding one predict call: the run added to the fitted pool {with_pool:.2f} s, "
        f"to an empty pool {alone:.2f} s"
    )


if __name__ == "__main__":
    main()
