"""Reyn shell pack: allowlisted argv commands, never through a shell (plugin id ``shell``)."""

from __future__ import annotations

from .settings import ProgramRule, ShellSettings

__all__ = ["ProgramRule", "ShellSettings"]
