"""The catalogue's records: skills, agents, the catalogue itself, and the diagnostics of building one
(stable codes; docs/packs/catalog.md lists them)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
NAME_RULE = "1-64 characters: letters, digits, '.', '_' and '-', starting with a letter or digit"
DESCRIPTION_MAX = 1024
DEFAULT_CATEGORY = "general"
MAX_DEPTH = 4
SKILL_KEYS = ("name", "description", "category", "input_schema")
AGENT_KEYS = ("name", "description", "tools", "model")

# code -> (severity, title). Codes are stable; docs/packs/catalog.md lists them.
CODES: dict[str, tuple[Literal["error", "warning"], str]] = {
    "RK001": ("error", "malformed front matter"),
    "RK002": ("error", "missing or invalid field"),
    "RK003": ("error", "duplicate skill or agent name"),
    "RK004": ("warning", "configured folder does not exist"),
    "RK005": ("warning", "unknown front-matter key"),
    "RK006": ("error", "file unreadable or too large"),
    "RK007": ("error", "invalid input schema"),
    "RK008": ("error", "invalid record in the host catalogue"),
    "RK009": ("warning", "a file the skill refers to is missing"),
}


@dataclass(frozen=True, slots=True)
class CatalogDiagnostic:
    """One problem found while building a catalogue."""

    code: str
    message: str
    hint: str = ""
    path: Path | None = None
    line: int = 0

    @property
    def severity(self) -> str:
        """``error`` (the file was skipped) or ``warning`` (it loaded anyway)."""
        return CODES[self.code][0]

    def render(self) -> str:
        """``CODE severity path:line: message (hint)``."""
        where = (
            f"{self.path}:{self.line}: " if self.path and self.line else f"{self.path}: " if self.path else ""
        )
        hint = f" ({self.hint})" if self.hint else ""
        return f"{self.code} {self.severity} {where}{self.message}{hint}"

    def as_dict(self) -> dict[str, Any]:
        """Its own fields (``path`` as text) plus the rest of a core ``Diagnostic``: the severity,
        plugin ``catalog``, no tool."""
        path = str(self.path) if self.path else None
        return {**asdict(self), "path": path, "severity": self.severity, "plugin": "catalog", "tool": None}


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill: what it does, how to call it (``input_schema``) and its instructions (the file body)."""

    name: str
    description: str
    category: str = DEFAULT_CATEGORY
    input_schema: Mapping[str, Any] | None = None
    instructions: str = ""
    path: Path | None = None

    def record(self) -> dict[str, Any]:
        """The full record ``describe_skill`` returns."""
        return _record(self)


@dataclass(frozen=True, slots=True)
class Agent:
    """An agent another agent may delegate to."""

    name: str
    description: str
    tools: tuple[str, ...] | None = None
    model: str | None = None
    instructions: str = ""
    path: Path | None = None

    def record(self) -> dict[str, Any]:
        """The full record ``describe_agent`` returns."""
        return _record(self)


def _record(entry: Skill | Agent) -> dict[str, Any]:
    """Every field of a skill or agent but its file path (host-only), tuples as lists."""
    values = {f.name: getattr(entry, f.name) for f in fields(entry) if f.name != "path"}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


@dataclass(frozen=True, slots=True)
class Catalog:
    """Skills and agents by name, the diagnostics of building them, and the skill names more than one
    file declares (``skill_clashes``: none of those files is loaded, RK003)."""

    skills: Mapping[str, Skill] = field(default_factory=dict)
    agents: Mapping[str, Agent] = field(default_factory=dict)
    diagnostics: tuple[CatalogDiagnostic, ...] = ()
    skill_clashes: Mapping[str, tuple[Path, ...]] = field(default_factory=dict)
