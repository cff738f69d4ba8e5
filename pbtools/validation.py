"""The Python API's input contract: the frames a public function is given are checked once, at
its boundary.

Every public function that takes runs, qrels, orgs or per-topic results
(:func:`pbtools.correct`, :func:`pbtools.compare`, :func:`pbtools.measures.evaluate`, the
estimators' ``fit``/``score``, the :mod:`pbtools.pooling` functions, the ``DataFrame.pb``
accessor) is decorated with :func:`validates`, which runs :func:`check_frame` on its frame
arguments before any work. A refusal is a :class:`FrameError` naming the argument, the column,
the problem and the fix:

=================================  ==========================================================
check                              refusal (or repair under ``lenient=True``)
=================================  ==========================================================
required columns                   every missing one named (runs: ``qid``, ``docno``,
                                   ``score``; qrels: ``qid``, ``docno``, ``label``; orgs:
                                   ``name``, ``org``; results: ``name``, ``qid``, ``value``)
id columns are strings             ``name``, ``qid``, ``docno``, ``org``, ``measure``: a number
                                   column is refused with the conversion to use (qid ``1`` is
                                   not ``'001'``: converting silently can match no topic); a
                                   missing id is refused
labels are integers                ``label``: an integer, boolean or integral float column; a
                                   fraction (0.5), NaN or a value outside int16 is refused
no repeated rows                   a run (per ``name``) or qrels holding one (qid, docno)
                                   twice; results holding one (name, measure, qid) twice.
                                   ``lenient=True`` (runs, qrels): the highest score kept (the
                                   first on equal scores, a NaN losing to any number) / the
                                   first judgment kept, as :mod:`pbtools.io` repairs files,
                                   with a :class:`~pbtools.frames.TrecFormatWarning` stating
                                   the counts
=================================  ==========================================================

Frames from pbtools' readers (dictionary-encoded ids) always pass. The checks are vectorised:
dtype inspection, and one sort of the rows' integer keys for the repeats (≈ 30 ms for
TREC-2's 1.8 M run rows and 63 k judgments: ``benchmarks/validation_cost.py``). Calls that
a validated call makes inside pbtools are not checked again (a context variable marks the
boundary), so a public function used internally costs nothing.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from pbtools.frames import LABEL_DTYPE, TrecFormatError, TrecFormatWarning, composite_key
from pbtools.io.parse import duplicates, keep_best
from pbtools.io.repairs import caller_level

__all__ = ["FrameError", "KINDS", "check_argument", "check_frame", "validates"]


class FrameError(TrecFormatError):
    """A frame given to the Python API that breaks its input contract.

    ``str(err)`` reads ``"<argument>: <problem>"``; ``err.argument`` names the argument
    (``runs``, ``qrels`` …), ``err.problem`` the problem and its fix (``err.file`` and
    ``err.line`` are None). A :class:`~pbtools.frames.TrecFormatError`, hence a ``ValueError``.

    Examples
    --------
    >>> import pandas as pd
    >>> from pbtools import measures
    >>> runs = pd.DataFrame({"qid": [1], "docno": ["d1"], "score": [1.0]})
    >>> qrels = pd.DataFrame({"qid": ["1"], "docno": ["d1"], "label": [1]})
    >>> try:
    ...     measures.evaluate(runs, qrels, ["P@1"])
    ... except FrameError as err:
    ...     print(err)
    runs: qid is int64, but ids are strings (qid 1 and '001' differ): pass \
runs.astype({'qid': str})
    """

    def __init__(self, problem: str, argument: str):
        super().__init__(problem)
        self.argument = argument
        self.args = (f"{argument}: {problem}",)

    def __str__(self) -> str:
        return self.args[0]


#: what each kind of frame must hold: required columns, id columns (checked where present),
#: the label column (None: none; "judged": NA allowed) and the columns whose combination must
#: be unique (with the caller's key columns in front)
KINDS: dict[str, dict] = {
    "run": {
        "required": ("qid", "docno", "score"),
        "ids": ("name", "qid", "docno"),
        "label": None,
        "unique": ("name", "qid", "docno"),
    },
    "judged": {
        "required": ("qid", "docno", "score"),
        "ids": ("name", "qid", "docno"),
        "label": "judged",
        "unique": ("name", "qid", "docno"),
    },
    "qrels": {
        "required": ("qid", "docno", "label"),
        "ids": ("qid", "docno"),
        "label": "qrels",
        "unique": ("qid", "docno"),
    },
    "judgments": {  # qrels whose labels are not read (pool inference): label optional
        "required": ("qid", "docno"),
        "ids": ("qid", "docno"),
        "label": "qrels",
        "unique": ("qid", "docno"),
    },
    "orgs": {"required": ("name", "org"), "ids": ("name", "org"), "label": None, "unique": ()},
    "results": {
        "required": ("name", "qid", "value"),
        "ids": ("name", "qid", "measure"),
        "label": None,
        "unique": ("measure", "name", "qid"),
    },
}

_INSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("pbtools_validated", default=False)


def check_frame(
    df: pd.DataFrame,
    kind: str,
    *,
    argument: str | None = None,
    keys: Sequence[str] = (),
    lenient: bool = False,
    fix: str | None = None,
) -> pd.DataFrame:
    """Check ``df`` against the input contract of ``kind`` (module docstring).

    Parameters
    ----------
    df : DataFrame
    kind : {"run", "judged", "qrels", "judgments", "orgs", "results"}
        ``"judged"``: a run with a ``label`` column (NA = unjudged), as :func:`pbtools.judge`
        returns (its other columns are keys); ``"judgments"``: qrels whose ``label`` is
        optional.
    argument : str, optional
        The name the messages call the frame (default: ``kind``, ``runs`` for a run).
    keys : sequence of str
        Extra columns that tell apart several variants in one frame (e.g. ``left_out``): rows
        repeat only within one key value. Keys the frame lacks are ignored.
    lenient : bool
        Repair repeated rows of runs and qrels instead of refusing them (with a
        :class:`~pbtools.frames.TrecFormatWarning` stating the counts).
    fix : str, optional
        How a repeat can be repaired where the caller offers it (default: ``lenient=True``).

    Returns
    -------
    DataFrame
        ``df`` itself when it passes; under ``lenient=True`` with repeats, a copy without them.

    Raises
    ------
    FrameError
        The first problem found, naming the argument, the column and the fix.

    Examples
    --------
    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["d1", "d2"], "label": [1, 0.5]})
    >>> check_frame(qrels, "qrels")
    Traceback (most recent call last):
      ...
    pbtools.validation.FrameError: qrels: label 0.5 (qid '1', docno 'd2') is not an integer: \
relevance labels are integer grades
    """
    spec = KINDS[kind]
    arg = argument or {"run": "runs", "judged": "judged"}.get(kind, kind)
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{arg} must be a DataFrame, not {type(df).__name__}")
    missing = [c for c in spec["required"] if c not in df.columns]
    if missing:
        raise FrameError(
            f"lacks column(s) {', '.join(missing)}; it has {', '.join(map(str, df.columns))}",
            arg,
        )
    if len(df) == 0:  # nothing to check: an empty column's dtype carries no ids
        return df
    for c in spec["ids"]:
        if c in df.columns:
            _check_ids(df[c], arg)
    if spec["label"] is not None and "label" in df.columns:
        _check_labels(df, arg, allow_na=spec["label"] == "judged")
    if kind == "judged":  # judge() multiplies the rows by the qrels' key columns (left_out …)
        keys = [c for c in df.columns if c not in (*KINDS["run"]["unique"], "score", "rank")]
        keys = [c for c in keys if c != "label"]
    cols = [k for k in keys if k in df.columns and k not in spec["unique"]]
    cols += [c for c in spec["unique"] if c in df.columns]
    if len(cols) and len(df) > 1:
        return _check_unique(df, kind, arg, cols, lenient, fix)
    return df


# --------------------------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------------------------


def _check_ids(s: pd.Series, arg: str) -> None:
    """Refuse an id column that does not hold strings, or holds missing values."""
    col, dtype = s.name, s.dtype
    categorical = isinstance(dtype, pd.CategoricalDtype)
    values = dtype.categories if categorical else s
    if values.dtype == object:
        held = pd.api.types.infer_dtype(values, skipna=True)
        ok = held in ("string", "empty")
        held = f"holds {held} values"
    else:
        ok = pd.api.types.is_string_dtype(values.dtype)
        held = f"is a category of {values.dtype} values" if categorical else f"is {dtype}"
    if not ok:
        to = f"'int64'}}).astype({{{col!r}: str" if "float" in held else "str"
        raise FrameError(
            f"{col} {held}, but ids are strings ({col} 1 and '001' differ): pass "
            f"{arg}.astype({{{col!r}: {to}}})",
            arg,
        )
    missing = s.array.codes < 0 if categorical else s.isna().to_numpy()
    if missing.any():
        n = int(missing.sum())
        raise FrameError(f"{col} has {n} missing value(s); every row needs its id", arg)


def _example(df: pd.DataFrame, i: int) -> str:
    """``qid '1', docno 'd2'`` (and ``run 'a'``) of row position ``i``."""
    parts = [f"run {df['name'].iat[i]!r}"] if "name" in df.columns else []
    parts += [f"{c} {df[c].iat[i]!r}" for c in ("qid", "docno") if c in df.columns]
    return ", ".join(str(p) for p in parts)


def _check_labels(df: pd.DataFrame, arg: str, allow_na: bool) -> None:
    """Refuse labels that are not integers of the int16 range (or NA, unless judged)."""
    lab = df["label"]
    dtype = lab.dtype
    if lab.dtype == object:
        inferred = pd.api.types.infer_dtype(lab, skipna=True)
        if inferred in ("integer", "floating", "mixed-integer-float", "boolean", "empty"):
            lab = pd.to_numeric(lab) if inferred != "boolean" else lab.astype("boolean")
    if pd.api.types.is_bool_dtype(lab.dtype):
        values = lab.to_numpy(dtype=np.float64, na_value=np.nan)
    elif pd.api.types.is_numeric_dtype(lab.dtype) and not pd.api.types.is_complex_dtype(lab):
        values = lab.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        raise FrameError(
            f"label is {dtype}, but relevance labels are integers: pass "
            f"{arg}.astype({{'label': int}})",
            arg,
        )
    if len(values) == 0:
        return
    nan = np.isnan(values)
    if nan.any() and not allow_na:
        i = int(np.flatnonzero(nan)[0])
        raise FrameError(
            f"label has {int(nan.sum())} missing value(s) (NaN), e.g. {_example(df, i)}: every "
            "judgment needs a label (drop the rows of documents that were not judged)",
            arg,
        )
    if pd.api.types.is_integer_dtype(lab.dtype) and not nan.any():
        bad = np.zeros(len(values), dtype=bool)  # integer storage: only the range can fail
    else:
        bad = ~nan & (values != np.floor(values))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise FrameError(
            f"label {values[i]:g} ({_example(df, i)}) is not an integer: relevance labels are "
            "integer grades",
            arg,
        )
    info = np.iinfo(LABEL_DTYPE)
    out = ~nan & ((values < info.min) | (values > info.max))
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise FrameError(
            f"label {values[i]:g} ({_example(df, i)}) is outside the 16-bit range "
            f"[{info.min}, {info.max}] of labels",
            arg,
        )


def _row_codes(s: pd.Series) -> tuple[np.ndarray, int]:
    """Integer codes of a column's values (any dictionary: only equality matters) and their
    range."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        return s.array.codes, max(len(s.cat.categories), 1)
    c, uniq = pd.factorize(s, use_na_sentinel=False)
    return c, max(len(uniq), 1)


def _row_key(df: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """One integer per row, equal for rows equal on ``cols``."""
    parts, sizes = zip(*(_row_codes(df[c]) for c in cols), strict=True)
    space = float(np.prod([float(s) for s in sizes]))
    if space >= 2**62:  # too many combinations for one integer key: number them
        return pd.MultiIndex.from_arrays(parts).factorize()[0].astype(np.int64)
    narrow = space < 2**32  # a narrower key: faster to build and to sort
    return composite_key(list(parts), list(sizes), np.uint32 if narrow else np.int64)


def _check_unique(df, kind, arg, cols, lenient, fix) -> pd.DataFrame:
    """Refuse (or, leniently, drop) rows that repeat the combination of ``cols``."""
    s = _row_key(df, cols)
    s.sort()  # in place: the key is ours
    if not (s[1:] == s[:-1]).any():
        return df
    key = _row_key(df, cols)
    rep, first = duplicates(key)
    what = f"({', '.join(cols)})"
    if lenient and kind in ("run", "qrels"):
        if kind == "run":
            score = df["score"].to_numpy(dtype=np.float64)
            dropped, _ = keep_best(key, score, np.unique(np.concatenate([rep, first])))
            rule = "the highest score of each kept, the first on equal scores"
        else:
            dropped, rule = rep, "the first of each kept"
        keep = np.ones(len(df), dtype=bool)
        keep[dropped] = False
        warnings.warn(
            TrecFormatWarning(
                f"{arg}: {len(dropped)} repeated {what} row(s) dropped under lenient=True "
                f"({rule}); {int(keep.sum())} of {len(df)} rows kept"
            ),
            stacklevel=caller_level(),
        )
        return df.iloc[np.flatnonzero(keep)].reset_index(drop=True)
    i, j = int(rep[0]), int(first[0])
    counted = {
        "run": "each would be counted as another retrieved document",
        "qrels": "a document can have one label",
        "results": "a run has one value per topic",
    }.get(kind, "")
    remedy = {
        "run": f"keep one of each (e.g. {arg}.sort_values('score', ascending=False)"
        f".drop_duplicates({list(cols)}))",
        "qrels": f"keep one of each (e.g. {arg}.drop_duplicates({list(cols)}))",
    }.get(kind, "keep one of each")
    if kind in ("run", "qrels"):
        remedy += f", or {fix or 'pass lenient=True'} to have them repaired and counted"
    raise FrameError(
        f"{len(rep)} repeated {what} row(s), e.g. {_example(df, i)} (rows {j} and {i} by "
        f"position); {counted}: {remedy}",
        arg,
    )


# --------------------------------------------------------------------------------------------
# the boundary
# --------------------------------------------------------------------------------------------


def validates(*, keys: str | None = None, **kinds: str):
    """Decorator of a public function: :func:`check_frame` on its frame arguments, once.

    ``kinds`` maps parameter names to a kind of :data:`KINDS`, or ``"collection"`` (a
    ``(runs, qrels, orgs)`` tuple; anything else is left to the function). The parameter
    ``self`` of a ``DataFrame.pb`` accessor method names the accessor's frame. Arguments that
    are None or not frames (paths) are not checked. ``keys`` names the parameter that holds
    the key columns (a list, or None for the qrels' non-schema columns, as
    :func:`pbtools.judge`). A ``lenient`` parameter of the function, when True, repairs
    repeats and the repaired frames are passed on.

    Inside a validated call, the pbtools functions it calls are not validated again.
    """

    def decorate(fn):
        sig = inspect.signature(fn)
        fix = "pass lenient=True" if "lenient" in sig.parameters else _FIX

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if _INSIDE.get():
                return fn(*args, **kwargs)
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as err:  # name the function, as Python's own message does
                raise TypeError(f"{fn.__qualname__}() {err}") from None
            given = bound.arguments
            lenient = bool(given.get("lenient", False))
            key_cols = _key_columns(given, keys)
            for name, kind in kinds.items():
                value = given.get(name)
                if name == "self":
                    value = getattr(value, "_df", None)
                opts = {"keys": key_cols, "lenient": lenient, "fix": fix}
                checked = check_argument(value, kind, name, **opts)
                if checked is not value:
                    given[name] = type(given["self"])(checked) if name == "self" else checked
            token = _INSIDE.set(True)
            try:
                return fn(*bound.args, **bound.kwargs)
            finally:
                _INSIDE.reset(token)

        return wrapper

    return decorate


#: the repair offered by functions without a ``lenient`` parameter
_FIX = "repair them with pbtools.validation.check_frame(..., lenient=True)"


def _key_columns(given: dict, keys: str | None) -> list[str]:
    if keys is None:
        return []
    value = given.get(keys)
    if value is None:  # every non-schema column of the qrels, as judge() reads them
        qrels = given.get("qrels")
        if isinstance(qrels, pd.DataFrame):
            return [c for c in qrels.columns if c not in KINDS["qrels"]["required"]]
        return []
    return [value] if isinstance(value, str) else list(value)


def check_argument(value, kind: str, name: str, **opts):
    """:func:`check_frame` of a function's argument ``name`` when it is a frame (``"df"`` for
    an accessor's own frame), or of each frame of a ``(runs, qrels, orgs)`` tuple (kind
    ``"collection"``; named ``collection[0]`` …); anything else is returned as it is.
    ``opts``: those of :func:`check_frame`."""
    if kind == "collection":
        if not isinstance(value, tuple) or not all(
            v is None or isinstance(v, pd.DataFrame) for v in value
        ):
            return value
        out = tuple(
            v if v is None else check_frame(v, k, argument=f"{name}[{i}]", **opts)
            for i, (v, k) in enumerate(zip(value, ("run", "qrels", "orgs"), strict=False))
        )
        return value if all(a is b for a, b in zip(out, value, strict=True)) else out
    if not isinstance(value, pd.DataFrame):
        return value
    return check_frame(value, kind, argument="df" if name == "self" else name, **opts)
