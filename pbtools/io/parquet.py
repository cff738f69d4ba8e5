"""Parquet round trips: dtypes, dictionaries, order, attrs and metadata come back exactly.

Integrity: files are written atomically (:mod:`pbtools.io.atomic`) with a CRC-32 on every data
page, and read with the checksums verified. pbtools' own metadata (format version, row count,
each column's dtype, the categories of dictionary columns) carries a SHA-256 of itself and of
pandas' schema metadata, and is checked on read: a truncated file, a flipped byte in a page or
in the metadata, a category list that no longer covers the values, is refused
(:class:`CorruptFileError`, naming the file) instead of read back as other values.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from pbtools.errors import InputError
from pbtools.frames import encode
from pbtools.io.atomic import atomic_path
from pbtools.io.repairs import AttrsFrame

PathLike = str | os.PathLike

# --------------------------------------------------------------------------------------------
# Parquet
# --------------------------------------------------------------------------------------------

_META_KEY = b"pbtools"
#: the SHA-256 of pbtools' and pandas' schema metadata, checked on read
_SHA_KEY = b"pbtools.sha256"
#: the version of pbtools' Parquet metadata (absent in files written before it)
PARQUET_FORMAT = 1


class CorruptFileError(InputError):
    """A Parquet file that fails its checks on read (exit status 2): names the file."""


def _meta_digest(schema_meta: dict) -> str:
    import hashlib

    h = hashlib.sha256()
    for key in (b"pandas", _META_KEY):
        h.update(key + b"\0" + schema_meta.get(key, b"") + b"\0")
    return h.hexdigest()


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


#: rows converted to Arrow and written at once by :func:`write_parquet`: one row group (pyarrow's
#: default size)
ROWS = 1 << 20


def write_parquet(df: pd.DataFrame, path: PathLike, metadata: dict | None = None) -> None:
    """Write a frame to Parquet so that :func:`read_parquet` gives it back exactly.

    Dtypes (categorical ids with their dictionary, nullable ``Int16`` labels, int32 ranks,
    Arrow-backed strings), row order, index and values round-trip. ``df.attrs`` (JSON values or
    DataFrames such as ``attrs["repairs"]``) and ``metadata`` (a JSON-serialisable dict, read
    back as ``attrs["metadata"]``) are stored as JSON in the Parquet schema metadata.
    """
    plain = df.copy(deep=False)
    plain.attrs = {}  # stored below, as pbtools JSON (pyarrow would try and warn)
    # converted to Arrow and written a row group at a time (:data:`ROWS`): a table of runs²
    # pairs is never held twice (issue 25 item 4); the first group's schema for all
    table = pa.Table.from_pandas(plain.iloc[:ROWS], preserve_index=None)
    cats = {}
    for c in df.columns:
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            categories = df[c].cat.categories
            complete = (
                categories.is_monotonic_increasing
                and categories.dtype == "str"
                and _all_used(df[c].array.codes, len(categories))
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
        "format": PARQUET_FORMAT,
        "rows": len(df),
        "columns": {f.name: _type_key(f.type) for f in table.schema},
    }
    schema_meta = dict(table.schema.metadata or {})
    if len(df) > ROWS:  # pandas' metadata of the whole frame's index, not of the first group's
        schema_meta[b"pandas"] = _whole_index(schema_meta[b"pandas"], plain.index)
    schema_meta[_META_KEY] = json.dumps(meta).encode()
    schema_meta[_SHA_KEY] = _meta_digest(schema_meta).encode()
    import pyarrow.parquet as pq  # on first use: `import pbtools` stays cheap (~20 ms)

    schema = table.schema.with_metadata(schema_meta)
    with (
        atomic_path(path) as tmp,
        pq.ParquetWriter(str(tmp), schema, write_page_checksum=True) as writer,
    ):
        writer.write_table(table.replace_schema_metadata(schema_meta))
        del table
        for start in range(ROWS, len(plain), ROWS):
            part = pa.Table.from_pandas(
                plain.iloc[start : start + ROWS], schema=schema, preserve_index=None
            )
            writer.write_table(part.replace_schema_metadata(schema_meta))


def _all_used(codes: np.ndarray, n: int) -> bool:
    """Whether ``codes`` use each of ``n`` categories, a block at a time (no copy of them)."""
    seen = np.zeros(n, dtype=bool)
    for start in range(0, len(codes), ROWS):
        block = codes[start : start + ROWS]
        seen[block[block >= 0]] = True
    return bool(seen.all())


def _whole_index(pandas_meta: bytes, index: pd.Index) -> bytes:
    """pandas' metadata of a first row group, its range index made the whole frame's."""
    meta = json.loads(pandas_meta)
    for entry in meta.get("index_columns", []):
        if isinstance(entry, dict) and entry.get("kind") == "range":
            entry.update(start=int(index.start), stop=int(index.stop), step=int(index.step))
    return json.dumps(meta).encode()


def read_parquet(path: PathLike) -> pd.DataFrame:
    """Read a Parquet file written by :func:`write_parquet` (or any Parquet file).

    Categorical columns come back with their exact dictionary (sorted Arrow-backed ``str``
    categories for pbtools ids); ``attrs`` are restored and the ``metadata`` given to
    :func:`write_parquet` is ``attrs["metadata"]``.

    Page checksums are verified and pbtools' metadata checked (module docstring); a file that
    fails raises :class:`CorruptFileError` naming it.
    """
    import pyarrow.parquet as pq

    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file or directory: {path}")
    try:
        table = pq.read_table(str(path), page_checksum_verification=True)
        schema_meta = table.schema.metadata or {}
        raw = schema_meta.get(_META_KEY)
        if raw is not None and _SHA_KEY in schema_meta:
            if schema_meta[_SHA_KEY].decode(errors="replace") != _meta_digest(schema_meta):
                raise CorruptFileError("its metadata does not match its checksum")
        meta = None if raw is None else json.loads(raw)
        _check_shape(table, meta)
        df = table.to_pandas()
    except (pa.ArrowException, OSError, UnicodeDecodeError, ValueError, KeyError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CorruptFileError(f"{path}: a damaged or truncated Parquet file ({why})") from None
    df.attrs.clear()
    if meta is None:
        return df
    for c, spec in meta.get("categoricals", {}).items():
        if c not in df.columns:
            continue
        if spec is None:
            df[c] = encode(df[c].astype("str"))
            continue
        values = df[c].astype("str" if spec["str"] else object)
        cats = pd.Index(spec["categories"], dtype="str" if spec["str"] else object)
        lost = int((values.notna() & ~values.isin(cats)).sum())
        if lost:
            raise CorruptFileError(
                f"{path}: column {c!r}: {lost} values are not among its stored categories "
                "(damaged metadata)"
            )
        df[c] = pd.Categorical(values, categories=cats, ordered=spec["ordered"])
    df.attrs.update(_from_json(meta.get("attrs") or {}))
    if meta.get("metadata") is not None:
        df.attrs["metadata"] = _from_json(meta["metadata"])
    return df


def _type_key(t: pa.DataType) -> str:
    """A column's Arrow type as Parquet keeps it: string widths and dictionary index widths,
    which a round trip may change, left out."""
    if pa.types.is_dictionary(t):
        return f"dictionary<{_type_key(t.value_type)}>"
    return str(t).replace("large_", "")


def _check_shape(table, meta: dict | None) -> None:
    """The row count and each column's Arrow type are the ones written (format >= 1)."""
    if meta is None or meta.get("format") is None:
        return
    if meta["format"] > PARQUET_FORMAT:
        raise CorruptFileError(
            f"written by a newer pbtools (Parquet format {meta['format']}, this one reads "
            f"{PARQUET_FORMAT})"
        )
    if table.num_rows != meta.get("rows"):
        raise CorruptFileError(f"{table.num_rows} rows, its metadata says {meta.get('rows')}")
    got = {f.name: _type_key(f.type) for f in table.schema}
    if got != meta.get("columns"):
        bad = sorted(set(got.items()) ^ set((meta.get("columns") or {}).items()))
        raise CorruptFileError(f"columns or types differ from its metadata ({bad[0][0]})")
