"""A ``ToolContext`` with an invalid field fails where it is built, with a message naming the field,
instead of every later call failing as an execution error a model would be shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from reyn_core import HostBridge, PhaseCallerState, RouterCallerState, ToolContext


def test_an_unknown_surface_is_refused_with_the_closest_one():
    with pytest.raises(ValueError) as info:
        ToolContext(surface="rooter")  # type: ignore[arg-type]
    message = str(info.value)
    assert "ToolContext(surface='rooter'): unknown surface (did you mean 'router'?)" in message
    assert "router, phase, mcp, cli" in message


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"agent": 7}, "ToolContext(agent=...) must be a string or None, not int"),
        ({"workspace": 3.5}, "ToolContext(workspace=...) must be a path, not float"),
        (
            {"router_state": {"exclude": []}},
            "ToolContext(router_state=...) must be a RouterCallerState or None",
        ),
        ({"phase_state": ("file",)}, "ToolContext(phase_state=...) must be a PhaseCallerState or None"),
        ({"bridge": None}, "ToolContext(bridge=...) must be a HostBridge, not NoneType"),
        ({"extras": ["a"]}, "ToolContext(extras=...) must be a mapping, not list"),
        ({"agent_tools": "read_file"}, "agent_tools must be a list of names, not a string"),
    ],
)
def test_each_invalid_field_is_named(kwargs, message):
    with pytest.raises((TypeError, ValueError)) as info:
        ToolContext(**kwargs)
    assert message in str(info.value)


def test_valid_contexts_still_build_and_a_string_workspace_becomes_a_path(tmp_path):
    ctx = ToolContext(
        surface="phase",
        agent="a",
        workspace=str(tmp_path),
        router_state=RouterCallerState(),
        phase_state=PhaseCallerState(allowed_ops=("file",)),
        bridge=HostBridge(),
        extras={"k": 1},
    )
    assert ctx.workspace == Path(tmp_path)
    assert ctx.with_surface("router").surface == "router"
    with pytest.raises(ValueError, match="unknown surface"):
        ctx.with_surface("web")  # type: ignore[arg-type]
