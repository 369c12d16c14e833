"""Diagnostics: what went wrong while finding, checking, loading or registering plugins and tools.

Every diagnostic has a stable ``code`` (described once, in reyn_core/codes.toml: ``CODES`` reads it, and
the tables of docs/diagnostics.md are written from it), a severity, the plugin and tool concerned, a
message saying what was wrong, and a hint saying how to fix it. Code families:

``RS…`` tool parameters schema (core ``schema.py``), ``RT…`` tool registration (core
``registry/``), ``RD…`` discovery and selection, ``RI…`` import and plugin API, ``RC…`` settings
and profile, ``RP…`` provenance, ``RL…`` lock, ``RJ…`` permissions and isolated plugins (those the
core reports are here; the isolation backend, reyn-isolation, words its own from its ``codes.toml``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reyn_core.code_table import CODES, CodeInfo, Severity
from reyn_core.jsondata import fields_json


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: stable ``code``, ``severity``, ``message`` (what was wrong), ``hint`` (the fix),
    and the ``plugin`` / ``tool`` concerned, when there is one. ``traceback`` is the full Python
    traceback of an exception behind it (``RI001``), shown only on request (``reyn --traceback``,
    ``REYN_DEBUG=1``): the message already names the failing file and line."""

    code: str
    severity: Severity
    message: str
    hint: str
    plugin: str | None = None
    tool: str | None = None
    traceback: str | None = field(default=None, compare=False, repr=False)

    @classmethod
    def make(
        cls,
        code: str,
        message: str,
        *,
        hint: str | None = None,
        plugin: str | None = None,
        tool: str | None = None,
        severity: Severity | None = None,
        traceback: str | None = None,
    ) -> Diagnostic:
        """A diagnostic whose severity and hint default to the code's entry in ``CODES`` (at an explicit
        ``severity``, the hint the entry gives for that severity); a code not in ``CODES`` (a plugin's
        own) defaults to ``error`` and no hint."""
        info = CODES.get(code)
        severity = severity or (info.severity if info else "error")
        hint = hint if hint else (info.hint_at(severity) if info else "")
        return cls(code, severity, message, hint, plugin, tool, traceback)

    @property
    def is_error(self) -> bool:
        """True for severity ``error``."""
        return self.severity == "error"

    def render(self) -> str:
        """``CODE severity [plugin/tool]: message (hint: …)`` on one line."""
        where = "/".join(x for x in (self.plugin, self.tool) if x)
        where = f" [{where}]" if where else ""
        hint = f" — fix: {self.hint}" if self.hint else ""
        return f"{self.code} {self.severity}{where}: {self.message}{hint}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict of every field (``traceback`` only when there is one)."""
        return fields_json(self, omit=() if self.traceback is not None else ("traceback",))


__all__ = ["CODES", "CodeInfo", "Diagnostic", "Severity"]
