"""Loading a collection the way an experiment (or a protocol preset) says: ``load``.

PROTOCOL-lipani2015 items 1-2 decide how runs are read under ``protocol="lipani2015"``: run
identity by file with the organisation looked up by the file's tag, float32 scores.
"""

from __future__ import annotations

import pandas as pd

from pbtools.corrections.choices import resolve

__all__ = ["load", "file_tag", "orgs_by_tag"]


def load(
    collection_or_frames,
    *,
    protocol: str | None = None,
    float32: bool | None = None,
    run_id: str | None = None,
):
    """``(runs, qrels, orgs)`` from a track directory, an io ``Collection`` or a 3-tuple.

    A path is read with :func:`pbtools.io.read_collection` (``lenient=True``) with the
    protocol's ``float32`` and ``run_id`` choices (PROTOCOL items 1-2).
    """
    if isinstance(collection_or_frames, tuple):
        return collection_or_frames
    if hasattr(collection_or_frames, "runs") and hasattr(collection_or_frames, "qrels"):
        c = collection_or_frames
        return c.runs, c.qrels, c.orgs
    import warnings

    from pbtools.frames import TrecFormatWarning
    from pbtools.io import read_collection

    opts = resolve(protocol, float32=float32, run_id=run_id)
    rid = str(opts["run_id"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrecFormatWarning)
        c = read_collection(
            collection_or_frames,
            lenient=True,
            float32=bool(opts["float32"]),
            run_id="file" if rid == "lipani2015" else rid,
        )
    c.runs.attrs = {}
    c.qrels.attrs = {}
    orgs = c.orgs
    if rid == "lipani2015":
        orgs = orgs_by_tag(c.files, c.orgs)
    return c.runs, c.qrels, orgs


def file_tag(path) -> str | None:
    """Column 6 of the first non-blank line of a run file (gzip-aware)."""
    import gzip

    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    with gzip.open(path, "rt") if gz else open(path) as fh:
        for line in fh:
            f = line.split()
            if f:
                return f[5] if len(f) >= 6 else None
    return None


def orgs_by_tag(files: pd.DataFrame, orgs: pd.DataFrame) -> pd.DataFrame:
    """PROTOCOL item 1: runs named by file, organisation looked up by their tag.

    A file whose tag ``desc.xml`` does not list (TREC-2: ``input.prc1``/``input.prc2``, tag
    ``prceo1``) keeps its own run in the pool but gets no organisation, so it is never evaluated.
    """
    org_of = dict(zip(orgs["name"].astype(str), orgs["org"].astype(str), strict=True))
    rows = []
    for f, name in zip(files["file"], files["name"].astype(str), strict=True):
        tag = file_tag(f)
        if tag in org_of:
            rows.append((name, org_of[tag]))
    return pd.DataFrame(rows, columns=["name", "org"]).drop_duplicates("name")
