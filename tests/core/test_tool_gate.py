"""The dispatcher's gate (issue 15): ``gates.ToolGate`` decides the layers a registry snapshot fixes
(role, operator, runtime) once, and the call layer on every call. Its decisions equal ``gates.check``'s
over every layer's inputs; through the dispatcher, a sequence of calls against one registry — so one
prepared gate and one remembered context — is decided call by call exactly as ``gates.check`` decides
it; and every input a call can change is checked again on the next call."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from gate_axes import AVAILABLE as GATE_AVAILABLE
from gate_axes import CLUSTER, NAME, PLUGIN, matrix_tool, narrowed, notes_write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from registry_kit import frozen_registry

from reyn_core import (
    PhaseCallerState,
    RouterCallerState,
    ToolContext,
    ToolGateRefused,
    ToolGates,
    ToolOrigin,
    ToolRuntimeMissing,
)
from reyn_core.host import OperatorPolicy, PluginPolicy, RegistryBuilder, ToolRegistry, gates, invoke_tool

ORIGINAL = "write"
SETTINGS = {"on": True}
CALLS: list[str] = []


async def handler(text: str) -> str:
    CALLS.append(text)
    return text


# the author's gate per surface: "allow/deny" offers the tool to the router (and mcp, cli), not phases
ROLES = {f"{r}/{p}": ToolGates(router=r, phase=p) for r in ("allow", "deny") for p in ("allow", "deny")}
ORIGINS = {
    "host": ToolOrigin(kind="host"),
    "plugin": ToolOrigin(kind="plugin", plugin_id=PLUGIN),
    "mcp": ToolOrigin(kind="mcp", plugin_id=PLUGIN),
}
HANDLERS: dict[str, Any] = {"function": handler, "none": None}


OPERATORS = {
    "none": OperatorPolicy(),
    "plugins_off": OperatorPolicy(plugins_enabled=False),
    "to_router": narrowed(surfaces=frozenset({"router"})),
    "to_phase": narrowed(surfaces=frozenset({"phase"})),
    "to_mcp_cli": narrowed(surfaces=frozenset({"mcp", "cli"})),
    "exclude_name": narrowed(exclude=frozenset({NAME})),
    "exclude_original": narrowed(exclude=frozenset({ORIGINAL})),
    "include_original": narrowed(include=frozenset({ORIGINAL})),
    "include_other": narrowed(include=frozenset({"notes_read"})),
    "router_exclude": OperatorPolicy(router_exclude=frozenset({NAME})),
    "default_ops_name": OperatorPolicy(default_allowed_ops=(NAME,)),
    "default_ops_cluster": OperatorPolicy(default_allowed_ops=(CLUSTER,)),
}
AVAILABLE: dict[str, Callable[[ToolContext], bool] | None] = {
    **GATE_AVAILABLE,
    "phase_only": lambda ctx: ctx.surface == "phase",
    "needs_settings": lambda ctx: ctx.settings == SETTINGS,
    "agent_bob": lambda ctx: ctx.agent == "bob",
}
SURFACES = ("router", "phase", "mcp", "cli")
EXCLUDES: dict[str, tuple[str, ...]] = {"none": (), "this_tool": (NAME,), "another_tool": ("notes_read",)}
ALLOWED_OPS: dict[str, tuple[str, ...] | None] = {
    "unset": None,
    "exact": (NAME,),
    "cluster": (CLUSTER,),
    "glob": ("notes_*",),
    "other": ("file", "web_*"),
    "empty": (),
}
ROUTER_STATES: dict[str, RouterCallerState | None] = {
    "none": None,
    "plain": RouterCallerState(),
    "excludes_tool": RouterCallerState(exclude=frozenset({NAME})),
    "step_without_tool": RouterCallerState(allowed_tools=frozenset({"notes_read"})),
    "step_with_tool": RouterCallerState(allowed_tools=frozenset({NAME})),
}
PHASE_STATES: dict[str, PhaseCallerState | None] = {
    "none": None,
    "ops_unset": PhaseCallerState(),
    "ops_tool": PhaseCallerState(allowed_ops=(NAME,)),
    "ops_other": PhaseCallerState(allowed_ops=("file",)),
}
AGENT_TOOLS: dict[str, frozenset[str] | None] = {
    "none": None,
    "with_tool": frozenset({NAME}),
    "without_tool": frozenset({"notes_read"}),
}
AGENTS = (None, "bob", "alice")


@dataclass(frozen=True)
class Snapshot:
    """What a registry snapshot fixes: the tool and the operator's policy."""

    role: str
    origin: str
    handler: str
    operator: str
    available: str
    prefixed: bool
    settings: bool


@dataclass(frozen=True)
class Call:
    """What one call brings: its surface, arguments to the dispatcher, and its context."""

    surface: str
    exclude: str
    allowed_ops: str
    router_state: str
    phase_state: str
    agent_tools: str
    agent: str | None
    ctx_surface: str

    def context(self) -> ToolContext:
        return ToolContext(
            surface=self.ctx_surface,  # type: ignore[arg-type]
            agent=self.agent,
            router_state=ROUTER_STATES[self.router_state],
            phase_state=PHASE_STATES[self.phase_state],
            agent_tools=AGENT_TOOLS[self.agent_tools],
        )


snapshots = st.builds(
    Snapshot,
    role=st.sampled_from(sorted(ROLES)),
    origin=st.sampled_from(sorted(ORIGINS)),
    handler=st.sampled_from(sorted(HANDLERS)),
    operator=st.sampled_from(sorted(OPERATORS)),
    available=st.sampled_from(sorted(AVAILABLE)),
    prefixed=st.booleans(),
    settings=st.booleans(),
)
calls = st.builds(
    Call,
    surface=st.sampled_from(SURFACES),
    exclude=st.sampled_from(sorted(EXCLUDES)),
    allowed_ops=st.sampled_from(sorted(ALLOWED_OPS)),
    router_state=st.sampled_from(sorted(ROUTER_STATES)),
    phase_state=st.sampled_from(sorted(PHASE_STATES)),
    agent_tools=st.sampled_from(sorted(AGENT_TOOLS)),
    agent=st.sampled_from(AGENTS),
    ctx_surface=st.sampled_from(SURFACES),
)


def build(snapshot: Snapshot) -> ToolRegistry:
    builder = RegistryBuilder(
        operator=OPERATORS[snapshot.operator], settings={PLUGIN: SETTINGS} if snapshot.settings else None
    )
    builder.register(
        matrix_tool(HANDLERS[snapshot.handler], ROLES[snapshot.role], AVAILABLE[snapshot.available]),
        origin=ORIGINS[snapshot.origin],
        original_name=ORIGINAL if snapshot.prefixed else None,
    )
    return builder.freeze()


def uncached(registry: ToolRegistry, call: Call, ctx: ToolContext) -> gates.Decision:
    """``gates.check`` on the context the tool is called with (the call's surface)."""
    return gates.check(
        registry.get(NAME),
        call.surface,
        ctx.with_surface(call.surface),  # type: ignore[arg-type]
        registry=registry,
        exclude=EXCLUDES[call.exclude],
        allowed_ops=ALLOWED_OPS[call.allowed_ops],
    )


async def outcome(registry: ToolRegistry, call: Call, ctx: ToolContext, text: str) -> gates.Decision:
    """The dispatcher's decision on one call, read back from what it raised or ran."""
    CALLS.clear()
    try:
        result = await invoke_tool(
            registry,
            NAME,
            {"text": text},
            ctx,
            surface=call.surface,
            exclude=EXCLUDES[call.exclude],
            allowed_ops=ALLOWED_OPS[call.allowed_ops],
        )
    except ToolGateRefused as exc:
        assert CALLS == []
        return gates.Decision(False, exc.layer, exc.reason)  # type: ignore[arg-type]
    except ToolRuntimeMissing as exc:
        assert CALLS == []
        return gates.Decision(False, "runtime", exc.message)
    assert result == text and CALLS == [text]
    return gates.ALLOW


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshot=snapshots, call=calls)
def test_the_prepared_gate_decides_what_check_decides(snapshot: Snapshot, call: Call) -> None:
    registry = build(snapshot)
    tool = registry.get(NAME)
    ctx = call.context()
    expected = gates.check(
        tool,
        call.surface,
        ctx,
        registry=registry,
        exclude=EXCLUDES[call.exclude],
        allowed_ops=ALLOWED_OPS[call.allowed_ops],
    )
    # what the snapshot decided once for the layers it fixes is what the function decides now
    fixed = gates.fixed_layers(tool, call.surface, registry.operator, registry.original_names)
    assert registry.fixed_layers(tool, call.surface) == fixed
    assert registry.fixed_layers(tool, call.surface) == fixed  # and again, from the snapshot
    assert (fixed or expected) == expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshot=snapshots, sequence=st.lists(st.tuples(calls, st.booleans()), min_size=2, max_size=12))
def test_every_call_through_the_dispatcher_is_decided_as_check_decides_it(
    snapshot: Snapshot, sequence: list[tuple[Call, bool]]
) -> None:
    """One registry, so one prepared gate; each call either reuses the previous context object (the
    dispatcher remembers the context it derived from it) or brings a new one."""
    registry = build(snapshot)

    async def run() -> None:
        ctx = None
        for i, (call, reuse) in enumerate(sequence):
            if ctx is None or not reuse:
                ctx = call.context()
            else:  # the same context object, with this call's surface, exclude and allowed_ops
                call = Call(**{**call.__dict__, **_context_fields(ctx)})
            # the refusal a caller receives carries layer and reason; ``rule`` is the operator's detail
            expected = replace(uncached(registry, call, ctx), rule="")
            assert await outcome(registry, call, ctx, f"call {i}") == expected, call

    asyncio.run(run())


def _context_fields(ctx: ToolContext) -> dict[str, Any]:
    def key(table: dict[str, Any], value: Any) -> str:
        return next(k for k, v in table.items() if v is value)

    return {
        "router_state": key(ROUTER_STATES, ctx.router_state),
        "phase_state": key(PHASE_STATES, ctx.phase_state),
        "agent_tools": key(AGENT_TOOLS, ctx.agent_tools),
        "agent": ctx.agent,
        "ctx_surface": ctx.surface,
    }


# --------------------------------------------------------------------------- a changed input is re-checked

OPEN = Snapshot("allow/allow", "plugin", "function", "none", "unset", False, True)


async def test_each_call_input_is_checked_again_on_the_next_call() -> None:
    registry = build(OPEN)
    base = Call("router", "none", "unset", "none", "none", "none", None, "router")
    ctx = base.context()
    changes = [
        ({}, ""),
        ({"exclude": "this_tool"}, "call"),
        ({}, ""),
        ({"router_state": "excludes_tool"}, "call"),
        ({"router_state": "step_without_tool"}, "call"),
        ({"router_state": "step_with_tool"}, ""),
        ({"agent_tools": "without_tool", "agent": "bob"}, "call"),
        ({"agent_tools": "with_tool"}, ""),
        ({"surface": "phase"}, "call"),  # the profile's default ops do not admit the notes cluster
        ({"surface": "phase", "allowed_ops": "cluster"}, ""),
        ({"surface": "phase", "phase_state": "ops_tool"}, ""),
        ({"surface": "phase", "phase_state": "ops_other"}, "call"),
        ({}, ""),
    ]
    for i, (change, layer) in enumerate(changes):
        call = Call(**{**base.__dict__, **change})
        call_ctx = ctx if not change else call.context()
        decision = await outcome(registry, call, call_ctx, f"call {i}")
        assert (decision.allowed, decision.layer) == (layer == "", layer), change


async def test_available_is_asked_on_every_call() -> None:
    open_now = [True]
    registry = frozen_registry([notes_write(handler, available=lambda ctx: open_now[0])])
    ctx = ToolContext(surface="router")
    call = Call("router", "none", "unset", "none", "none", "none", None, "router")
    seen = []
    for state in (True, False, True, False):
        open_now[0] = state
        seen.append((await outcome(registry, call, ctx, "x")).allowed)
    assert seen == [True, False, True, False]


async def test_a_surface_the_author_denies_is_refused_after_one_it_allows() -> None:
    registry = build(Snapshot("allow/deny", "plugin", "function", "none", "unset", False, False))
    ctx = ToolContext(surface="router")
    for surface, layer in (("router", ""), ("phase", "role"), ("mcp", ""), ("phase", "role")):
        call = Call(surface, "none", "cluster", "none", "none", "none", None, "router")
        assert (await outcome(registry, call, ctx, "x")).layer == layer


async def test_the_context_a_handler_sees_follows_the_callers_context() -> None:
    seen: list[tuple[Any, ...]] = []

    async def record(ctx: ToolContext) -> None:
        seen.append((ctx.agent, ctx.surface, ctx.settings))

    registry = frozen_registry(
        [notes_write(record, description="Record the context.", parameters={"type": "object"})],
        origin=ORIGINS["plugin"],
        settings={PLUGIN: SETTINGS},
    )
    bob, alice = ToolContext(surface="router", agent="bob"), ToolContext(surface="router", agent="alice")
    for ctx, surface in ((bob, None), (bob, None), (alice, None), (bob, "mcp"), (bob, None), (alice, "cli")):
        await invoke_tool(registry, NAME, {}, ctx, surface=surface)
    assert seen == [
        ("bob", "router", SETTINGS),
        ("bob", "router", SETTINGS),
        ("alice", "router", SETTINGS),
        ("bob", "mcp", SETTINGS),
        ("bob", "router", SETTINGS),
        ("alice", "cli", SETTINGS),
    ]


# --------------------------------------------------------------------------- what the snapshot fixes is fixed


async def test_a_set_the_host_changes_after_building_a_policy_changes_nothing() -> None:
    surfaces, exclude = {"router"}, {"notes_read"}
    policy = PluginPolicy(surfaces=surfaces, exclude=exclude)  # type: ignore[arg-type]
    surfaces.add("phase")
    exclude.add(NAME)
    assert policy.surfaces == frozenset({"router"}) and policy.exclude == frozenset({"notes_read"})
    registry = frozen_registry(
        [notes_write(handler, cluster=CLUSTER)],
        origin=ORIGINS["plugin"],
        operator=OperatorPolicy(plugins={PLUGIN: policy}),
    )
    surfaces.discard("router")
    router = Call("router", "none", "unset", "none", "none", "none", None, "router")
    phase = Call("phase", "none", "cluster", "none", "none", "none", None, "router")
    assert (await outcome(registry, router, router.context(), "x")).allowed
    assert (await outcome(registry, phase, phase.context(), "x")).layer == "operator"


@pytest.mark.parametrize("field", ["surfaces", "include", "exclude"])
def test_a_bare_string_in_a_plugin_policy_is_refused(field: str) -> None:
    with pytest.raises(TypeError, match=f"{field} must be a list of names, not a string"):
        PluginPolicy(**{field: "router"})  # type: ignore[arg-type]


def test_an_operator_policy_entry_must_be_a_plugin_policy() -> None:
    with pytest.raises(TypeError, match="operator policy of plugin 'notes' must be a PluginPolicy, not dict"):
        OperatorPolicy(plugins={PLUGIN: {"surfaces": frozenset({"router"})}})  # type: ignore[dict-item]
