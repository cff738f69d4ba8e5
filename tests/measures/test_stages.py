"""The marks ``pbtools evaluate`` makes for ``benchmarks/evaluate_speed.py``'s breakdown."""

import contextlib
import io

from pbtools.cli import main
from pbtools.measures.stages import recording, stage


def test_evaluate_marks_each_stage_of_the_command_lines_path(tiny_collection):
    seen: list[str] = []
    argv = ["evaluate", str(tiny_collection / "QRels" / "qrels"), str(tiny_collection / "Runs")]
    out = io.StringIO()
    with recording(seen.append), contextlib.redirect_stdout(out):
        assert main([*argv, "-m", "nDCG", "-m", "AP", "-m", "P@5"]) == 0
    assert "AP" in out.getvalue()
    head = ["import", "qrels", "runs", "coverage", "judge", "group set-up", "view"]
    # each family's measures together (AP, P@5, nDCG), then the rest of the path
    assert seen == [*head, "AP", "P@5", "nDCG", "order", "aggregate", "tables", "write"]
    stage("after")  # no recorder: nothing
    assert seen[-1] == "write"
