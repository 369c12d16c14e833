"""Load steps of isolated plugins: read the declared permissions, and run the plugin in a worker.

``read_permissions`` (every enabled plugin, after provenance) reads ``reyn_permissions.toml`` from the
digested bytes, so ``plugins show`` and the lock have it whether or not the plugin is isolated.
``import_or_isolate`` imports an in-process plugin as before; for ``isolation = "process"`` it checks
the grants against the declaration, starts the sandboxed worker and gives the plugin a stand-in
plugin manager whose hooks answer with what the worker sent: the in-process steps that follow
(``collect_tools``, ``collect_diagnostics``, ``collect_commands``) then apply exactly the same rules —
names, prefix, include/exclude, schema checks, collisions, the lock — to the worker's definitions.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from reyn_core.hookspecs import API_VERSION, hookimpl, plugin_manager
from reyn_core.isolation.permissions import NOTHING, DeclarationError, DeclaredPermissions, read_declaration
from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.step4_import.importing import import_plugin, verify_import_origin
from reyn_core.loading.step5_hooks.settings_check import validate_settings
from reyn_core.tool import ToolDefinition

if TYPE_CHECKING:
    # Only an isolated plugin needs grants and an IsolationInfo: an in-process load imports neither.
    from reyn_core.isolation.codes import Finding
    from reyn_core.isolation.grants import GrantedPermissions

# Hooks a worker cannot serve: policy hooks judge every call of every plugin, in the host.
_HOST_ONLY_HOOKS = {
    "reyn_before_tool_call": "its policy hooks judge every call of every plugin, in the host",
    "reyn_after_tool_call": "its policy hooks judge every call of every plugin, in the host",
}

# The hooks the stand-in plugin manager answers from the worker's reply (CLI commands: not offered,
# RJ010; the retired ``reyn_load_inputs``: ignored as in process). A plugin implementing any other
# hook is refused isolation: its answer would be needed in the host, and the worker does not send it.
_FORWARDED_HOOKS = frozenset(
    {
        "reyn_register_tools",
        "reyn_settings_model",
        "reyn_diagnostics",
        "reyn_cli_commands",
        "reyn_load_inputs",
    }
)
_NOT_FORWARDED = "the host needs this hook's answer, and a worker does not forward it"


def read_permissions(session: LoadSession, p: PluginState) -> None:
    """``p.permissions`` from the plugin's declaration (``RJ001`` refuses a malformed one)."""
    rec = p.provenance
    assert rec is not None
    try:
        p.permissions = read_declaration(rec.entry_point, rec.module_locations, rec.files)
    except DeclarationError as exc:
        p.fail("refused", "RJ001", str(exc))


def permissions_report(p: PluginState, isolation: str) -> dict[str, Any] | None:
    """The load report's ``permissions`` of an enabled plugin (None before its declaration was read)."""
    declared = p.permissions
    if declared is None:
        return None
    data: dict[str, Any] = {
        "declared": declared.to_dict(),
        "declaration": declared.source,
        "isolation": isolation,
    }
    if p.isolation is not None:
        data.update(p.isolation.to_dict())
    return data


def declared_of(record: Any) -> dict[str, Any] | None:
    """The ``permissions`` of an installed-but-not-enabled plugin, from its provenance record."""
    try:
        declared = read_declaration(record.entry_point, record.module_locations, record.files)
    except DeclarationError:
        return None
    return {"declared": declared.to_dict(), "declaration": declared.source, "isolation": None}


def import_or_isolate(session: LoadSession, p: PluginState) -> None:
    """Import the plugin in process (after ``verify_import_origin``: nothing may shadow it on the host's
    path), or start its isolated worker (``isolation = "process"``), whose fresh interpreter serves the
    plugin's names from the digested files only, whatever the host's path holds."""
    cfg = session.profile.plugin(p.plugin_id)
    if cfg.isolation != "process":
        if cfg.grants is not None:
            p.warn(
                "RJ006",
                f"[plugins.{p.plugin_id}.grants] is set but the plugin runs in process, where grants are not "
                "enforced: it runs with the host's permissions",
            )
        verify_import_origin(session, p)
        if p.ok:
            import_plugin(session, p)
        return
    _isolate(session, p, _granted(session, p))


def settings_in_process(session: LoadSession, p: PluginState) -> None:
    """Validate settings in the host, unless the worker did (with the plugin's own model)."""
    if p.isolation is None:
        validate_settings(session, p)


def _granted(session: LoadSession, p: PluginState) -> GrantedPermissions:
    from reyn_core.isolation.grants import GrantedPermissions

    grants = session.profile.plugin(p.plugin_id).grants
    if grants is None:
        return GrantedPermissions()

    def paths(values: list[str]) -> tuple[str, ...]:
        return tuple(os.path.realpath(session.profile.resolve_path(v)) for v in values)

    return GrantedPermissions(
        read=paths(grants.read),
        write=paths(grants.write),
        network=grants.network,
        subprocess=grants.subprocess,
        environment=tuple(grants.environment),
        memory_mb=grants.memory_mb,
        max_result_bytes=grants.max_result_bytes,
        call_timeout_s=grants.call_timeout_s,
    )


def _isolate(session: LoadSession, p: PluginState, granted: GrantedPermissions) -> None:
    from reyn_core.isolation.client import WorkerClient, WorkerSpec, WorkerStartError
    from reyn_core.isolation.grants import compare
    from reyn_core.isolation.host_paths import nested_root_findings, root_identities, write_root_findings
    from reyn_core.isolation.info import IsolationInfo
    from reyn_core.isolation.launch import IsolationUnavailable, worker_command

    rec = p.provenance
    assert rec is not None
    declared: DeclaredPermissions = p.permissions or NOTHING
    # every reason a plugin cannot run isolated is named at once: the declared bridges (RJ004 of
    # ``compare``) and, from the worker's load, the hooks the host would need
    reasons = []
    for finding in compare(p.plugin_id, declared, granted):
        if finding.code == "RJ004":
            reasons.append(finding.message)
        else:
            _report(p, finding)
    locations = [loc for _, loc in rec.module_locations]
    if granted.write:
        for finding in write_root_findings(p.plugin_id, granted.write, _protected(session, locations)):
            _report(p, finding)
    for finding in nested_root_findings(p.plugin_id, (*granted.read, *granted.write), _write_roots(session)):
        _report(p, finding)
    if not p.ok:
        return
    try:
        argv, env, enforced = worker_command(granted, locations, os.environ)
    except IsolationUnavailable as exc:
        p.fail("refused", "RJ004", f"plugin {p.plugin_id!r} cannot run isolated on this machine: {exc}")
        return
    from dataclasses import asdict

    request = {
        "op": "load",
        "record": asdict(rec),
        "settings": session.profile.plugin(p.plugin_id).settings,
        "subprocess": granted.subprocess,
        "network": granted.network,
        "max_result_bytes": granted.max_result_bytes,
    }
    client = WorkerClient(
        WorkerSpec(
            p.plugin_id,
            argv,
            env,
            request,
            max_result_bytes=granted.max_result_bytes,
            roots=root_identities((*granted.read, *granted.write)),
        )
    )
    try:
        loaded = client.start()
    except WorkerStartError as exc:
        if reasons:
            _refuse(p, reasons)
        else:
            p.fail("failed", exc.code, exc.message)
        return
    reasons += [
        f"hook {hook}: {_HOST_ONLY_HOOKS.get(hook, _NOT_FORWARDED)}"
        for hook in loaded.get("hooks", ())
        if hook not in _FORWARDED_HOOKS
    ]
    if reasons:
        client.close()
        _refuse(p, reasons, loaded)
        return
    if "reyn_cli_commands" in loaded.get("hooks", ()):
        p.warn(
            "RJ010",
            f"plugin {p.plugin_id!r} runs isolated, so its CLI commands are not offered: a command is "
            "handed the host's LoadResult (host objects) and would run the plugin's code in the host",
        )
    p.api_version = API_VERSION
    p.isolation = IsolationInfo(granted, enforced, client)
    p.pm = _stand_in(p, client, loaded, granted)
    p.diagnostics.append(
        Diagnostic.make(
            "RJ008",
            f"plugin {p.plugin_id!r} runs isolated (declared: {declared.summary}; Landlock ABI "
            f"{enforced.get('landlock_abi')}; enforced: {', '.join(enforced.get('enforced') or [])})",
            plugin=p.plugin_id,
        )
    )


def _write_roots(session: LoadSession) -> dict[str, str]:
    """Every isolated plugin's write roots, resolved: root → plugin id."""
    found: dict[str, str] = {}
    for plugin_id in session.profile.enabled:
        cfg = session.profile.plugin(plugin_id)
        if cfg.isolation == "process" and cfg.grants is not None:
            for value in cfg.grants.write:
                found.setdefault(os.path.realpath(session.profile.resolve_path(value)), plugin_id)
    return found


def _protected(session: LoadSession, locations: list[str]) -> dict[str, str]:
    """The host's code and records, which no write root may overlap (``isolation.host_paths``)."""
    from reyn_core.isolation.host_paths import protected_paths
    from reyn_core.isolation.launch import code_roots
    from reyn_core.loading.argument_key import key_path
    from reyn_core.remote_log import remote_log_file

    profile = session.profile
    audit = profile.audit.log
    remote = remote_log_file()
    files = {
        "the host's profile": profile.source,
        "the host's lock": str(profile.lock_path),
        "the host's audit log": str(profile.resolve_path(audit)) if audit else None,
        "the host's remote failure log": str(remote) if remote else None,
        # the key calls and sessions are hashed with: a worker that could replace it could forge them
        "the host's argument key": str(key_path()),
    }
    approvals = profile.approvals
    if approvals.rules and approvals.backend == "sqlite":  # its rows are trusted as decisions
        store = str(profile.resolve_path(approvals.store))
        for side in ("", "-wal", "-shm"):
            files[f"the host's approval store{side and ' (' + side[1:] + ')'}"] = store + side
    return protected_paths(code_roots(locations), files)


def _stand_in(p: PluginState, client: Any, loaded: dict[str, Any], granted: GrantedPermissions) -> Any:
    """A plugin manager whose hooks answer with what the worker loaded."""
    from reyn_core.isolation.grants import purity_findings
    from reyn_core.isolation.proxy import proxies

    definitions, findings = proxies(client, p.plugin_id, loaded.get("tools", []), granted.call_timeout_s)
    named = [(d.name, d.purity) for d in definitions if isinstance(d, ToolDefinition)]
    refused = purity_findings(p.plugin_id, named, granted)
    findings += refused
    dropped = {f.tool for f in refused}
    for finding in findings:
        _report(p, finding)
    kept = [d for d in definitions if not isinstance(d, ToolDefinition) or d.name not in dropped]
    raw_diagnostics = loaded.get("diagnostics")

    @hookimpl
    def reyn_register_tools(register: Any, settings: Any) -> None:
        for definition in kept:
            register(definition)

    hooks: dict[str, Any] = {"reyn_register_tools": reyn_register_tools}
    if "reyn_diagnostics" in loaded.get("hooks", ()):

        @hookimpl
        def reyn_diagnostics(settings: Any) -> Any:
            if isinstance(raw_diagnostics, dict) and "raised" in raw_diagnostics:
                raise RuntimeError(f"(in the worker) {raw_diagnostics['raised']}")
            return raw_diagnostics

        hooks["reyn_diagnostics"] = reyn_diagnostics
    pm = plugin_manager()
    pm.register(SimpleNamespace(**hooks), name=p.plugin_id)
    return pm


def _refuse(p: PluginState, reasons: list[str], loaded: dict[str, Any] | None = None) -> None:
    """One ``RJ004`` naming every reason, and the tools whose schema enrichers would not cross either."""
    enriched = [
        str(item["served"].get("name"))
        for item in (loaded or {}).get("tools", ())
        if isinstance(item, dict) and item.get("has_schema_enricher") and isinstance(item.get("served"), dict)
    ]
    if enriched:
        reasons.append(
            f"tools {', '.join(enriched)} have schema enrichers, which run in the host on every render "
            "(RJ009: they would not be registered)"
        )
    listed = "; ".join(f"({n}) {r}" for n, r in enumerate(reasons, 1))
    p.fail("refused", "RJ004", f"plugin {p.plugin_id!r} cannot run isolated: {listed}")


def _report(p: PluginState, finding: Finding) -> None:
    diag = Diagnostic.make(
        finding.code,
        finding.message,
        plugin=p.plugin_id,
        tool=finding.tool,
        severity=finding.severity,  # type: ignore[arg-type]
    )
    if diag.is_error and finding.tool is None:
        p.fail("refused", finding.code, finding.message)
    else:
        p.diagnostics.append(diag)


__all__ = [
    "declared_of",
    "import_or_isolate",
    "permissions_report",
    "read_permissions",
    "settings_in_process",
]
