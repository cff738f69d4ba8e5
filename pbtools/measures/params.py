"""Measure parameters beyond ``rel``/``judged_only``/``p``/``beta``, and trec_eval's names.

:data:`EXTRA_PARAMS` lists the parameters of the measures of ``trec_eval -m all_trec``
(``Rprec(mult=0.2)``, ``IPrec@0.1``, ``IAP(recall=[0.25,0.5])``, ``P(relative=True)@10``,
``nDCG(gains={1:3,2:9})``, ``Utility(a=2,b=-1)``, ``Unjudged(padded=False)@5``,
``RBP(graded=True)``) with their defaults; :data:`TREC_EVAL_NAMES` maps trec_eval's measure
names to pbtools' and :data:`TREC_NAMES` back. The grammar itself: :mod:`pbtools.measures.names`.
"""

from __future__ import annotations

from pbtools.errors import InputError

__all__ = [
    "MIN_GEO_MEAN",
    "ELEVEN",
    "EXTRA_PARAMS",
    "TREC_EVAL_NAMES",
    "TREC_GROUP",
    "TREC_NAMES",
    "default_param",
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

TREC_EVAL_NAMES = [  # trec_eval name patterns -> (base, params); the group is the cut-off
    (r"P_(\d+)", "P", {}),
    (r"relative_P_(\d+)", "P", {"relative": "True"}),
    (r"gm_map", "GMAP", {}),
    (r"gm_bpref", "GMBpref", {}),
    (r"iprec_at_recall_([\d.]+)", "IPrec", {}),
    (r"Rprec_mult_([\d.]+)", "Rprec", {}),
    (r"set_P", "SetP", {}),
    (r"set_relative_P", "SetP", {"relative": "True"}),
    (r"set_recall", "SetR", {}),
    (r"set_map", "SetAP", {}),
    (r"set_F", "SetF", {}),
    (r"utility", "Utility", {}),
    (r"11pt_avg", "IAP", {}),
    (r"binG", "BinG", {}),
    (r"G", "G", {}),
    (r"ndcg_rel", "nDCGRel", {}),
    (r"Rndcg", "RnDCG", {}),
    (r"num_nonrel_judged_ret", "NumNonRelRet", {}),
    (r"unj_(\d+)", "Unjudged", {"padded": "False"}),
    (r"rbp_resid", "RBPResid", {"p": 0.9}),
    (r"relstring", "Relstring", {"cutoff": 10}),
    (r"relstring_(\d+)", "Relstring", {}),
    (r"recall_(\d+)", "R", {}),
    (r"map", "AP", {}),
    (r"map_cut_(\d+)", "AP", {}),
    (r"ndcg", "nDCG", {}),
    (r"ndcg_cut_(\d+)", "nDCG", {}),
    (r"bpref", "Bpref", {}),
    (r"Rprec", "Rprec", {}),
    (r"recip_rank", "RR", {}),
    (r"success_(\d+)", "Success", {}),
    (r"num_ret", "NumRet", {}),
    (r"num_rel", "NumRel", {}),
    (r"num_rel_ret", "NumRelRet", {}),
    (r"rbp", "RBP", {"p": 0.9}),
]

TREC_GROUP = {"IPrec": "recall", "Rprec": "mult"}  # trec_eval names whose number is a parameter


#: base → (trec_eval name without cut-off, trec_eval name prefix with a cut-off)
TREC_NAMES = {
    "P": (None, "P"),
    "R": (None, "recall"),
    "AP": ("map", "map_cut"),
    "nDCG": ("ndcg", "ndcg_cut"),
    "Bpref": ("bpref", None),
    "Rprec": ("Rprec", None),
    "RR": ("recip_rank", None),
    "Success": (None, "success"),
    "NumRet": ("num_ret", None),
    "NumRel": ("num_rel", None),
    "NumRelRet": ("num_rel_ret", None),
    "RBP": ("rbp", None),
    **{b: (t, None) for b, t in (("GMAP", "gm_map"), ("GMBpref", "gm_bpref"), ("SetP", "set_P"))},
    **{b: (t, None) for b, t in (("SetR", "set_recall"), ("SetF", "set_F"), ("SetAP", "set_map"))},
    **{b: (t, None) for b, t in (("Utility", "utility"), ("IAP", "11pt_avg"), ("BinG", "binG"))},
    **{b: (t, None) for b, t in (("G", "G"), ("nDCGRel", "ndcg_rel"), ("RnDCG", "Rndcg"))},
    **{b: (t, None) for b, t in (("NumNonRelRet", "num_nonrel_judged_ret"), ("RBPResid", None))},
    "IPrec": (None, None),
    "Unjudged": (None, None),
    "Relstring": (None, None),
}


def default_param(base: str, key: str):
    if key == "recall" and base == "IAP":
        return ELEVEN
    return EXTRA_PARAMS[key][1]


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
