"""The gate matrix: for every combination of role gate x surface x operator narrowing x exclude x
allowed_ops x available, the renderers show exactly what the specification (DESIGN.md §4) allows,
the dispatcher agrees with them, a refused tool is refused with its layer named, and its handler
never runs."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from gate_axes import AVAILABLE, CLUSTER, NAME, OPERATORS, ROLES, matrix_tool, narrowed, notes_write
from registry_kit import frozen_registry, plugin_origin

from reyn_core import ToolContext
from reyn_core.host import (
    PhaseOutputError,
    ToolRegistry,
    dispatch_tool,
    gates,
    parse_phase_output,
    phase_context,
    render_phase,
    render_router,
)

HANDLER_CALLS: list[str] = []


def handler(text: str) -> str:
    HANDLER_CALLS.append(text)
    return f"wrote {text}"


SURFACES = ("router", "phase")
EXCLUDES = {"none": (), "this_tool": (NAME,), "another_tool": ("notes_read",)}
ALLOWED_OPS: dict[str, tuple[str, ...] | None] = {
    "default": None,  # the profile default ("file", "ask_user") does not admit the notes cluster
    "exact": (NAME,),
    "cluster": (CLUSTER,),
    "glob": ("notes_*",),
    "other": ("file", "web_*"),
    "empty": (),
}


@dataclass(frozen=True)
class Case:
    role: str
    surface: str
    operator: str
    exclude: str
    allowed_ops: str
    available: str

    def __str__(self) -> str:
        return "/".join(
            (self.role, self.surface, self.operator, self.exclude, self.allowed_ops, self.available)
        )


def cases() -> Iterator[Case]:
    for combo in itertools.product(ROLES, SURFACES, OPERATORS, EXCLUDES, ALLOWED_OPS, AVAILABLE):
        case = Case(*combo)
        if case.surface == "router" and case.allowed_ops != "default":
            continue  # allowed_ops is a phase concept; the router ignores it
        yield case


def expected(case: Case) -> tuple[bool, str]:
    """The specification, written independently of gates.py: (allowed, refusing layer)."""
    gates, surface = ROLES[case.role], case.surface
    if (gates.router if surface == "router" else gates.phase) == "deny":
        return False, "role"
    op = case.operator
    if op == "plugins_off" or op in ("tool_excluded", "not_included"):
        return False, "operator"
    if (op == "narrowed_to_router" and surface == "phase") or (
        op == "narrowed_to_phase" and surface == "router"
    ):
        return False, "operator"
    if op == "router_exclude" and surface == "router":
        return False, "operator"
    if NAME in EXCLUDES[case.exclude]:
        return False, "call"
    if surface == "phase" and case.allowed_ops in ("default", "other", "empty"):
        return False, "call"
    if case.available in ("false", "raises_tool_error", "raises_bug"):
        return False, "call"
    return True, ""


@cache
def registry_for(role: str, operator: str, available: str) -> ToolRegistry:
    return frozen_registry(
        [matrix_tool(handler, ROLES[role], AVAILABLE[available])],
        origin=plugin_origin(),
        operator=OPERATORS[operator],
    )


def rendered(case: Case, registry: ToolRegistry) -> bool:
    exclude = EXCLUDES[case.exclude]
    if case.surface == "router":
        names = [
            t["function"]["name"]
            for t in render_router(registry, ToolContext(surface="router"), exclude=exclude)
        ]
    else:
        surface = render_phase(
            registry, ToolContext(surface="phase"), ALLOWED_OPS[case.allowed_ops], exclude=exclude
        )
        names = [op.kind for op in surface.ops]
    assert names in ([], [NAME])
    return names == [NAME]


async def dispatched(case: Case, registry: ToolRegistry) -> dict[str, Any]:
    return await dispatch_tool(
        registry,
        NAME,
        {"text": str(case)},
        ToolContext(surface=case.surface),  # type: ignore[arg-type]
        exclude=EXCLUDES[case.exclude],
        allowed_ops=ALLOWED_OPS[case.allowed_ops],
    )


ALL_CASES = list(cases())


def test_matrix_covers_every_dimension() -> None:
    assert len(ALL_CASES) == 4 * 8 * 3 * 5 * (1 + 6)
    assert {expected(c)[1] for c in ALL_CASES} == {"", "role", "operator", "call"}


def test_renderers_show_exactly_what_the_specification_allows() -> None:
    wrong = [
        str(c)
        for c in ALL_CASES
        if rendered(c, registry_for(c.role, c.operator, c.available)) != expected(c)[0]
    ]
    assert wrong == []


def test_gates_check_names_the_layer_the_specification_names() -> None:
    wrong = []
    for c in ALL_CASES:
        registry = registry_for(c.role, c.operator, c.available)
        decision = gates.check(
            registry.get(NAME),
            c.surface,
            ToolContext(surface=c.surface),  # type: ignore[arg-type]
            registry=registry,
            exclude=EXCLUDES[c.exclude],
            allowed_ops=ALLOWED_OPS[c.allowed_ops],
        )
        if (decision.allowed, decision.layer) != expected(c) or (
            not decision.allowed and not decision.reason
        ):
            wrong.append(f"{c}: {decision}")
    assert wrong == []


async def test_dispatcher_agrees_with_the_renderers_and_names_the_layer() -> None:
    wrong = []
    for c in ALL_CASES:
        registry = registry_for(c.role, c.operator, c.available)
        shown = rendered(c, registry)
        envelope = await dispatched(c, registry)
        if shown and envelope != {"status": "ok", "data": f"wrote {c}"}:
            wrong.append(f"{c}: shown but {envelope}")
        if not shown:
            error = envelope.get("error", {})
            if (error.get("kind"), error.get("layer")) != ("gate_refused", expected(c)[1]):
                wrong.append(f"{c}: hidden but {envelope}")
    assert wrong == []


async def test_a_refused_tools_handler_never_runs() -> None:
    HANDLER_CALLS.clear()
    refused = [c for c in ALL_CASES if not expected(c)[0]]
    for c in refused:
        await dispatched(c, registry_for(c.role, c.operator, c.available))
    assert HANDLER_CALLS == []
    allowed = [c for c in ALL_CASES if expected(c)[0]]
    for c in allowed:
        await dispatched(c, registry_for(c.role, c.operator, c.available))
    assert sorted(HANDLER_CALLS) == sorted(str(c) for c in allowed)


def test_phase_output_contract_refuses_exactly_the_ops_the_surface_hides() -> None:
    reply = {"control": {"type": "finish", "decision": "finish"}, "control_ir": [{"kind": NAME, "text": "x"}]}
    wrong = []
    for c in (c for c in ALL_CASES if c.surface == "phase"):
        registry = registry_for(c.role, c.operator, c.available)
        surface = render_phase(
            registry, ToolContext(surface="phase"), ALLOWED_OPS[c.allowed_ops], exclude=EXCLUDES[c.exclude]
        )
        try:
            parse_phase_output(reply, surface)
            accepted = True
        except PhaseOutputError as exc:
            accepted = False
            if "is not an allowed op" not in exc.feedback():
                wrong.append(f"{c}: {exc.feedback()}")
        if accepted != expected(c)[0]:
            wrong.append(f"{c}: accepted={accepted}")
    assert wrong == []


@pytest.mark.parametrize("ops", [None, (NAME,), (CLUSTER,), ("file",), ()])
async def test_phase_context_carries_allowed_ops_to_the_dispatcher(ops: tuple[str, ...] | None) -> None:
    registry = registry_for("both", "none", "unset")
    ctx = ToolContext(surface="phase") if ops is None else phase_context(ToolContext(), ops)
    shown = [op.kind for op in render_phase(registry, ctx).ops] == [NAME]
    envelope = await dispatch_tool(registry, NAME, {"text": "x"}, ctx)
    assert shown == (envelope["status"] == "ok")
    assert shown == (ops in ((NAME,), (CLUSTER,)))


async def test_router_state_exclude_and_step_allowlist_hide_and_refuse() -> None:
    from reyn_core import RouterCallerState

    registry = registry_for("both", "none", "unset")
    for state in (
        RouterCallerState(exclude=frozenset({NAME})),
        RouterCallerState(allowed_tools=frozenset({"x"})),
    ):
        ctx = ToolContext(surface="router", router_state=state)
        assert render_router(registry, ctx) == []
        envelope = await dispatch_tool(registry, NAME, {"text": "x"}, ctx)
        assert (envelope["error"]["kind"], envelope["error"]["layer"]) == ("gate_refused", "call")


async def test_per_agent_allowlist_hides_and_refuses() -> None:
    registry = registry_for("both", "none", "unset")
    ctx = ToolContext(surface="router", agent="bob", agent_tools=frozenset({"notes_read"}))
    assert render_router(registry, ctx) == []
    envelope = await dispatch_tool(registry, NAME, {"text": "x"}, ctx)
    assert envelope["error"]["layer"] == "call" and "'bob'" in envelope["error"]["message"]


def test_host_tools_ignore_plugin_narrowing_but_not_router_exclude() -> None:
    for operator, shown in (("plugins_off", True), ("tool_excluded", True), ("router_exclude", False)):
        registry = frozen_registry([notes_write(handler)], operator=OPERATORS[operator])
        names = [t["function"]["name"] for t in render_router(registry, ToolContext())]
        assert (names == [NAME]) is shown, operator


def test_available_reason_reaches_the_decision() -> None:
    registry = registry_for("both", "none", "raises_tool_error")
    decision = gates.check(registry.get(NAME), "router", ToolContext(), registry=registry)
    assert decision.layer == "call" and "set it in the profile" in decision.reason


@pytest.mark.parametrize(
    ("surfaces", "allowed"),
    [
        (None, {"router", "phase", "mcp", "cli"}),
        ({"router", "phase"}, {"router", "phase"}),
        ({"cli"}, {"cli"}),
        ({"mcp", "router"}, {"mcp", "router"}),
    ],
)
async def test_a_plugins_surfaces_list_every_surface_it_may_serve(
    surfaces: set[str] | None, allowed: set[str]
) -> None:
    registry = frozen_registry(
        [notes_write(handler, cluster=CLUSTER)],
        origin=plugin_origin(),
        operator=narrowed(surfaces=None if surfaces is None else frozenset(surfaces)),
    )
    served = set()
    for surface in ("router", "phase", "mcp", "cli"):
        envelope = await dispatch_tool(
            registry,
            NAME,
            {"text": "x"},
            ToolContext(surface=surface),  # type: ignore[arg-type]
            allowed_ops=[CLUSTER],
        )
        if envelope["status"] == "ok":
            served.add(surface)
        else:
            assert envelope["error"]["layer"] == "operator"
    assert served == allowed


async def test_mcp_and_cli_surfaces_follow_the_router_role_gate() -> None:
    registry = registry_for("phase_only", "none", "unset")
    for surface in ("mcp", "cli"):
        envelope = await dispatch_tool(registry, NAME, {"text": "x"}, ToolContext(surface=surface))  # type: ignore[arg-type]
        assert envelope["error"]["layer"] == "role"
    assert (
        await dispatch_tool(
            registry_for("router_only", "none", "unset"), NAME, {"text": "x"}, ToolContext(surface="cli")
        )
    )["status"] == "ok"


def test_a_bare_string_for_exclude_is_refused_not_split_into_letters() -> None:
    registry = registry_for("both", "none", "unset")
    with pytest.raises(
        TypeError, match=r"exclude must be a list of names, not a string: write \['notes_write'\]"
    ):
        render_router(registry, ToolContext(), exclude=NAME)  # type: ignore[arg-type]


async def test_a_bare_string_for_allowed_ops_is_refused_everywhere() -> None:
    registry = registry_for("both", "none", "unset")
    for attempt in (
        lambda: render_phase(registry, ToolContext(), CLUSTER),
        lambda: phase_context(ToolContext(), CLUSTER),
    ):
        with pytest.raises(TypeError, match="allowed_ops must be a list of names"):
            attempt()
    with pytest.raises(TypeError, match="allowed_ops must be a list of names"):
        await dispatch_tool(registry, NAME, {"text": "x"}, ToolContext(surface="phase"), allowed_ops=CLUSTER)


async def test_available_sees_the_surface_of_the_call_like_the_renderers_do() -> None:
    seen: list[str] = []

    def available(ctx: ToolContext) -> bool:
        seen.append(ctx.surface)
        return ctx.surface == "phase"

    registry = frozen_registry([notes_write(handler, cluster=CLUSTER, available=available)])
    base = ToolContext(surface="cli")
    assert render_router(registry, base) == []
    assert [op.kind for op in render_phase(registry, base, [CLUSTER]).ops] == [NAME]
    refused = await dispatch_tool(registry, NAME, {}, base, surface="router")
    allowed = await dispatch_tool(registry, NAME, {"text": "x"}, base, surface="phase", allowed_ops=[CLUSTER])
    assert refused["error"]["layer"] == "call" and allowed["status"] == "ok"
    assert seen == ["router", "phase", "router", "phase"]
