"""Synthetic test collections with complete ground-truth relevance.

:func:`generate` draws, from one seed, a collection in which *every* (topic, document) pair has a
known relevance label, organisations that submit several correlated runs of varying quality, and
a depth-d pool over a chosen subset of the runs. Estimators of an unpooled run's score can then be
compared with its *true* score (the score on the complete judgments) instead of a proxy.

The model (all draws vectorised with ``numpy.random.default_rng(seed)``):

* documents ``0..docs-1`` are shared by all topics; on each topic each document is relevant with
  probability ``rel_share`` (at least one relevant document per topic);
* run j of organisation o has a quality ``q_j ~ quality + quality_spread · N(0, 1)`` (clipped at
  0) and scores every document of every topic as::

      score = q_j · rel + sqrt(g) · G + sqrt(1 − g) · (sqrt(s) · N_o + sqrt(1 − s) · E_j)

  with G a noise field shared by all systems (documents every system finds attractive;
  g = ``system_similarity``), N_o one shared by the organisation's runs (s = ``org_similarity``)
  and E_j the run's own noise, all standard normal per (topic, document);
* a run is its top ``run_length`` documents per topic by score (rounded to 4 decimals; trec_eval
  order: score descending, docno descending);
* ``unpooled`` runs (drawn at random) do not contribute to the pool; their share of the common
  field is g · (1 − ``novelty``), so ``novelty = 1`` makes them retrieve non-relevant documents
  the pooled runs never saw — the "novel system" whose score the pool underestimates;
* the qrels hold the true labels of the depth-``depth`` pool of the pooled runs; ``truth`` holds
  the labels of every relevant document and of every document any run retrieved (enough to
  score any run exactly, recall-based measures included).

Generation works over blocks of runs, so memory stays ~ block × topics × docs floats; 380 runs ×
50 topics × 2000 documents take a few seconds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pbtools.frames import LABEL_DTYPE, RANK_DTYPE, SCORE_DTYPE
from pbtools.io import atomic

__all__ = [
    "SynthParams",
    "SyntheticCollection",
    "generate",
    "join_lines",
    "string_array",
    "write_desc",
    "write_qrels",
]


@dataclass(frozen=True)
class SynthParams:
    """The parameters of :func:`generate` (see there), kept with the collection for reports."""

    topics: int = 50
    docs: int = 2000
    rel_share: float = 0.05
    runs: int = 40
    orgs: int = 20
    run_length: int = 1000
    depth: int = 100
    unpooled: int = 2
    quality: float = 1.5
    quality_spread: float = 0.5
    org_similarity: float = 0.6
    system_similarity: float = 0.4
    novelty: float = 0.5
    seed: int = 0


@dataclass
class SyntheticCollection:
    """A generated collection: frames in pbtools' schema plus the generating parameters.

    ``runs`` (run schema, trec order), ``qrels`` (pooled judgments only), ``truth`` (complete
    judgments: every relevant document and every retrieved one), ``orgs`` (``name``, ``org``),
    ``pooled`` (names of the pooled runs), ``quality`` (``name``, ``org``, ``quality``,
    ``pooled``: the latent run qualities), ``params`` (:class:`SynthParams`).
    """

    runs: pd.DataFrame
    qrels: pd.DataFrame
    truth: pd.DataFrame
    orgs: pd.DataFrame
    pooled: list[str]
    params: SynthParams
    quality: pd.DataFrame = field(repr=False, default=None)

    @property
    def depth(self) -> int:
        """The pool depth d."""
        return self.params.depth

    def write(self, path, *, gzip: bool = False, sep: str = " ") -> Path:
        """Write the collection in the TRACK layout and return the directory.

        ``path/QRels/qrels`` (pooled judgments), ``path/Runs/input.<name>`` (one plain-text TREC
        run per run, ``.gz`` with ``gzip=True``), ``path/desc.xml`` (tag → organization) and
        ``path/truth/qrels`` (complete judgments). Lines: ``qid 0 docno label`` and
        ``qid Q0 docno rank score name`` (rank 1-based, score with 4 decimals), fields
        separated by ``sep`` (one space, or ``"\\t"`` for a tab-separated track).

        The track is one set, all or nothing (:func:`pbtools.io.results.write_directory`): it
        is built beside ``path`` and swapped in whole, with a ``manifest.json`` written last.
        ``path`` may not exist, be empty or hold a track written this way (replaced);
        anything else is refused, and on any failure ``path`` is left as it was. Missing parent
        directories are created (``ROOT/TREC-X/track`` in one call).
        """
        from pbtools.io.results import write_directory

        if sep not in (" ", "\t"):
            raise ValueError(f"sep must be ' ' or '\\t', not {sep!r}")
        params = {"writer": "pbtools.synth", "gzip": bool(gzip), "sep": sep, **asdict(self.params)}
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        return write_directory(path, lambda root: self._write_files(root, gzip, sep), params=params)

    def _write_files(self, root: Path, gzip: bool, sep: str) -> None:
        """The track's files under ``root`` (an empty directory)."""
        import gzip as gz

        for sub in ("QRels", "Runs", "truth"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        write_qrels(self.qrels, root / "QRels" / "qrels", sep=sep)
        write_qrels(self.truth, root / "truth" / "qrels", sep=sep)
        text, ends = _run_lines(self.runs, sep=sep)  # every line at once, then one slice per run
        name_codes = self.runs["name"].cat.codes.to_numpy()
        bounds = np.flatnonzero(np.r_[True, name_codes[1:] != name_codes[:-1], True])
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):  # one file per run
            name = str(self.runs["name"].iloc[a])
            lo = int(ends[a - 1]) if a else 0
            chunk = text[lo : int(ends[b - 1])]
            target = root / "Runs" / f"input.{name}"
            if gzip:
                atomic.write_bytes(f"{target}.gz", gz.compress(chunk))
            else:
                atomic.write_bytes(target, chunk)
        write_desc(self.orgs, root / "desc.xml")


def _cat(values: np.ndarray, labels: list[str]) -> pd.Categorical:
    """Dictionary column from codes into ``labels`` (already sorted), codes in pandas' dtype."""
    n = len(labels)
    dt = np.int8 if n < 128 else np.int16 if n < 32768 else np.int32
    return pd.Categorical.from_codes(
        np.asarray(values).astype(dt, copy=False),
        dtype=pd.CategoricalDtype(pd.Index(labels, dtype="str")),
    )


def string_array(col: pd.Series) -> pa.Array:
    """A column as an Arrow string array (ids decoded; numbers in their shortest text that
    reads back as the same value, NaN as ``nan``)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = pa.array(col.cat.categories.astype(str).to_numpy(dtype=object), type=pa.string())
        return cats.take(pa.array(col.cat.codes.to_numpy()))
    return pc.cast(pa.array(col.to_numpy()), pa.string())


def join_lines(columns: list, sep: str = " ") -> tuple[bytes, np.ndarray]:
    """Join columns (Arrow string arrays or scalars) into newline-terminated lines.

    Returns the text and the end offset of every line (vectorised with Arrow).
    """
    joined = pc.binary_join_element_wise(*columns, sep)
    joined = pc.binary_join_element_wise(joined, pa.scalar("\n"), "")
    if isinstance(joined, pa.ChunkedArray):
        joined = joined.combine_chunks()
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int32)[
        joined.offset : joined.offset + len(joined) + 1
    ]
    data = joined.buffers()[2].to_pybytes()[offsets[0] : offsets[-1]]
    return data, (offsets[1:] - offsets[0]).astype(np.int64)


def write_qrels(qrels: pd.DataFrame, path: Path, sep: str = " ") -> None:
    """Write ``qid 0 docno label`` lines in the frame's row order, fields separated by ``sep``."""
    if len(qrels) == 0:
        atomic.write_bytes(path, b"")
        return
    text, _ = join_lines(
        [
            string_array(qrels["qid"]),
            pa.scalar("0"),
            string_array(qrels["docno"]),
            string_array(qrels["label"]),
        ],
        sep,
    )
    atomic.write_bytes(path, text)


def write_desc(orgs: pd.DataFrame, path: Path) -> None:
    """Write a TREC ``desc.xml`` (``<set><runs><tag/><organization/></runs>...``) from the
    ``name``, ``org`` columns of ``orgs``."""
    lines = ["<set>"]
    for name, org in zip(orgs["name"].astype(str), orgs["org"].astype(str), strict=True):
        lines += [
            "    <runs>",
            f"        <tag>{escape(name)}</tag>",
            f"        <organization>{escape(org)}</organization>",
            "    </runs>",
        ]
    lines.append("</set>")
    atomic.write_text(path, "\n".join(lines) + "\n")


def _run_lines(runs: pd.DataFrame, sep: str = " ") -> tuple[bytes, np.ndarray]:
    """TREC run lines ``qid Q0 docno rank score name`` (score: 4 decimals) for every row."""
    if len(runs) == 0:
        return b"", np.zeros(0, dtype=np.int64)
    score = runs["score"].to_numpy()
    # the scores hold 4 decimals already; Arrow's shortest round-trip text of each double
    # reads back as the same double
    return join_lines(
        [
            string_array(runs["qid"]),
            pa.scalar("Q0"),
            string_array(runs["docno"]),
            string_array(runs["rank"]),
            pc.cast(pa.array(score), pa.string()),
            string_array(runs["name"]),
        ],
        sep,
    )


def generate(
    topics: int = 50,
    docs: int = 2000,
    rel_share: float = 0.05,
    runs: int = 40,
    orgs: int = 20,
    run_length: int = 1000,
    depth: int = 100,
    *,
    unpooled: int = 2,
    quality: float = 1.5,
    quality_spread: float = 0.5,
    org_similarity: float = 0.6,
    system_similarity: float = 0.4,
    novelty: float = 0.5,
    seed: int = 0,
) -> SyntheticCollection:
    """Generate a synthetic collection with complete relevance (see the module docstring).

    The same arguments always give the same collection.

    Parameters
    ----------
    topics : int
    docs : int
        Documents per topic (one shared document set).
    rel_share : float
        Share of relevant documents.
    runs, orgs : int
        ``runs`` spread as evenly as possible over ``orgs`` organisations.
    run_length : int
        Documents per run and topic (≤ ``docs``).
    depth : int
        Pool depth d.
    unpooled : int
        How many runs (drawn at random) do not contribute to the pool.
    quality, quality_spread : float
        Mean and spread of run quality (signal weight).
    org_similarity : float
        (0–1) how much an organisation's runs share their noise.
    system_similarity : float
        (0–1) noise shared by all systems.
    novelty : float
        (0–1) how much less of it the unpooled runs share.
    seed : int

    Returns
    -------
    SyntheticCollection
        Ids: qids ``"001"…``, docnos ``"d0000"…`` (zero padded, so docno order is document
        order), run names ``"o01r1"`` (org ``"o01"``, run 1).

    Examples
    --------
    >>> c = generate(topics=3, docs=50, runs=4, orgs=2, run_length=10, depth=5, seed=7)
    >>> len(c.runs), c.pooled, c.depth  # 4 runs × 3 topics × 10 documents
    (120, ['o01r1', 'o01r2'], 5)
    >>> c.runs.head(2)
        name  qid  docno   score  rank
    0  o01r1  001  d0023  2.4599     1
    1  o01r1  001  d0047  2.0542     2
    >>> generate(topics=3, docs=50, runs=4, orgs=2, run_length=10, depth=5, seed=7).runs.equals(
    ...     c.runs)
    True
    """
    p = SynthParams(
        topics,
        docs,
        rel_share,
        runs,
        orgs,
        run_length,
        depth,
        unpooled,
        quality,
        quality_spread,
        org_similarity,
        system_similarity,
        novelty,
        seed,
    )
    if not (0 < run_length <= docs):
        raise ValueError(f"run_length must be in 1..docs ({docs}), got {run_length}")
    if not (1 <= orgs <= runs):
        raise ValueError(f"need 1 <= orgs <= runs, got orgs={orgs}, runs={runs}")
    if not (0 <= unpooled < runs):
        raise ValueError(f"need 0 <= unpooled < runs, got {unpooled}")
    rng = np.random.default_rng(seed)
    rel = rng.random((topics, docs)) < rel_share
    rel[np.arange(topics), rng.integers(0, docs, topics)] = True  # >= 1 relevant per topic
    org_of = np.repeat(np.arange(orgs), np.diff(np.linspace(0, runs, orgs + 1).round().astype(int)))
    q = np.clip(quality + quality_spread * rng.standard_normal(runs), 0.0, None)
    is_unpooled = np.zeros(runs, dtype=bool)
    is_unpooled[rng.choice(runs, unpooled, replace=False)] = True
    g = float(system_similarity)
    s = float(org_similarity)
    common = rng.standard_normal((topics, docs), dtype=np.float32)

    # runs are generated organisation by organisation (org noise shared inside the block)
    docs_out = np.empty((runs, topics, run_length), dtype=np.int32)
    score_out = np.empty((runs, topics, run_length), dtype=np.float64)
    first = np.searchsorted(org_of, np.arange(orgs))
    last = np.r_[first[1:], runs]
    signal = rel.astype(np.float32)
    for o in range(orgs):  # a handful of organisations; everything inside is vectorised
        members = np.arange(first[o], last[o])
        org_noise = rng.standard_normal((topics, docs), dtype=np.float32)
        score = rng.standard_normal((len(members), topics, docs), dtype=np.float32)
        gj = np.where(is_unpooled[members], g * (1.0 - novelty), g)
        for i, m in enumerate(members):  # in place, float32: no block-sized temporaries
            w = np.float32(np.sqrt(1.0 - gj[i]))
            score[i] *= w * np.float32(np.sqrt(1.0 - s))
            score[i] += (w * np.float32(np.sqrt(s))) * org_noise
            score[i] += np.float32(np.sqrt(gj[i])) * common
            score[i] += np.float32(q[m]) * signal
        top = np.argpartition(-score, run_length - 1, axis=2)[:, :, :run_length]
        # scores are rounded to 4 decimals (what the run files hold), then put in trec order
        top_score = np.round(np.take_along_axis(score, top, axis=2).astype(np.float64), 4)
        order = np.lexsort((-top, -top_score), axis=2)  # score desc, then docno desc
        docs_out[members] = np.take_along_axis(top, order, axis=2)
        score_out[members] = np.take_along_axis(top_score, order, axis=2)

    qids = [f"{t + 1:03d}" for t in range(topics)]
    width = max(4, len(str(docs - 1)))
    docnos = [f"d{i:0{width}d}" for i in range(docs)]
    rank_in_org = np.arange(runs) - first[org_of]
    owidth, rwidth = max(2, len(str(orgs))), len(str(int(rank_in_org.max()) + 1))
    org_names = [f"o{o + 1:0{owidth}d}" for o in range(orgs)]
    names = [f"{org_names[org_of[j]]}r{rank_in_org[j] + 1:0{rwidth}d}" for j in range(runs)]
    assert names == sorted(names)  # zero padding: generation order is name (trec) order
    run_idx = np.repeat(np.arange(runs, dtype=np.int32), topics * run_length)
    topic_idx = np.tile(np.repeat(np.arange(topics, dtype=np.int32), run_length), runs)
    doc_idx = docs_out.reshape(-1)
    rank = np.tile(np.arange(1, run_length + 1, dtype=RANK_DTYPE), runs * topics)
    run_frame = pd.DataFrame(
        {
            "name": _cat(run_idx, names),
            "qid": _cat(topic_idx, qids),
            "docno": _cat(doc_idx, docnos),
            "score": score_out.reshape(-1).astype(SCORE_DTYPE),
            "rank": rank,
        },
        copy=False,
    )

    # truth: every relevant document and every retrieved one; qrels: the pooled top-d documents
    retrieved = np.zeros((topics, docs), dtype=bool)
    retrieved[topic_idx, doc_idx] = True
    pooled_mask = np.zeros((topics, docs), dtype=bool)
    in_pool = ~is_unpooled[run_idx] & (rank <= depth)
    pooled_mask[topic_idx[in_pool], doc_idx[in_pool]] = True
    truth = _qrels_from_mask(rel | retrieved, rel, qids, docnos)
    qrels = _qrels_from_mask(pooled_mask, rel, qids, docnos)
    org_frame = pd.DataFrame({"name": _cat(np.arange(runs), names), "org": _cat(org_of, org_names)})
    pooled = [names[j] for j in range(runs) if not is_unpooled[j]]
    quality_frame = pd.DataFrame(
        {
            "name": _cat(np.arange(runs), names),
            "org": _cat(org_of, org_names),
            "quality": q,
            "pooled": ~is_unpooled,
        }
    )
    return SyntheticCollection(run_frame, qrels, truth, org_frame, pooled, p, quality_frame)


def _qrels_from_mask(
    mask: np.ndarray,
    rel: np.ndarray,
    qids: list[str],
    docnos: list[str],
) -> pd.DataFrame:
    """Qrels rows for the (topic, doc) cells of ``mask``, labelled 1 (relevant) or 0."""
    t, d = np.nonzero(mask)
    return pd.DataFrame(
        {
            "qid": _cat(t.astype(np.int32), qids),
            "docno": _cat(d.astype(np.int32), docnos),
            "label": rel[t, d].astype(LABEL_DTYPE),
        }
    )
