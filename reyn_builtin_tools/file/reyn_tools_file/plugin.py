"""Entry point ``file`` in group ``reyn.plugins``: the hooks of the file pack."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reyn_core import hookimpl

from .definitions import TOOLS
from .settings import FileSettings

REYN_API = 1


@hookimpl
def reyn_settings_model() -> type[FileSettings]:
    """``[plugins.file.settings]`` is validated against ``FileSettings`` (unknown keys are errors)."""
    return FileSettings


@hookimpl
def reyn_register_tools(register: Callable[[Any], Any], settings: Any) -> None:
    """Register the seven file tools; write tools hide themselves without a write root."""
    for definition in TOOLS:
        register(definition)
