"""Loading a collection the way an experiment (or a protocol preset) says: ``load``.

PROTOCOL-lipani2015 items 1-2 decide how runs are read under ``protocol="lipani2015"``: run
identity by file with the organisation looked up by the file's tag, float32 scores. Reading is
lenient (the preset reads dirty TREC archives as the reference tool does), and every repair is
reported: one :class:`~pbtools.frames.TrecFormatWarning` per repaired file, never silenced.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pbtools.presets import resolve

__all__ = ["SAMPLE", "collection_name", "load", "orgs_by_tag"]

#: the bundled sample collection (TRACK layout), shipped inside the package
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def load(
    collection_or_frames,
    *,
    protocol: str | None = None,
    float32: bool | None = None,
    run_id: str | None = None,
    desc=None,
):
    """``(runs, qrels, orgs)`` from a track directory, ``[QRELS, RUNS...]``, an io
    ``Collection`` or a 3-tuple.

    A track directory (or a list ``[QRELS, RUNS...]``, ``desc`` naming the desc.xml) is read
    with :func:`pbtools.io.load_collection` (``lenient=True``; every repair is issued as a
    :class:`~pbtools.frames.TrecFormatWarning`) with the protocol's ``float32`` and ``run_id``
    choices (PROTOCOL items 1-2).
    """
    if isinstance(collection_or_frames, tuple):
        return collection_or_frames
    if hasattr(collection_or_frames, "runs") and hasattr(collection_or_frames, "qrels"):
        c = collection_or_frames
        return c.runs, c.qrels, c.orgs
    from pbtools.io import load_collection

    opts = resolve(protocol, float32=float32, run_id=run_id)
    rid = str(opts["run_id"])
    source = collection_or_frames
    paths = list(source) if isinstance(source, list | tuple) else [source]
    c = load_collection(
        paths,
        desc=desc,
        lenient=True,
        float32=bool(opts["float32"]),
        run_id="file" if rid == "lipani2015" else rid,
    )
    c.runs.attrs = {}
    c.qrels.attrs = {}
    orgs = c.orgs
    if rid == "lipani2015" and "one_org_per_run" not in orgs.attrs:  # else: each file its own
        orgs = orgs_by_tag(c.files, c.orgs)
    return c.runs, c.qrels, orgs


def orgs_by_tag(files: pd.DataFrame, orgs: pd.DataFrame) -> pd.DataFrame:
    """PROTOCOL item 1: runs named by file, organisation looked up by their tag.

    ``files``: ``file``, ``name``, ``tag`` (the tag of the file's first line; ``Collection.files``).
    A file whose tag ``desc.xml`` does not list (TREC-2: ``input.prc1``/``input.prc2``, tag
    ``prceo1``) keeps its own run in the pool but gets no organisation, so it is never evaluated.

    Examples
    --------
    >>> files = pd.DataFrame({"file": ["input.a1", "input.a2", "input.b"],
    ...                       "name": ["a1", "a2", "b"], "tag": ["a", "a", "b"]})
    >>> orgs = pd.DataFrame({"name": ["b"], "org": ["B"]})
    >>> orgs_by_tag(files, orgs)
      name org
    0    b   B
    """
    org_of = dict(zip(orgs["name"].astype(str), orgs["org"].astype(str), strict=True))
    pairs = pd.DataFrame({"name": files["name"].astype(str), "tag": files["tag"].astype(str)})
    pairs = pairs[pairs["tag"].isin(org_of)]
    out = pd.DataFrame({"name": pairs["name"], "org": pairs["tag"].map(org_of)})
    return out.drop_duplicates("name").reset_index(drop=True)


def collection_name(source) -> str:
    """The default name of ``source`` in the reports (:func:`pbtools.io.track_name`; the
    bundled sample is found in the package's data folder: ``sample``).

    >>> collection_name(SAMPLE), collection_name(None)
    ('sample', 'sample')
    """
    from pbtools.io import track_name

    if source is None:
        source = SAMPLE
    if isinstance(source, tuple):
        return "collection"
    paths = list(source) if isinstance(source, list) else [source]
    same = len(paths) == 1 and Path(paths[0]).resolve() == SAMPLE.resolve()
    return track_name(paths, SAMPLE.parent if same else None)
