"""What the dispatcher decides once per registry snapshot must really be fixed by the snapshot (issue 15).

``gates.ToolGate`` decides the role, operator and runtime layers of a tool once; that is only sound
when every value those layers read is an exact, immutable type. A policy, definition, gate or origin
that computes its answer on every read (a subclass with a property, an object with its own
``__bool__``), a registry subclass that hands out another definition, or a registry whose own
equality makes it equal to another snapshot must each be decided as ``gates.check`` decides them on
every call — the dispatcher may be slower for them, never more permissive."""

from __future__ import annotations

from typing import Any

import pytest

from reyn_core import ToolContext, ToolDefinition, ToolGates, ToolOrigin
from reyn_core.calls import ToolCallHooks
from reyn_core.host import OperatorPolicy, PluginPolicy, RegistryBuilder, ToolRegistry, dispatch_tool, gates
from reyn_core.registry.snapshot import RegisteredTool

CTX = ToolContext(surface="router")
PLUGIN = ToolOrigin(kind="plugin", plugin_id="notes")


async def echo(text: str) -> str:
    return text


def definition(**changes: Any) -> ToolDefinition:
    fields: dict[str, Any] = {
        "name": "note",
        "description": "Echo a note.",
        "handler": echo,
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
    }
    return ToolDefinition(**{**fields, **changes})


def plugin_registry(operator: OperatorPolicy) -> ToolRegistry:
    builder = RegistryBuilder(operator=operator)
    builder.register(definition(), origin=PLUGIN)
    return builder.freeze()


async def call(registry: ToolRegistry, surface: str = "router") -> dict[str, Any]:
    return await dispatch_tool(registry, "note", {"text": "hi"}, CTX, surface=surface)


def full_check(registry: ToolRegistry, surface: str = "router") -> gates.Decision:
    return gates.check(registry.get("note"), surface, CTX.with_surface(surface), registry=registry)  # type: ignore[arg-type]


def outcome(envelope: dict[str, Any]) -> tuple[str, str]:
    if envelope["status"] == "ok":
        return "ok", ""
    return envelope["error"]["kind"], envelope["error"].get("layer", "")


async def test_an_operator_policy_subclass_that_computes_its_switch_is_read_on_every_call() -> None:
    plugins_on = [True]

    class Switched(OperatorPolicy):
        __slots__ = ()

        @property
        def plugins_enabled(self) -> bool:
            return plugins_on[0]

        @plugins_enabled.setter
        def plugins_enabled(self, value: bool) -> None:
            pass

    registry = plugin_registry(Switched())
    assert outcome(await call(registry)) == ("ok", "")
    plugins_on[0] = False
    assert not full_check(registry)
    assert outcome(await call(registry)) == ("gate_refused", "operator")
    plugins_on[0] = True
    assert outcome(await call(registry)) == ("ok", "")


async def test_a_switch_that_is_not_a_bool_is_read_on_every_call() -> None:
    class Switch:
        on = True

        def __bool__(self) -> bool:
            return self.on

    switch = Switch()
    registry = plugin_registry(OperatorPolicy(plugins_enabled=switch))
    assert outcome(await call(registry)) == ("ok", "")
    switch.on = False
    assert not full_check(registry)
    assert outcome(await call(registry)) == ("gate_refused", "operator")


async def test_an_operator_that_is_not_an_operator_policy_is_read_on_every_call() -> None:
    class Live:
        plugins_enabled = True
        plugins: dict[str, PluginPolicy] = {}
        default_allowed_ops = ("file",)
        router_exclude: frozenset[str] = frozenset()

    live = Live()
    registry = plugin_registry(live)
    assert outcome(await call(registry)) == ("ok", "")
    live.router_exclude = frozenset({"note"})
    assert outcome(await call(registry)) == ("gate_refused", "operator")


ANSWER = [True]


class ComputedGates(ToolGates):
    def allows(self, surface: str) -> bool:
        return ANSWER[0]


class ComputedOrigin(ToolOrigin):
    @property  # type: ignore[override]
    def kind(self) -> str:
        return "host" if ANSWER[0] else "plugin"

    @kind.setter
    def kind(self, value: str) -> None:
        pass


class ComputedDefinition(ToolDefinition):
    __slots__ = ()

    @property
    def plugin_id(self) -> str | None:
        return None if ANSWER[0] else "notes"


def _computed(kind: str) -> tuple[ToolDefinition, OperatorPolicy]:
    if kind == "gates":
        return definition(gates=ComputedGates()), gates.NO_POLICY
    if kind == "origin":
        to_phase = OperatorPolicy(plugins={"notes": PluginPolicy(surfaces=frozenset({"phase"}))})
        return definition(origin=ComputedOrigin(plugin_id="notes")), to_phase
    plain = definition(origin=PLUGIN)
    names = ("name", "description", "handler", "parameters", "origin")
    return ComputedDefinition(**{f: getattr(plain, f) for f in names}), OperatorPolicy(plugins_enabled=False)


@pytest.mark.parametrize("kind", ["gates", "origin", "definition"])
async def test_definitions_gates_and_origins_that_compute_their_answer_are_read_on_every_call(
    kind: str,
) -> None:
    """A registry made directly from entries (the builder would rebuild or refuse these)."""
    ANSWER[0] = True
    tool, operator = _computed(kind)
    registry = ToolRegistry({"note": RegisteredTool(tool)}, operator=operator)
    try:
        assert outcome(await call(registry)) == ("ok", "")
        ANSWER[0] = False
        expected = full_check(registry)
        assert not expected
        assert outcome(await call(registry)) == ("gate_refused", expected.layer)
    finally:
        ANSWER[0] = True


async def test_a_registry_subclass_that_hands_out_another_definition_is_gated_on_that_one() -> None:
    snapshot = RegistryBuilder()
    snapshot.register(definition())
    current: list[ToolDefinition | None] = [snapshot.freeze().get("note")]

    class Live(ToolRegistry):
        __slots__ = ()

        def get(self, name: str) -> ToolDefinition:
            tool = current[0]
            if tool is None:
                return super().get("missing")
            return tool

    registry = Live(snapshot.freeze().entries())
    assert outcome(await call(registry)) == ("ok", "")
    current[0] = definition(gates=ToolGates(router="deny"))
    assert outcome(await call(registry)) == ("gate_refused", "role")
    current[0] = definition(handler=None)
    assert outcome(await call(registry))[0] == "runtime_missing"
    current[0] = None  # removed
    assert outcome(await call(registry))[0] == "not_found"
    current[0] = definition(parameters={"type": "object", "properties": {"text": {"type": "integer"}}})
    assert outcome(await call(registry))[0] == "invalid_arguments"  # its own schema, not the first one's


async def test_a_registry_equal_to_another_by_its_own_equality_shares_nothing_with_it() -> None:
    builder = RegistryBuilder()
    builder.register(definition())
    first = builder.freeze()
    assert outcome(await call(first)) == ("ok", "")

    class LooksLikeIt(ToolRegistry):
        __slots__ = ()

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return hash(first)

    other = LooksLikeIt()  # no tools at all
    await dispatch_tool(ToolRegistry(), "nothing", {}, CTX)  # another snapshot was called last
    assert outcome(await call(other))[0] == "not_found"
    denied = LooksLikeIt({"note": RegisteredTool(definition(gates=ToolGates(router="deny")))})
    assert outcome(await call(denied)) == ("gate_refused", "role")


async def test_an_unhashable_registry_subclass_is_still_dispatched() -> None:
    class Unhashable(ToolRegistry):
        __slots__ = ()

        def __eq__(self, other: object) -> bool:
            return self is other

        __hash__ = None  # type: ignore[assignment]

    builder = RegistryBuilder()
    builder.register(definition())
    registry = Unhashable(builder.freeze().entries())
    assert (await call(registry)) == {"status": "ok", "data": "hi"}


def test_a_tool_gate_is_refused_for_inputs_a_snapshot_does_not_fix() -> None:
    class Gates(ToolGates):
        def allows(self, surface: str) -> bool:
            return True

    tool = definition(gates=Gates(router="deny"))
    assert not gates.fixed_by_snapshot(tool, gates.NO_POLICY, {})
    with pytest.raises(TypeError, match=r"gates\.check"):
        gates.ToolGate(tool, gates.NO_POLICY, {})
    assert gates.fixed_by_snapshot(definition(origin=PLUGIN), OperatorPolicy(), {})


async def test_a_policy_the_gates_cannot_evaluate_is_refused_and_audited_as_before() -> None:
    """``exclude=None`` makes layer 2 raise: the call is an execution error the after hooks see, as
    when ``gates.check`` raised inside the call, never an exception out of ``dispatch_tool``."""
    seen: list[str] = []
    builder = RegistryBuilder(
        operator=OperatorPolicy(plugins={"notes": PluginPolicy(exclude=None)}),
        hooks=ToolCallHooks(after=(lambda call, done: seen.append(done.kind),)),
    )
    builder.register(definition(), origin=PLUGIN)
    registry = builder.freeze()
    for _ in range(2):
        assert outcome(await call(registry)) == ("execution_error", "")
    assert seen == ["execution_error", "execution_error"]
