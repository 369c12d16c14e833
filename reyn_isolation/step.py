"""The ``process`` backend of the core's isolation extension point: one plugin in a sandboxed worker.

``ProcessIsolation.isolate`` checks the profile's grants against the plugin's declaration and the
host's own files, starts the worker through the kernel sandbox launcher and answers the loader with
hooks whose answers are what the worker sent (``reyn_register_tools`` registers pipe proxies): the
core's in-process steps that follow (``collect_tools``, ``collect_diagnostics``, ``collect_commands``)
then apply exactly the same rules — names, prefix, include/exclude, schema checks, collisions, the
lock — to the worker's definitions.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Literal

from reyn_core import ToolDefinition, hookimpl
from reyn_core.host import Diagnostic, IsolatedPlugin, IsolationRequest, Profile, worker_warnings
from reyn_isolation.codes import ISOLATION_CODES, Finding
from reyn_isolation.grants import GrantedPermissions

if TYPE_CHECKING:
    from reyn_isolation.client import WorkerClient

# Hooks a worker cannot serve: policy hooks judge every call of every plugin, in the host.
_HOST_ONLY_HOOKS = {
    "reyn_before_tool_call": "its policy hooks judge every call of every plugin, in the host",
    "reyn_after_tool_call": "its policy hooks judge every call of every plugin, in the host",
}

# The hooks the stand-in answers from the worker's reply (CLI commands: not offered, RJ010; the
# retired ``reyn_load_inputs``: ignored as in process). A plugin implementing any other hook is
# refused isolation: its answer would be needed in the host, and the worker does not send it.
_FORWARDED_HOOKS = frozenset(
    {
        "reyn_register_tools",
        "reyn_settings_model",
        "reyn_diagnostics",
        "reyn_trusted_files",
        "reyn_cli_commands",
        "reyn_load_inputs",
    }
)
_NOT_FORWARDED = "the host needs this hook's answer, and a worker does not forward it"


class _Outcome:
    """The diagnostics of one plugin's isolation, and whether it was refused or failed."""

    def __init__(self, plugin_id: str) -> None:
        self.plugin_id = plugin_id
        self.diagnostics: list[Diagnostic] = []
        self.status: Literal["loaded", "refused", "failed"] = "loaded"

    def add(self, code: str, message: str, *, tool: str | None = None, severity: str | None = None) -> None:
        """A diagnostic worded from this package's table (a core code, e.g. a worker's ``RI001``, from
        the core's)."""
        info = ISOLATION_CODES.get(code)
        hint = None
        if info is not None:
            severity = severity or info.severity
            hint = info.hint_at(severity)
        self.diagnostics.append(
            Diagnostic.make(code, message, hint=hint, plugin=self.plugin_id, tool=tool, severity=severity)
        )

    def fail(self, status: Literal["refused", "failed"], code: str, message: str) -> None:
        self.status = status
        self.add(code, message)

    def report(self, finding: Finding) -> None:
        severity = finding.severity or ISOLATION_CODES[finding.code].severity
        if severity == "error" and finding.tool is None:
            self.fail("refused", finding.code, finding.message)
        else:
            self.add(finding.code, finding.message, tool=finding.tool, severity=severity)

    def answer(self, **fields: Any) -> IsolatedPlugin:
        return IsolatedPlugin(self.status, tuple(self.diagnostics), **fields)


class ProcessIsolation:
    """What the ``reyn.isolation`` entry point ``process`` names (a ``PluginIsolation``)."""

    def isolate(self, request: IsolationRequest) -> IsolatedPlugin:
        """Start ``request``'s plugin in a sandboxed worker under its grants, or say why not."""
        from reyn_isolation.client import WorkerClient, WorkerSpec, WorkerStartError
        from reyn_isolation.grants import compare
        from reyn_isolation.host_paths import nested_root_findings, secret_findings, write_root_findings
        from reyn_isolation.info import IsolationInfo
        from reyn_isolation.launch import IsolationUnavailable, code_roots, worker_command

        pid, rec, declared, profile = request.plugin_id, request.record, request.declared, request.profile
        out = _Outcome(pid)
        granted = _granted(profile, pid)
        # every reason a plugin cannot run isolated is named at once: the declared bridges (RJ004 of
        # ``compare``) and, from the worker's load, the hooks the host would need
        reasons = []
        for finding in compare(pid, declared, granted):
            if finding.code == "RJ004":
                reasons.append(finding.message)
            else:
                out.report(finding)
        locations = [loc for _, loc in rec.module_locations]
        clashes = write_root_findings(pid, granted.write, _protected(request, locations))
        for finding in clashes:
            out.report(finding)
        for finding in nested_root_findings(pid, (*granted.read, *granted.write), _write_roots(profile)):
            out.report(finding)
        # every path the worker sees; write roots over a host file are refused above, once
        mounted = (*code_roots(locations), *granted.read, *(() if clashes else granted.write))
        secrets, findings = secret_findings(pid, mounted, request.host_files)
        for finding in findings:
            out.report(finding)
        if out.status != "loaded":
            return out.answer()
        try:
            argv, env, enforced = worker_command(granted, locations, os.environ, secrets=secrets)
        except IsolationUnavailable as exc:
            out.fail("refused", "RJ004", f"plugin {pid!r} cannot run isolated on this machine: {exc}")
            return out.answer()
        load = {
            "op": "load",
            "record": asdict(rec),
            "settings": profile.plugin(pid).settings,
            "source": profile.describe_source(),  # where the settings are, for the worker's messages
            # what reyn_trusted_files resolves against (the load's workspace; the worker's cwd is /)
            "workspace": request.workspace or os.getcwd(),
            "subprocess": granted.subprocess,
            "network": granted.network,
            "max_result_bytes": granted.max_result_bytes,
        }
        spec = WorkerSpec(
            pid,
            argv,
            env,
            load,
            max_result_bytes=granted.max_result_bytes,
        )
        client = WorkerClient(spec)
        try:
            loaded = client.start()
        except WorkerStartError as exc:
            if reasons:
                _refuse(out, reasons)
            else:
                out.fail("failed", exc.code, exc.message)
            return out.answer()
        reasons += [
            f"hook {hook}: {_HOST_ONLY_HOOKS.get(hook, _NOT_FORWARDED)}"
            for hook in loaded.get("hooks", ())
            if hook not in _FORWARDED_HOOKS
        ]
        if reasons:
            client.close()
            _refuse(out, reasons, loaded)
            return out.answer()
        try:  # facts the host words with the loader's own templates, or the plugin fails
            out.diagnostics += worker_warnings(
                pid,
                rec.entry_point,
                loaded.get("warnings", []),
                loaded.get("setting_names"),
                profile.plugin(pid).settings,
                profile.describe_source(),
            )
        except ValueError as exc:
            client.close()
            out.fail("failed", "RJ005", f"the worker of plugin {pid!r} {exc}")
            return out.answer()
        if "reyn_cli_commands" in loaded.get("hooks", ()):
            out.add(
                "RJ010",
                f"plugin {pid!r} runs isolated, so its CLI commands are not offered: a command is "
                "handed the host's LoadResult (host objects) and would run the plugin's code in the host",
            )
        info = IsolationInfo(granted, enforced, client)
        hooks = _stand_in(out, client, loaded, granted)
        out.add(
            "RJ008",
            f"plugin {pid!r} runs isolated (declared: {declared.summary}; Landlock ABI "
            f"{enforced.get('landlock_abi')}; enforced: {', '.join(enforced.get('enforced') or [])})",
        )
        return out.answer(hooks=hooks, report=info.to_dict(), reach=info.reach())


def _granted(profile: Profile, plugin_id: str) -> GrantedPermissions:
    grants = profile.plugin(plugin_id).grants
    if grants is None:
        return GrantedPermissions()

    def paths(values: list[str]) -> tuple[str, ...]:
        return tuple(os.path.realpath(profile.resolve_path(v)) for v in values)

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


def _write_roots(profile: Profile) -> dict[str, str]:
    """Every isolated plugin's write roots, resolved: root → plugin id."""
    found: dict[str, str] = {}
    for plugin_id in profile.enabled:
        cfg = profile.plugin(plugin_id)
        if cfg.isolation == "process" and cfg.grants is not None:
            for value in cfg.grants.write:
                found.setdefault(os.path.realpath(profile.resolve_path(value)), plugin_id)
    return found


def _protected(request: IsolationRequest, locations: list[str]) -> dict[str, str]:
    """The host's code and records, which no write root may overlap (``host_paths``)."""
    from reyn_isolation.host_paths import protected_paths
    from reyn_isolation.launch import code_roots

    return protected_paths(code_roots(locations), request.host_files)


def _stand_in(
    out: _Outcome, client: WorkerClient, loaded: dict[str, Any], granted: GrantedPermissions
) -> Any:
    """Hooks that answer with what the worker loaded."""
    from reyn_isolation.grants import purity_findings
    from reyn_isolation.proxy import proxies

    definitions, findings = proxies(client, out.plugin_id, loaded.get("tools", []), granted.call_timeout_s)
    named = [(d.name, d.purity) for d in definitions if isinstance(d, ToolDefinition)]
    refused = purity_findings(out.plugin_id, named, granted)
    findings += refused
    dropped = {f.tool for f in refused}
    for finding in findings:
        out.report(finding)
    kept = [d for d in definitions if not isinstance(d, ToolDefinition) or d.name not in dropped]

    @hookimpl
    def reyn_register_tools(register: Any, settings: Any) -> None:
        for definition in kept:
            register(definition)

    hooks: dict[str, Any] = {"reyn_register_tools": reyn_register_tools}
    if "reyn_diagnostics" in loaded.get("hooks", ()):
        hooks["reyn_diagnostics"] = _answered(loaded.get("diagnostics"))
    if "reyn_trusted_files" in loaded.get("hooks", ()):
        # the worker sends one answer per implementation (a module has one): the stand-in returns it
        raw = loaded.get("trusted_files")
        hooks["reyn_trusted_files"] = _answered(raw[0] if isinstance(raw, list) and len(raw) == 1 else raw)
    return SimpleNamespace(**hooks)


def _answered(raw: Any) -> Any:
    """A stand-in hook answering ``raw``, what the worker's hook returned, or raising what it raised
    (``{"raised": ...}``): the loader then treats it as the same hook in process."""

    @hookimpl
    def answer(settings: Any, workspace: Any = None) -> Any:
        if isinstance(raw, dict) and "raised" in raw:
            raise RuntimeError(f"(in the worker) {raw['raised']}")
        return raw

    return answer


def _refuse(out: _Outcome, reasons: list[str], loaded: dict[str, Any] | None = None) -> None:
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
    out.fail("refused", "RJ004", f"plugin {out.plugin_id!r} cannot run isolated: {listed}")


backend = ProcessIsolation()
"""The object the ``reyn.isolation`` entry point ``process`` names."""

__all__ = ["ProcessIsolation", "backend"]
