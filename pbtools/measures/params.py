"""Measure parameters beyond ``rel``/``judged_only``/``p``/``beta``: their kinds and defaults.

:data:`EXTRA_PARAMS` lists the parameters of the measures of ``trec_eval -m all_trec``
(``Rprec(mult=0.2)``, ``IPrec@0.1``, ``IAP(recall=[0.25,0.5])``, ``P(relative=True)@10``,
``nDCG(gains={1:3,2:9})``, ``Utility(a=2,b=-1)``, ``Unjudged(padded=False)@5``,
``RBP(graded=True)``) with their defaults, and how their values are read and written. Which
family takes which, and trec_eval's names: each family's declaration
(:mod:`pbtools.measures.registry`). The grammar itself: :mod:`pbtools.measures.names`.
"""

from __future__ import annotations

from pbtools.errors import InputError

__all__ = [
    "MIN_GEO_MEAN",
    "ELEVEN",
    "EXTRA_PARAMS",
    "show_param",
    "split_params",
    "parse_param",
    "to_bool",
    "to_number",
]

#: trec_eval's floor of a value entering a geometric mean (``MIN_GEO_MEAN``, trec_eval.h)
MIN_GEO_MEAN = 1e-5
ELEVEN = tuple(i / 10 for i in range(11))
#: parameters beyond rel/judged_only/p/beta: name -> (kind, default per base)
EXTRA_PARAMS = {
    "relative": ("bool", False),
    "gains": ("gains", None),
    "mult": ("float", 1.0),
    "padded": ("bool", True),
    "graded": ("bool", False),
    "recall": ("recall", None),
    "a": ("float", 1.0),
    "b": ("float", -1.0),
    "c": ("float", 0.0),
    "d": ("float", 0.0),
    "docs": ("int", 0),
}


def show_param(v) -> str:
    """A parameter value as written in a canonical name."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, tuple) and v and isinstance(v[0], tuple):  # gains
        return "{" + ",".join(f"{k}:{g:g}" for k, g in v) + "}"
    if isinstance(v, tuple):
        return "[" + ",".join(f"{x:g}" for x in v) + "]"
    return str(v)


def split_params(text: str) -> list[str]:
    """``text`` split at the commas outside brackets (``gains={1:3,2:9},rel=2``)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def parse_param(kind: str, value, key: str, text: str):
    """A parameter of :data:`EXTRA_PARAMS` parsed from its text (or kept when already parsed)."""
    if not isinstance(value, str):
        return value
    v = value.strip()
    if kind == "bool":
        return to_bool(v, text)
    if kind in ("float", "int"):
        return to_number(float if kind == "float" else int, v, key, text)
    inner = v.strip("[]{}() ")
    items = [x.strip() for x in inner.split(",") if x.strip()]
    if kind == "recall":
        if not v.startswith("["):
            return to_number(float, v, key, text)
        return tuple(sorted(to_number(float, x, key, text) for x in items))
    pairs = []
    for item in items:  # gains: {label:gain,...}
        lab, sep, gain = item.partition(":")
        if not sep:
            raise InputError(f"measure {text!r}: gains must read {{label:gain,...}}, got {v!r}")
        pairs.append((to_number(int, lab, key, text), to_number(float, gain, key, text)))
    return tuple(sorted(dict(pairs).items()))


def to_bool(v: str, name: str) -> bool:
    if v.lower() in ("true", "1", "yes"):
        return True
    if v.lower() in ("false", "0", "no"):
        return False
    raise InputError(f"measure {name!r}: {v!r} is not a boolean")


def to_number(kind, value, key: str, text: str):
    """``value`` as ``kind`` (int or float); :class:`InputError` naming the measure otherwise."""
    try:
        return kind(value)
    except (TypeError, ValueError):
        what = "an integer" if kind is int else "a number"
        raise InputError(f"measure {text!r}: {key}={value!r} is not {what}") from None
