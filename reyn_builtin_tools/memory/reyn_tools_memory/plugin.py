"""The memory pack's plugin module (entry point ``memory`` in group ``reyn.plugins``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from reyn_core import hookimpl, settings_as

from .definitions import MEMORY_TOOLS
from .settings import MemorySettings

REYN_API = 1


@hookimpl
def reyn_settings_model() -> type[MemorySettings]:
    """``[plugins.memory.settings]``: see ``MemorySettings``."""
    return MemorySettings


@hookimpl
def reyn_register_tools(register: Callable[[Any], Any], settings: Any) -> None:
    """Register the five memory tools."""
    for definition in MEMORY_TOOLS:
        register(definition)


@hookimpl
def reyn_diagnostics(settings: Any) -> list[dict[str, str]]:
    """RY001-RY004: the store is reachable and its schema version is one this pack understands."""
    from .diagnostics import diagnostics

    return diagnostics(settings)


@hookimpl
def reyn_trusted_files(settings: Any, workspace: Path) -> dict[str, str]:
    """The SQLite store and the files SQLite reads beside it (a model trusts what it recalls, so no
    confined process may rewrite them); a relative ``path`` against the load's workspace, where the
    tools open it (``ctx.workspace``). A PostgreSQL store has no file here."""
    s = settings_as(settings, MemorySettings)
    if s.backend != "sqlite":
        return {}
    db = str(s.db_path(workspace).absolute())
    found = {db: "the memory pack's database"}
    for suffix in ("-wal", "-shm", "-journal"):
        found[db + suffix] = f"the memory pack's database ({suffix[1:]} file)"
    return found


@hookimpl
def reyn_cli_commands() -> dict[str, Callable[[list[str], Any], int]]:
    """``reyn memory export|import``."""
    return {"memory": run_memory_command}


def run_memory_command(argv: list[str], loaded: Any) -> int:
    """``reyn memory ...`` with the load the command line chose (argparse and the transfer code are
    imported only when the command runs)."""
    from .cli import memory_command

    return memory_command(argv, loaded)
