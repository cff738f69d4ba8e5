"""pbtools.measures against trec_eval's own regression outputs and full-precision TREC-2 values.

Every line of ``out.test``, ``out.test.aq``, ``out.test.aqc``, ``out.test.aql`` and
``out.test.meas_params`` is compared, one test per (file, measure): pbtools computes the measures
trec_eval's ``-m`` arguments name (:func:`pbtools.measures.trec.trec_measures`) with the same
``-l``/``-c`` and prints them as trec_eval does (``%6.4f`` — C's correctly rounded formatting,
as Python's — counts as integers, ``relstring`` quoted): the printed strings must be equal. A
measure pbtools lacks fails its test (``infAP`` until the sampled-pool estimators land). The
TREC-2 reference holds 17 significant digits of 14 measures: |difference| ≤ 1e-12.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

from pbtools import frames
from pbtools import measures as M
from pbtools.cli.trec import trec_report
from pbtools.measures.trec import trec_measures

pytestmark = pytest.mark.shared

CONF = Path(__file__).resolve().parents[3] / "shared" / "data" / "trec_eval_conformance"
MEAS_PARAMS = [
    "P.3,5,7",
    "recall.20,2000",
    "ndcg_cut.10,20,23",
    "success.2,5,20",
    "iprec_at_recall.0.10,0.20,0.25,0.50,0.75",
    "Rprec_mult.0.20,0.35,5.00",
    "utility.2,-1,0,0",
    "11pt_avg..25,.5,.75",
    "ndcg.1=3,2=9,4=4.5",
]
#: reference file -> (qrels, results, -m arguments, -l, -c): how trec_eval made it
CASES = {
    "out.test": ("qrels.test", "results.test", ["official"], 1, False),
    "out.test.aq": ("qrels.test", "results.test", ["all_trec"], 1, False),
    "out.test.aqc": ("qrels.test", "results.trunc", ["all_trec"], 1, True),
    "out.test.aql": ("qrels.rel_level", "results.test", ["all_trec", "relstring.20"], 2, False),
    "out.test.meas_params": ("qrels.test", "results.test", MEAS_PARAMS, 1, False),
}


@pytest.fixture(scope="module")
def shared(shared_dir) -> Path:
    """../shared (tests/conftest.py's ``shared_dir`` skips with a reason when it is absent)."""
    return shared_dir


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


def _lines(text: str) -> dict[tuple[str, str], str]:
    """{(measure, qid): printed value} of trec_eval output."""
    out = {}
    for line in text.splitlines():
        name, qid, value = line.split("\t")
        out[(name.strip(), qid)] = value
    return out


def _reference_names(ref: str) -> list[str]:
    if not (CONF / ref).is_file():
        return ["(absent)"]
    return list(dict.fromkeys(k for k, _ in _lines((CONF / ref).read_text())))


_OURS: dict[str, str] = {}


def _ours(ref: str) -> str:
    """What pbtools prints for the reference's command (computed once per file)."""
    if ref not in _OURS:
        qrels_file, results, specs, level, complete = CASES[ref]
        runs, qrels = _read_run(CONF / results), _read_qrels(CONF / qrels_file)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # infAP left out; topics missing under -c
            lines = trec_measures(specs, rel_level=level)
            names = list(dict.fromkeys(str(t.measure) for t in lines if t.measure is not None))
            per = M.evaluate(runs, qrels, names, per_topic=True, all_topics=complete)
        avg = M.aggregate(per, qrels=qrels, all_topics=complete)
        _OURS[ref] = trec_report(
            per, avg, lines, per_topic=ref != "out.test", summary=True, strict=True
        )
    return _OURS[ref]


PARAMS = [
    pytest.param(ref, name, id=f"{ref}:{name}") for ref in CASES for name in _reference_names(ref)
]


@pytest.mark.parametrize(("ref", "measure"), PARAMS)
def test_every_trec_eval_value(ref, measure, shared_dir):
    """Each line trec_eval printed for ``measure`` (per topic and ``all``), as pbtools prints it."""
    if not CONF.is_dir():
        pytest.skip(f"{CONF} is absent")
    want = {k: v for k, v in _lines((CONF / ref).read_text()).items() if k[0] == measure}
    got = {k: v for k, v in _lines(_ours(ref)).items() if k[0] == measure}
    assert want, measure
    assert got == want


@pytest.mark.parametrize("ref", list(CASES))
def test_trec_eval_order_and_layout(ref, shared_dir):
    """pbtools prints trec_eval's lines byte for byte, in its order (the lines of measures
    pbtools lacks aside: ``test_every_trec_eval_value`` fails on those)."""
    if not CONF.is_dir():
        pytest.skip(f"{CONF} is absent")
    ours = _ours(ref).splitlines()
    have = {ln.split("\t")[0].strip() for ln in ours}
    want = [ln for ln in (CONF / ref).read_text().splitlines() if ln.split("\t")[0].strip() in have]
    assert ours == want
    assert len(have) >= len({ln.split("\t")[0] for ln in want}) > 0


def test_geometric_mean_floor_and_complete_average():
    """gm_map: exp(mean(log(max(AP, 1e-5)))); under -c a topic the run lacks enters as 1e-5."""
    runs = pd.DataFrame(
        {"name": "r", "qid": ["1", "1", "2"], "docno": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]}
    )
    qrels = pd.DataFrame(
        {"qid": ["1", "1", "2", "3"], "docno": ["b", "x", "z", "y"], "label": [1, 1, 1, 1]}
    )
    per = M.evaluate(runs, qrels, ["AP", "GMAP"], per_topic=True)
    ap = per[per["measure"] == "AP"]["value"].tolist()
    assert ap == [0.25, 0.0]
    avg = M.aggregate(per).set_index("measure")["value"]
    assert avg["GMAP"] == pytest.approx((0.25 * 1e-5) ** 0.5, rel=1e-12)
    per_c = M.evaluate(runs, qrels, ["GMAP"], per_topic=True, all_topics=True)
    gm_c = M.aggregate(per_c, qrels=qrels, all_topics=True)["value"].item()
    assert gm_c == pytest.approx((0.25 * 1e-5 * 1e-5) ** (1 / 3), rel=1e-12)


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
