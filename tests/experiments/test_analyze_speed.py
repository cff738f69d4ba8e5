"""benchmarks/analyze_speed.py (issue 30 item 5): the one measure of analyze's non-pairwise rest
— exclusive stage times on both clocks that add up to the run, the rest = the run minus the
pairwise stages — and the result frames its cuts rebuilt (tidy, the truth's strings)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]


def _module():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(
        "analyze_speed", ROOT / "benchmarks" / "analyze_speed.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["analyze_speed"] = mod  # its dataclass looks its module up
    spec.loader.exec_module(mod)
    return mod


def test_probes_give_exclusive_times_on_both_clocks_and_the_rest_leaves_pairwise_out(monkeypatch):
    az = _module()
    ticks = {"wall": 0.0, "cpu": 0.0}

    def clock(kind, step):
        def read():
            ticks[kind] += step
            return ticks[kind]

        return read

    # every read advances the wall clock by 1 and the CPU clock by 0.5: deterministic times
    monkeypatch.setattr(
        az, "time", SimpleNamespace(perf_counter=clock("wall", 1.0), process_time=clock("cpu", 0.5))
    )
    probes = az.Probes()
    inner = probes.wrap("merges", lambda: None)
    outer = probes.wrap("lipani", lambda: inner())
    other = probes.wrap("stats", lambda: None)
    outer()
    other()
    # each call reads each clock twice; the outer's own time excludes the inner call's
    assert probes.wall == {"merges": 1.0, "lipani": 2.0, "stats": 1.0}
    assert probes.cpu == {"merges": 0.5, "lipani": 1.0, "stats": 0.5}
    s = az.Serial(dict(probes.wall, other=3.0), dict(probes.cpu), total_wall=7.0, total_cpu=2.0)
    assert s.rest("wall") == 7.0 - 3.0  # lipani and its merges are pairwise, stats is not
    assert s.rest("cpu") == 2.0 - 1.5


def test_tidy_reindexes_to_the_result_columns_and_renumbers_rows():
    from pbtools.corrections.base import RESULT_COLUMNS, tidy

    f = pd.DataFrame(
        {"value": [0.5, 0.25], "name": ["a", "b"], "fired": [True, False], "junk": 1}, index=[7, 3]
    )
    out = tidy(f)
    assert tuple(out.columns) == RESULT_COLUMNS
    assert out.index.equals(pd.RangeIndex(2))
    assert out["fired"].dtype == bool and out["value"].tolist() == [0.5, 0.25]
    assert out["P"].dtype == np.float64 and out["P"].isna().all()


def test_truth_strings_are_taken_as_the_frames_string_column():
    from pbtools.experiments.leaveout import _taken

    names = np.array(["r1", "r2", "r3"], dtype=object)
    got = _taken(names, np.array([2, 0, 0, 1]))
    want = pd.Series(names[[2, 0, 0, 1]])
    pd.testing.assert_series_equal(pd.Series(got), want, check_exact=True)
    assert _taken(np.array([3, 1]), np.array([1, 1])).tolist() == [1, 1]  # not strings: as is
