"""The kernel's JSON parser on hostile nesting."""

from __future__ import annotations

import gc
import sys
import weakref

import pytest

from ingest_assets.core import json_input

DEEP = "[" * 100_000 + "]" * 100_000


class _Node:
    pass


def test_deep_nesting_is_a_value_error_and_runs_no_finalizer_without_stack(monkeypatch):
    """A collection started near the recursion limit ran other objects' finalizers with no stack left (CI saw
    their RecursionError as an unraisable exception): each parse here has cyclic garbage with finalizers ready to
    be collected at a different depth, and none of them may fail."""
    lost = []
    monkeypatch.setattr(sys, "unraisablehook", lost.append)
    threshold = gc.get_threshold()
    try:
        for extra in range(600, 1050):  # the depth left below the limit depends on the caller's stack
            gc.disable()
            for _ in range(5):
                first, second = _Node(), _Node()
                first.other, second.other = second, first
                weakref.finalize(first, "-".join, ["finalized", "here"])
            gc.set_threshold(gc.get_count()[0] + extra)  # the next collection: about `extra` lists into the parse
            gc.enable()
            with pytest.raises(ValueError, match="nested too deeply to parse"):
                json_input.loads(DEEP)
    finally:
        gc.set_threshold(*threshold)
        gc.enable()
        gc.collect()
    assert [(u.exc_type, u.object) for u in lost] == []
    assert gc.isenabled()


def test_collection_is_left_as_it_was():
    gc.disable()
    try:
        assert json_input.loads('{"a": [1, 2]}') == {"a": [1, 2]}
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert json_input.loads("[1]") == [1] and gc.isenabled()
