"""Write the bundled sample collection to ``pbtools/data/sample/`` (TRACK layout, plain-text runs).

A small synthetic collection (:func:`pbtools.synth.generate`): 20 topics × 3000 documents, 12 runs
from 6 organisations, run length 100, a depth-20 pool over 10 of the runs (2 runs unpooled),
``QRels/qrels`` holding only the pooled documents' judgments and ``truth/qrels`` the complete
judgments (every relevant document and every document any run retrieved). Deterministic (seed
2015); the whole directory stays under 1 MB.

Usage: ``python scripts/make_sample.py [OUT_DIR]`` (default: ``pbtools/data/sample``, which
ships in the package).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from pbtools import synth
from pbtools.experiments.analysis import SAMPLE as SAMPLE_DIR

SAMPLE = dict(
    topics=20,
    docs=3000,
    rel_share=0.05,
    runs=12,
    orgs=6,
    run_length=100,
    depth=20,
    unpooled=2,
    quality=1.5,
    quality_spread=0.5,
    org_similarity=0.6,
    system_similarity=0.4,
    novelty=0.8,
    seed=2015,
)


def main(argv: list[str] | None = None) -> Path:
    """Generate and write the sample; print a one-line summary; return the directory."""
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else SAMPLE_DIR
    if out.exists():
        shutil.rmtree(out)
    c = synth.generate(**SAMPLE)
    c.write(out)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    unpooled = sorted(set(c.orgs["name"].astype(str)) - set(c.pooled))
    print(
        f"{out}: {len(c.runs)} run rows, {len(c.qrels)} pooled judgments, "
        f"{len(c.truth)} true judgments, unpooled {unpooled}, {size / 1024:.0f} KiB"
    )
    return out


if __name__ == "__main__":
    main()
