"""The lock against a whole load: ``lock_from_load`` locks what a finished load loaded (its plugins
and the extensions it imported); ``audit`` names every drift between a lock and a finished load.
(The per-plugin comparisons live in ``drift.py``; this module joins them over the whole load.)

It reads a finished load (a ``LoadResult``) through ``FinishedLoad``, the little of it declared
here, so that step 3 never imports the report, which is built after the steps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from reyn_core.loading.step3_provenance.drift import Drift, compare_provenance, compare_tools, short_digest
from reyn_core.loading.step3_provenance.lock import DEFAULT_LOCK_PATH, LockedPlugin, LockError, LockFile

if TYPE_CHECKING:
    from reyn_core.loading.step3_provenance.record import ProvenanceRecord
    from reyn_core.tool import ToolDefinition


class LoadedPlugin(Protocol):
    """What the lock reads of one plugin of a finished load (a ``PluginLoadInfo``)."""

    @property
    def plugin_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def provenance(self) -> ProvenanceRecord | None: ...
    @property
    def api_version(self) -> int | None: ...
    @property
    def permissions(self) -> Mapping[str, Any] | None: ...
    @property
    def diagnostics(self) -> Sequence[Any]: ...


class LoadedExtension(Protocol):
    """What the lock reads of one extension a finished load imported (an ``ExtensionOrigin``)."""

    @property
    def key(self) -> str: ...
    @property
    def provenance(self) -> ProvenanceRecord: ...


class _LoadedPlugins(Protocol):
    @property
    def plugins(self) -> Sequence[LoadedPlugin]: ...
    @property
    def extensions(self) -> Sequence[LoadedExtension]: ...


class FinishedLoad(Protocol):
    """What ``lock_from_load`` and ``audit`` read of a finished load (a ``LoadResult``): its plugins
    and the definitions of the tools each registered."""

    @property
    def report(self) -> _LoadedPlugins: ...
    def definitions(self, info: Any) -> tuple[ToolDefinition, ...]: ...


def lock_from_load(result: FinishedLoad) -> LockFile:
    """A lock of every plugin of ``result`` with status ``loaded`` (origin, files and tools) and of
    every extension it imported (origin and files)."""
    plugins = []
    for info in result.report.plugins:
        if info.status != "loaded":
            continue
        if info.provenance is None:
            raise LockError(
                DEFAULT_LOCK_PATH, f"plugin {info.plugin_id!r} loaded without a provenance record"
            )
        plugins.append(
            LockedPlugin.from_provenance(
                info.provenance,
                result.definitions(info),
                info.api_version,
                permissions=(info.permissions or {}).get("declared"),
            )
        )
    extensions = tuple(LockedPlugin.from_provenance(e.provenance) for e in result.report.extensions)
    return LockFile(plugins=tuple(plugins), extensions=extensions)


_ACTIVE = ("loaded", "refused", "failed")


def audit(lock: LockFile, result: FinishedLoad) -> list[Drift]:
    """Every drift between ``lock`` and the plugins of ``result``, sorted by plugin id."""
    infos: dict[str, LoadedPlugin] = {}
    # One id may be listed per candidate distribution: prefer the active one.
    for info in result.report.plugins:
        if info.plugin_id not in infos or info.status in _ACTIVE:
            infos[info.plugin_id] = info
    out: list[Drift] = []
    for pid, locked, now in _joined(lock.plugins, infos):
        if locked is not None:
            out += _audit_plugin(locked, now, result)
        elif now is not None and now.status in _ACTIVE:
            origin = f" ({_described(now.provenance)})" if now.provenance else ""
            out.append(
                Drift(
                    pid,
                    "plugin_added",
                    f"plugin {pid!r} is enabled but not in the lock{origin}; "
                    "run `reyn plugins lock` to accept it",
                )
            )
    out.sort(key=lambda d: d.plugin_id)
    return out + _audit_extensions(lock, result)


def _audit_extensions(lock: LockFile, result: FinishedLoad) -> list[Drift]:
    """Every drift between the lock's ``[extensions]`` and the extensions ``result`` imported."""
    out: list[Drift] = []
    loaded = {e.key: e.provenance for e in result.report.extensions}
    for key, locked, record in _joined(lock.extensions, loaded):
        if locked is None and record is not None:
            what = _described(record)
            why = f"the load imported extension {key!r} ({what}), which is not in the lock; run `reyn "
            out.append(_extension_drift(key, "extension_added", why + "plugins lock` to accept it"))
        elif record is None:
            why = "is not installed, was refused, or is no longer used by the profile"
            out.append(_extension_drift(key, "extension_removed", f"locked extension {key!r} {why}"))
        elif locked is not None:
            out += compare_provenance(locked, record, subject="extension")
    return out


_Loaded = TypeVar("_Loaded")


def _joined(
    locked: Sequence[LockedPlugin], loaded: Mapping[str, _Loaded]
) -> list[tuple[str, LockedPlugin | None, _Loaded | None]]:
    """The lock against the load: every id of either, sorted, with what the lock and the load each
    have under it (None: nothing). The one join ``audit`` makes for plugins and for extensions."""
    pinned = {p.plugin_id: p for p in locked}
    return [(key, pinned.get(key), loaded.get(key)) for key in sorted(pinned.keys() | loaded.keys())]


def _described(record: ProvenanceRecord) -> str:
    """``<distribution> <version>, <short digest>``: what a drift says the load has."""
    return f"{record.distribution} {record.version}, {short_digest(record.tree_digest)}"


def _extension_drift(key: str, kind: str, detail: str) -> Drift:
    return Drift(key, kind, detail, subject="extension")


def _audit_plugin(locked: LockedPlugin, info: LoadedPlugin | None, result: FinishedLoad) -> list[Drift]:
    pid = locked.plugin_id
    if info is None or info.status not in _ACTIVE or info.provenance is None:
        why = {
            None: "is not installed",
            "discovered": "is installed but not enabled by the profile",
            "missing": "is enabled but not installed",
        }.get(info.status if info is not None else None, "has no provenance record")
        return [Drift(pid, "plugin_removed", f"locked plugin {pid!r} {why}")]
    out = compare_provenance(locked, info.provenance)
    out += [
        Drift(
            pid,
            "record_mismatch",
            f"plugin {pid!r}: installed file {path} does not match the installer's "
            "RECORD (changed, missing or added after install)",
            path=path,
        )
        for path in info.provenance.record_mismatches
    ]
    if info.status == "loaded":
        if info.api_version != locked.api_version:
            out.append(
                Drift(
                    pid,
                    "api_version_changed",
                    f"plugin {pid!r}: REYN_API {info.api_version} now, {locked.api_version} in the lock",
                )
            )
        out += compare_tools(locked, result.definitions(info))
        out += _permission_drift(locked, info)
    elif any(d.code == "RL001" for d in info.diagnostics):  # the lock gate refused it before import
        out.append(
            Drift(
                pid,
                "tools_not_compared",
                f"plugin {pid!r} was not imported, so its tools were not compared: its files differ "
                "from the lock and [lock] enforce = true; review the files above, then run `reyn "
                "plugins lock` to accept them",
            )
        )
    elif not out:
        out.append(
            Drift(
                pid,
                "plugin_not_loaded",
                f"locked plugin {pid!r} matches the lock but did not load (status {info.status}); "
                "see `reyn plugins show`",
            )
        )
    return out


def _permission_drift(locked: LockedPlugin, info: LoadedPlugin) -> list[Drift]:
    """``permissions_changed``: what the plugin declares now differs from what was locked."""
    now = (info.permissions or {}).get("declared")
    if locked.permissions is None or now is None or dict(locked.permissions) == now:
        return []
    changes = [
        f"{key}: {locked.permissions.get(key)!r} -> {now.get(key)!r}"
        for key in now
        if locked.permissions.get(key) != now.get(key)
    ]
    return [
        Drift(
            locked.plugin_id,
            "permissions_changed",
            f"plugin {locked.plugin_id!r} declares other permissions than the lock: {'; '.join(changes)}",
        )
    ]


__all__ = ["audit", "lock_from_load"]
