"""Isolated plugins left reyn-core for reyn-isolation (issue 24) with no re-export: the old modules,
imported from their old place, are an ``ImportError`` naming reyn-isolation and the new path (every
spelling: tests/core/test_moved_table.py), and the new paths import. (No sandbox needed: nothing here
starts a worker.)"""

from __future__ import annotations

import importlib

import pytest

from reyn_core.moved import MOVED

MOVES = {old: move for old, move in MOVED.items() if move[1][0] == "reyn-isolation"}


@pytest.fixture(autouse=True)
def _needs_the_sandbox() -> None:
    """Overrides the folder's sandbox check: these tests start no worker."""


def test_the_host_side_and_the_worker_are_in_the_table_and_import_from_their_new_home():
    assert set(MOVES) == {"reyn_core.isolation", "reyn_core.worker"}
    for new, _ in MOVES.values():
        importlib.import_module(new)  # positive control: the new place works


def test_every_code_of_reyn_isolation_is_an_rj_code_and_none_is_the_cores():
    """Documented by the generated RJ table (tests/docs/test_code_tables.py)."""
    from reyn_core.host import DIAGNOSTIC_CODES
    from reyn_isolation.codes import ISOLATION_CODES

    assert ISOLATION_CODES and all(code.startswith("RJ") for code in ISOLATION_CODES)
    assert set(ISOLATION_CODES) & set(DIAGNOSTIC_CODES) == set()
    assert {"RJ001", "RJ006", "RJ012"} <= set(DIAGNOSTIC_CODES)  # the ones the core reports itself
