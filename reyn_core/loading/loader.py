"""The load pipeline, in the steps ``reyn_core/loading`` is grouped by: 1 profile (and its policy) →
2 discover and select → 3 provenance and lock → 4 import → 5 the plugin's hooks (settings, trusted
files, tools, diagnostics, commands) → 6 collisions, the registry and its call hooks → freeze.

``load(profile)`` returns a ``LoadResult``. Every step fails closed for just the plugin or tool
concerned: it records a ``Diagnostic`` (stable code, message, hint) and the rest loads normally.
Plugins that are installed but not enabled are reported as ``discovered`` and never imported.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from reyn_core import observation
from reyn_core.code_table import CODES
from reyn_core.errors import describe_exception
from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.loading.extension_origin import ExtensionSession
from reyn_core.loading.isolation_point import ISOLATION_GROUP
from reyn_core.loading.isolation_step import (
    declared_of,
    import_or_isolate,
    permissions_report,
    read_permissions,
    settings_in_process,
)
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.report import LoadReport, LoadResult, PluginLoadInfo
from reyn_core.loading.step1_profile.profile import Profile, load_profile
from reyn_core.loading.step1_profile.profile_policy import ProfilePolicy, router_deferral
from reyn_core.loading.step2_discovery.discovery import DiscoveredPlugin, discover
from reyn_core.loading.step2_discovery.selection import select_distribution
from reyn_core.loading.step3_provenance.lock_check import extension_pin
from reyn_core.loading.step3_provenance.provenance_check import check_provenance
from reyn_core.loading.step3_provenance.provenance_check import (
    inspect_discovered as inspect_discovered_plugins,
)
from reyn_core.loading.step5_hooks.agent_tools import agent_tool_checks, agent_tool_lists, collect_agent_tools
from reyn_core.loading.step5_hooks.commands import collect_commands, resolve_commands
from reyn_core.loading.step5_hooks.plugin_diagnostics import collect_diagnostics
from reyn_core.loading.step5_hooks.plugin_files import collect_trusted_files
from reyn_core.loading.step5_hooks.tool_collection import collect_tools
from reyn_core.loading.step6_registry.approval_gate import approval_gate
from reyn_core.loading.step6_registry.registration import register_all
from reyn_core.loading.tracing_addon import tracing_addon
from reyn_core.loading.trusted_files import trusted_files
from reyn_core.registry import ToolRegistry
from reyn_core.registry.builder import CheckedDefinitions
from reyn_core.tool import ToolDefinition

if TYPE_CHECKING:
    from reyn_core.loading.step3_provenance.record import ProvenanceRecord

__all__ = ["LoadReport", "LoadResult", "PluginLoadInfo", "load", "load_session"]


Review = Literal["lock", "audit"]
"""A load that describes the installed world for ``reyn plugins lock`` / ``audit`` (``load(review=)``)."""


def load_session(
    profile: Profile, *, review: Review | None = None, workspace: str | os.PathLike[str] | None = None
) -> LoadSession:
    """The state one load shares, its own extension lookups included: under ``[lock] enforce`` each
    extension is checked against the lock (read once, with the plugins') before it is imported.

    A ``review`` load records each extension without importing it, except the isolation backend,
    which runs the isolated plugins whose tools are locked and audited; an ``audit`` of a profile that
    enforces its lock imports that backend, and each plugin (``lock_gate``), only as the lock has it
    (``lock`` pins what is there, so it imports what it describes)."""
    if review not in (None, "lock", "audit"):  # a typo must not turn a review into a gateless load
        raise ValueError(f"review is 'lock', 'audit' or None, not {review!r}")
    if review is None:
        extensions = ExtensionSession()
    else:
        extensions = ExtensionSession(imports=frozenset({ISOLATION_GROUP}))
    enforce = profile.lock.enforce
    if review is not None:
        profile = profile.without_lock_enforcement()
    session = LoadSession(profile, extensions, CheckedDefinitions(), os.fspath(workspace or ""))
    extensions.pin = extension_pin(session, enforce=enforce and review != "lock")
    session.lock_gate = enforce and review == "audit"
    return session


def load(
    profile: Profile | None = None,
    *,
    host_tools: Iterable[ToolDefinition | Callable[..., Any]] = (),
    inspect_discovered: bool = False,
    review: Review | None = None,
    workspace: str | os.PathLike[str] | None = None,
) -> LoadResult:
    """Load the plugins ``profile`` enables (default: ``load_profile()``) into a frozen registry.

    ``host_tools`` are the host application's own tools; they take part in collision checks like
    any plugin's. Every load computes what it checks: each enabled plugin's files are read and
    hashed, each tool's schema is checked (nothing stored stands in for either).
    ``inspect_discovered=True`` also computes the origin and digest of installed-but-not-enabled
    plugins (still never importing them), so a digest can be reviewed and pinned before the plugin
    is enabled. ``review`` (``"lock"`` or ``"audit"``) loads without enforcing the lock, recording
    the extensions rather than importing them (``load_session``). ``workspace`` is the folder the
    host's tools work in (its ``ToolContext.workspace``; default: the working directory): what a
    plugin's ``reyn_trusted_files`` resolves its relative paths against.
    Never raises for a bad plugin: see ``result.report`` for what happened and why. A damaged
    installation of the core itself (its diagnostic code table, ``CodeTable.check``) is one
    ``CodeTableError`` here, before anything is read or imported.
    """
    CODES.check()
    profile = profile if profile is not None else load_profile()
    session = load_session(profile, review=review, workspace=workspace)
    profile = session.profile
    # before the load's own spans, which it turns on or off
    policy = ProfilePolicy.apply(profile, tracing_addon=lambda: tracing_addon(session.extensions))
    with observation.phase("reyn.load") as load_span:
        return _load(profile, policy, session, host_tools, inspect_discovered, load_span)


def _load(
    profile: Profile,
    policy: ProfilePolicy,
    session: LoadSession,
    host_tools: Iterable[ToolDefinition | Callable[..., Any]],
    inspect_discovered: bool,
    load_span: Any,
) -> LoadResult:
    with observation.phase("reyn.load.discovery"):
        found = discover().by_id()
    enabled = profile.enabled
    plugins = [PluginState(pid) for pid in enabled]

    for pid in sorted(set(profile.plugins.configs) - set(enabled)):
        session.global_diags.append(
            Diagnostic.make(
                "RC004",
                f"[plugins.{pid}] is configured in {profile.describe_source()} but {pid!r} is not in "
                "plugins.enable" + _unknown_plugin_note(pid, found, enabled),
                plugin=pid,
            )
        )

    if profile.lock.verify is not None:
        session.global_diags.append(
            Diagnostic.make(
                "RL005",
                f"[lock] verify = {profile.lock.verify!r} in {profile.describe_source()} is ignored: every "
                "load hashes every file of every enabled plugin (there is no digest cache to trust)",
            )
        )

    steps: tuple[Callable[[LoadSession, PluginState], None], ...] = (
        lambda s, p: select_distribution(s, found.get(p.plugin_id, ()), p, found),
        check_provenance,
        read_permissions,
        import_or_isolate,
        settings_in_process,
        collect_trusted_files,
        collect_tools,
        collect_diagnostics,
        collect_commands,
        collect_agent_tools,
    )
    for p in plugins:
        for step in steps:
            with observation.phase(f"reyn.load.{_step_name(step)}", p.plugin_id) as span:
                seen = len(p.diagnostics)
                try:
                    step(session, p)
                except (Exception, SystemExit) as exc:  # a bug in one plugin's path must not stop the others
                    p.fail("failed", "RI005", f"loading stopped unexpectedly: {describe_exception(exc)}")
                span.diagnostics(p.diagnostics[seen:])
            if not p.ok:
                break

    commands = resolve_commands(plugins)
    with observation.phase("reyn.load.registration") as span:
        approvals, approval_diags = approval_gate(profile, policy.audit_log, session.extensions, plugins)
        session.global_diags.extend(approval_diags)
        # the agents' tool lists come from the plugins' hooks (and the profile), known only now
        policy = replace(
            policy, operator=replace(policy.operator, agent_tools=agent_tool_lists(profile, plugins))
        )
        registry, host_diags = register_all(
            policy,
            plugins,
            host_tools,
            session.checked,
            discovered_ids=found,
            approvals=approvals,
            host_files=trusted_files(session),
        )
        span.diagnostics(host_diags)
    session.global_diags.extend(_profile_name_checks(profile, registry))
    session.global_diags.extend(agent_tool_checks(profile, plugins, registry))
    session.global_diags.extend(policy.diagnostics())
    records = inspect_discovered_plugins(found, set(enabled)) if inspect_discovered else {}
    load_span.diagnostics(session.global_diags)
    return LoadResult(
        registry,
        _report(found, plugins, session, host_diags, records),
        profile,
        commands,
        router_deferral(profile, registry),
        session.workspace,
    )


def _unknown_plugin_note(pid: str, found: Mapping[str, Any], enabled: Sequence[str]) -> str:
    """For a ``[plugins.<id>]`` table whose id no installed plugin has (most often a typo): that, the
    closest installed or enabled id, and the installed ids. "" when ``pid`` is installed."""
    if pid in found:
        return ""
    import difflib  # only to word a warning

    known = sorted(set(found) | set(enabled))
    near = difflib.get_close_matches(pid, known, n=1, cutoff=0.6)
    installed = ", ".join(sorted(found)) or "none"
    return (
        f", and no installed plugin is called {pid!r}"
        + (f"; did you mean [plugins.{near[0]}]?" if near else "")
        + f" (installed plugins: {installed})"
    )


def _report(
    found: Mapping[str, Sequence[DiscoveredPlugin]],
    plugins: list[PluginState],
    session: LoadSession,
    host_diags: list[Diagnostic],
    records: Mapping[tuple[str, str], ProvenanceRecord],
) -> LoadReport:
    profile = session.profile
    infos: list[PluginLoadInfo] = []
    enabled = {p.plugin_id for p in plugins}
    for p in plugins:
        cand = p.candidate
        candidates = found.get(p.plugin_id, ())
        dist = cand.distribution if cand else (", ".join(c.distribution for c in candidates) or None)
        infos.append(
            PluginLoadInfo(
                plugin_id=p.plugin_id,
                distribution=dist,
                version=cand.version if cand else None,
                status=p.status,
                provenance=p.provenance,
                tools=tuple(sorted(p.registered)),
                entry_point=cand.entry_point if cand else None,
                api_version=p.api_version,
                diagnostics=tuple(p.diagnostics),
                enabled=True,
                permissions=permissions_report(p, profile.plugin(p.plugin_id).isolation),
            )
        )
    for pid, candidates in found.items():
        if pid in enabled:
            continue
        for c in candidates:
            record = records.get((pid, c.distribution))
            infos.append(
                PluginLoadInfo(
                    plugin_id=pid,
                    distribution=c.distribution,
                    version=c.version,
                    status="discovered",
                    entry_point=c.entry_point,
                    provenance=record,
                    permissions=declared_of(record) if record is not None else None,
                )
            )
    infos.sort(key=lambda i: (i.plugin_id, not i.enabled, (i.distribution or "").lower()))
    all_diags = [
        *session.extensions.ignored_diagnostics(),
        *session.global_diags,
        *host_diags,
        *(d for p in plugins for d in p.diagnostics),
    ]
    return LoadReport(tuple(infos), tuple(all_diags), session.extensions.loaded())


# The span of a step is named for what it does, whatever its function is called (documented names).
_SPAN_NAMES = {"<lambda>": "select_distribution", "import_or_isolate": "import_plugin"}


def _step_name(step: Callable[..., Any]) -> str:
    name = getattr(step, "__name__", "step")
    return _SPAN_NAMES.get(name, name)


def _profile_name_checks(profile: Profile, registry: ToolRegistry) -> list[Diagnostic]:
    """Names in the profile's surface lists that match no loaded tool.

    A typo in ``[surfaces.router] exclude`` silently excludes nothing, which widens what the model
    sees, so it is an error; a typo in ``default_allowed_ops`` narrows the phase, so it warns.
    """
    from reyn_core.gates import op_matches

    diags: list[Diagnostic] = []
    tools = registry.tools()
    for name in profile.surfaces.router.exclude:
        if name not in registry:
            diags.append(
                Diagnostic.make(
                    "RC007",
                    f"[surfaces.router] exclude names {name!r}, which no loaded tool is called, so it "
                    "excludes nothing",
                    severity="error",
                    tool=name,
                )
            )
    phase = profile.surfaces.phase
    ops = list(phase.default_allowed_ops)
    # Only a list the profile sets: the default may name packs this profile does not enable.
    if "default_allowed_ops" in phase.model_fields_set:
        for entry in ops:
            if not any(op_matches(entry, t) for t in tools):
                diags.append(
                    Diagnostic.make(
                        "RC007",
                        f"[surfaces.phase] default_allowed_ops entry {entry!r} matches no loaded tool "
                        "name, cluster or glob",
                        tool=entry,
                    )
                )
    if profile.approvals.rules:
        from reyn_core.loading.step6_registry.approval_gate import approval_name_checks

        diags.extend(approval_name_checks(profile, registry))
    return diags
