"""docs/extending.md: its code (a new measure, estimator and pooling strategy) runs as written."""

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"


def test_extending_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 5
    namespace: dict = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{DOC.name}[block {i + 1}]", "exec"), namespace)  # noqa: S102
    # the registrations were undone by the examples (the measure stays registered, harmlessly)
    from pbtools.corrections.registry import ESTIMATORS
    from pbtools.pooling import strategies

    assert "optimistic" not in ESTIMATORS and "mostruns" not in strategies.REGISTRY
