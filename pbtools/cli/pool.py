"""``pbtools pool``: collection properties, the inferred pool, reduced qrels."""

from __future__ import annotations

import argparse

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
    po.add_argument("-o", "--output", help="Parquet file for --leave-out")
    add_io_options(po)
    po.set_defaults(func=run, validate=validate)


def validate(args: argparse.Namespace) -> None:
    """Every argument and path checked before any input is read."""
    check_fraction(args.tolerance, flag="--tolerance")
    if args.measure and not args.unique:
        raise UsageError("-m/--measure is used only with --unique")
    check_measures(args.measure or ())
    if args.leave_out and not args.output:
        raise UsageError("--leave-out needs -o FILE.parquet")
    if args.output and not args.leave_out:
        raise UsageError("-o is used only with --leave-out (the reduced qrels)")
    check_inputs(args.paths, desc=args.desc)
    check_output(args.output, inputs=[*args.paths, args.desc])


def collection(args: argparse.Namespace):
    from pbtools import io

    return io.load_collection(
        args.paths, desc=args.desc, lenient=args.lenient, float32=args.float32, run_id=args.run_id
    )


def run(args: argparse.Namespace) -> int:
    """``pbtools pool``: |R|, |O|, |R_p|, d, |T|, reduced qrels, unique contributions."""
    from pbtools import pooling

    col = collection(args)
    info = pooling.describe(col, policy=args.policy, tolerance=args.tolerance)
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
    if args.leave_out:
        reduced = pooling.leave_one_out(
            col.qrels,
            col.runs,
            info["depth"],
            by=args.leave_out,
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
        print("unique contributions per organization (Buckley et al. 2007; Sakai 2008 Table 2)")
        emit(report, "table", None)
    return 0
