"""Lipani et al. 2015 Table 2: estimator errors per (track, n), with top/worst-performer counts,
rendered as a DataFrame, a Markdown pipe table or a LaTeX tabular (no tabulate/jinja2 needed)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pbtools.frames import require_columns

MEASURES = ("mae", "sre", "sre_star")
LABELS = {"mae": "MAE", "sre": "SRE", "sre_star": "SRE*"}
TOP, WORST = "top performer", "worst performer"


def table2(results: pd.DataFrame, estimators=None) -> pd.DataFrame:
    """Lay out error results as Table 2 of Lipani et al. 2015.

    Parameters
    ----------
    results : DataFrame
        Tidy frame with ``track``, ``n``, ``estimator``, ``mae``, ``sre``, ``sre_star``
        (``runs`` optional and not shown).
    estimators : list of str, optional
        Fixes the column order (default: order of first appearance).

    Returns
    -------
    DataFrame
        Rows indexed by (``track``, ``n``) in order of first appearance, columns a MultiIndex
        (estimator, MAE|SRE|SRE*); then two rows (``"top performer"``, ``""``) and
        (``"worst performer"``, ``""``) counting, per estimator × measure, the rows where that
        estimator is strictly best (lowest) / strictly worst (highest) among the estimators;
        ties are not counted, missing values do not compete.

    Examples
    --------
    >>> import pandas as pd
    >>> errors = pd.DataFrame({"track": "T8", "n": 10, "estimator": ["reduced", "lipani"],
    ...                        "mae": [0.05, 0.01], "sre": [12, 3], "sre_star": [8, 1]})
    >>> table2(errors)  # doctest: +NORMALIZE_WHITESPACE
    estimator          reduced          lipani
    measure                MAE SRE SRE*    MAE SRE SRE*
    track           n
    T8              10    0.05  12    8   0.01   3    1
    top performer            0   0    0      1   1    1
    worst performer          1   1    1      0   0    0
    """
    require_columns(results, ("track", "n", "estimator", *MEASURES), "table2 input")
    keys = ["track", "n", "estimator"]
    if results.duplicated(keys).any():
        dup = results.loc[results.duplicated(keys, keep=False), keys].head(4)
        raise ValueError(f"table2 input has several rows per (track, n, estimator):\n{dup}")
    est = list(pd.unique(results["estimator"])) if estimators is None else list(estimators)
    rows = results[["track", "n"]].drop_duplicates()
    index = pd.MultiIndex.from_frame(rows)
    wide = results.pivot(index=["track", "n"], columns="estimator", values=list(MEASURES))
    wide = wide.reindex(index=index)
    cols = pd.MultiIndex.from_product(
        [est, [LABELS[m] for m in MEASURES]], names=["estimator", "measure"]
    )
    body = pd.DataFrame(index=index, columns=cols, dtype=object)
    counts = {TOP: {}, WORST: {}}
    for m in MEASURES:
        vals = wide[m].reindex(columns=est).to_numpy(dtype=np.float64, na_value=np.nan)
        for j, e in enumerate(est):
            body[(e, LABELS[m])] = (
                vals[:, j] if m == "mae" else pd.array(np.round(vals[:, j]), dtype="Int64")
            )
        for label, pick in ((TOP, np.nanmin), (WORST, np.nanmax)):
            with np.errstate(all="ignore"):
                extreme = pick(
                    np.where(np.isnan(vals).all(axis=1, keepdims=True), 0.0, vals),
                    axis=1,
                    keepdims=True,
                )
            at = vals == extreme
            strict = at & (at.sum(axis=1, keepdims=True) == 1)
            for j, e in enumerate(est):
                counts[label][(e, LABELS[m])] = int(strict[:, j].sum())
    tail = pd.DataFrame(
        [counts[TOP], counts[WORST]],
        index=pd.MultiIndex.from_tuples([(TOP, ""), (WORST, "")], names=["track", "n"]),
    )
    tail.columns = pd.MultiIndex.from_tuples(tail.columns, names=["estimator", "measure"])
    body.index = pd.MultiIndex.from_arrays(
        [index.get_level_values(0).astype(object), index.get_level_values(1).astype(object)],
        names=["track", "n"],
    )
    return pd.concat([body, tail.astype(object)])


def _cell(v, measure: str) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return ""
    if measure == "MAE" and isinstance(v, float):
        return f"{v:.4f}"
    return str(int(v)) if isinstance(v, (int, np.integer, float)) else str(v)


def _cells(table: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    names = [str(n) for n in table.index.names]
    header = names + [f"{e} {m}" for e, m in table.columns]
    body = []
    for idx, row in zip(table.index, table.itertuples(index=False), strict=True):
        idx = idx if isinstance(idx, tuple) else (idx,)
        body.append(
            [str(i) for i in idx]
            + [_cell(v, m) for v, (_, m) in zip(row, table.columns, strict=True)]
        )
    return header, body


def to_markdown(table: pd.DataFrame) -> str:
    """Render a :func:`table2` frame as a GitHub pipe table (index levels first; MAE to 4
    decimals, counts as integers).

    Parameters
    ----------
    table : DataFrame
        A :func:`table2` frame.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> errors = pd.DataFrame({"track": "T8", "n": 10, "estimator": ["reduced", "lipani"],
    ...                        "mae": [0.05, 0.01], "sre": [12, 3], "sre_star": [8, 1]})
    >>> print(to_markdown(table2(errors, ["lipani"])))  # alone, lipani is top and worst
    | track | n | lipani MAE | lipani SRE | lipani SRE* |
    | --- | --- | ---: | ---: | ---: |
    | T8 | 10 | 0.0100 | 3 | 1 |
    | top performer |  | 1 | 1 | 1 |
    | worst performer |  | 1 | 1 | 1 |
    <BLANKLINE>
    """
    header, body = _cells(table)
    right = [False] * table.index.nlevels + [True] * len(table.columns)
    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---:" if r else "---" for r in right) + " |",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines) + "\n"


def _tex(s: str) -> str:
    for a, b in (
        ("\\", r"\textbackslash{}"),
        ("&", r"\&"),
        ("%", r"\%"),
        ("_", r"\_"),
        ("#", r"\#"),
        ("$", r"\$"),
        ("*", r"$^*$"),
    ):
        s = s.replace(a, b)
    return s


def to_latex(table: pd.DataFrame) -> str:
    """Render a :func:`table2` frame as a LaTeX ``tabular`` with a two-level header (estimator
    spanning its measures, via ``\\multicolumn``); needs only ``booktabs``.

    Parameters
    ----------
    table : DataFrame
        A :func:`table2` frame.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> errors = pd.DataFrame({"track": "T8", "n": 10, "estimator": ["reduced", "lipani"],
    ...                        "mae": [0.05, 0.01], "sre": [12, 3], "sre_star": [8, 1]})
    >>> print(to_latex(table2(errors)).splitlines()[2])
     &  & \\multicolumn{3}{c}{reduced} & \\multicolumn{3}{c}{lipani} \\\\
    """
    nidx = table.index.nlevels
    est = list(dict.fromkeys(e for e, _ in table.columns))
    spec = "l" * nidx + "r" * len(table.columns)
    top = [""] * nidx + [
        rf"\multicolumn{{{sum(1 for e2, _ in table.columns if e2 == e)}}}{{c}}{{{_tex(str(e))}}}"
        for e in est
    ]
    sub = [_tex(str(n)) for n in table.index.names] + [_tex(m) for _, m in table.columns]
    _, body = _cells(table)
    lines = [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(top) + r" \\",
        " & ".join(sub) + r" \\",
        r"\midrule",
    ]
    n_body = len(body) - 2 if len(body) >= 2 and body[-2][0] == TOP else len(body)
    for i, r in enumerate(body):
        if i == n_body:
            lines.append(r"\midrule")
        lines.append(" & ".join(_tex(c) for c in r) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"
