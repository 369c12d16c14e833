"""The test kit left reyn-core for reyn-testing (issue 24) with no re-export: ``reyn_core.testing``,
imported from its old place, is an ``ImportError`` naming reyn-testing and the new path (and what
inside it moved to reyn-loops); the new path imports."""

from __future__ import annotations

import pytest
from moved_imports import moved_import_error

from reyn_core.moved import MOVED

MOVES = {old: move for old, move in MOVED.items() if move[1][0] == "reyn-testing"}


def test_the_kit_is_in_the_table_and_imports_from_its_new_home():
    assert set(MOVES) == {"reyn_core.testing"}
    import reyn_testing  # positive control: the new place works

    assert "ToolCaller" in reyn_testing.__all__


@pytest.mark.parametrize(
    ("statement", "new"),
    [
        ("from reyn_core.testing import ToolCaller", "moved to reyn_testing in the reyn-testing"),
        (
            "import reyn_core.testing.pytest_plugin",
            "reyn_core.testing is no longer part of reyn-core: it moved to reyn_testing in the reyn-testing",
        ),
        (
            "from reyn_core.testing import replay",
            "reyn_core.testing.replay moved to reyn_loops.testing.replay",
        ),
    ],
)
def test_an_old_import_is_a_clear_error_naming_the_distribution(statement, new):
    assert new in moved_import_error(statement)
