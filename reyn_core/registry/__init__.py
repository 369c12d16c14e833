"""The registry: ``RegistryBuilder`` checks tools, ``ToolRegistry`` is the read-only snapshot."""

from __future__ import annotations

from .. import gates
from ..tool import collision_key
from .builder import RegistryBuilder
from .snapshot import RegisteredTool, ToolRegistry

__all__ = ["RegisteredTool", "RegistryBuilder", "ToolRegistry", "collision_key", "gates"]
