"""The serving process's garbage collector settings."""

from __future__ import annotations

import gc

import pytest

from tooldedup.api.heap import GC_THRESHOLDS, settle_heap


@pytest.mark.usefixtures("restored_gc")
def test_settling_freezes_what_startup_built_and_collects_less_often() -> None:
    built = {"a table": [1, 2, 3]}
    settle_heap()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == GC_THRESHOLDS
    # A frozen object is out of every collection, not out of reach.
    assert built["a table"] == [1, 2, 3]
