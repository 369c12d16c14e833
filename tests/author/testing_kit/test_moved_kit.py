"""The test kit left reyn-core for reyn-testing (issue 24) with no re-export: ``reyn_core.testing``,
imported from its old place, is an ``ImportError`` naming reyn-testing and the new path (and what
inside it moved to reyn-loops; every spelling: tests/core/test_moved_table.py); the new path imports."""

from __future__ import annotations

from reyn_core.moved import MOVED

MOVES = {old: move for old, move in MOVED.items() if move[1][0] == "reyn-testing"}


def test_the_kit_is_in_the_table_and_imports_from_its_new_home():
    assert set(MOVES) == {"reyn_core.testing"}
    import reyn_testing  # positive control: the new place works

    assert "ToolCaller" in reyn_testing.__all__
