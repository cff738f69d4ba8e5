"""``pbtools evaluate`` of this checkout against another (the code before a change): the same
bytes.

``python benchmarks/evaluate_identity.py --before CHECKOUT [--only NAME,...]``
runs every form below as ``python -m pbtools evaluate …`` in a fresh process of each checkout
(``PYTHONPATH``: its code first) and compares standard output, standard error and the exit
status byte for byte (a file written with ``-o``: its bytes too; a Parquet file: the frame
``io.read_parquet`` gives back and its metadata but for the pbtools version and the file's
hashes). Forms (issue 30 item 1): ``--trec``, ``-q``, ``-c``, ``-M``, ``--format
table|tsv|parquet``, ``-o``, ``-m all_trec`` on TOY, the bundled sample, TREC-2 ``--lenient``
and trec_eval's conformance data (``../shared``; forms whose data are absent are skipped), a
run with a topic the qrels lack and one missing a judged topic (coverage warnings), no common
topic (the empty result), text and geometric and summed measures, RBP's residual. Prints one
line per form and exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared" / "data"
TREC2 = SHARED / "trec" / "TREC-2" / "Adhoc"
TOY = SHARED / "trec" / "TOY"
CONF = SHARED / "trec_eval_conformance"
SAMPLE = ROOT / "pbtools" / "data" / "sample"


def _small(tmp: Path) -> tuple[Path, Path, Path]:
    """A qrels file, a run answering a topic the qrels lack (and missing one they judge), a run
    sharing no topic with the qrels."""
    q = tmp / "qrels"
    q.write_text("1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n3 0 d1 1\n")
    r = tmp / "runs"
    r.mkdir(exist_ok=True)
    (r / "input.a").write_text(
        "1 Q0 d1 1 3.0 a\n1 Q0 d2 2 2.0 a\n1 Q0 d9 3 1.0 a\n9 Q0 d1 1 1.0 a\n"
    )
    (r / "input.b").write_text("1 Q0 d2 1 5.0 b\n2 Q0 d3 1 4.0 b\n3 Q0 d1 1 1.0 b\n")
    e = tmp / "none"
    e.write_text("7 Q0 d1 1 3.0 z\n")
    return q, r, e


def forms(tmp: Path) -> dict[str, list[str] | None]:
    """``{name: evaluate's arguments, or None when its data are absent}``; ``OUT`` stands for a
    file of the checkout's own."""
    q, r, e = _small(tmp)
    track = [str(TREC2 / "QRels" / "qrels.101-150.disk1.disk2"), str(TREC2 / "Runs")]
    trec2 = [*track, "--lenient"] if TREC2.is_dir() else None
    toy = [str(TOY / "QRels" / "qrels"), str(TOY / "Runs")] if (TOY / "Runs").is_dir() else None
    conf = [str(CONF / "qrels.test"), str(CONF / "results.test")] if CONF.is_dir() else None
    sample = [str(SAMPLE / "QRels" / "qrels"), str(SAMPLE / "Runs")]
    small = [str(q), str(r)]

    def when(base, *more):
        return None if base is None else [*base, *more]

    allm = ["-m", "all_trec"]
    mix = ["-m", "P@10", "-m", "AP", "-m", "GMAP", "-m", "NumRet", "-m", "RBP(p=0.8)@10"]
    return {
        "sample": sample,
        "sample-q": [*sample, "-q"],
        "sample-trec-q-all_trec": [*sample, "--trec", "-q", *allm],
        "sample-c-trec": [*sample, "-c", "--trec"],
        "sample-M5-tsv": [*sample, "-M", "5", "--format", "tsv"],
        "sample-q-tsv-mix": [*sample, "-q", "--format", "tsv", *mix],
        "sample-mix": [*sample, *mix],
        "sample-q-relstring": [*sample, "-q", "-m", "relstring.5", "-m", "P@5"],
        "sample-trec-relstring": [*sample, "--trec", "-q", "-m", "relstring.5", "-m", "P.5"],
        "sample-q-runid": [*sample, "-q", "-m", "runid", "-m", "num_q", "-m", "P@5"],
        "sample-trec-runid": [*sample, "--trec", "-m", "runid", "-m", "P@5", "-m", "GMAP"],
        "sample-float32-runid-file": [*sample, "--float32", "--run-id", "file", "--trec", "-q"],
        "sample-o-table": [*sample, "-o", "OUT"],
        "sample-o-q-tsv": [*sample, "-q", "--format", "tsv", "-o", "OUT"],
        "sample-o-trec": [*sample, "--trec", "-o", "OUT"],
        "sample-parquet": [*sample, "--format", "parquet", "-o", "OUT"],
        "sample-q-parquet": [*sample, "-q", "--format", "parquet", "-o", "OUT", *mix],
        "small-coverage": small,
        "small-coverage-q-trec": [*small, "-q", "--trec", *allm],
        "small-c": [*small, "-c", "-q"],
        "small-empty": [str(q), str(e)],
        "small-empty-c": [str(q), str(e), "-c"],
        "small-M1": [*small, "-M", "1", "-q"],
        "toy": toy,
        "toy-trec-q": when(toy, "--trec", "-q", *allm),
        "toy-c-q": when(toy, "-c", "-q"),
        "conf-trec-q-all_trec": when(conf, "--trec", "-q", *allm),
        "conf-trec-c-M10": when(conf, "--trec", "-c", "-M", "10", *allm),
        "conf-trec-l2-J": when(conf, "--trec", "-q", "-l", "2", "-J", "-m", "official"),
        "trec2": trec2,
        "trec2-trec-q-all_trec": when(trec2, "--trec", "-q", *allm),
        "trec2-q-tsv": when(trec2, "-q", "--format", "tsv"),
        "trec2-c-mix": when(trec2, "-c", *mix),
    }


def run_form(checkout: Path, args: list[str], out: Path) -> tuple[bytes, bytes, int, object]:
    """One form in a fresh process of ``checkout``: (stdout, stderr, exit status, output)."""
    args = [str(out) if a == "OUT" else a for a in args]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    p = subprocess.run(
        [sys.executable, "-m", "pbtools", "evaluate", *args],
        capture_output=True,
        env=env,
        cwd=str(out.parent),
    )
    written = None
    if "OUT" in args or str(out) in args:
        if out.exists():
            written = _parquet(out) if "parquet" in args else out.read_bytes()
    return p.stdout, p.stderr.replace(str(out).encode(), b"OUT"), p.returncode, written


def _parquet(path: Path):
    """What ``io.read_parquet`` gives back, and the metadata but for the version and hashes."""
    import pickle

    from pbtools import io

    df = io.read_parquet(path)
    meta = dict(df.attrs.get("metadata") or {})
    for k in ("pbtools_version", "version", "inputs", "pbtools"):
        meta.pop(k, None)
    return pickle.dumps((df.to_dict("list"), [str(t) for t in df.dtypes], sorted(meta)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, type=Path, help="the other checkout")
    ap.add_argument("--only", help="comma-separated form names")
    args = ap.parse_args(argv)
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        table = forms(tmp)
        names = args.only.split(",") if args.only else list(table)
        for name in names:
            form = table[name]
            if form is None:
                print(f"{name:28s} skipped (data absent)")
                continue
            a, b = tmp / "a", tmp / "b"
            a.mkdir(exist_ok=True)
            b.mkdir(exist_ok=True)
            ext = ".parquet" if "parquet" in form else ".txt"
            got = run_form(ROOT, form, a / f"{name}{ext}")
            want = run_form(args.before.resolve(), form, b / f"{name}{ext}")
            same = got == want
            bad += not same
            what = ["stdout", "stderr", "exit", "file"]
            diff = [w for w, x, y in zip(what, got, want, strict=True) if x != y]
            print(
                f"{name:28s} {'same' if same else 'DIFFERS: ' + ', '.join(diff)} "
                f"(exit {got[2]}, {len(got[0])} bytes out, {len(got[1])} bytes err)"
            )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
