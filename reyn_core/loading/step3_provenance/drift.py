"""Drift: what differs between ``reyn.lock`` and the installed world, one ``Drift`` per difference.

``compare_provenance`` (before a plugin is imported) and ``compare_tools`` (after it registered)
compare one locked plugin (``lock_audit.audit`` compares a whole load).
docs/provenance.md lists every drift kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reyn_core.jsondata import fields_json
from reyn_core.loading.step3_provenance.lock import LockedPlugin, LockedTool
from reyn_core.loading.step3_provenance.record import ProvenanceRecord
from reyn_core.tool import ToolDefinition

DRIFT_KINDS: dict[str, str] = {
    "plugin_added": "an enabled plugin is not in the lock",
    "plugin_removed": "a locked plugin is no longer enabled or installed",
    "plugin_not_loaded": "a locked plugin is installed as locked but did not load",
    "tools_not_compared": "an enforced lock refused the drifted plugin, so the audit did not import it",
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
    "permissions_changed": "the permissions the plugin declares (reyn_permissions.toml) changed",
    "extension_added": "the load imported an extension the lock does not have",
    "extension_removed": "a locked extension was not imported by the load",
}
"""The plugin kinds from ``distribution_changed`` to ``record_mismatch`` apply to an extension too
(its ``Drift.plugin_id`` is then ``<group>:<name>``, and ``subject`` is ``extension``)."""


@dataclass(frozen=True, slots=True)
class Drift:
    """One difference between the lock and the installed world. ``kind`` is one of ``DRIFT_KINDS``."""

    plugin_id: str
    kind: str
    detail: str
    tool: str | None = None
    path: str | None = None
    subject: str = "plugin"
    """``plugin``, or ``extension`` (``plugin_id`` is then ``<group>:<name>``)."""

    def __str__(self) -> str:
        return self.detail

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``reyn plugins audit --json``)."""
        return fields_json(self, rename={"plugin_id": "plugin"})


def short_digest(digest: str | None) -> str:
    if not digest:
        return "none"
    tag, _, hexpart = digest.rpartition(":")
    return f"{tag + ':' if tag else ''}{hexpart[:12]}…"


def _clip(text: str, limit: int = 120) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _drift(pid: str, kind: str, what: str, subject: str = "plugin", **where: str) -> Drift:
    """A ``kind`` drift of plugin (or extension) ``pid``, detailed as ``plugin '<pid>': <what>``."""
    return Drift(pid, kind, f"{subject} {pid!r}: {what}", subject=subject, **where)


def _changes(old: Any, new: Any, names: Sequence[str]) -> str:
    """``name old → new`` for each attribute in ``names`` that differs, joined by ``; `` (empty if none)."""
    return "; ".join(
        f"{k} {getattr(old, k)!r} → {getattr(new, k)!r}" for k in names if getattr(old, k) != getattr(new, k)
    )


def compare_provenance(
    locked: LockedPlugin, record: ProvenanceRecord, subject: str = "plugin"
) -> list[Drift]:
    """What differs between a locked plugin (or ``subject="extension"``, a locked extension) and its
    current origin record (run before import)."""
    pid = locked.plugin_id
    out: list[Drift] = []
    if record.distribution != locked.distribution:
        detail = (
            f"{subject} {pid!r} now comes from distribution {record.distribution!r}; "
            f"the lock has {locked.distribution!r}"
        )
        out.append(Drift(pid, "distribution_changed", detail, subject=subject))
    renamed = _renamed_metadata(locked, record)
    if record.version != locked.version:
        folded = f" (its {len(renamed)} .dist-info file(s) moved with it)" if renamed else ""
        what = f"version {locked.version} in the lock, {record.version} installed{folded}"
        out.append(_drift(pid, "version_changed", what, subject))
    if record.entry_point != locked.entry_point:
        what = f"entry point {record.entry_point!r}; the lock has {locked.entry_point!r}"
        out.append(_drift(pid, "entry_point_changed", what, subject))
    source = ("source_kind", "source_url", "commit", "artifact_sha256", "digest_scope")
    if changes := _changes(locked, record, source):
        out.append(_drift(pid, "source_changed", f"source changed: {changes}", subject))
    if record.tree_digest != locked.tree_digest:
        out += _file_drifts(locked, record, renamed, subject)
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


def _file_drifts(
    locked: LockedPlugin, record: ProvenanceRecord, renamed: Mapping[str, str], subject: str
) -> list[Drift]:
    pid = locked.plugin_id
    old, new = dict(locked.files), dict(record.files)
    for was, now in renamed.items():
        old.pop(was)
        new.pop(now)
    files: list[Drift] = []
    for path in sorted(old.keys() | new.keys()):
        if path not in new:
            what = f"file {path} is in the lock but not installed"
            files.append(_drift(pid, "file_removed", what, subject, path=path))
        elif path not in old:
            what = f"file {path} is installed but not in the lock"
            files.append(_drift(pid, "file_added", what, subject, path=path))
        elif old[path] != new[path]:
            what = f"file {path} changed (sha256 {old[path][:12]}… in the lock, {new[path][:12]}… installed)"
            files.append(_drift(pid, "file_changed", what, subject, path=path))
    counts = {k: sum(d.kind == k for d in files) for k in ("file_changed", "file_added", "file_removed")}
    summary = ", ".join(f"{n} {k.removeprefix('file_')}" for k, n in counts.items() if n) or (
        "only the .dist-info files the version change renamed" if renamed else "no file differs"
    )
    what = (
        f"tree digest {short_digest(record.tree_digest)} installed, "
        f"{short_digest(locked.tree_digest)} in the lock ({summary})"
    )
    return [_drift(pid, "digest_changed", what, subject), *files]


def compare_tools(locked: LockedPlugin, tools: Sequence[ToolDefinition]) -> list[Drift]:
    """What differs between a locked plugin's tools and the tools it registered now."""
    pid = locked.plugin_id
    current = {t.name: LockedTool.from_definition(t) for t in tools}
    was = {t.name: t for t in locked.tools}
    out: list[Drift] = []
    for name in sorted(was.keys() | current.keys()):
        old, new = was.get(name), current.get(name)
        if old is None and new is not None:
            what = f"new tool {name!r} (not in the lock): {_clip(new.description)}"
            out.append(_drift(pid, "tool_added", what, tool=name))
        elif new is None:
            what = f"tool {name!r} is in the lock but no longer registered"
            out.append(_drift(pid, "tool_removed", what, tool=name))
        elif old is not None and old.sha256 != new.sha256:
            out += _tool_drifts(pid, old, new)
    return out


def _tool_drifts(pid: str, old: LockedTool, new: LockedTool) -> list[Drift]:
    name = old.name
    found: list[tuple[str, str]] = []  # (kind, what changed)
    if old.description != new.description:
        what = (
            f"description of tool {name!r} changed from {_clip(old.description)} to {_clip(new.description)}"
        )
        found.append(("tool_description_changed", what))
    if old.parameters_sha256 != new.parameters_sha256:
        added = sorted(set(new.properties) - set(old.properties))
        removed = sorted(set(old.properties) - set(new.properties))
        parts = ([f"properties added: {', '.join(added)}"] if added else []) + (
            [f"properties removed: {', '.join(removed)}"] if removed else []
        )
        what = "; ".join(parts) or "same property names, other types or constraints"
        found.append(("tool_schema_changed", f"parameters of tool {name!r} changed ({what})"))
    if gates := _changes(old, new, ("router", "phase", "cluster")):
        found.append(("tool_gates_changed", f"gates of tool {name!r} changed: {gates}"))
    if traits := _changes(old, new, ("purity", "dispatch_kind")):
        found.append(("tool_traits_changed", f"tool {name!r} changed {traits}"))
    if not found:  # the hash moved but no recorded part did: the lock's tool entry was edited
        found.append(("tool_schema_changed", f"definition hash of tool {name!r} differs from the lock"))
    return [_drift(pid, kind, what, tool=name) for kind, what in found]


__all__ = ["DRIFT_KINDS", "Drift", "compare_provenance", "compare_tools", "short_digest"]
