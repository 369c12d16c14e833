"""Drift: what differs between ``reyn.lock`` and the installed world, one ``Drift`` per difference.

``compare_provenance`` (before a plugin is imported) and ``compare_tools`` (after it registered)
compare one locked plugin (``reyn_core.loading.lock_audit.audit`` compares a whole load).
docs/provenance.md lists every drift kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reyn_core.loading.provenance.lock import LockedPlugin, LockedTool
from reyn_core.loading.provenance.record import ProvenanceRecord
from reyn_core.tool import ToolDefinition

DRIFT_KINDS: dict[str, str] = {
    "plugin_added": "an enabled plugin is not in the lock",
    "plugin_removed": "a locked plugin is no longer enabled or installed",
    "plugin_not_loaded": "a locked plugin is installed as locked but did not load",
    "distribution_changed": "another distribution now provides the plugin id",
    "version_changed": "the distribution's version changed",
    "entry_point_changed": "the entry point names another module",
    "source_changed": "source kind, URL, commit, artifact sha256 or digest scope changed",
    "digest_changed": "the tree digest differs (the file drifts name each file)",
    "file_added": "a file is in the digest listing that the lock does not have",
    "file_removed": "a locked file is gone",
    "file_changed": "a file's bytes changed",
    "record_mismatch": "an installed file no longer matches the installer's RECORD",
    "api_version_changed": "the plugin declares another REYN_API",
    "tool_added": "the plugin registers a tool the lock does not have",
    "tool_removed": "a locked tool is no longer registered",
    "tool_description_changed": "a tool's description changed (what the model reads)",
    "tool_schema_changed": "a tool's parameters JSON Schema changed",
    "tool_gates_changed": "a tool's router/phase gates or cluster (allowed_ops matching) changed",
    "tool_traits_changed": "a tool's purity or dispatch kind changed",
}


@dataclass(frozen=True, slots=True)
class Drift:
    """One difference between the lock and the installed world. ``kind`` is one of ``DRIFT_KINDS``."""

    plugin_id: str
    kind: str
    detail: str
    tool: str | None = None
    path: str | None = None

    def __str__(self) -> str:
        return self.detail

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``reyn plugins audit --json``)."""
        return {
            "plugin": self.plugin_id,
            "kind": self.kind,
            "detail": self.detail,
            "tool": self.tool,
            "path": self.path,
        }


def short_digest(digest: str | None) -> str:
    if not digest:
        return "none"
    tag, _, hexpart = digest.rpartition(":")
    return f"{tag + ':' if tag else ''}{hexpart[:12]}…"


def _clip(text: str, limit: int = 120) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def compare_provenance(locked: LockedPlugin, record: ProvenanceRecord) -> list[Drift]:
    """What differs between a locked plugin and its current origin record (run before import)."""
    pid = locked.plugin_id
    out: list[Drift] = []
    if record.distribution != locked.distribution:
        out.append(
            Drift(
                pid,
                "distribution_changed",
                f"plugin {pid!r} now comes from distribution {record.distribution!r}; "
                f"the lock has {locked.distribution!r}",
            )
        )
    renamed = _renamed_metadata(locked, record)
    if record.version != locked.version:
        folded = f" (its {len(renamed)} .dist-info file(s) moved with it)" if renamed else ""
        out.append(
            Drift(
                pid,
                "version_changed",
                f"plugin {pid!r}: version {locked.version} in the lock, {record.version} installed{folded}",
            )
        )
    if record.entry_point != locked.entry_point:
        out.append(
            Drift(
                pid,
                "entry_point_changed",
                f"plugin {pid!r}: entry point {record.entry_point!r}; the lock has {locked.entry_point!r}",
            )
        )
    changes = [
        f"{name} {old!r} → {new!r}"
        for name, old, new in (
            ("source_kind", locked.source_kind, record.source_kind),
            ("source_url", locked.source_url, record.source_url),
            ("commit", locked.commit, record.commit),
            ("artifact_sha256", locked.artifact_sha256, record.artifact_sha256),
            ("digest_scope", locked.digest_scope, record.digest_scope),
        )
        if old != new
    ]
    if changes:
        out.append(Drift(pid, "source_changed", f"plugin {pid!r}: source changed: {'; '.join(changes)}"))
    if record.tree_digest != locked.tree_digest:
        out += _file_drifts(locked, record, renamed)
    return out


def _renamed_metadata(locked: LockedPlugin, record: ProvenanceRecord) -> dict[str, str]:
    """Locked path → installed path for the files of a ``.dist-info`` folder renamed by a version bump
    (``name-0.1.0.dist-info/METADATA`` → ``name-0.2.0.dist-info/METADATA``). Their bytes change with
    the version by nature; the version drift reports them once instead of one removal and one
    addition per file. Files outside that folder are compared as always."""
    if record.version == locked.version:
        return {}

    def folder(version: str, files: Sequence[str]) -> str | None:
        tops = {p.split("/", 1)[0] for p in files if "/" in p}
        found = [t for t in tops if t.endswith(f"-{version}.dist-info")]
        return found[0] if len(found) == 1 else None

    old_dir = folder(locked.version, [p for p, _ in locked.files])
    new_dir = folder(record.version, [p for p, _ in record.files])
    if old_dir is None or new_dir is None:
        return {}
    installed = {p for p, _ in record.files}
    out = {}
    for path, _ in locked.files:
        if path.startswith(old_dir + "/"):
            moved = new_dir + path[len(old_dir) :]
            if moved in installed:
                out[path] = moved
    return out


def _file_drifts(locked: LockedPlugin, record: ProvenanceRecord, renamed: Mapping[str, str]) -> list[Drift]:
    pid = locked.plugin_id
    old, new = dict(locked.files), dict(record.files)
    for was, now in renamed.items():
        old.pop(was)
        new.pop(now)
    files: list[Drift] = []
    for path in sorted(old.keys() | new.keys()):
        if path not in new:
            files.append(
                Drift(
                    pid,
                    "file_removed",
                    f"plugin {pid!r}: file {path} is in the lock but not installed",
                    path=path,
                )
            )
        elif path not in old:
            files.append(
                Drift(
                    pid,
                    "file_added",
                    f"plugin {pid!r}: file {path} is installed but not in the lock",
                    path=path,
                )
            )
        elif old[path] != new[path]:
            files.append(
                Drift(
                    pid,
                    "file_changed",
                    f"plugin {pid!r}: file {path} changed (sha256 {old[path][:12]}… in the lock, "
                    f"{new[path][:12]}… installed)",
                    path=path,
                )
            )
    counts = {k: sum(d.kind == k for d in files) for k in ("file_changed", "file_added", "file_removed")}
    summary = ", ".join(f"{n} {k.removeprefix('file_')}" for k, n in counts.items() if n) or (
        "only the .dist-info files the version change renamed" if renamed else "no file differs"
    )
    head = Drift(
        pid,
        "digest_changed",
        f"plugin {pid!r}: tree digest {short_digest(record.tree_digest)} installed, "
        f"{short_digest(locked.tree_digest)} in the lock ({summary})",
    )
    return [head, *files]


def compare_tools(locked: LockedPlugin, tools: Sequence[ToolDefinition]) -> list[Drift]:
    """What differs between a locked plugin's tools and the tools it registered now."""
    pid = locked.plugin_id
    current = {t.name: LockedTool.from_definition(t) for t in tools}
    was = {t.name: t for t in locked.tools}
    out: list[Drift] = []
    for name in sorted(was.keys() | current.keys()):
        old, new = was.get(name), current.get(name)
        if old is None and new is not None:
            out.append(
                Drift(
                    pid,
                    "tool_added",
                    f"plugin {pid!r}: new tool {name!r} (not in the lock): {_clip(new.description)}",
                    tool=name,
                )
            )
        elif new is None:
            out.append(
                Drift(
                    pid,
                    "tool_removed",
                    f"plugin {pid!r}: tool {name!r} is in the lock but no longer registered",
                    tool=name,
                )
            )
        elif old is not None and old.sha256 != new.sha256:
            out += _tool_drifts(pid, old, new)
    return out


def _tool_drifts(pid: str, old: LockedTool, new: LockedTool) -> list[Drift]:
    name = old.name
    out: list[Drift] = []
    if old.description != new.description:
        out.append(
            Drift(
                pid,
                "tool_description_changed",
                f"plugin {pid!r}: description of tool {name!r} changed from {_clip(old.description)} "
                f"to {_clip(new.description)}",
                tool=name,
            )
        )
    if old.parameters_sha256 != new.parameters_sha256:
        added = sorted(set(new.properties) - set(old.properties))
        removed = sorted(set(old.properties) - set(new.properties))
        parts = ([f"properties added: {', '.join(added)}"] if added else []) + (
            [f"properties removed: {', '.join(removed)}"] if removed else []
        )
        what = "; ".join(parts) or "same property names, other types or constraints"
        out.append(
            Drift(
                pid,
                "tool_schema_changed",
                f"plugin {pid!r}: parameters of tool {name!r} changed ({what})",
                tool=name,
            )
        )
    gates = [
        f"{k} {getattr(old, k)!r} → {getattr(new, k)!r}"
        for k in ("router", "phase", "cluster")
        if getattr(old, k) != getattr(new, k)
    ]
    if gates:
        out.append(
            Drift(
                pid,
                "tool_gates_changed",
                f"plugin {pid!r}: gates of tool {name!r} changed: {'; '.join(gates)}",
                tool=name,
            )
        )
    traits = [
        f"{k} {getattr(old, k)!r} → {getattr(new, k)!r}"
        for k in ("purity", "dispatch_kind")
        if getattr(old, k) != getattr(new, k)
    ]
    if traits:
        out.append(
            Drift(
                pid,
                "tool_traits_changed",
                f"plugin {pid!r}: tool {name!r} changed {'; '.join(traits)}",
                tool=name,
            )
        )
    if not out:  # the hash moved but no recorded part did: the lock's tool entry was edited
        out.append(
            Drift(
                pid,
                "tool_schema_changed",
                f"plugin {pid!r}: definition hash of tool {name!r} differs from the lock",
                tool=name,
            )
        )
    return out


__all__ = ["DRIFT_KINDS", "Drift", "compare_provenance", "compare_tools", "short_digest"]
