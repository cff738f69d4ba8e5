"""Parquet round trips: dtypes, dictionaries, order, attrs and metadata come back exactly."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from pbtools.frames import encode
from pbtools.io.repairs import AttrsFrame

PathLike = str | os.PathLike

# --------------------------------------------------------------------------------------------
# Parquet
# --------------------------------------------------------------------------------------------

_META_KEY = b"pbtools"


def _to_json(value, where: str = "attrs"):
    """A JSON-ready copy of an ``attrs`` value; ``where`` names it in the error raised for a
    value JSON cannot hold."""
    if isinstance(value, pd.DataFrame):
        return {
            "__dataframe__": {
                "columns": [str(c) for c in value.columns],
                "dtypes": [str(t) for t in value.dtypes],
                "data": [
                    [
                        None if pd.isna(v) else (v.item() if hasattr(v, "item") else v)
                        for v in value[c].tolist()
                    ]
                    for c in value.columns
                ],
            }
        }
    if isinstance(value, dict):
        return {str(k): _to_json(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_json(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(
        f"write_parquet cannot store {where} (a {type(value).__name__}): attrs and metadata "
        "hold JSON values (str, numbers, lists, dicts) or DataFrames"
    )


def _from_json(value):
    if isinstance(value, dict):
        if set(value) == {"__dataframe__"}:
            d = value["__dataframe__"]
            return AttrsFrame(
                {
                    c: pd.Series(v, dtype=t)
                    if t != "category"
                    else encode(pd.Series(v, dtype="str"))
                    for c, t, v in zip(d["columns"], d["dtypes"], d["data"], strict=True)
                }
            )
        return {k: _from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value


def write_parquet(df: pd.DataFrame, path: PathLike, metadata: dict | None = None) -> None:
    """Write a frame to Parquet so that :func:`read_parquet` gives it back exactly.

    Dtypes (categorical ids with their dictionary, nullable ``Int16`` labels, int32 ranks,
    Arrow-backed strings), row order, index and values round-trip. ``df.attrs`` (JSON values or
    DataFrames such as ``attrs["repairs"]``) and ``metadata`` (a JSON-serialisable dict, read
    back as ``attrs["metadata"]``) are stored as JSON in the Parquet schema metadata.
    """
    plain = df.copy(deep=False)
    plain.attrs = {}  # stored below, as pbtools JSON (pyarrow would try and warn)
    table = pa.Table.from_pandas(plain, preserve_index=None)
    cats = {}
    for c in df.columns:
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            categories = df[c].cat.categories
            used = df[c].cat.codes.to_numpy()
            complete = (
                categories.is_monotonic_increasing
                and categories.dtype == "str"
                and len(np.unique(used[used >= 0])) == len(categories)
            )
            cats[str(c)] = (
                None
                if complete
                else {
                    "categories": [str(x) for x in categories],
                    "ordered": bool(df[c].cat.ordered),
                    "str": categories.dtype == "str",
                }
            )
    attrs = {k: v for k, v in df.attrs.items() if k != "metadata"}
    meta = {
        "attrs": _to_json(attrs),
        "metadata": _to_json(metadata if metadata is not None else df.attrs.get("metadata")),
        "categoricals": cats,
    }
    schema_meta = dict(table.schema.metadata or {})
    schema_meta[_META_KEY] = json.dumps(meta).encode()
    import pyarrow.parquet as pq  # on first use: `import pbtools` stays cheap (~20 ms)

    pq.write_table(table.replace_schema_metadata(schema_meta), str(path))


def read_parquet(path: PathLike) -> pd.DataFrame:
    """Read a Parquet file written by :func:`write_parquet` (or any Parquet file).

    Categorical columns come back with their exact dictionary (sorted Arrow-backed ``str``
    categories for pbtools ids); ``attrs`` are restored and the ``metadata`` given to
    :func:`write_parquet` is ``attrs["metadata"]``.
    """
    import pyarrow.parquet as pq

    table = pq.read_table(str(path))
    raw = (table.schema.metadata or {}).get(_META_KEY)
    df = table.to_pandas()
    df.attrs.clear()
    if raw is None:
        return df
    meta = json.loads(raw)
    for c, spec in meta.get("categoricals", {}).items():
        if c not in df.columns:
            continue
        if spec is None:
            df[c] = encode(df[c].astype("str"))
        else:
            values = df[c].astype("str" if spec["str"] else object)
            cats = pd.Index(spec["categories"], dtype="str" if spec["str"] else object)
            df[c] = pd.Categorical(values, categories=cats, ordered=spec["ordered"])
    df.attrs.update(_from_json(meta.get("attrs") or {}))
    if meta.get("metadata") is not None:
        df.attrs["metadata"] = _from_json(meta["metadata"])
    return df
