"""How many examples a property test draws (hypothesis ``max_examples``).

The full suite (``python3 -m pytest``, CI) draws every test's full number; the quick subset
(``python3 -m pytest -m "not slow"``, the inner loop) a fifth of it, at least 10: the same
properties, checked on fewer random cases. ``conftest.py`` sets :data:`QUICK` from the ``-m``
expression before the test modules are imported.
"""

#: True when the run deselects the slow tests (``-m "not slow"``)
QUICK = False


def examples(n: int) -> int:
    """``n`` examples in the full suite, ``max(10, n // 5)`` in the quick subset."""
    return max(10, n // 5) if QUICK else n
