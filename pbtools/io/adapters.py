"""Writing TREC files, and adapters to ir_measures, ranx and ir_datasets."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from pbtools.frames import as_qrels, as_run

PathLike = str | os.PathLike

# --------------------------------------------------------------------------------------------
# writing TREC files and adapters
# --------------------------------------------------------------------------------------------


def _write_lines(lines: pa.Array, path: PathLike) -> None:
    table = pa.table({"line": lines})
    opts = pcsv.WriteOptions(include_header=False, quoting_style="none")
    compression = "gzip" if str(path).endswith(".gz") else None
    with pa.output_stream(str(path), compression=compression) as out:
        pcsv.write_csv(table, out, write_options=opts)


def _str(s: pd.Series) -> pa.Array:
    return pa.array(s.astype("str").to_numpy(dtype=object), type=pa.string())


def to_trec(run: pd.DataFrame, path: PathLike) -> None:
    """Write a run frame as TREC run text (``qid Q0 docno rank score name``).

    ``path`` a file (``.gz`` → gzip): every run of the frame goes into it (:func:`read_run`
    wants one run per file, so give it one run, or read several back with ``lenient=True``);
    ``path`` an existing directory: one ``input.<name>`` file per run (read back with
    :func:`read_runs`). Needs ``qid``, ``docno``, ``score``; ``name`` defaults to ``run``. Rows
    are written in trec order with ranks 1..n, scores with the shortest text that reads back to
    the same float64, so reading the file gives the frame's values exactly.
    """
    run = as_run(run)
    if Path(path).is_dir():
        for name in run["name"].cat.categories:
            one = run[run["name"] == name]
            if len(one):
                to_trec(one, Path(path) / f"input.{name}")
        return
    score = pc.cast(pa.array(run["score"].to_numpy(dtype=np.float64)), pa.string())
    rank = pc.cast(pa.array(run["rank"].to_numpy()), pa.string())
    q0 = pa.array(np.full(len(run), "Q0", dtype=object), type=pa.string())
    lines = pc.binary_join_element_wise(
        _str(run["qid"]), q0, _str(run["docno"]), rank, score, _str(run["name"]), " "
    )
    _write_lines(lines, path)


def to_trec_qrels(qrels: pd.DataFrame, path: PathLike) -> None:
    """Write a qrels frame as a TREC qrels file (``qid 0 docno label``; ``.gz`` → gzip), in the
    frame's row order. Needs ``qid``, ``docno``, ``label`` (ir_measures names accepted)."""
    qrels = as_qrels(qrels)
    zero = pa.array(np.full(len(qrels), "0", dtype=object), type=pa.string())
    label = pc.cast(pa.array(qrels["label"].to_numpy()), pa.string())
    lines = pc.binary_join_element_wise(_str(qrels["qid"]), zero, _str(qrels["docno"]), label, " ")
    _write_lines(lines, path)


def from_ir_measures(data, name: str = "run") -> pd.DataFrame:
    """An ir_measures run or qrels (DataFrame or iterable of ``ScoredDoc``/``Qrel`` tuples with
    ``query_id``, ``doc_id`` and ``score`` or ``relevance``) → a pbtools run frame (trec order,
    ``name`` column filled with ``name`` unless present) or qrels frame.

    ir_datasets yields the same tuples, so ``from_ir_measures(dataset.qrels_iter())`` and
    ``from_ir_measures(dataset.scoreddocs_iter(), name=...)`` load its data (extra fields such as
    ``iteration`` are dropped); :func:`from_ir_datasets` is the same function."""
    df = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    df = df.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    if "score" in df.columns:
        df = df[[c for c in ("name", "qid", "docno", "score") if c in df.columns]]
        if "name" not in df.columns:
            df = df.assign(name=name)
        return as_run(df)
    return as_qrels(df[["qid", "docno", "label"]])


from_ir_datasets = from_ir_measures


def to_ir_measures(df: pd.DataFrame) -> pd.DataFrame:
    """A run frame (``qid``, ``docno``, ``score``) or qrels frame (``label``) → ir_measures'
    columns ``query_id``, ``doc_id``, ``score`` / ``relevance`` (plain ``str`` ids; ``name``
    kept when present)."""
    cols = {"qid": "query_id", "docno": "doc_id", "label": "relevance"}
    keep = [c for c in ("name", "qid", "docno", "score", "label") if c in df.columns]
    out = df[keep].rename(columns=cols)
    for c in ("name", "query_id", "doc_id"):
        if c in out.columns:
            out[c] = out[c].astype("str")
    if "relevance" in out.columns:
        out["relevance"] = out["relevance"].astype(np.int64)
    return out.reset_index(drop=True)


def to_ranx(df: pd.DataFrame) -> dict[str, dict[str, float | int]]:
    """A single run (``qid``, ``docno``, ``score``) or qrels (``label``) frame → ranx's dict
    form ``{q_id: {doc_id: score}}``. Raises ``ValueError`` for several runs."""
    if "name" in df.columns and df["name"].nunique() > 1:
        raise ValueError("to_ranx takes one run; select it first")
    value = "score" if "score" in df.columns else "label"
    out: dict[str, dict] = {}
    for q, d, v in zip(
        df["qid"].astype("str"), df["docno"].astype("str"), df[value].tolist(), strict=True
    ):
        out.setdefault(q, {})[d] = v
    return out


def from_ranx(
    data: dict[str, dict[str, float]], name: str = "run", qrels: bool = False
) -> pd.DataFrame:
    """ranx's ``{q_id: {doc_id: score}}`` → a run frame named ``name`` (trec order), or a
    qrels frame when ``qrels=True``."""
    rows = [(q, d, v) for q, docs in data.items() for d, v in docs.items()]
    q, d, v = (list(x) for x in zip(*rows, strict=True)) if rows else ([], [], [])
    if qrels:
        return as_qrels(
            pd.DataFrame(
                {"qid": pd.Series(q, dtype="str"), "docno": pd.Series(d, dtype="str"), "label": v}
            )
        )
    return as_run(
        pd.DataFrame(
            {
                "name": name,
                "qid": pd.Series(q, dtype="str"),
                "docno": pd.Series(d, dtype="str"),
                "score": np.asarray(v, dtype=np.float64),
            }
        )
    )
