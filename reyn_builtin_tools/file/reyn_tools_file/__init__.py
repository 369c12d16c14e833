"""Reyn file pack: workspace-scoped file tools with attack-tested path safety (plugin id ``file``)."""

from __future__ import annotations

from .settings import FileSettings

__all__ = ["FileSettings"]
