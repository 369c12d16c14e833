"""Tool search left reyn-core for the search pack (issue 24) with no re-export: the old module, its
ranking and the host API's two search names, imported from their old place, are an ``ImportError``
naming reyn-tools-search, the new path and the plugin to enable (every spelling:
tests/core/test_moved_table.py); the new places import."""

from __future__ import annotations

import importlib

from moved_imports import error_line

from reyn_core.moved import MOVED

SEARCH = {old: move for old, move in MOVED.items() if move[1][0] == "reyn-tools-search"}


def test_the_table_names_the_search_moves_and_each_new_place_imports() -> None:
    assert set(SEARCH) == {
        "reyn_core.tool_search",
        "reyn_core.host.search_tools",
        "reyn_core.host.ToolMatch",
    }
    for old, (new, _) in SEARCH.items():
        module, attr = new.rsplit(".", 1) if old.startswith("reyn_core.host.") else (new, "")
        imported = importlib.import_module(module)  # positive control: the new place works
        assert not attr or getattr(imported, attr).__name__ == attr


def test_the_host_api_keeps_its_other_names_and_refuses_unknown_ones_as_before() -> None:
    # Controls: deferral stayed in the core; a name that never existed is a plain AttributeError.
    last = error_line(
        "from reyn_core.host import DeferralPolicy, ToolDeferral, found_tool_names\n"
        "import reyn_core.host as h\nh.NoSuchName"
    )
    assert last == "AttributeError: module 'reyn_core.host' has no attribute 'NoSuchName'"
