"""trec_eval's ``-m`` arguments: measure names, nicknames and dotted parameters, as measures.

``trec_eval -m all_trec -m P.5,10 -m relstring.20 -m ndcg.1=3,2=9`` names measures three ways:
a nickname (``official``, ``all_trec``, ``set``), a measure (``map``) or a measure with
parameters after a dot (cut-offs ``P.5,10``, recall levels ``iprec_at_recall.0.25,0.5``, gains
``ndcg.1=3,2=9``, the weights of ``utility.2,-1,0,0``, the length of ``relstring.20``).
:func:`trec_measures` turns them into the lines trec_eval prints — in trec_eval's order
(``measures.c``), each with the name it prints and the :class:`~pbtools.measures.Measure` that
computes it — with trec_eval's ``-l`` (relevance level of the binary measures), ``-J`` (judged
documents only) and ``-N`` (documents in the collection, for ``utility``). As in trec_eval, the
first parameters given for a measure are the ones used.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

from pbtools.errors import InputError
from pbtools.measures.names import Measure, parse

__all__ = ["TrecLine", "trec_measures", "apply_flags", "NICKNAMES", "ORDER"]

_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: trec_eval's measures in the order it prints them (``te_trec_measures``), with their
#: default parameters and how the parameters are read: ``long``/``double`` cut-offs (one
#: line each), ``list`` (one line, the parameters appended to the name), ``pairs``
#: (``name=value``), or ``None`` (no parameters)
ORDER: dict[str, tuple[str | None, str]] = {
    "runid": (None, ""),
    "num_q": (None, ""),
    "num_ret": (None, ""),
    "num_rel": (None, ""),
    "num_rel_ret": (None, ""),
    "map": (None, ""),
    "gm_map": (None, ""),
    "Rprec": (None, ""),
    "bpref": (None, ""),
    "recip_rank": (None, ""),
    "iprec_at_recall": ("double", "0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1"),
    "P": ("long", ",".join(map(str, _CUTS))),
    "relstring": ("list", "10"),
    "recall": ("long", ",".join(map(str, _CUTS))),
    "infAP": (None, ""),
    "gm_bpref": (None, ""),
    "Rprec_mult": ("double", "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0"),
    "utility": ("list", "1,-1,0,0"),
    "11pt_avg": ("list", "0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1"),
    "binG": (None, ""),
    "G": ("pairs", ""),
    "ndcg": ("pairs", ""),
    "ndcg_rel": ("pairs", ""),
    "Rndcg": ("pairs", ""),
    "ndcg_cut": ("long", ",".join(map(str, _CUTS))),
    "map_cut": ("long", ",".join(map(str, _CUTS))),
    "relative_P": ("long", ",".join(map(str, _CUTS))),
    "success": ("long", "1,5,10"),
    "set_P": (None, ""),
    "set_relative_P": (None, ""),
    "set_recall": (None, ""),
    "set_map": (None, ""),
    "set_F": ("list", "1"),
    "num_nonrel_judged_ret": (None, ""),
    "rbp": ("pairs", ""),
    "rbp_resid": (None, ""),
    "unj": ("long", "5,10,20"),
}
_OFFICIAL = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec"]
_OFFICIAL += ["bpref", "recip_rank", "iprec_at_recall", "P"]
_SET = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P"]
_SET += ["set_recall", "set_relative_P", "set_map", "set_F"]
#: trec_eval's nicknames for sets of measures (``measures.c``)
NICKNAMES = {
    "official": _OFFICIAL,
    "all_trec": list(ORDER),
    "set": _SET,
}
_PLAIN = {  # trec_eval names whose measure is not the one parse() gives
    "rbp": "RBP(p=0.9,graded=True)",
}


@dataclass(frozen=True)
class TrecLine:
    """One measure trec_eval prints: its printed ``name``, the ``measure`` computing it (None
    for ``runid`` and ``num_q``) and its ``kind``: ``"float"`` (``%6.4f``), ``"long"``
    (summed counts, ``%ld``), ``"text"`` (``relstring``: per topic only) or ``"summary"``
    (geometric means: the average only)."""

    name: str
    measure: Measure | None
    kind: str


def _marked(specs) -> dict[str, str | None]:
    """{trec_eval measure: its parameter text or None}, from the ``-m`` arguments."""
    params: dict[str, str | None] = {}
    for spec in specs:
        name, dot, param = str(spec).partition(".")
        if dot and not param:
            raise InputError(f"-m {spec}: no parameters after the '.'")
        if name in NICKNAMES:
            for n in NICKNAMES[name]:
                params.setdefault(n, None)
            if dot:
                raise InputError(f"-m {spec}: the nickname {name} takes no parameters")
            continue
        if name not in ORDER:
            valid = ", ".join([*NICKNAMES, *ORDER])
            raise InputError(f"-m {spec}: unknown trec_eval measure {name!r}; valid: {valid}")
        if dot and ORDER[name][0] is None:
            raise InputError(f"-m {spec}: {name} takes no parameters")
        if params.get(name) is None:  # trec_eval: the first parameters given are used
            params[name] = param if dot else params.get(name)
    return params


def _floats(text: str, spec: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise InputError(f"-m {spec}: {text!r} is not a list of numbers") from None


def _numbers(kind, text: str, spec: str) -> list:
    """trec_eval's cut-offs: sorted, no duplicates, integers > 0 for ``kind=int``."""
    try:
        values = sorted(kind(x) for x in text.split(","))
    except ValueError:
        raise InputError(f"-m {spec}: {text!r} is not a list of numbers") from None
    if len(set(values)) != len(values):
        raise InputError(f"-m {spec}: duplicate cut-offs")
    if kind is int and values[0] <= 0:
        raise InputError(f"-m {spec}: cut-offs must be > 0")
    return values


def _lines(name: str, param: str | None) -> list[tuple[str, str]]:
    """(printed name, pbtools measure name) of trec_eval measure ``name``."""
    how, default = ORDER[name]
    text = default if param is None else param
    spec = f"{name}.{text}"
    if how == "long":
        return [(f"{name}_{c}", f"{name}_{c}") for c in _numbers(int, text, spec)]
    if how == "double":
        return [(f"{name}_{x:.2f}", f"{name}_{x:.2f}") for x in _numbers(float, text, spec)]
    shown = name if param is None else f"{name}_{param}"
    if name == "relstring":
        return [(shown, f"Relstring@{max(int(_floats(text, spec)[0]), 1)}")]
    if name == "11pt_avg":
        points = ",".join(f"{x!r}" for x in _floats(text, spec))
        return [(shown, f"IAP(recall=[{points}])")]
    if name == "set_F":
        return [(shown, f"SetF(beta={_floats(text, spec)[0]!r})")]
    if name == "utility":
        w = _floats(text, spec)
        if len(w) != 4:
            raise InputError(f"-m {spec}: utility needs 4 coefficients")
        weights = ",".join(f"{k}={x!r}" for k, x in zip("abcd", w, strict=True))
        return [(shown, f"Utility({weights})")]
    if how == "pairs":
        return [(shown, _pairs(name, param, spec))]
    return [(name, _PLAIN.get(name, name))]


def _pairs(name: str, param: str | None, spec: str) -> str:
    """``ndcg.1=3,2=9`` as ``nDCG(gains={1:3,2:9})``; ``rbp.p=0.8`` as RBP(p=0.8)."""
    base = {"G": "G", "ndcg": "nDCG", "ndcg_rel": "nDCGRel", "Rndcg": "RnDCG", "rbp": "RBP"}
    pairs = [p.partition("=") for p in (param or "").split(",") if p]
    if any(not sep for _, sep, _ in pairs):
        raise InputError(f"-m {spec}: parameters must read name=value")
    if name == "rbp":
        p = [v for k, _, v in pairs if k == "p"]
        if len(p) != len(pairs):
            raise InputError(f"-m {spec}: pbtools reads rbp's p=… only (no gains)")
        return f"RBP(p={p[0] if p else 0.9},graded=True)"
    gains = ",".join(f"{k}:{v}" for k, _, v in pairs)
    return f"{base[name]}(gains={{{gains}}})" if gains else base[name]


def apply_flags(m: Measure, *, rel_level: int = 1, judged_only: bool = False, num_docs: int = 0):
    """``m`` under trec_eval's ``-l`` (the binary measures' relevance level, unless ``m`` sets
    one), ``-J`` (condensed list) and ``-N`` (``Utility``'s collection size).

    >>> str(apply_flags(parse("P@10"), rel_level=2)), str(apply_flags(parse("nDCG"), rel_level=2))
    ('P(rel=2)@10', 'nDCG')
    """
    allowed = m.family.params
    if m.base == "Utility" and num_docs and m.get("docs") == 0:
        m = replace(m, extra=tuple(sorted((*m.extra, ("docs", int(num_docs))))))
    if rel_level != 1 and m.rel == 1 and "rel" in allowed and m.family.trec_level:
        m = replace(m, rel=int(rel_level))
    if judged_only and "judged_only" in allowed:
        m = replace(m, judged_only=True)
    return m


def trec_measures(specs, *, rel_level: int = 1, judged_only: bool = False, num_docs: int = 0):
    """The lines ``trec_eval -m SPEC…`` prints, as :class:`TrecLine` objects, in its order.

    Parameters
    ----------
    specs : iterable of str
        ``-m`` arguments: ``official``, ``all_trec``, ``set``, ``map``, ``P.5,10``, …
    rel_level : int
        trec_eval ``-l``: the level from which a label is relevant for the binary measures
        (the gain measures — ndcg…, G, rbp — and relstring ignore it, as in trec_eval).
    judged_only : bool
        trec_eval ``-J``: every measure on the condensed list.
    num_docs : int
        trec_eval ``-N``: documents in the collection (``utility``'s fourth term).

    Returns
    -------
    list of TrecLine

    Examples
    --------
    >>> [(t.name, str(t.measure)) for t in trec_measures(["P.10,5", "map"], rel_level=2)]
    [('map', 'AP(rel=2)'), ('P_5', 'P(rel=2)@5'), ('P_10', 'P(rel=2)@10')]
    """
    marked = _marked(specs)
    out = []
    for name in ORDER:
        if name not in marked:
            continue
        if name in ("runid", "num_q"):
            out.append(TrecLine(name, None, "text" if name == "runid" else "long"))
            continue
        for shown, pb in _lines(name, marked[name]):
            try:
                m = parse(pb)
            except InputError:  # a trec_eval measure this pbtools does not compute
                warnings.warn(
                    f"trec_eval's {name} is not computed by this pbtools: left out", stacklevel=2
                )
                continue
            m = apply_flags(m, rel_level=rel_level, judged_only=judged_only, num_docs=num_docs)
            kind = "long" if m.summed else "text" if m.text else "float"
            out.append(TrecLine(shown, m, "summary" if m.geometric else kind))
    return out
