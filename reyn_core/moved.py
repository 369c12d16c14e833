"""Where moved names went: importing one from its old place is an ``ImportError`` naming the
distribution that now holds it and its new import path — never a re-export that keeps working. A
name removed outright (``REMOVED``) is an ``ImportError`` saying why and what to do instead.

One table, two entry points: ``MovedModuleFinder`` (first on ``sys.meta_path`` once ``reyn_core`` is
imported) answers for a moved module, and ``moved_attributes`` is the ``__getattr__`` of a module
that kept its other names (``reyn_core.errors``, ``reyn_core.host``). CHANGELOG.md lists the same moves.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import FrameType


def _from_wheelhouse(distribution: str, then: str = "") -> tuple[str, str]:
    """(distribution, how to install it): the project's distributions are installed from the
    wheelhouse ``make dist`` writes, not from a public index by name."""
    return (
        distribution,
        f"pip install --find-links DIST {distribution}, DIST being the wheelhouse of `make dist`{then}",
    )


# OpenTelemetry spans left the core for the reyn-otel add-on (issue 24): the core has one observation seam.
_OTEL = _from_wheelhouse("reyn-otel")
# The LLM runtime left the core for the reyn-loops distribution (issue 24), plugin id ``loops``.
_LOOPS = _from_wheelhouse("reyn-loops")
_LOOPS_PLUGIN = "loops"
# The plugin author's test kit left the core for the reyn-testing distribution (issue 24).
_TESTING = _from_wheelhouse("reyn-testing")
# Isolated plugins left the core for the reyn-isolation distribution (issue 24): the host side and the
# worker; the core keeps the permission declaration and the extension point (``loading.isolation_point``).
_ISOLATION = _from_wheelhouse("reyn-isolation")
# Tool search left the core for the search pack (issue 24), plugin id ``search``: deferral needs it
# enabled (``plugins.enable = [..., "search"]``).
_SEARCH = _from_wheelhouse("reyn-tools-search", ', and add "search" to [plugins] enable')
# The default approval store left the core for the reyn-approvals-sqlite distribution (issue 24): the
# core ships no store, each is found by `[approvals] backend` (default "sqlite") as an entry point.
_SQLITE = _from_wheelhouse("reyn-approvals-sqlite")

# Names of a moved module that stayed in reyn-core at another path: their entry names the core's path,
# so the error of the module they were in says where each went (``moved_error``).
_CORE = ("reyn-core", "")

MOVED: dict[str, tuple[str, tuple[str, str]]] = {
    "reyn_core.loops": ("reyn_loops", _LOOPS),
    "reyn_core.cli.chat": ("reyn_loops.cli.chat", _LOOPS),
    "reyn_core.cli.phase": ("reyn_loops.cli.phase", _LOOPS),
    "reyn_core.testing": ("reyn_testing", _TESTING),
    "reyn_core.tracing": ("reyn_otel", _OTEL),
    "reyn_core.tracing.redact": ("reyn_core.host.redact", _CORE),
    "reyn_core.loading.load_spans": ("reyn_otel.load_spans", _OTEL),
    "reyn_core.isolation.worker_spans": ("reyn_otel.worker_spans", _OTEL),
    "reyn_core.host.configure_tracing": ("reyn_otel.configure_tracing", _OTEL),
    "reyn_core.testing.scripted_server": ("reyn_loops.testing.scripted_server", _LOOPS),
    "reyn_core.testing.scripted_replies": ("reyn_loops.testing.scripted_replies", _LOOPS),
    "reyn_core.testing.replay": ("reyn_loops.testing.replay", _LOOPS),
    "reyn_core.errors.LLMCallError": ("reyn_loops.errors.LLMCallError", _LOOPS),
    "reyn_core.errors.ReplayMissing": ("reyn_loops.errors.ReplayMissing", _LOOPS),
    "reyn_core.errors.ReplayFixtureError": ("reyn_loops.errors.ReplayFixtureError", _LOOPS),
    "reyn_core.isolation": ("reyn_isolation", _ISOLATION),
    "reyn_core.isolation.permissions": ("reyn_core.loading.permissions", _CORE),
    "reyn_core.worker": ("reyn_isolation.worker", _ISOLATION),
    "reyn_core.tool_search": ("reyn_tools_search.index", _SEARCH),
    "reyn_core.host.search_tools": ("reyn_tools_search.index.search_tools", _SEARCH),
    "reyn_core.host.ToolMatch": ("reyn_tools_search.index.ToolMatch", _SEARCH),
    "reyn_core.approvals.sqlite_store": ("reyn_approvals_sqlite.store", _SQLITE),
    "reyn_core.approvals.SqliteApprovalStore": ("reyn_approvals_sqlite.SqliteApprovalStore", _SQLITE),
    "reyn_core.host.SqliteApprovalStore": ("reyn_approvals_sqlite.SqliteApprovalStore", _SQLITE),
    # the operator's policy types left the gates for their own module (issue 24)
    "reyn_core.gates.OperatorPolicy": ("reyn_core.operator_policy.OperatorPolicy", _CORE),
    "reyn_core.gates.PluginPolicy": ("reyn_core.operator_policy.PluginPolicy", _CORE),
    "reyn_core.gates.NO_POLICY": ("reyn_core.operator_policy.NO_POLICY", _CORE),
}
"""Old dotted name (a module, or ``module.attribute``) → (new dotted name, (distribution, install)).
A name inside a moved module that went elsewhere has its own entry (keyed by its old dotted name):
the module's error names each such name's own new home."""

REMOVED: dict[str, str] = {
    "reyn_core.host.DigestCache": "every load hashes every file it checks, so there is no digest cache; "
    "provenance_for(dist, plugin_id=..., entry_point=...) hashes every file of a distribution",
}
"""Old dotted name of a removed host name → why it went and what to use (CHANGELOG.md, issue 24)."""

MOVED_COMMANDS: dict[str, tuple[str, str, str]] = {
    "chat": (*_LOOPS, _LOOPS_PLUGIN),
    "phase": (*_LOOPS, _LOOPS_PLUGIN),
}
"""``reyn`` commands that left the core → (distribution, install, plugin id that contributes them)."""


def moved_command_hint(name: str) -> str | None:
    """What to do when ``reyn NAME`` is a command that left the core and no enabled plugin adds it."""
    moved = MOVED_COMMANDS.get(name)
    if moved is None:
        return None
    distribution, install, plugin_id = moved
    return (
        f"`reyn {name}` comes from the {distribution} distribution: {install}, then add "
        f'"{plugin_id}" to [plugins] enable in the profile'
    )


def _moved_parent(fullname: str) -> str | None:
    """The moved module ``fullname`` is or lies in (``reyn_core.loops.router`` → ``reyn_core.loops``)."""
    parts = fullname.split(".")
    for end in range(len(parts), 1, -1):
        candidate = ".".join(parts[:end])
        if candidate in MOVED:
            return candidate
    return None


def moved_error(old: str) -> ImportError:
    """The ``ImportError`` for the moved module or attribute ``old`` (or a module inside it)."""
    found = old if old in MOVED else _moved_parent(old)
    assert found is not None, old
    new, (distribution, install) = MOVED[found]
    target = new + old[len(found) :]
    # Python imports a package before its submodules (and ``from M import name`` imports M first),
    # so ``reyn_core.testing`` answers for the ``reyn_core.testing.replay`` that moved elsewhere, and
    # ``reyn_core.tracing`` for its ``redact`` that stayed in the core: name each at its own home.
    elsewhere = "".join(
        f"; {inner} {_went(inner_new, inner_dist)}"
        for inner, (inner_new, (inner_dist, _)) in MOVED.items()
        if found == old and inner.startswith(found + ".") and inner_new != new + inner[len(found) :]
    )
    if distribution == _CORE[0]:
        return ImportError(f"{old} {_went(target, distribution)}{elsewhere}", name=old)
    return ImportError(
        f"{old} is no longer part of reyn-core: it moved to {target} in the {distribution} "
        f"distribution ({install}; see CHANGELOG.md){elsewhere}",
        name=old,
    )


def _went(new: str, distribution: str) -> str:
    """Where a moved name is now, said for one name of a module's error."""
    if distribution == _CORE[0]:
        return f"is now {new} (still in reyn-core)"
    return f"moved to {new} in the {distribution} distribution"


class MovedModuleFinder:
    """A ``sys.meta_path`` finder that refuses every moved module with ``moved_error``; every other
    name it leaves to the next finder (one dictionary look-up per name)."""

    @staticmethod
    def find_spec(fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.startswith("reyn_core.") and _moved_parent(fullname) is not None:
            raise moved_error(fullname)
        return None


def install_finder() -> None:
    """Put ``MovedModuleFinder`` first on ``sys.meta_path`` (once): a stale folder of a moved package
    (only ``__pycache__`` left) must not import as an empty namespace package."""
    if not any(f is MovedModuleFinder for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder)


def moved_attributes(module: str) -> Callable[[str], Any]:
    """A module ``__getattr__``: a moved name raises its ``moved_error``, a removed one an
    ``ImportError`` saying why, anything else the usual ``AttributeError``.

    The ``ImportError`` only for a ``from module import name`` statement (``_in_from_import``): Python
    turns an ``AttributeError`` raised there into a generic "cannot import name", losing what to do.
    Everywhere else a moved or removed name is an ``AttributeError`` with the same message, so
    ``hasattr(module, name)`` is False and ``getattr(module, name, default)`` gives the default, as
    for any absent name. (One class deriving from both cannot be made: their layouts conflict.)"""

    def __getattr__(name: str) -> Any:
        old = f"{module}.{name}"
        if old in MOVED:
            error = moved_error(old)
        elif old in REMOVED:
            error = ImportError(
                f"{old} was removed from reyn-core: {REMOVED[old]} (see CHANGELOG.md)", name=old
            )
        else:
            raise AttributeError(f"module {module!r} has no attribute {name!r}", name=name)
        if _in_from_import(module):
            raise error
        raise AttributeError(str(error), name=name)

    return __getattr__


def _in_from_import(module: str) -> bool:
    """Whether the code that looks the attribute up (the first frame outside ``module`` and this one)
    is running a ``from module import name`` statement: its current instruction is ``IMPORT_FROM``
    (after any ``EXTENDED_ARG`` prefix)."""
    import opcode

    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") in (__name__, module):
        frame = frame.f_back
    if frame is None:
        return False
    code, at = frame.f_code.co_code, frame.f_lasti
    # Python 3.10 leaves f_lasti at the EXTENDED_ARG prefix of an IMPORT_FROM whose name index is
    # over 255 (each prefix one 2-byte code unit): the instruction is the first after the prefixes
    extended = opcode.opmap["EXTENDED_ARG"]
    while 0 <= at < len(code) and code[at] == extended:
        at += 2
    return 0 <= at < len(code) and code[at] == opcode.opmap["IMPORT_FROM"]
