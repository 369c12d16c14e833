"""``reyn_core.moved``: every old dotted name's entry names where that name is now, and the error of
a moved module names, besides the module's own new home, each of its names that went somewhere else
— another distribution, or another path inside reyn-core (``reyn_core.tracing.redact`` is
``reyn_core.host.redact``, not in reyn-otel); and every spelling of an old import of each
distribution's moves is the same clear error (each distribution's own tests import the new homes)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from moved_imports import error_line, expected_error, moved_import_error

from reyn_core.moved import MOVED, REMOVED


def resolve(dotted: str) -> Any:
    """The module or attribute ``dotted`` names (raises when there is none)."""
    try:
        return importlib.import_module(dotted)
    except ImportError:
        module, _, attr = dotted.rpartition(".")
        return getattr(importlib.import_module(module), attr)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_entry_names_a_home_that_exists(old: str) -> None:
    new, _ = MOVED[old]
    assert resolve(new) is not None


def error_of(statement: str) -> str:
    last = error_line(statement)
    assert last.startswith(f"{expected_error(statement)}: "), last
    return last


@pytest.mark.parametrize(
    ("statement", "name", "home"),
    [
        ("from reyn_core.tracing import redact", "reyn_core.tracing.redact", "reyn_core.host.redact"),
        (
            "import reyn_core.isolation.permissions",
            "reyn_core.isolation.permissions",
            "reyn_core.loading.permissions",
        ),
    ],
)
def test_a_name_that_stayed_in_the_core_is_named_at_its_core_path(
    statement: str, name: str, home: str
) -> None:
    message = error_of(statement)
    assert f"{name} is now {home} (still in reyn-core)" in message
    assert f"{name} moved to" not in message  # never sent to the distribution the module went to
    assert resolve(home) is not None  # positive control: the named home imports


def test_the_module_itself_still_names_its_distribution() -> None:
    message = error_of("from reyn_core.tracing import configure_tracing")
    assert (
        "reyn_core.tracing is no longer part of reyn-core: it moved to reyn_otel in the reyn-otel" in message
    )


ENABLE_SEARCH = '"search" to [plugins] enable'


@pytest.mark.parametrize(
    ("statement", "fragments"),
    [
        # reyn-isolation
        ("import reyn_core.isolation", ("reyn_isolation ", "reyn-isolation")),
        (
            "from reyn_core.isolation.client import WorkerClient",
            ("moved to reyn_isolation ", "reyn-isolation"),
        ),
        ("import reyn_core.worker.serve", ("moved to reyn_isolation.worker ", "reyn-isolation")),
        ("from reyn_core.worker import call_server", ("reyn_isolation.worker", "reyn-isolation")),
        # reyn-loops
        ("from reyn_core.loops import RouterLoop", ("reyn_loops",)),
        ("from reyn_core.loops.router import RouterLoop", ("moved to reyn_loops ",)),
        ("from reyn_core.testing import scripted_server", ("reyn_loops.testing.scripted_server",)),
        ("from reyn_core.testing.scripted_server import ScriptedModelServer", ("reyn_loops.testing.",)),
        ("from reyn_core.cli import chat", ("reyn_loops.cli.chat",)),
        ("from reyn_core.errors import LLMCallError", ("reyn_loops.errors.LLMCallError",)),
        ("from reyn_core.errors import ReplayMissing", ("reyn_loops.errors.ReplayMissing",)),
        ("import reyn_core.errors as e; e.ReplayFixtureError", ("reyn_loops.errors.ReplayFixtureError",)),
        # reyn-otel
        ("from reyn_core.tracing import configure_tracing", ("moved to reyn_otel in the reyn-otel",)),
        (
            "from reyn_core.host import configure_tracing",
            ("to reyn_otel.configure_tracing in the reyn-otel",),
        ),
        ("import reyn_core.loading.load_spans", ("moved to reyn_otel.load_spans in the reyn-otel",)),
        ("import reyn_core.isolation.worker_spans", ("moved to reyn_otel.worker_spans in the reyn-otel",)),
        # reyn-testing (and what inside the kit went to reyn-loops)
        ("from reyn_core.testing import ToolCaller", ("moved to reyn_testing in the reyn-testing",)),
        (
            "import reyn_core.testing.pytest_plugin",
            (
                "reyn_core.testing is no longer part of reyn-core: "
                "it moved to reyn_testing in the reyn-testing",
            ),
        ),
        (
            "from reyn_core.testing import replay",
            ("reyn_core.testing.replay moved to reyn_loops.testing.replay",),
        ),
        # reyn-tools-search (and the plugin to enable)
        ("import reyn_core.tool_search", ("reyn_tools_search.index", "reyn-tools-search", ENABLE_SEARCH)),
        (
            "from reyn_core.tool_search import search_tools",
            ("reyn_tools_search.index", "reyn-tools-search", ENABLE_SEARCH),
        ),
        # Python imports the package first: a module inside it is refused with the package
        (
            "from reyn_core.tool_search.ranking import Ranking",
            ("reyn_tools_search.index", "reyn-tools-search", ENABLE_SEARCH),
        ),
        (
            "from reyn_core.host import search_tools",
            ("reyn_tools_search.index.search_tools", "reyn-tools-search", ENABLE_SEARCH),
        ),
        (
            "import reyn_core.host as h; h.ToolMatch",
            ("reyn_tools_search.index.ToolMatch", "reyn-tools-search", ENABLE_SEARCH),
        ),
        # reyn-approvals-sqlite: the core ships no approval store
        (
            "from reyn_core.approvals.sqlite_store import SqliteApprovalStore",
            ("moved to reyn_approvals_sqlite.store in the reyn-approvals-sqlite", "pip install"),
        ),
        (
            "from reyn_core.approvals import SqliteApprovalStore",
            ("reyn_approvals_sqlite.SqliteApprovalStore", "reyn-approvals-sqlite"),
        ),
        (
            "from reyn_core.host import SqliteApprovalStore",
            ("reyn_approvals_sqlite.SqliteApprovalStore", "reyn-approvals-sqlite"),
        ),
    ],
)
def test_every_spelling_of_an_old_import_is_the_same_clear_error(
    statement: str, fragments: tuple[str, ...]
) -> None:
    message = moved_import_error(statement)
    assert [f for f in fragments if f not in message] == [], message


@pytest.mark.parametrize(
    "statement", ["from reyn_core.host import DigestCache", "import reyn_core.host as h; h.DigestCache"]
)
def test_a_removed_host_name_is_an_error_saying_why(statement: str) -> None:
    last = error_of(statement)
    assert "reyn_core.host.DigestCache was removed from reyn-core" in last, last
    assert "every load hashes every file" in last and "provenance_for(" in last, last


def test_every_removed_name_is_really_gone() -> None:
    for old in REMOVED:
        module, _, name = old.rpartition(".")
        assert name not in importlib.import_module(module).__all__
        with pytest.raises(AttributeError, match="was removed from reyn-core"):
            resolve(old)


def old_attributes() -> list[str]:
    """Every moved or removed name that was an attribute of a module still in the core."""
    return sorted(
        old
        for old in (*MOVED, *REMOVED)
        if old.rpartition(".")[0] in ("reyn_core.host", "reyn_core.errors", "reyn_core.approvals")
    )


@pytest.mark.parametrize("old", old_attributes())
def test_hasattr_and_getattr_with_a_default_see_an_old_name_as_absent(old: str) -> None:
    module_name, _, name = old.rpartition(".")
    module = importlib.import_module(module_name)
    assert hasattr(module, name) is False
    assert getattr(module, name, "default") == "default"
    with pytest.raises(
        AttributeError, match=r"moved to|was removed from reyn-core"
    ):  # the message says what to do
        getattr(module, name)


@pytest.mark.parametrize("old", old_attributes())
def test_from_import_of_an_old_name_keeps_its_clear_message(old: str) -> None:
    module_name, _, name = old.rpartition(".")
    with pytest.raises(ImportError, match=r"moved to|was removed from reyn-core") as info:
        exec(f"from {module_name} import {name}", {})
    assert "cannot import name" not in str(info.value)

    # inside a function too (the statement's own frame is what is read)
    def importer() -> None:
        exec(f"def inner():\n    from {module_name} import {name}\ninner()", {})

    with pytest.raises(ImportError, match=r"moved to|was removed from reyn-core"):
        importer()


def test_control_present_names_and_unknown_names_are_as_usual() -> None:
    import reyn_core.host as host

    assert hasattr(host, "RegistryBuilder") and not hasattr(host, "NoSuchName")
    with pytest.raises(ImportError, match="cannot import name 'NoSuchName'"):
        exec("from reyn_core.host import NoSuchName", {})
