"""Entry point ``shell`` in group ``reyn.plugins``: the hooks of the shell pack."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reyn_core import hookimpl

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
