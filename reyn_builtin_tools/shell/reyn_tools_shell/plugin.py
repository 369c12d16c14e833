"""Entry point ``shell`` in group ``reyn.plugins``: the hooks of the shell pack."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reyn_core import hookimpl, settings_as

from .definitions import TOOLS
from .settings import ShellSettings

REYN_API = 1


@hookimpl
def reyn_settings_model() -> type[ShellSettings]:
    """``[plugins.shell.settings]`` is validated against ``ShellSettings``: unknown keys, bad
    regexes and rules whose ``match`` / ``not_match`` examples do not hold fail at profile load."""
    return ShellSettings


@hookimpl
def reyn_register_tools(register: Callable[[Any], Any], settings: Any) -> None:
    """Register ``shell`` (phase surface only; unavailable until programs are allowed)."""
    for definition in TOOLS:
        register(definition)


@hookimpl
def reyn_diagnostics(settings: Any) -> list[dict[str, str]]:
    """The sandbox, for ``reyn doctor``: RX001 (info) commands are confined, with the Landlock ABI
    and what the kernel enforces; RX002 (error) it cannot confine, so commands are refused; RX003
    (warning, on every load) ``sandbox = "off"``."""
    from .sandbox import status_diagnostics

    shell = settings_as(settings, ShellSettings)
    if not shell.programs:
        return []
    return status_diagnostics(shell, "shell commands", "[plugins.shell.settings]", "shell")
