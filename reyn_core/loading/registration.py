"""Load steps 6-7: collisions over every claimant, the real registry, operator policy and call hooks.

A tool name claimed more than once — plugin vs plugin, a plugin twice, or a plugin vs a host tool —
registers none of the claimants (names are compared by ``collision_key``: case and separators
``-``/``_``/``.`` do not make two names different); the diagnostic names every origin and the fix.
The surviving tools go into one registry with the profile's operator policy (gate layer 2), each
plugin's settings, and the ``reyn_before_tool_call`` / ``reyn_after_tool_call`` hooks of loaded
plugins plus the audit log.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

from reyn_core.errors import ToolRegistrationError, exception_message
from reyn_core.gates import OperatorPolicy, PluginPolicy
from reyn_core.loading.approval_gate import approval_gate
from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.registry import RegistryBuilder, ToolRegistry, collision_key
from reyn_core.tool import ToolDefinition, ToolOrigin

if TYPE_CHECKING:
    from reyn_core.dispatch import JsonlAuditLog, ToolCall, ToolCallHooks, ToolCallOutcome
    from reyn_core.loading.plugin_state import PluginState
    from reyn_core.loading.profile import Profile
    from reyn_core.loading.schema_cache import SchemaCheckCache


def register_all(
    profile: Profile,
    plugins: list[PluginState],
    host_tools: Iterable[ToolDefinition | Callable[..., Any]],
    schema_cache: SchemaCheckCache,
    discovered_ids: Iterable[str] = (),
) -> tuple[ToolRegistry, list[Diagnostic]]:
    """Collision check over every claimant, then register survivors into the real registry.

    ``discovered_ids`` are the ids of every installed plugin: a cluster named like one belongs to
    that plugin (see ``_cluster_owners``)."""
    diags: list[Diagnostic] = []
    host_defs: list[ToolDefinition] = []
    host_origin = ToolOrigin(kind="host")
    for obj in host_tools:
        try:  # one scratch registry per tool: duplicates are handled by the collision rule below;
            # the real builder below adopts what it checked (they share ``schema_cache.checked``)
            scratch = RegistryBuilder(schema_check=schema_cache)
            host_defs.append(scratch.register(obj, origin=host_origin))
        except ToolRegistrationError as exc:
            diags.append(
                Diagnostic.make(exc.code, f"host tool: {exc.message}", hint=exc.hint or None, tool=exc.tool)
            )
    # Claims are grouped by collision key: names differing only in case or separators
    # ("read_file", "Read-File") are one name to a model, so they collide like identical ones.
    claims: dict[str, list[tuple[str, ToolOrigin]]] = {}
    for d in host_defs:
        claims.setdefault(collision_key(d.name), []).append((d.name, host_origin))
    for p in plugins:
        if p.ok:
            for d, _ in p.tools:
                claims.setdefault(collision_key(d.name), []).append((d.name, d.origin or ToolOrigin()))
    collided = {key for key, owners in claims.items() if len(owners) > 1}
    for key in sorted(collided):
        owners = claims[key]
        names = list(dict.fromkeys(n for n, _ in owners))
        if len(names) == 1:
            described = " and ".join(o.describe() for _, o in owners)
            message = f"tool name {names[0]!r} is claimed by {described}; none of them is registered"
        else:
            described = " and ".join(f"{n!r} by {o.describe()}" for n, o in owners)
            message = (
                f"tool names that differ only in case or separators (models and providers confuse "
                f"them) are claimed: {described}; none of them is registered"
            )
        plugin_owners = [(n, o.plugin_id) for n, o in owners if o.kind == "plugin" and o.plugin_id]
        if plugin_owners:
            fix = collision_fix(plugin_owners)
            for name, owner in dict.fromkeys(plugin_owners):
                next(p for p in plugins if p.plugin_id == owner).diagnostics.append(
                    Diagnostic.make("RT004", message, hint=fix, plugin=owner, tool=name)
                )
        else:
            diags.append(
                Diagnostic.make(
                    "RT004",
                    message,
                    tool=names[0],
                    hint="give each host tool passed to load(host_tools=...) its own name",
                )
            )

    cluster_owners = _cluster_owners(discovered_ids, host_defs, plugins, collided)
    builder = RegistryBuilder(operator=_operator_policy(profile), schema_check=schema_cache)
    for d in host_defs:
        if collision_key(d.name) not in collided:
            _register(builder, d, None, diags, plugin=None)
    for p in plugins:
        if not p.ok:
            continue
        for d, original in p.tools:
            owner = cluster_owners.get(d.cluster, p.plugin_id)
            if owner != p.plugin_id:
                p.diagnostics.append(
                    Diagnostic.make(
                        "RT009",
                        f"tool {d.name!r} of plugin {p.plugin_id!r} claims cluster {d.cluster!r}, "
                        f"which belongs to {'the host' if owner == '' else repr(owner)}; "
                        f"phase allowed_ops naming {d.cluster!r} would "
                        "admit it, so it is not registered",
                        plugin=p.plugin_id,
                        tool=d.name,
                    )
                )
                continue
            if collision_key(d.name) not in collided and _register(
                builder, d, original, p.diagnostics, plugin=p.plugin_id
            ):
                p.registered.append(d.name)
        if p.settings is not None:
            builder.set_settings(p.plugin_id, p.settings)
    audit = _audit_log(profile)
    builder.hooks = _call_hooks(profile, [p for p in plugins if p.ok], audit)
    builder.approvals = approval_gate(profile, audit)
    schema_cache.checked.clear()  # the scratch builders' definitions are adopted or dropped by now
    return builder.freeze(), diags


def collision_fix(owners: list[tuple[str, str]]) -> str:
    """The fix for plugin tools whose names collide (``owners``: (tool name, plugin id) pairs).

    Two plugins offering one name usually offer the same capability, so the first fix is keeping
    one (excluding the other's tool). Then a prefix, on a plugin whose tool name does not already
    start with its id: ``prefix = "weather_"`` on ``weather_forecast`` would give
    ``weather_weather_forecast``."""
    name, owner = owners[-1]
    fix = f"keep one: add {name!r} to plugins.{owner}.tools.exclude"
    for tool_name, plugin in reversed(owners):
        if not (collision_key(tool_name) + "_").startswith(collision_key(plugin) + "_"):
            return (
                f'{fix}; or keep both: set [plugins.{plugin}] prefix = "{plugin}_" '
                f"(its tool becomes {plugin + '_' + tool_name!r})"
            )
    return f"{fix}; or keep both under other names with a [plugins.<id>] prefix"


def _cluster_owners(
    discovered_ids: Iterable[str],
    host_defs: Sequence[ToolDefinition],
    plugins: Sequence[PluginState],
    collided: set[str],  # collision keys
) -> dict[str, str]:
    """Cluster names that only one party may use ("" = the host). ``allowed_ops`` entries match a
    cluster as well as a tool name, so a plugin declaring ``cluster="file"`` would ride into every
    phase whose ops admit the file pack (the default does). A cluster named like an installed
    plugin belongs to that plugin; one named like a registered tool belongs to that tool's owner."""
    owners: dict[str, str] = {pid: pid for pid in discovered_ids}
    for d in host_defs:
        if collision_key(d.name) not in collided:
            owners.setdefault(d.name, "")
    for p in plugins:
        if p.ok:
            for d, _ in p.tools:
                if collision_key(d.name) not in collided:
                    owners.setdefault(d.name, p.plugin_id)
    return owners


def _register(
    builder: RegistryBuilder,
    d: ToolDefinition,
    original: str | None,
    diags: list[Diagnostic],
    *,
    plugin: str | None,
) -> bool:
    try:
        builder.register(d, origin=d.origin, original_name=original)
    except ToolRegistrationError as exc:
        diags.append(
            Diagnostic.make(exc.code, exc.message, hint=exc.hint or None, plugin=plugin, tool=exc.tool)
        )
        return False
    for w in builder.warnings(d.name):
        diags.append(
            Diagnostic.make(
                w.code,
                w.message + (f" (at {w.pointer})" if w.pointer else ""),
                plugin=plugin,
                tool=d.name,
                severity="warning",
            )
        )
    return True


def _operator_policy(profile: Profile) -> OperatorPolicy:
    # Only the surfaces: the profile's tools.include / tools.exclude were applied once, in
    # tool_collection (an excluded tool is not registered), so the gates have nothing left to narrow.
    policies = {}
    for pid in profile.enabled:
        cfg = profile.plugin(pid)
        policies[pid] = PluginPolicy(surfaces=frozenset(cfg.surfaces) if cfg.surfaces is not None else None)
    return OperatorPolicy(
        plugins_enabled=profile.features.plugins,
        plugins=policies,
        default_allowed_ops=tuple(profile.surfaces.phase.default_allowed_ops),
        router_exclude=frozenset(profile.surfaces.router.exclude),
    )


def _hash_key() -> tuple[bytes | None, str | None]:
    """The installation's argument-hash key, or why it cannot be used."""
    from reyn_core.loading.argument_key import ArgumentKeyError, installation_key

    try:
        return installation_key(), None
    except ArgumentKeyError as exc:
        return None, str(exc)


def apply_observability(profile: Profile) -> None:
    """``[observability]``: turn spans on or off as the profile says (unset: leave them alone)."""
    config = profile.observability
    if config.tracing is None:
        return
    from reyn_core.tracing import configure_tracing

    configure_tracing(
        config.tracing,
        capture_content=config.capture_content,
        content_max_chars=config.content_max_chars,
        hash_key=_hash_key()[0] if config.tracing else None,
    )


def _audit_log(profile: Profile) -> JsonlAuditLog | None:
    """The load's one audit log (``[audit] log``): the call hooks and the approval gate share it."""
    if not profile.audit.log:
        return None
    from reyn_core.dispatch import JsonlAuditLog

    return JsonlAuditLog(profile.resolve_path(profile.audit.log), hash_key=_hash_key()[0])


def _call_hooks(
    profile: Profile, plugins: Sequence[PluginState], audit: JsonlAuditLog | None
) -> ToolCallHooks | None:
    """``reyn_before_tool_call`` / ``reyn_after_tool_call`` of loaded plugins, plus the audit log."""
    wanted = bool(profile.audit.log) or any(
        p.pm is not None
        and (
            p.pm.hook.reyn_before_tool_call.get_hookimpls() or p.pm.hook.reyn_after_tool_call.get_hookimpls()
        )
        for p in plugins
    )
    if not wanted:  # the common case: no hooks, so the dispatcher need not be imported to load
        return None
    from reyn_core.dispatch import ToolCallHooks

    hooks = ToolCallHooks()
    for p in plugins:
        assert p.pm is not None
        if p.pm.hook.reyn_before_tool_call.get_hookimpls():
            hooks = hooks + ToolCallHooks(before=(before_hook(p.plugin_id, p.pm),))
        if p.pm.hook.reyn_after_tool_call.get_hookimpls():
            hooks = hooks + ToolCallHooks(after=(after_hook(p.pm),))
    if audit is not None:
        problem = _hash_key()[1]
        if problem is not None:  # fail closed: no call runs that its log could not hash privately
            refusal = f"{problem}; every tool call is refused until it is fixed"
            hooks = hooks + ToolCallHooks(before=(lambda call: refusal,))
        hooks = hooks + audit.hooks()
    return hooks if hooks.before or hooks.after else None


def before_hook(plugin_id: str, pm: pluggy.PluginManager) -> Callable[[ToolCall], Any]:
    """A ``ToolCallHooks.before`` callable running one plugin's ``reyn_before_tool_call``; a reason
    it returns denies the call, and a hook that breaks denies it too (fail closed)."""
    from reyn_core.errors import ToolDenied, ToolError

    async def before(call: ToolCall) -> str | None:
        try:
            for result in pm.hook.reyn_before_tool_call(call=call):
                if inspect.isawaitable(result):
                    result = await result
                if result:
                    return f"{result} (plugin {plugin_id!r})"
        except ToolError:
            raise
        except (Exception, SystemExit) as exc:  # a broken policy hook denies: fail closed
            raise ToolDenied(
                f"policy hook of plugin {plugin_id!r} failed ({type(exc).__name__}: "
                f"{exception_message(exc)}); the call is denied",
                tool=call.tool.name,
            ) from None
        return None

    return before


def after_hook(pm: pluggy.PluginManager) -> Callable[[ToolCall, ToolCallOutcome], Any]:
    """A ``ToolCallHooks.after`` callable running one plugin's ``reyn_after_tool_call``."""

    async def after(call: ToolCall, outcome: ToolCallOutcome) -> None:
        for result in pm.hook.reyn_after_tool_call(call=call, outcome=outcome):
            if inspect.isawaitable(result):
                await result

    return after
