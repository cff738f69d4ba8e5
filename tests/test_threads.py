"""pbtools.threads: the usable cores, the per-thread cap, PBTOOLS_THREADS and --jobs."""

from __future__ import annotations

import threading

import pytest

from pbtools import threads
from pbtools.errors import InputError


@pytest.fixture(autouse=True)
def no_env_cap(monkeypatch):
    monkeypatch.delenv(threads.ENV, raising=False)


def test_the_cap_is_per_thread_and_restored(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 8)
    assert threads.max_threads() == 8
    seen = []
    with threads.limited_threads(3):
        assert threads.max_threads() == 3
        with threads.limited_threads(None):
            assert threads.max_threads() == 8
        assert threads.max_threads() == 3
        other = threading.Thread(target=lambda: seen.append(threads.max_threads()))
        other.start()
        other.join()
    assert seen == [8]  # another thread is not capped by this one
    assert threads.max_threads() == 8
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="integer >= 1"):
            threads.limit_threads(bad)


def test_environment_cap(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 8)
    for value, cap in (("", None), ("  ", None), ("3", 3), (" 2 ", 2)):
        monkeypatch.setenv(threads.ENV, value)
        assert threads.env_cap() == cap
    monkeypatch.setenv(threads.ENV, "3")
    assert threads.max_threads() == 3
    with threads.limited_threads(2):
        assert threads.max_threads() == 2  # the smaller of the two caps
    for bad in ("0", "-2", "two", "1.5"):
        monkeypatch.setenv(threads.ENV, bad)
        with pytest.raises(InputError, match=f"{threads.ENV} must be an integer >= 1"):
            threads.env_cap()


def test_threads_for(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    assert threads.threads_for(100) == 4
    assert threads.threads_for(3) == 3
    assert threads.threads_for(0) == 1
    assert threads.threads_for(100, cap=2) == 2
    with threads.limited_threads(1):
        assert threads.threads_for(100) == 1


def test_cores_for(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    assert threads.cores_for(None) == (4, None) == threads.cores_for(0)
    assert threads.cores_for(3) == (3, None)
    assert threads.cores_for(9) == (4, "only 4 usable cores")
    assert threads.cores_for(2, available=1) == (1, "only 1 usable core")
    monkeypatch.setenv(threads.ENV, "2")
    assert threads.cores_for(5) == (2, f"only 2 usable cores ({threads.ENV}=2)")
    for bad in (-1, 1.5, True):
        with pytest.raises(InputError, match="jobs must be an integer"):
            threads.cores_for(bad)


def test_usable_cores_is_at_least_one():
    assert threads.usable_cores() >= 1
