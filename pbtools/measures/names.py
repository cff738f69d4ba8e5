"""Measure names: the grammar that turns ``P@10`` or ``RBP(p=0.8)@10`` into a :class:`Measure`.

ir_measures' grammar ``BASE[']( param=value, ... )@cutoff``: BASE one of :data:`MEASURES`
(case-insensitive, plus aliases such as ``MAP``, ``MRR``, ``ndcg``), parameters ``rel`` (int ≥ 1:
labels ≥ rel are relevant), ``p`` (RBP), ``beta`` (Q), ``judged_only`` and ``cutoff``.

pbtools' extensions: ``AntiP@n`` (P̄, the share of the top n judged non-relevant), ``Unjudged@n``
(k̄, the share unjudged), ``Judged@n`` (ir_measures' judged rate) and the condensed list of any
other measure, ``(judged_only=True)`` (aliases: ``condensed=True`` and a trailing ``'`` as in
``AP'``; Sakai 2008 §3, trec_eval ``-J``).

trec_eval names are accepted on input: ``P_10``, ``recall_100``, ``map``, ``map_cut_10``,
``ndcg``, ``ndcg_cut_10``, ``bpref``, ``Rprec``, ``recip_rank``, ``success_10``, ``num_ret``,
``num_rel``, ``num_rel_ret`` and ``rbp`` (= ``RBP(p=0.9)``); :attr:`Measure.trec_name` gives
them back.

Canonical names: ``str(m)`` is ``BASE(params)@cutoff`` with only the non-default parameters (RBP
always shows ``p``), and ``parse(str(m)) == m``. Result frames name their measures this way
(:func:`measure_names`). What each measure computes: :mod:`pbtools.measures`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pbtools.errors import InputError

__all__ = ["Measure", "parse", "parse_all", "MEASURES", "measure_names", "register"]

# base name -> (cut-off: "required" | "optional" | "none", allowed parameters)
_COMMON = ("rel", "judged_only")
MEASURES: dict[str, tuple[str, tuple[str, ...]]] = {
    "P": ("required", _COMMON),
    "R": ("required", _COMMON),
    "AP": ("optional", _COMMON),
    "nDCG": ("optional", _COMMON),
    "RR": ("optional", _COMMON),
    "Success": ("required", _COMMON),
    "Rprec": ("none", _COMMON),
    "Bpref": ("none", _COMMON),
    "NumRet": ("optional", ("judged_only",)),
    "NumRel": ("none", ("rel",)),
    "NumRelRet": ("optional", _COMMON),
    "AntiP": ("required", _COMMON),
    "Unjudged": ("required", ()),
    "Judged": ("required", ()),
    "RBP": ("optional", ("p", *_COMMON)),
    "Q": ("optional", ("beta", *_COMMON)),
}
_SUMMED = {"NumRet", "NumRel", "NumRelRet"}  # trec_eval sums these in `all`
_ALIASES = {
    **{b.lower(): b for b in MEASURES},
    "map": "AP",
    "mrr": "RR",
    "ndcg": "nDCG",
    "recall": "R",
    "prec": "P",
    "success": "Success",
    "rprec": "Rprec",
    "antiprec": "AntiP",
    "antip": "AntiP",
    "unj": "Unjudged",
    "numrelret": "NumRelRet",
    "numret": "NumRet",
    "numrel": "NumRel",
    "judged": "Judged",
}
_TREC_EVAL = [  # trec_eval name patterns -> (base, params)
    (r"P_(\d+)", "P", {}),
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
_GRAMMAR = re.compile(r"^\s*([A-Za-z]+)\s*(')?\s*(?:\((.*)\))?\s*(?:@\s*(\d+))?\s*$")


@dataclass(frozen=True)
class Measure:
    """A parsed measure: ``base`` name, optional ``cutoff``, relevance threshold ``rel``,
    ``judged_only`` (condensed list) and the RBP persistence ``p`` / Q's ``beta``.

    ``str(m)`` is the canonical name: ``BASE(params)@cutoff`` with only non-default parameters
    (RBP always shows ``p``: ir_measures defaults to 0.8, trec_eval to 0.9).

    Parameters
    ----------
    base : str
        One of :data:`MEASURES`.
    cutoff : int, optional
        The ``@n`` rank cut-off.
    rel : int
        Labels ``>= rel`` are relevant: trec_eval ``-l`` for the binary measures; for nDCG
        and Q, labels below ``rel`` also gain 0 (trec_eval's ndcg ignores ``-l``; see
        :mod:`pbtools.measures.evaluate`).
    judged_only : bool
        Score the condensed list (unjudged documents removed; Sakai 2008 §3).
    p, beta : float, optional
        RBP's persistence, Q's ``beta`` (None for the other measures).

    Examples
    --------
    >>> m = Measure("nDCG", 10)
    >>> str(m), m.trec_name, parse(str(m)) == m
    ('nDCG@10', 'ndcg_cut_10', True)
    >>> str(Measure("AP", rel=2, judged_only=True))
    'AP(rel=2,judged_only=True)'
    """

    base: str
    cutoff: int | None = None
    rel: int = 1
    judged_only: bool = False
    p: float | None = None
    beta: float | None = None

    def __str__(self) -> str:
        params = []
        if self.base == "RBP":
            params.append(f"p={self.p:g}")
        if self.base == "Q" and self.beta != 1.0:
            params.append(f"beta={self.beta:g}")
        if self.rel != 1:
            params.append(f"rel={self.rel}")
        if self.judged_only:
            params.append("judged_only=True")
        s = self.base + (f"({','.join(params)})" if params else "")
        return s + (f"@{self.cutoff}" if self.cutoff is not None else "")

    @property
    def trec_name(self) -> str:
        """trec_eval's name for this measure (``P_10``, ``map``, ``ndcg_cut_10``, ...).

        Measures trec_eval does not have (AntiP, Unjudged, Q, condensed lists, ...) keep their
        pbtools name. A non-default relevance threshold corresponds to trec_eval's ``-l``, which
        is not part of its measure names, so it is not shown either — except for nDCG, whose
        ``rel`` trec_eval has no counterpart of (its ndcg ignores ``-l``): ``nDCG(rel=2)``
        keeps its pbtools name.

        >>> parse("nDCG(rel=2)@10").trec_name, parse("P(rel=2)@10").trec_name
        ('nDCG(rel=2)@10', 'P_10')
        """
        if self.judged_only or self.base not in _TREC_NAMES:
            return str(self)
        if self.base == "nDCG" and self.rel != 1:
            return str(self)
        plain, cut = _TREC_NAMES[self.base]
        if self.base == "RBP":
            return "rbp" if self.p == 0.9 and self.cutoff is None else str(self)
        if self.cutoff is None:
            return plain if plain else str(self)
        return f"{cut}_{self.cutoff}" if cut else str(self)

    @property
    def summed(self) -> bool:
        """True for the counts that trec_eval sums rather than averages over topics."""
        return self.base in _SUMMED


#: base → (trec_eval name without cut-off, trec_eval name prefix with a cut-off)
_TREC_NAMES = {
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
}


def _valid_names() -> str:
    return (
        ", ".join(MEASURES) + " (trec_eval: P_n, recall_n, map, map_cut_n, ndcg, "
        "ndcg_cut_n, bpref, Rprec, recip_rank, success_n, num_ret, num_rel, num_rel_ret, rbp)"
    )


def _bool(v: str, name: str) -> bool:
    if v.lower() in ("true", "1", "yes"):
        return True
    if v.lower() in ("false", "0", "no"):
        return False
    raise InputError(f"measure {name!r}: {v!r} is not a boolean")


def parse(name: str | Measure) -> Measure:
    """Parse a measure name into a :class:`Measure` (ir_measures grammar + trec_eval names).

    ``BASE[']( param=value, ... )@cutoff`` with BASE one of :data:`MEASURES` (case-insensitive,
    plus aliases such as ``MAP``, ``MRR``, ``ndcg``); parameters ``rel`` (int ≥ 1), ``p``
    (0 < p < 1, RBP; default 0.8), ``beta`` (≥ 0, Q; default 1), ``judged_only``/``condensed``
    (bool), ``cutoff``. trec_eval names: ``P_10``, ``recall_100``, ``map``, ``map_cut_10``,
    ``ndcg``, ``ndcg_cut_10``, ``bpref``, ``Rprec``, ``recip_rank``, ``success_10``,
    ``num_ret``, ``num_rel``, ``num_rel_ret``, ``rbp`` (= ``RBP(p=0.9)``).

    Raises :class:`~pbtools.errors.InputError` (a ``ValueError``) naming the measure and listing
    the valid ones.

    Parameters
    ----------
    name : str or Measure
        A measure name (a :class:`Measure` is returned unchanged).

    Returns
    -------
    Measure

    Examples
    --------
    >>> parse("ndcg_cut_10")
    Measure(base='nDCG', cutoff=10, rel=1, judged_only=False, p=None, beta=None)
    >>> str(parse("RBP@10")), str(parse("AP'")), parse("P_10") == parse("p@10")
    ('RBP(p=0.8)@10', 'AP(judged_only=True)', True)
    >>> parse("P")
    Traceback (most recent call last):
    ...
    pbtools.errors.InputError: measure 'P': P needs a cut-off, e.g. P@10
    """
    if isinstance(name, Measure):
        return name
    text = str(name)
    for pattern, base, fixed in _TREC_EVAL:
        m = re.fullmatch(pattern, text.strip())
        if m:
            cut = int(m.group(1)) if m.groups() else None
            return _build(text, base, cut, dict(fixed), False)
    m = _GRAMMAR.match(text)
    base = _ALIASES.get(m.group(1).lower()) if m else None
    if base is None:
        raise InputError(f"unknown measure {text!r}; valid measures: {_valid_names()}")
    params: dict[str, object] = {}
    for part in filter(None, (s.strip() for s in (m.group(3) or "").split(","))):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep:
            raise InputError(f"measure {text!r}: parameter {part!r} is not key=value")
        params[key] = value
    cut = int(m.group(4)) if m.group(4) else None
    if "cutoff" in params:
        cut = int(params.pop("cutoff"))
    return _build(text, base, cut, params, bool(m.group(2)))


def _build(text: str, base: str, cut: int | None, params: dict, prime: bool) -> Measure:
    cut_rule, allowed = MEASURES[base]
    if "condensed" in params:
        params["judged_only"] = params.pop("condensed")
    if prime:
        params["judged_only"] = "True"
    bad = sorted(set(params) - set(allowed))
    if bad:
        raise InputError(
            f"measure {text!r}: unknown parameter(s) {bad}; {base} accepts "
            f"{list(allowed) + (['cutoff'] if cut_rule != 'none' else [])}"
        )
    if cut_rule == "required" and cut is None:
        raise InputError(f"measure {text!r}: {base} needs a cut-off, e.g. {base}@10")
    if cut_rule == "none" and cut is not None:
        raise InputError(f"measure {text!r}: {base} takes no cut-off")
    if cut is not None and cut < 1:
        raise InputError(f"measure {text!r}: the cut-off must be ≥ 1")
    rel = _number(int, params.get("rel", 1), "rel", text)
    if rel < 1:
        raise InputError(f"measure {text!r}: rel must be ≥ 1 (labels ≥ rel are relevant)")
    jo = params.get("judged_only", False)
    jo = _bool(jo, text) if isinstance(jo, str) else bool(jo)
    p = _number(float, params.get("p", 0.8), "p", text) if base == "RBP" else None
    if p is not None and not 0 < p < 1:
        raise InputError(f"measure {text!r}: RBP needs 0 < p < 1")
    beta = _number(float, params.get("beta", 1.0), "beta", text) if base == "Q" else None
    if beta is not None and beta < 0:
        raise InputError(f"measure {text!r}: Q needs beta ≥ 0")
    return Measure(base, cut, rel, jo, p, beta)


def _number(kind, value, key: str, text: str):
    """``value`` as ``kind`` (int or float); :class:`InputError` naming the measure otherwise."""
    try:
        return kind(value)
    except (TypeError, ValueError):
        what = "an integer" if kind is int else "a number"
        raise InputError(f"measure {text!r}: {key}={value!r} is not {what}") from None


def parse_all(measures) -> list[Measure]:
    """Parse one measure or several (:func:`parse`), dropping duplicates, keeping the order.

    Parameters
    ----------
    measures : str, Measure or an iterable of them

    Returns
    -------
    list of Measure
        At least one; an empty list raises :class:`~pbtools.errors.InputError`.

    Examples
    --------
    >>> [str(m) for m in parse_all(["P_10", "P@10", "map"])]
    ['P@10', 'AP']
    """
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    out: list[Measure] = []
    for m in measures:
        pm = parse(m)
        if pm not in out:
            out.append(pm)
    if not out:
        raise InputError("no measures given")
    return out


def measure_names(measures: Iterable) -> list[str]:
    """Canonical names of ``measures`` (deduplicated, in the order given).

    Parameters
    ----------
    measures : iterable of str or Measure

    Returns
    -------
    list of str

    Examples
    --------
    >>> measure_names(["P_10", "P@10", "ndcg_cut_10", "rbp"])
    ['P@10', 'nDCG@10', 'RBP(p=0.9)']
    """
    return [str(m) for m in parse_all(measures)]


def register(
    base: str,
    cutoff: str = "optional",
    params: tuple[str, ...] = ("rel", "judged_only"),
    *,
    summed: bool = False,
    aliases: tuple[str, ...] = (),
) -> None:
    """Add a measure name to the grammar: ``base`` with its cut-off rule (``"required"``,
    ``"optional"`` or ``"none"``) and parameters; ``summed`` counts are summed, not averaged,
    over topics (as trec_eval's ``num_*``); ``aliases`` are other spellings. The kernel is
    registered by :func:`pbtools.measures.register_measure`, which calls this."""
    if cutoff not in ("required", "optional", "none"):
        raise InputError(f"cutoff must be 'required', 'optional' or 'none', got {cutoff!r}")
    bad = sorted(set(params) - {"rel", "judged_only", "p", "beta"})
    if bad:
        raise InputError(f"unknown measure parameter(s) {bad}")
    MEASURES[base] = (cutoff, tuple(params))
    for name in (base, *aliases):
        _ALIASES[name.lower()] = base
    if summed:
        _SUMMED.add(base)
