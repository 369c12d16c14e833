"""Load step 6: collisions over every claimant, then the real registry.

A tool name claimed more than once — plugin vs plugin, or a plugin vs a host tool — registers none
of the claimants (the rule and its wording are ``reyn_core.registry.collisions``; a plugin claiming
a name twice was refused in step 5). The surviving tools go into one registry with the profile's
operator policy (gate layer 2, from ``ProfilePolicy``), each plugin's settings, and the call hooks
(``call_hooks``: plugins' policy hooks plus the load's one audit log).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from reyn_core.errors import ToolRegistrationError
from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.loading.step6_registry.call_hooks import call_hooks
from reyn_core.registry import RegistryBuilder, ToolRegistry, collision_key
from reyn_core.registry.builder import CheckedDefinitions
from reyn_core.registry.collisions import Claim, find_collisions
from reyn_core.tool import ToolDefinition, ToolOrigin

if TYPE_CHECKING:
    from reyn_core.approvals import ApprovalGate
    from reyn_core.loading.plugin_state import PluginState
    from reyn_core.loading.step1_profile.profile_policy import ProfilePolicy


def register_all(
    policy: ProfilePolicy,
    plugins: list[PluginState],
    host_tools: Iterable[ToolDefinition | Callable[..., Any]],
    checked: CheckedDefinitions,
    discovered_ids: Iterable[str] = (),
    approvals: ApprovalGate | None = None,
    host_files: Mapping[str, str] | None = None,
) -> tuple[ToolRegistry, list[Diagnostic]]:
    """Collision check over every claimant, then register survivors into the real registry.

    ``discovered_ids`` are the ids of every installed plugin: a cluster named like one belongs to
    that plugin (see ``_cluster_owners``). ``checked``: the load's ledger of the definitions its
    scratch builders checked (``LoadSession.checked``), which the real builder adopts. ``approvals``:
    the profile's approval gate (``approval_gate.approval_gate``), carried by the registry;
    ``host_files``: the host's own files (``trusted_files``), handed to every call's context."""
    diags: list[Diagnostic] = []
    host_defs: list[ToolDefinition] = []
    host_origin = ToolOrigin(kind="host")
    for obj in host_tools:
        try:  # one scratch registry per tool: duplicates are handled by the collision rule below;
            # the real builder below adopts what it checked (they share the load's ``checked``)
            scratch = RegistryBuilder(checked=checked)
            host_defs.append(scratch.register(obj, origin=host_origin))
        except ToolRegistrationError as exc:
            diags.append(
                Diagnostic.make(exc.code, f"host tool: {exc.message}", hint=exc.hint or None, tool=exc.tool)
            )
    claims = [Claim(d.name, host_origin) for d in host_defs]
    claims += [Claim(d.name, d.origin or ToolOrigin()) for p in plugins if p.ok for d, _ in p.tools]
    collisions = find_collisions(claims)
    for collision in collisions.values():
        owners = collision.plugin_owners()
        diagnostic = Diagnostic.make("RT004", collision.message(), hint=collision.hint())
        if not owners:
            diags.append(replace(diagnostic, tool=collision.names[0]))
        for name, owner in owners:
            state = next(p for p in plugins if p.plugin_id == owner)
            state.diagnostics.append(replace(diagnostic, plugin=owner, tool=name))
    collided = set(collisions)

    cluster_owners = _cluster_owners(discovered_ids, host_defs, plugins, collided)
    builder = RegistryBuilder(operator=policy.operator, checked=checked)
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
    builder.hooks = call_hooks(policy, [p for p in plugins if p.ok])
    builder.approvals = approvals
    builder.host_files = dict(host_files or {})
    checked.clear()  # the scratch builders' definitions are adopted or dropped by now
    return builder.freeze(), diags


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
