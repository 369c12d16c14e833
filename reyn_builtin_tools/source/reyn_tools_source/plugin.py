"""Entry point ``source`` in group ``reyn.plugins``: the hooks of the source pack.

The tools are the light definitions of ``definitions.py`` (read from the generated ``tools.json``,
with lazy ``"module:attr"`` handlers); the ``@tool`` functions in ``tools.py`` are their source.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reyn_core import hookimpl

from .definitions import TOOLS
from .settings import SourceSettings

REYN_API = 1


@hookimpl
def reyn_settings_model() -> type[SourceSettings]:
    """``[plugins.source.settings]`` is validated against ``SourceSettings``."""
    return SourceSettings


@hookimpl
def reyn_register_tools(register: Callable[[Any], Any], settings: Any) -> None:
    """Register ``reyn_src_list`` and ``reyn_src_read`` (router only; off over MCP by default)."""
    for definition in TOOLS:
        register(definition)
