"""Parquet round trips: dtypes, dictionaries, order, attrs and metadata come back exactly.

Integrity: files are written atomically (:mod:`pbtools.io.atomic`) with a CRC-32 on every data
page, and read with the checksums verified. pbtools' own metadata (format version, row count,
each column's dtype, the categories of dictionary columns) carries a SHA-256 of itself and of
pandas' schema metadata, and is checked on read: a truncated file, a flipped byte in a page or
in the metadata, a category list that no longer covers the values, is refused
(:class:`CorruptFileError`, naming the file) instead of read back as other values.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from pbtools.errors import InputError
from pbtools.frames import encode
from pbtools.io.atomic import atomic_path
from pbtools.io.repairframe import AttrsFrame

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
    Converted to Arrow and written a row group (:data:`ROWS`) at a time: a table of runs²
    pairs is never held twice (issue 25 item 4); :class:`ParquetBlocks` writes a table given
    block by block.
    """
    writer = ParquetBlocks(path, whole=df, metadata=metadata)
    with writer.aborting():
        for start in range(0, max(len(df), 1), ROWS):
            writer.write(df.iloc[start : start + ROWS])
        writer.close()


class ParquetBlocks:
    """Write a table to Parquet a block of rows at a time, for :func:`read_parquet` to give
    back the frame of all the blocks, as :func:`write_parquet` would have written it whole
    (issue 30 item 4: the significance table of ``pbtools analyze -o``, never whole).

    Every block has the same columns and dtypes (a categorical column the same dictionary);
    the blocks are gathered into row groups of :data:`ROWS` rows and the index is read as
    0 … rows − 1. pbtools' metadata (the rows, which dictionaries are wholly used, ``attrs``,
    ``metadata``) is known when the last block is in: :meth:`close` adds it to the file's
    key-value metadata, which :func:`read_parquet` reads before the schema's
    (:func:`write_parquet`, which knows it first, puts it in the schema). The file is written
    atomically (:func:`pbtools.io.atomic.atomic_path`): nothing at ``path`` before
    :meth:`close`; :meth:`abort` drops it.

    Examples
    --------
    >>> import tempfile
    >>> path = tempfile.mkdtemp() + "/t.parquet"
    >>> w = ParquetBlocks(path)
    >>> w.write(pd.DataFrame({"x": pd.Categorical(["a", "b"], categories=["a", "b", "c"])}))
    >>> w.write(pd.DataFrame({"x": pd.Categorical(["c"], categories=["a", "b", "c"])}))
    >>> w.close(metadata={"k": 1})
    3
    >>> back = read_parquet(path)
    >>> back["x"].tolist(), back.index.tolist(), back.attrs["metadata"]
    (['a', 'b', 'c'], [0, 1, 2], {'k': 1})
    """

    def __init__(self, path: PathLike, whole: pd.DataFrame | None = None, metadata=None):
        self.path, self.rows, self._whole, self._metadata = path, 0, whole, metadata
        self._stack = self._writer = self._schema = None
        self._buffer: list = []
        self._dtypes: dict = {}
        self._seen: dict[str, np.ndarray] = {}

    @contextlib.contextmanager
    def aborting(self):
        """A block that drops the file on an exception (:meth:`abort`)."""
        try:
            yield self
        except BaseException:
            self.abort()
            raise

    def write(self, block: pd.DataFrame) -> None:
        """Add ``block``'s rows."""
        plain = block.copy(deep=False)
        plain.attrs = {}  # stored as pbtools JSON (pyarrow would try and warn)
        if self._writer is None:
            table = self._open(plain)
        else:
            table = pa.Table.from_pandas(plain, schema=self._schema, preserve_index=None)
        self._buffer.append(table.replace_schema_metadata(self._schema.metadata))
        if self._whole is None:  # which categories are used: for the metadata at close
            for c, dtype in self._dtypes.items():
                codes = plain[c].array.codes
                seen = self._seen.setdefault(c, np.zeros(len(dtype.categories), dtype=bool))
                seen[codes[codes >= 0]] = True
        self.rows += len(plain)
        self._flush(final=False)

    def _open(self, plain: pd.DataFrame) -> pa.Table:
        """The writer of the temporary file, on the first block's schema; its Arrow table."""
        import pyarrow.parquet as pq  # on first use: `import pbtools` stays cheap (~20 ms)

        table = pa.Table.from_pandas(plain, preserve_index=None)
        self._schema = table.schema
        self._dtypes = _categoricals(plain)
        if self._whole is not None:  # every key known before the first row group
            df = self._whole
            cats = {
                str(c): _category_spec(t, _all_used(df[c].array.codes, len(t.categories)))
                for c, t in _categoricals(df).items()
            }
            meta = self._meta(cats, df.attrs, self._metadata, len(df))
            self._schema = self._schema.with_metadata(self._schema_meta(meta, df.index))
        stack = contextlib.ExitStack()
        tmp = stack.enter_context(atomic_path(self.path))
        self._writer = stack.enter_context(
            pq.ParquetWriter(str(tmp), self._schema, write_page_checksum=True)
        )
        self._stack = stack
        return table

    def _meta(self, cats: dict, attrs: dict, metadata: dict | None, rows: int) -> dict:
        kept = {k: v for k, v in attrs.items() if k != "metadata"}
        return {
            "attrs": _to_json(kept),
            "metadata": _to_json(metadata if metadata is not None else attrs.get("metadata")),
            "categoricals": cats,
            "format": PARQUET_FORMAT,
            "rows": rows,
            "columns": {f.name: _type_key(f.type) for f in self._schema},
        }

    def _schema_meta(self, meta: dict, index: pd.Index) -> dict:
        schema_meta = dict(self._schema.metadata or {})
        if isinstance(index, pd.RangeIndex):  # the whole frame's index, not the first block's
            schema_meta[b"pandas"] = _whole_index(schema_meta[b"pandas"], index)
        schema_meta[_META_KEY] = json.dumps(meta).encode()
        schema_meta[_SHA_KEY] = _meta_digest(schema_meta).encode()
        return schema_meta

    def _flush(self, final: bool) -> None:
        """Write the rows gathered as row groups of :data:`ROWS` rows (the rest too if
        ``final``)."""
        held = sum(t.num_rows for t in self._buffer)
        if not held or (held < ROWS and not final):
            return
        table = pa.concat_tables(self._buffer) if len(self._buffer) > 1 else self._buffer[0]
        self._buffer = []
        start = 0
        while table.num_rows - start >= ROWS or (final and start < table.num_rows):
            self._writer.write_table(table.slice(start, ROWS), row_group_size=ROWS)
            start += ROWS
        if start < table.num_rows:
            self._buffer.append(table.slice(start))

    def close(self, attrs: dict | None = None, metadata: dict | None = None) -> int:
        """Write the rows left and pbtools' metadata (``attrs`` and ``metadata`` of the table;
        :func:`write_parquet` gave them first) and put the file at its path. Returns the
        rows written."""
        if self._writer is None:
            raise ValueError(f"{self.path}: no block written (a table needs its columns)")
        self._flush(final=True)
        if self._whole is None:
            cats = {
                str(c): _category_spec(t, bool(self._seen[c].all()))
                for c, t in self._dtypes.items()
            }
            meta = self._meta(cats, attrs or {}, metadata, self.rows)
            schema_meta = self._schema_meta(meta, pd.RangeIndex(self.rows))
            self._writer.add_key_value_metadata(
                {k: schema_meta[k] for k in (b"pandas", _META_KEY, _SHA_KEY)}
            )
        stack, self._stack = self._stack, None
        stack.close()
        return self.rows

    def abort(self) -> None:
        """Drop the file being written: nothing is left at its path, nor beside it."""
        stack, self._stack = self._stack, None
        if stack is not None:
            why = RuntimeError(f"{self.path}: aborted")
            stack.__exit__(type(why), why, None)  # the writer closed, the temporary removed


def _categoricals(df: pd.DataFrame) -> dict:
    """The categorical columns of ``df`` and their dtypes."""
    return {c: t for c, t in df.dtypes.items() if isinstance(t, pd.CategoricalDtype)}


def _category_spec(dtype: pd.CategoricalDtype, all_used: bool) -> dict | None:
    """The ``categoricals`` entry of a column: None when its categories are sorted ``str``
    and all used (read back by encoding the values), else the categories themselves."""
    categories = dtype.categories
    if categories.is_monotonic_increasing and categories.dtype == "str" and all_used:
        return None
    return {
        "categories": [str(x) for x in categories],
        "ordered": bool(dtype.ordered),
        "str": categories.dtype == "str",
    }


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
        schema_meta = dict(table.schema.metadata or {})
        footer = pq.read_metadata(str(path)).metadata or {}
        if _META_KEY in footer:  # the file's own key-value metadata first (ParquetBlocks)
            schema_meta.update(
                {k: footer[k] for k in (b"pandas", _META_KEY, _SHA_KEY) if k in footer}
            )
            table = table.replace_schema_metadata(schema_meta)
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
