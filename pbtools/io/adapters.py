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
from pbtools.io.atomic import atomic_path

PathLike = str | os.PathLike

# --------------------------------------------------------------------------------------------
# writing TREC files and adapters
# --------------------------------------------------------------------------------------------


def write_lines(lines: pa.Array, path: PathLike) -> None:
    """Write one string per line through the atomic writer (``.gz`` → gzip)."""
    table = pa.table({"line": lines})
    opts = pcsv.WriteOptions(include_header=False, quoting_style="none")
    compression = "gzip" if str(path).endswith(".gz") else None
    with atomic_path(path) as tmp, pa.output_stream(str(tmp), compression=compression) as out:
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
    write_lines(lines, path)


def to_trec_qrels(qrels: pd.DataFrame, path: PathLike) -> None:
    """Write a qrels frame as a TREC qrels file (``qid 0 docno label``; ``.gz`` → gzip), in the
    frame's row order. Needs ``qid``, ``docno``, ``label`` (ir_measures names accepted)."""
    qrels = as_qrels(qrels)
    zero = pa.array(np.full(len(qrels), "0", dtype=object), type=pa.string())
    label = pc.cast(pa.array(qrels["label"].to_numpy()), pa.string())
    lines = pc.binary_join_element_wise(_str(qrels["qid"]), zero, _str(qrels["docno"]), label, " ")
    write_lines(lines, path)


def _ranx_kind(obj) -> str | None:
    """``"run"`` / ``"qrels"`` for a ranx ``Run`` / ``Qrels`` object, else None (duck-typed, so
    pbtools does not import ranx)."""
    cls = type(obj)
    if cls.__module__.startswith("ranx") and hasattr(obj, "to_dict"):
        return {"Run": "run", "Qrels": "qrels"}.get(cls.__name__)
    return None


def _empty_run() -> pd.DataFrame:
    return as_run(
        pd.DataFrame(
            {
                "name": pd.Series([], dtype="str"),
                "qid": pd.Series([], dtype="str"),
                "docno": pd.Series([], dtype="str"),
                "score": np.array([], dtype=np.float64),
            }
        )
    )


def from_ir_measures(data, name: str = "run", qrels: bool | None = None) -> pd.DataFrame:
    """An ir_measures (or ir_datasets) run or qrels → a pbtools run or qrels frame.

    Parameters
    ----------
    data : DataFrame, iterable of namedtuples, or dict
        ir_measures' forms: a DataFrame or an iterable of ``ScoredDoc`` / ``Qrel`` tuples with
        ``query_id``, ``doc_id`` and ``score`` (a run) or ``relevance`` (qrels); or the dict
        ``{query_id: {doc_id: score}}`` (read by :func:`from_ranx`). ir_datasets yields the
        same tuples, so ``from_ir_measures(dataset.qrels_iter())`` and
        ``from_ir_measures(dataset.scoreddocs_iter(), name=...)`` load its data (extra fields
        such as ``iteration`` are dropped). pbtools' and PyTerrier's column names (``qid``,
        ``docno``, ``label``) are accepted too. An empty input gives an empty frame.
    name : str
        The run's name when ``data`` has no ``name`` column.
    qrels : bool, optional
        Read as qrels (True) or a run (False); default: qrels when there is a relevance column
        and no score, and a run for an empty input.

    Returns
    -------
    pandas.DataFrame
        A run frame (trec order; several runs when ``data`` has a ``name`` column) or a qrels
        frame.

    Examples
    --------
    >>> from collections import namedtuple
    >>> ScoredDoc = namedtuple("ScoredDoc", ["query_id", "doc_id", "score"])
    >>> from_ir_measures([ScoredDoc("1", "d2", 1.0), ScoredDoc("1", "d1", 3.0)], name="bm25")
       name qid docno  score  rank
    0  bm25   1    d1    3.0     1
    1  bm25   1    d2    1.0     2
    >>> len(from_ir_measures(iter([])))
    0
    """
    if isinstance(data, dict):
        return from_ranx(data, name=name, qrels=bool(qrels))
    df = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    df = df.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    if df.empty and not {"qid", "docno"} <= set(df.columns):
        if qrels:
            return as_qrels(pd.DataFrame({"qid": [], "docno": [], "label": []}))
        return _empty_run()
    is_qrels = ("label" in df.columns and "score" not in df.columns) if qrels is None else qrels
    need = ("qid", "docno", "label" if is_qrels else "score")
    if not set(need) <= set(df.columns):
        raise ValueError(
            f"an ir_measures {'qrels' if is_qrels else 'run'} needs fields "
            f"query_id, doc_id and {'relevance' if is_qrels else 'score'}; got "
            f"{[str(c) for c in df.columns]}"
        )
    if is_qrels:
        return as_qrels(df[["qid", "docno", "label"]])
    df = df[[c for c in ("name", "qid", "docno", "score") if c in df.columns]]
    if "name" not in df.columns:
        df = df.assign(name=name)
    return as_run(df)


from_ir_datasets = from_ir_measures


def _runs_of(df: pd.DataFrame) -> list[str]:
    return [str(n) for n in pd.unique(df["name"].astype("str"))] if "name" in df.columns else []


def _split(df: pd.DataFrame, by_run: bool | None, what: str) -> list[tuple[str, pd.DataFrame]]:
    """[(name, frame)] for a run frame (one item unless several runs), refusing several runs
    when ``by_run=False``."""
    names = _runs_of(df)
    if len(names) > 1 and by_run is False:
        raise ValueError(
            f"the frame holds {len(names)} runs ({', '.join(names[:5])}"
            f"{', …' if len(names) > 5 else ''}); {what} would merge them into one run. "
            "Select one run, or pass by_run=True for a dict name → run"
        )
    if len(names) <= 1:
        return [(names[0] if names else "run", df)]
    key = df["name"].astype("str")
    return [(n, df[key == n]) for n in names]


def to_ir_measures(df: pd.DataFrame, by_run: bool | None = None):
    """A run or qrels frame → ir_measures' DataFrame form, one per run.

    Parameters
    ----------
    df : pandas.DataFrame
        A run frame (``qid``, ``docno``, ``score``; a PyTerrier result frame without ``name``
        is one run) or a qrels frame (``label``).
    by_run : bool, optional
        ir_measures scores one run at a time: a frame with several runs would be merged into
        one (documents of every run ranked together). ``None`` (default): one run → a frame,
        several → a dict ``name → frame``; ``True``: always the dict; ``False``: refuse
        several runs (``ValueError``).

    Returns
    -------
    pandas.DataFrame or dict of str to pandas.DataFrame
        Columns ``query_id``, ``doc_id``, ``score`` / ``relevance`` (plain ``str`` ids;
        ``name`` kept when present).

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"name": ["a", "a", "b"], "qid": "1", "docno": ["d1", "d2", "d1"],
    ...                      "score": [2.0, 1.0, 5.0]})
    >>> split = to_ir_measures(runs)
    >>> sorted(split), list(split["a"].columns)
    (['a', 'b'], ['name', 'query_id', 'doc_id', 'score'])
    """
    cols = {"qid": "query_id", "docno": "doc_id", "label": "relevance"}

    def one(part: pd.DataFrame) -> pd.DataFrame:
        keep = [c for c in ("name", "qid", "docno", "score", "label") if c in part.columns]
        out = part[keep].rename(columns=cols)
        for c in ("name", "query_id", "doc_id"):
            if c in out.columns:
                out[c] = out[c].astype("str")
        if "relevance" in out.columns:
            out["relevance"] = out["relevance"].astype(np.int64)
        return out.reset_index(drop=True)

    if "score" not in df.columns:  # qrels
        return one(df)
    parts = _split(df, by_run, "ir_measures")
    if by_run or len(parts) > 1:
        return {n: one(p) for n, p in parts}
    return one(parts[0][1])


def to_ranx(df: pd.DataFrame, by_run: bool | None = None):
    """A run (``qid``, ``docno``, ``score``) or qrels (``label``) frame → ranx's dict form
    ``{q_id: {doc_id: score}}`` (``ranx.Run(d, name=...)`` / ``ranx.Qrels(d)`` take it).

    ``by_run`` as in :func:`to_ir_measures`: several runs give ``{name: {q_id: {doc_id:
    score}}}`` (``[ranx.Run(d, name=n) for n, d in out.items()]`` for ``ranx.compare``).

    Examples
    --------
    >>> import pandas as pd
    >>> run = pd.DataFrame({"qid": ["1", "1"], "docno": ["d1", "d2"], "score": [2.0, 1.0]})
    >>> to_ranx(run)
    {'1': {'d1': 2.0, 'd2': 1.0}}
    """
    value = "score" if "score" in df.columns else "label"

    def one(part: pd.DataFrame) -> dict:
        out: dict[str, dict] = {}
        for q, d, v in zip(
            part["qid"].astype("str"),
            part["docno"].astype("str"),
            part[value].tolist(),
            strict=True,
        ):
            out.setdefault(q, {})[d] = v
        return out

    if value == "label":
        return one(df)
    parts = _split(df, by_run, "ranx")
    if by_run or len(parts) > 1:
        return {n: one(p) for n, p in parts}
    return one(parts[0][1])


def _nested_frame(data: dict, name: str) -> pd.DataFrame:
    rows = [(q, d, v) for q, docs in data.items() for d, v in docs.items()]
    q, d, v = (list(x) for x in zip(*rows, strict=True)) if rows else ([], [], [])
    return pd.DataFrame(
        {
            "name": pd.Series([name] * len(q), dtype="str"),
            "qid": pd.Series(q, dtype="str"),
            "docno": pd.Series(d, dtype="str"),
            "value": v,
        }
    )


def from_ranx(data, name: str | None = None, qrels: bool = False) -> pd.DataFrame:
    """ranx data → a pbtools run frame (trec order) or qrels frame.

    Parameters
    ----------
    data : ranx.Run, ranx.Qrels, dict, or a list of ranx.Run
        A ``Run`` (named by its ``name``) or ``Qrels`` object; the dict
        ``{q_id: {doc_id: score}}``; several runs as a list of ``Run`` objects, a dict
        ``{name: Run}`` or a dict ``{name: {q_id: {doc_id: score}}}``.
    name : str, optional
        The name of a single run (default: the ``Run``'s name, else ``"run"``).
    qrels : bool
        Read a plain dict as qrels (``Qrels`` objects are recognised by themselves).

    Returns
    -------
    pandas.DataFrame
        A run frame (one or several runs) or a qrels frame; empty for empty data.

    Examples
    --------
    >>> from_ranx({"1": {"d1": 0.5, "d2": 2.0}}, name="bm25")
       name qid docno  score  rank
    0  bm25   1    d2    2.0     1
    1  bm25   1    d1    0.5     2
    >>> from_ranx({"bm25": {"1": {"d1": 1.0}}, "dense": {"1": {"d2": 1.0}}})["name"].tolist()
    ['bm25', 'dense']
    """
    kind = _ranx_kind(data)
    if kind is not None:
        return from_ranx(
            dict(data.to_dict()),
            name=name or getattr(data, "name", None) or "run",
            qrels=kind == "qrels",
        )
    if isinstance(data, list | tuple):
        named = {}
        for i, r in enumerate(data):
            if _ranx_kind(r) != "run":
                raise ValueError(f"item {i} of the list is a {type(r).__name__}, not a ranx Run")
            key = r.name or f"run_{i + 1}"
            if key in named:
                raise ValueError(f"two runs are named {key!r}; give each ranx Run its own name")
            named[key] = dict(r.to_dict())
        data = named
    if not isinstance(data, dict):
        raise TypeError(f"from_ranx takes a ranx Run/Qrels, a dict or a list of Runs, not {data!r}")
    first = next(iter(data.values()), None)
    if _ranx_kind(first) == "run" or (
        isinstance(first, dict) and isinstance(next(iter(first.values()), None), dict)
    ):  # several runs: {name: Run} or {name: {q: {d: s}}}
        parts = [
            _nested_frame(dict(v.to_dict()) if _ranx_kind(v) else v, str(n))
            for n, v in data.items()
        ]
        df = pd.concat(parts, ignore_index=True)
    else:
        df = _nested_frame(data, name or "run")
    if qrels:
        return as_qrels(df.drop(columns="name").rename(columns={"value": "label"}))
    if df.empty:
        return _empty_run()
    df["value"] = df["value"].astype(np.float64)
    return as_run(df.rename(columns={"value": "score"}))
