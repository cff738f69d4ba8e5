"""The choices behind every correction, their principled defaults and the named presets.

Where a paper and its authors' code disagree, both readings are parameters: the principled one is
the default and a named preset (``protocol="lipani2015"``) reproduces the published numbers
(PROTOCOL-lipani2015; every item number below refers to it).

=================  ==============================  ==========================================
choice             default (principled)            ``protocol="lipani2015"``
=================  ==============================  ==========================================
``rp``             ``"org"``: R_p = the pooled       ``"run"``: R_p = every pooled run but r_u
                   runs outside r_u's unit           itself, its siblings included (item 12)
``tie``            ``"exclusive_first"`` (paper)     ``"lipani2015"`` (item 11)
``decimals``       ``None`` (no rounding)           ``4``, half-up, every run-level score
                                                     before it is combined (item 10)
``replace``        ``True`` (Webber & Park's         ``False`` (item 13)
                   refinement)
``topics``         ``"judged"`` (trec_eval)          ``"answered"`` (item 14b)
``pool_policy``    ``"paper"``                       ``"paper"`` (items 4-6)
``weight``         ``1.0`` (α of Eq. 2)              ``1.0``
``indicator``      ``"lambda"``                      ``"lambda"``
``float32``        ``False`` (io option)             ``True`` (item 2)
``run_id``         ``"tag"`` (io option)             ``"lipani2015"``: runs named by file,
                                                     organisation by tag (item 1)
=================  ==============================  ==========================================
"""

from __future__ import annotations

from pbtools.errors import InputError

__all__ = ["DEFAULTS", "PRESETS", "resolve"]

#: principled defaults of every protocol choice
DEFAULTS: dict[str, object] = {
    "rp": "org",
    "tie": "exclusive_first",
    "decimals": None,
    "replace": True,
    "weight": 1.0,
    "indicator": "lambda",
    "topics": "judged",
    "pool_policy": "paper",
    "float32": False,
    "run_id": "tag",
}

#: named bundles of choices; ``protocol="lipani2015"`` reproduces Lipani et al. 2015 Table 2
PRESETS: dict[str, dict[str, object]] = {
    "default": dict(DEFAULTS),
    "lipani2015": {
        "rp": "run",
        "tie": "lipani2015",
        "decimals": 4,
        "replace": False,
        "weight": 1.0,
        "indicator": "lambda",
        "topics": "answered",
        "pool_policy": "paper",
        "float32": True,
        "run_id": "lipani2015",
    },
}


def resolve(protocol: str | None = None, **overrides) -> dict[str, object]:
    """The effective choices: :data:`DEFAULTS` ← ``PRESETS[protocol]`` ← explicit overrides
    (``None`` overrides are ignored). A name that is no choice raises ``TypeError``: the
    ``**choices`` of every function end here, so a misspelt keyword is never ignored.

    Examples
    --------
    >>> resolve()["rp"], resolve("lipani2015")["rp"], resolve("lipani2015", rp="org")["rp"]
    ('org', 'run', 'org')
    >>> resolve(estimator="lipani")
    Traceback (most recent call last):
      ...
    TypeError: unexpected keyword argument 'estimator': not a parameter, nor a choice (decimals, \
float32, indicator, pool_policy, replace, rp, run_id, tie, topics, weight)
    """
    known = set(DEFAULTS).union(*PRESETS.values())
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise TypeError(
            f"unexpected keyword argument {', '.join(map(repr, unknown))}: not a parameter, "
            f"nor a choice ({', '.join(sorted(known))})"
        )
    out = dict(DEFAULTS)
    if protocol is not None:
        if protocol not in PRESETS:
            raise InputError(f"unknown protocol {protocol!r}; known: {sorted(PRESETS)}")
        out.update(PRESETS[protocol])
    out.update({k: v for k, v in overrides.items() if v is not None})
    return out
