"""``pbtools pool``: collection properties, the inferred pool, reduced qrels, simulated pools.

With ``--strategy NAME[:PARAMS] --budget N`` the command replays a pooling strategy
(:mod:`pbtools.pooling.strategies`) over the collection's pooled runs, with its qrels as the
assessor (:meth:`pbtools.pooling.Pool.simulate`), and writes the simulated pool as TREC qrels
(``-o``; label -1: a document the strategy asked for that the collection never judged). A
sampling strategy (``uniform``, ``stratified``) writes its whole universe instead, in
``sample_eval.pl``'s five columns ``qid 0 docno stratum label`` (label -1: not sampled), which
:func:`pbtools.io.read_sampled_qrels` and the estimators of :mod:`pbtools.measures.sampled` read.
"""

from __future__ import annotations

import argparse
import sys

from pbtools.cli.common import (
    UsageError,
    add_collection_args,
    add_io_options,
    add_policy_option,
    check_fraction,
    check_inputs,
    check_measures,
    check_output,
    dumps,
    emit,
)


def add_strategy_args(p: argparse.ArgumentParser, *, output: bool) -> None:
    """``--strategy``, ``--budget``, ``--total``, ``--seed`` (+ ``--order`` when ``output``)."""
    p.add_argument(
        "--strategy",
        metavar="NAME[:PARAMS]",
        help="simulate a pooling strategy, e.g. depth:10, take, rbp:0.8, rbpb, rbpc, mtf, "
        "hedge:0.1, maxmean, rrf:60, borda, combsum, uniform:100, stratified:10,30,100:1,0.25,0.06",
    )
    p.add_argument("--budget", type=int, help="judgments per topic for --strategy")
    p.add_argument("--total", type=int, help="total judgments spread over the topics (instead)")
    p.add_argument("--seed", type=int, default=0, help="seed of random strategies (default 0)")
    if output:
        p.add_argument("--order", help="Parquet file for the judging order of --strategy")


def check_strategy(args: argparse.Namespace):
    """The parsed ``--strategy`` (or None), every strategy argument validated before any work."""
    from pbtools.pooling import strategies

    if args.strategy is None:
        for opt in ("budget", "total"):
            if getattr(args, opt) is not None:
                raise UsageError(f"--{opt} needs --strategy")
        return None
    strategy = strategies.parse(args.strategy)
    if args.budget is not None and args.total is not None:
        raise UsageError("give --budget or --total, not both")
    for opt in ("budget", "total"):
        value = getattr(args, opt)
        if value is not None and value < 1:
            raise UsageError(f"--{opt} must be a positive integer, got {value}")
    if args.budget is None and args.total is None and strategy.needs_budget:
        raise UsageError(f"--strategy {strategy.name} needs --budget N (or --total N)")
    return strategy


def simulate(args: argparse.Namespace, strategy, runs, qrels, pooled):
    """The simulated pool of ``strategy`` over the ``pooled`` runs (command-line arguments)."""
    from pbtools.pooling import Pool

    return Pool.simulate(
        runs, qrels, strategy, args.budget, total=args.total, seed=args.seed, pooled=pooled
    )


def describe_simulation(pool, n_runs: int) -> str:
    """One paragraph on a simulated pool: strategy, cost, what was found."""
    q = pool.qrels
    per = pool.budget["cost"]
    return (
        f"simulated pool {pool.strategy.spec} over {n_runs} pooled runs: {pool.cost} judgments "
        f"({per.min()}–{per.max()} per topic, {len(per)} topics), "
        f"{int((q['label'] > 0).sum())} relevant, {int((q['label'] < 0).sum())} never judged "
        f"in the collection (label -1); contribution depth {pool.depth}"
    )


def write_simulation(pool, qrels_path, order_path, seed: int, collection: str) -> None:
    """The simulated pool's qrels (and its judging order, when ``order_path``) as one set of
    files: both replaced, or neither (:func:`pbtools.io.atomic.atomic_set`)."""
    from pbtools import io, pooling
    from pbtools.cli.provenance import provenance
    from pbtools.io.atomic import atomic_set

    paths = [qrels_path, *([order_path] if order_path else [])]
    written = pool.qrels
    with atomic_set(paths) as staged:
        if pooling.is_sampling(pool.strategy):  # the universe with strata: sample_eval's format
            written = pooling.sampled_qrels(pool)
            io.to_sampled_qrels(written, staged[0])
        else:
            io.to_trec_qrels(written, staged[0])
        if order_path:
            meta = {"command": "pool", "strategy": pool.strategy.spec, "seed": seed}
            meta = {**provenance(None, None), **meta, "collection": collection}
            io.write_parquet(pool.order, staged[1], metadata=meta)
    print(f"wrote {len(written)} qrels lines to {qrels_path}", file=sys.stderr)
    if order_path:
        print(f"wrote {len(pool.order)} rows to {order_path}", file=sys.stderr)


def register(sub) -> None:
    """Add this command's sub-parser to ``sub``."""
    po = sub.add_parser(
        "pool",
        help="collection properties, inferred pool, reduced qrels",
        description="Infer the pool depth and pooled runs from the qrels; "
        "optionally write leave-one-out reduced qrels and the "
        "unique-contribution report.",
    )
    add_collection_args(po)
    po.add_argument("--json", action="store_true", help="print the properties as JSON")
    add_policy_option(po)
    po.add_argument(
        "--tolerance",
        type=float,
        default=None,
        help="share of d of unjudged documents a pooled run may step over, in [0, 1) "
        "(overrides the policy's t)",
    )
    po.add_argument(
        "--leave-out",
        choices=("run", "org"),
        help="write the reduced qrels of every run or organization (-o)",
    )
    po.add_argument(
        "--unique",
        action="store_true",
        help="per-organization unique (relevant) contributions and their effect",
    )
    po.add_argument(
        "-m", "--measure", action="append", help="measures for --unique (default AP, P@10)"
    )
    po.add_argument(
        "-o", "--output", help="Parquet file for --leave-out; TREC qrels file for --strategy"
    )
    add_strategy_args(po, output=True)
    add_io_options(po)
    po.set_defaults(func=run, validate=validate)


def validate(args: argparse.Namespace) -> None:
    """Every argument and path checked before any input is read."""
    check_fraction(args.tolerance, flag="--tolerance")
    if args.measure and not args.unique:
        raise UsageError("-m/--measure is used only with --unique")
    check_measures(args.measure or ())
    strategy = check_strategy(args)
    if strategy is not None:
        if not args.output:
            raise UsageError("--strategy needs -o QRELS (the simulated pool's qrels)")
        if args.leave_out:
            raise UsageError("--leave-out and --strategy write different files: give one")
    elif args.order:
        raise UsageError("--order needs --strategy")
    if args.leave_out and not args.output:
        raise UsageError("--leave-out needs -o FILE.parquet")
    if args.output and not args.leave_out and strategy is None:
        raise UsageError("-o is used only with --leave-out or --strategy")
    inputs = [*args.paths, args.desc]
    check_inputs(args.paths, desc=args.desc)
    check_output(args.output, inputs=inputs)
    check_output(args.order, flag="--order", inputs=inputs)


def collection(args: argparse.Namespace):
    from pbtools import io

    return io.load_collection(
        args.paths, desc=args.desc, lenient=args.lenient, float32=args.float32, run_id=args.run_id
    )


def run(args: argparse.Namespace) -> int:
    """``pbtools pool``: |R|, |O|, |R_p|, d, |T|, reduced qrels, unique contributions."""
    from pbtools import pooling
    from pbtools.io.desc import EACH_RUN_ITS_OWN

    strategy = check_strategy(args)  # checked by validate(); parsed here for the run
    col = collection(args)
    info = pooling.describe(col, policy=args.policy, tolerance=args.tolerance)
    info["one_org_per_run"] = col.orgs.attrs.get("one_org_per_run")  # why, when no orgs
    if args.json:
        print(dumps(info))
    else:
        print(f"collection  {col.name}  ({col.path})")
        shared = info["|R| files"] != info["|R|"]
        for key in ("|R|", "|O|", "|R_p|", "d", "|T|"):
            value = f"{info[key]}"
            if shared and key in ("|R|", "|R_p|"):
                value = f"{info[key + ' files']} run files ({info[key]} distinct run tags)"
            print(f"  {key:6s} {value}")
        print(f"  pooled runs ({info['policy']} policy): {', '.join(info['pooled_runs'])}")
        if info["unpooled_runs"]:
            print(f"  not pooled: {', '.join(info['unpooled_runs'])}")
        if info["unmapped"]:
            print(f"  runs without an organization: {', '.join(info['unmapped'])}")
        if info["one_org_per_run"]:
            print(f"  organizations: {info['one_org_per_run']}, so {EACH_RUN_ITS_OWN}")
    if strategy is not None:
        pool = simulate(args, strategy, col.runs, col.qrels, info["pooled_runs"])
        write_simulation(pool, args.output, args.order, args.seed, col.name)
        print()
        print(describe_simulation(pool, len(info["pooled_runs"])))
    if args.leave_out:
        reduced = pooling.leave_one_out(
            col.runs,
            col.qrels,
            info["depth"],
            leave_out=args.leave_out,
            orgs=col.orgs,
            pooled=info["pooled_runs"],
        )
        emit(
            reduced,
            "parquet",
            args.output,
            {
                "command": "pool",
                "leave_out": args.leave_out,
                "depth": info["depth"],
                "pooled_runs": info["pooled_runs"],
                "collection": col.name,
                "one_org_per_run": info["one_org_per_run"],
            },
            args=args,
        )
    if args.unique:
        report = pooling.unique_contributions(
            col.runs,
            col.qrels,
            col.orgs,
            info["depth"],
            measures=args.measure or ["AP", "P@10"],
            pooled=info["pooled_runs"],
        )
        print()
        print(
            "unique contributions per organization (Buckley et al. 2007; Sakai 2008 Table 2)"
            + (" — each run is its own organization" if info["one_org_per_run"] else "")
        )
        emit(report, "table", None)
    return 0
