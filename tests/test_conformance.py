"""pbtools.measures against trec_eval's own regression outputs and full-precision TREC-2 values.

Values printed by trec_eval with 4 decimals (``%.4f``, C's round-half-even of the exact binary
double) are compared by formatting pbtools' double the same way: the strings must be equal.
Counts (num_ret …) are compared as integers. The TREC-2 reference holds 17 significant digits:
|difference| ≤ 1e-12.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

from pbtools import frames
from pbtools import measures as M

pytestmark = pytest.mark.shared

# trec_eval measure -> pbtools measure, for the measures pbtools implements
SUPPORTED = (
    [f"P_{n}" for n in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    + [f"recall_{n}" for n in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    + [f"ndcg_cut_{n}" for n in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    + [f"map_cut_{n}" for n in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    + [f"success_{n}" for n in (1, 5, 10)]
    + ["map", "ndcg", "bpref", "Rprec", "recip_rank", "num_ret", "num_rel", "num_rel_ret", "rbp"]
)
MEAS_PARAMS = [
    "P_3",
    "P_5",
    "P_7",
    "recall_20",
    "recall_2000",
    "ndcg_cut_10",
    "ndcg_cut_20",
    "ndcg_cut_23",
    "success_2",
    "success_5",
    "success_20",
]
COUNTS = {"num_ret", "num_rel", "num_rel_ret"}


@pytest.fixture(scope="module")
def shared(shared_dir) -> Path:
    """../shared (tests/conftest.py's ``shared_dir`` skips with a reason when it is absent)."""
    return shared_dir


@pytest.fixture(scope="module")
def conf(shared) -> Path:
    path = shared / "data" / "trec_eval_conformance"
    if not path.is_dir():
        pytest.skip(f"{path} is absent")
    return path


def _read_run(path: Path) -> pd.DataFrame:
    """results file: first 6 whitespace fields (results.trunc has junk after them)."""
    rows = [line.split()[:6] for line in path.read_text().splitlines() if len(line.split()) >= 6]
    df = pd.DataFrame(rows, columns=["qid", "q0", "docno", "rank", "score", "name"])
    return frames.as_run(df[["name", "qid", "docno", "score"]])


def _read_qrels(path: Path) -> pd.DataFrame:
    df = pd.read_csv(
        path,
        sep=r"\s+",
        header=None,
        names=["qid", "it", "docno", "label"],
        dtype={"qid": str, "docno": str},
    )
    return frames.as_qrels(df[["qid", "docno", "label"]])


def _read_out(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path, sep="\t", header=None, names=["measure", "qid", "value"], dtype=str)
    df["measure"] = df["measure"].str.strip()
    return df


def _ours(runs, qrels, trec_names, rel=1, topics=None) -> dict[tuple[str, str], float]:
    """{(trec_eval name, qid or 'all'): value} computed by pbtools."""

    def name(t):
        m = M.parse(t)
        # trec_eval's -l threshold applies to binary measures, not to ndcg's gains (m_ndcg.c)
        if m.base == "nDCG" or rel == 1 or "rel" not in M.MEASURES[m.base][1]:
            return m
        return M.parse(f"{m.base}(rel={rel})" + (f"@{m.cutoff}" if m.cutoff else ""))

    ms = [name(t) for t in trec_names]
    pt = M.evaluate(runs, qrels, ms, per_topic=True, topics=topics)
    avg = M.aggregate(pt)
    out = {}
    canon = {str(m): t for m, t in zip(ms, trec_names, strict=True)}
    for df, qids in ((pt, pt["qid"].astype(str) if len(pt) else None), (avg, None)):
        q = qids if qids is not None else pd.Series("all", index=df.index)
        for meas, qid, val in zip(df["measure"].astype(str), q, df["value"], strict=True):
            out[(canon[meas], qid)] = val
    return out


def _compare(ref: pd.DataFrame, ours: dict, names) -> int:
    ref = ref[ref["measure"].isin(names)]
    assert set(ref["measure"]) == set(names), set(names) - set(ref["measure"])
    bad = []
    for meas, qid, text in ref.itertuples(index=False):
        if (meas, qid) not in ours:
            bad.append((meas, qid, text, "missing"))
            continue
        v = ours[(meas, qid)]
        if meas in COUNTS:
            ok = int(text) == v
        elif meas == "rbp_resid":
            ok = abs(float(text) - v) < 5e-5 + 1e-12
        else:
            ok = f"{v:.4f}" == text
        if not ok:
            bad.append((meas, qid, text, v))
    qids = {q for _, q in ours if q != "all"}
    assert set(ref["qid"]) - {"all"} == qids
    assert not bad, bad[:20]
    return len(ref)


def test_out_test_aq(conf):
    """``trec_eval -a -q qrels.test results.test`` (out.test.aq)."""
    runs, qrels = _read_run(conf / "results.test"), _read_qrels(conf / "qrels.test")
    n = _compare(_read_out(conf / "out.test.aq"), _ours(runs, qrels, SUPPORTED), SUPPORTED)
    assert n == 4 * len(SUPPORTED)


def test_out_test_aqc(conf):
    """``-c`` on results.trunc (topic 302 missing, short rankings): out.test.aqc."""
    runs, qrels = _read_run(conf / "results.trunc"), _read_qrels(conf / "qrels.test")
    assert set(runs["qid"].astype(str)) == {"301", "303"}
    ours = _ours(runs, qrels, SUPPORTED, topics="all")
    assert _compare(_read_out(conf / "out.test.aqc"), ours, SUPPORTED) == 4 * len(SUPPORTED)


def test_out_test_aql(conf):
    """``-l2`` with graded qrels.rel_level: binary measures at rel=2, ndcg on all gains."""
    runs, qrels = _read_run(conf / "results.test"), _read_qrels(conf / "qrels.rel_level")
    names = [n for n in SUPPORTED if n != "rbp"]  # trec_eval rbp rescales graded gains
    ours = _ours(runs, qrels, names, rel=2)
    assert _compare(_read_out(conf / "out.test.aql"), ours, names) == 4 * len(names)


def test_out_test_meas_params(conf):
    """Parameterised measures (-m P.3,5,7 …) that pbtools supports: out.test.meas_params."""
    runs, qrels = _read_run(conf / "results.test"), _read_qrels(conf / "qrels.test")
    ours = _ours(runs, qrels, MEAS_PARAMS)
    ref = _read_out(conf / "out.test.meas_params")
    assert _compare(ref, ours, MEAS_PARAMS) == 4 * len(MEAS_PARAMS)


def test_rbp_residual(conf):
    """rbp_resid (p=0.9): trec_eval prints p^len + (1-p) Σ_unjudged p^{r-1} — our residual —
    but only when the ranking has an unjudged document; otherwise it leaves 0 (m_rbp_resid.c)."""
    runs, qrels = _read_run(conf / "results.test"), _read_qrels(conf / "qrels.test")
    pt = M.evaluate(runs, qrels, ["rbp", "Unjudged@1000"], per_topic=True)
    ref = _read_out(conf / "out.test.aq")
    ref = ref[(ref["measure"] == "rbp_resid") & (ref["qid"] != "all")].set_index("qid")["value"]
    rbp = pt[pt["measure"] == "RBP(p=0.9)"].set_index(pt["qid"].astype(str)[::2])
    unj = pt[pt["measure"] == "Unjudged@1000"]["value"].to_numpy() * 1000 - 500
    assert len(ref) == 3
    for (qid, res), n_unj in zip(rbp["residual"].items(), unj, strict=True):
        expected = res if n_unj > 0 else 0.0
        assert f"{expected:.4f}" == ref[qid], (qid, res, ref[qid])


# --------------------------------------------------------------------------------------------
# TREC-2 at full precision
# --------------------------------------------------------------------------------------------

TREC2_MEASURES = [
    "P_5",
    "P_10",
    "P_15",
    "P_20",
    "P_30",
    "P_100",
    "map",
    "ndcg",
    "bpref",
    "Rprec",
    "recip_rank",
    "recall_100",
    "recall_1000",
    "ndcg_cut_10",
]


def _read_trec2_runs(run_dir: Path) -> pd.DataFrame:
    """Lenient read, runs named by file (prc1/prc2 share a tag), repairs as the README says."""
    from pbtools.io import read_runs

    with warnings.catch_warnings():  # the lenient repairs are expected here
        warnings.simplefilter("ignore", frames.TrecFormatWarning)
        return read_runs(run_dir, lenient=True, run_id="file")


@pytest.fixture(scope="module")
def trec2(shared, trec2_dir):
    track = trec2_dir
    ref = shared / "data" / "trec_eval_reference" / "trec2_trec_eval_fullprec.tsv.gz"
    if not ref.is_file():
        pytest.skip(f"{ref} is absent")
    runs = _read_trec2_runs(track / "Runs")
    qrels = _read_qrels(next((track / "QRels").iterdir()))
    return runs, qrels, pd.read_csv(ref, sep="\t", dtype={"qid": str, "run": str})


@pytest.mark.slow
def test_trec2_full_precision(trec2):
    runs, qrels, ref = trec2
    ms = [M.parse(t) for t in TREC2_MEASURES]
    pt = M.evaluate(runs, qrels, ms, per_topic=True)
    avg = M.aggregate(pt)
    back = {str(m): t for m, t in zip(ms, TREC2_MEASURES, strict=True)}
    ours = pd.concat(
        [
            pd.DataFrame(
                {
                    "run": pt["name"].astype(str),
                    "measure": pt["measure"].astype(str),
                    "qid": pt["qid"].astype(str),
                    "ours": pt["value"],
                }
            ),
            pd.DataFrame(
                {
                    "run": avg["name"].astype(str),
                    "measure": avg["measure"].astype(str),
                    "qid": "all",
                    "ours": avg["value"],
                }
            ),
        ]
    )
    ours["measure"] = ours["measure"].map(back)
    ref = ref[ref["measure"].isin(TREC2_MEASURES)]
    both = ref.merge(ours, on=["run", "measure", "qid"], how="outer", indicator=True)
    assert (both["_merge"] == "both").all(), both[both["_merge"] != "both"].head()
    assert len(both) == (1849 + 38) * len(TREC2_MEASURES)
    diff = (both["value"] - both["ours"]).abs()
    print(f"TREC-2: {len(both)} values compared, max |diff| = {diff.max():.3g}")
    assert diff.max() <= 1e-12, both.loc[diff.idxmax()]
