"""``reyn.lock`` as data: the locked plugins and their tools.

``lock_audit.lock_from_load(result)`` records, per loaded plugin, its origin
(distribution, version, source, artifact sha256, tree digest and the per-file hashes the digest is
computed over) and, per tool, its ``definition_digest`` (``reyn_core.definition_digest``, the one
digest of what a definition serves) plus the parts needed to say *what* changed (``drift``
compares them). ``lock_file`` writes and reads it as TOML.
docs/provenance.md shows the format.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from reyn_core.definition_digest import canonical_sha256, definition_digest
from reyn_core.errors import ReynError
from reyn_core.jsondata import fields_json
from reyn_core.loading.step3_provenance.record import ProvenanceRecord, origin_fields
from reyn_core.tool import ToolDefinition

LOCK_VERSION = 4
"""The lock format. 2 (issue 23): a tool's ``sha256`` is ``definition_digest``; version 1 pinned an
older hash of fewer fields. 3 (issue 28): the digest covers the tool's result schema (``returns``),
so every version-2 pin differs. 4 (issue 24): ``[extensions]`` pins the extensions a load imports
(isolation backend, tracing add-on, approval store), which an older lock cannot have. An older lock
cannot be compared with what this version computes, so it is refused with one diagnostic asking to
re-run ``reyn plugins lock`` (``RL004``) rather than as drift of every tool."""
_SINCE = {
    2: "a tool is pinned by its definition digest, over every field a surface serves",
    3: "that digest covers the tool's result schema",
    4: "the extensions a load imports (isolation backend, tracing add-on, approval store) are pinned",
}
"""What each format version added: an outdated lock's diagnostic says what it lacks."""
DEFAULT_LOCK_PATH = "reyn.lock"


class LockError(ReynError):
    """A lock file that cannot be used: missing, not TOML, an unknown version, or malformed."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)
        self.reason = reason


class OutdatedLockError(LockError):
    """A lock written in an older format (``version`` below ``LOCK_VERSION``): not wrong, but what it
    pins cannot be compared with what this Reyn computes; re-running ``reyn plugins lock`` fixes it."""

    def __init__(self, path: Path | str, version: int) -> None:
        added = "; ".join(what for since, what in sorted(_SINCE.items()) if since > version)
        super().__init__(
            path,
            f"lock format version {version} was written by an older Reyn; this Reyn reads version "
            f"{LOCK_VERSION} (since then: {added}): review the installed plugins and extensions, then "
            "re-run `reyn plugins lock`",
        )
        self.version = version


# --------------------------------------------------------------------------- model


@dataclass(frozen=True, slots=True)
class LockedTool:
    """One tool as locked: its definition hash, and the parts audit reports separately."""

    name: str
    sha256: str
    description: str
    parameters_sha256: str
    properties: tuple[str, ...]
    router: str
    phase: str
    cluster: str
    purity: str
    dispatch_kind: str

    @classmethod
    def from_definition(cls, tool: ToolDefinition) -> LockedTool:
        """Lock ``tool`` as registered."""
        props = tool.parameters.get("properties")
        return cls(
            name=tool.name,
            sha256=definition_digest(tool),
            description=tool.description,
            parameters_sha256=canonical_sha256(tool.parameters),
            properties=tuple(sorted(props)) if isinstance(props, Mapping) else (),
            router=tool.gates.router,
            phase=tool.gates.phase,
            cluster=tool.cluster,
            purity=tool.purity,
            dispatch_kind=tool.dispatch_kind,
        )

    def as_table(self) -> dict[str, Any]:
        """The tool's table as written in the lock: every field but ``name`` (the table's key), in
        field order (``TOOL_KEYS``), ``properties`` as a list."""
        return fields_json(self, omit=("name",))


TOOL_KEYS: tuple[str, ...] = tuple(f.name for f in fields(LockedTool) if f.name != "name")
"""The keys of a locked tool's table, in the order written: the ``LockedTool`` fields but ``name``.
The one list the lock writes (``as_table``) and reads (``lock_file``) a tool by."""


@dataclass(frozen=True, slots=True)
class LockedPlugin:
    """One plugin as locked: origin, tree digest with its file listing, API version and tools."""

    plugin_id: str
    distribution: str
    version: str
    entry_point: str
    api_version: int | None
    source_kind: str
    source_url: str | None
    commit: str | None
    artifact_sha256: str | None
    tree_digest: str
    digest_scope: str
    files: tuple[tuple[str, str], ...]
    tools: tuple[LockedTool, ...] = ()
    permissions: Mapping[str, Any] | None = None
    """The declared permissions (``reyn_permissions.toml``) as locked; None in a lock that predates them."""

    def __post_init__(self) -> None:
        # Canonical order, whatever order the caller used: equal locks compare and render equal.
        object.__setattr__(self, "files", tuple(sorted(self.files)))
        object.__setattr__(self, "tools", tuple(sorted(self.tools, key=lambda t: t.name)))

    @classmethod
    def from_provenance(
        cls,
        record: ProvenanceRecord,
        tools: Iterable[ToolDefinition] = (),
        api_version: int | None = None,
        permissions: Mapping[str, Any] | None = None,
    ) -> LockedPlugin:
        """Lock a plugin from its provenance record and its registered tools."""
        return cls(
            plugin_id=record.plugin_id,
            distribution=record.distribution,
            version=record.version,
            entry_point=record.entry_point,
            api_version=api_version,
            **origin_fields(record),
            files=tuple(record.files),
            tools=tuple(LockedTool.from_definition(t) for t in tools),
            permissions=dict(permissions) if permissions is not None else None,
        )

    def tool(self, name: str) -> LockedTool | None:
        """The locked tool called ``name``, if any."""
        return next((t for t in self.tools if t.name == name), None)

    def as_table(self) -> dict[str, Any]:
        """The plugin's table as written in the lock (None values left out), with files and tools."""
        head = {
            "distribution": self.distribution,
            "version": self.version,
            "entry_point": self.entry_point,
            "api_version": self.api_version,
            **origin_fields(self),
        }
        table: dict[str, Any] = {k: v for k, v in head.items() if v is not None}
        if self.permissions is not None:
            table["permissions"] = dict(self.permissions)
        table["files"] = dict(self.files)
        table["tools"] = {t.name: t.as_table() for t in self.tools}
        return table


@dataclass(frozen=True, slots=True)
class LockFile:
    """The whole ``reyn.lock``: format version, the locked plugins sorted by id, and the locked
    extensions sorted by ``<group>:<name>``.

    An extension is locked as its origin and files only: a ``LockedPlugin`` whose ``plugin_id`` is
    ``<group>:<name>`` (its provenance record's id), with no API version, tools or permissions, so one
    comparison (``drift.compare_provenance``) serves both."""

    plugins: tuple[LockedPlugin, ...] = ()
    version: int = LOCK_VERSION
    extensions: tuple[LockedPlugin, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "plugins", tuple(sorted(self.plugins, key=lambda p: p.plugin_id)))
        object.__setattr__(self, "extensions", tuple(sorted(self.extensions, key=lambda p: p.plugin_id)))

    def plugin(self, plugin_id: str) -> LockedPlugin | None:
        """The locked plugin ``plugin_id``, if any."""
        return next((p for p in self.plugins if p.plugin_id == plugin_id), None)

    def extension(self, key: str) -> LockedPlugin | None:
        """The locked extension ``<group>:<name>``, if any."""
        return next((e for e in self.extensions if e.plugin_id == key), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (same content as the TOML)."""
        return {
            "version": self.version,
            "plugins": {p.plugin_id: p.as_table() for p in self.plugins},
            "extensions": {e.plugin_id: e.as_table() for e in self.extensions},
        }


__all__ = [
    "DEFAULT_LOCK_PATH",
    "LOCK_VERSION",
    "LockError",
    "LockFile",
    "LockedPlugin",
    "LockedTool",
    "OutdatedLockError",
    "TOOL_KEYS",
]
