"""The memory tools through the real dispatcher, on both surfaces, over a real SQLite file."""

from __future__ import annotations

import pytest

from reyn_core import ToolContext
from reyn_core.host import render_phase, render_router

TOOLS = ["forget_memory", "list_memory", "read_memory_body", "remember_agent", "remember_shared"]


def test_all_five_tools_render_on_the_router_and_the_phase_surface(memory):
    router = [t["function"]["name"] for t in render_router(memory.registry, memory.ctx("a"))]
    phase = render_phase(memory.registry, memory.ctx("a", "phase"), ["memory"])
    assert router == TOOLS
    assert sorted(op.kind for op in phase.ops) == TOOLS
    assert {memory.registry.get(n).cluster for n in TOOLS} == {"memory"}


def test_the_phase_default_allowed_ops_do_not_include_memory(memory):
    phase = render_phase(memory.registry, memory.ctx("a", "phase"), None)
    assert phase.ops == () or list(phase.ops) == []
    env = memory.call("list_memory", {}, agent="a", surface="phase", allowed_ops=None)
    assert env["error"]["kind"] == "gate_refused"


@pytest.mark.parametrize("surface", ["router", "phase"])
def test_remember_then_list_and_read_on_either_surface(memory, make_entry, surface):
    env = memory.call("remember_shared", make_entry("deploy-notes", "use blue/green"), surface=surface)
    assert env["status"] == "ok" and env["data"]["status"] == "created"
    listed = memory.call("list_memory", {}, surface=surface)["data"]
    assert listed["layers"] == ["shared"]
    assert [e["slug"] for e in listed["entries"]] == ["deploy-notes"]
    assert "body" not in listed["entries"][0]
    read = memory.call("read_memory_body", {"slug": "deploy-notes"}, surface=surface)["data"]
    assert read["body"] == "use blue/green" and read["layer"] == "shared"


def test_writing_an_existing_slug_updates_it_and_keeps_its_creation_time(memory, make_entry):
    first = memory.call("remember_shared", make_entry("n", "one"))["data"]
    second = memory.call("remember_shared", make_entry("n", "two", name="Renamed"))["data"]
    assert (first["status"], second["status"]) == ("created", "updated")
    read = memory.call("read_memory_body", {"slug": "n"})["data"]
    assert read["body"] == "two" and read["name"] == "Renamed"
    assert read["created"] == first["updated"] and read["updated"] == second["updated"]


def test_list_filters_by_type_and_layer(memory, make_entry):
    memory.call("remember_shared", make_entry("s-user", type="user"))
    memory.call("remember_shared", make_entry("s-ref", type="reference"))
    memory.call("remember_agent", make_entry("a-ref", type="reference"), agent="ann")
    both = memory.call("list_memory", {"type": "reference"}, agent="ann")["data"]
    assert both["layers"] == ["shared", "agent"]
    assert [(e["layer"], e["slug"]) for e in both["entries"]] == [("shared", "s-ref"), ("agent", "a-ref")]
    mine = memory.call("list_memory", {"layer": "agent"}, agent="ann")["data"]
    assert [e["slug"] for e in mine["entries"]] == ["a-ref"]


def test_unknown_memory_type_is_refused_with_the_allowed_types(memory, make_entry):
    env = memory.call("remember_shared", make_entry("x", type="secret"))
    assert env["error"]["kind"] == "invalid_arguments"
    assert env["error"]["errors"][0]["path"] == "/type"
    assert "user" in env["error"]["message"] and "reference" in env["error"]["message"]


def test_read_prefers_the_agents_own_layer_then_shared(memory, make_entry):
    memory.call("remember_shared", make_entry("style", "shared style"))
    assert memory.call("read_memory_body", {"slug": "style"}, agent="ann")["data"]["body"] == "shared style"
    memory.call("remember_agent", make_entry("style", "ann's style"), agent="ann")
    assert memory.call("read_memory_body", {"slug": "style"}, agent="ann")["data"]["body"] == "ann's style"
    shared = memory.call("read_memory_body", {"slug": "style", "layer": "shared"}, agent="ann")["data"]
    assert shared["body"] == "shared style"


def test_forget_removes_an_entry_and_a_second_forget_says_it_is_gone(memory, make_entry):
    memory.call("remember_shared", make_entry("old"))
    assert memory.call("forget_memory", {"slug": "old", "layer": "shared"})["data"]["status"] == "forgotten"
    again = memory.call("forget_memory", {"slug": "old", "layer": "shared"})
    assert again["error"]["kind"] == "execution_error"
    assert "no entry 'old' in the shared layer" in again["error"]["message"]
    assert memory.call("list_memory", {})["data"]["entries"] == []


# --------------------------------------------------------------------------- agent identity


def test_agent_a_cannot_read_agent_bs_entries(memory, make_entry):
    memory.call("remember_agent", make_entry("b-secret", "bob only"), agent="bob")
    assert memory.call("list_memory", {}, agent="alice")["data"]["entries"] == []
    env = memory.call("read_memory_body", {"slug": "b-secret", "layer": "agent"}, agent="alice")
    assert env["status"] == "error" and "no entry 'b-secret'" in env["error"]["message"]


def test_agent_a_cannot_forget_agent_bs_entries(memory, make_entry):
    memory.call("remember_agent", make_entry("b-secret", "bob only"), agent="bob")
    env = memory.call("forget_memory", {"slug": "b-secret", "layer": "agent"}, agent="alice")
    assert env["status"] == "error"
    assert memory.call("read_memory_body", {"slug": "b-secret"}, agent="bob")["data"]["body"] == "bob only"


def test_agent_a_cannot_overwrite_agent_bs_entry_with_the_same_slug(memory, make_entry):
    memory.call("remember_agent", make_entry("plan", "bob's"), agent="bob")
    assert (
        memory.call("remember_agent", make_entry("plan", "alice's"), agent="alice")["data"]["status"]
        == "created"
    )
    assert memory.call("read_memory_body", {"slug": "plan"}, agent="bob")["data"]["body"] == "bob's"


@pytest.mark.parametrize(
    "tool,args",
    [
        ("read_memory_body", {"slug": "x", "agent": "bob"}),
        ("forget_memory", {"slug": "x", "layer": "agent", "agent": "bob"}),
        ("list_memory", {"layer": "agent", "agent": "bob"}),
        (
            "remember_agent",
            {"slug": "x", "name": "n", "description": "d", "type": "user", "body": "b", "agent": "bob"},
        ),
    ],
)
def test_model_arguments_cannot_name_an_agent(memory, tool, args):
    env = memory.call(tool, args, agent="alice")
    assert env["error"]["kind"] == "invalid_arguments"
    assert any(e["path"] in ("", "/agent") for e in env["error"]["errors"])


@pytest.mark.parametrize(
    "tool,args",
    [
        ("remember_agent", {"slug": "x", "name": "n", "description": "d", "type": "user", "body": "b"}),
        ("list_memory", {"layer": "agent"}),
        ("forget_memory", {"slug": "x", "layer": "agent"}),
        ("read_memory_body", {"slug": "x", "layer": "agent"}),
    ],
)
def test_a_call_without_an_agent_cannot_use_the_agent_layer(memory, tool, args):
    env = memory.call(tool, args, agent=None)
    assert env["error"]["kind"] == "denied"
    assert "has none" in env["error"]["message"] and "shared layer" in env["error"]["message"]


def test_without_an_agent_list_all_shows_the_shared_layer_only(memory, make_entry):
    memory.call("remember_shared", make_entry("common"))
    data = memory.call("list_memory", {}, agent=None)["data"]
    assert data["layers"] == ["shared"] and [e["slug"] for e in data["entries"]] == ["common"]


def test_an_agent_name_with_control_characters_is_refused(memory, make_entry):
    env = memory.call("remember_agent", make_entry("x"), agent="evil\nname")
    assert env["error"]["kind"] == "denied" and "control characters" in env["error"]["message"]


# --------------------------------------------------------------------------- size caps


def test_an_oversized_body_is_refused_and_nothing_is_written(memory_factory, make_entry):
    small = memory_factory(max_body_bytes=100)
    env = small.call("remember_shared", make_entry("big", "é" * 51))  # 102 UTF-8 bytes
    assert env["error"]["kind"] == "invalid_arguments"
    assert env["error"]["errors"][0]["path"] == "/body"
    assert "102 bytes, over the limit of 100 bytes" in env["error"]["message"]
    assert small.call("list_memory", {})["data"]["entries"] == []
    assert small.call("remember_shared", make_entry("small", "é" * 50))["status"] == "ok"


def test_an_overlong_name_is_refused_by_the_schema(memory, make_entry):
    env = memory.call("remember_shared", make_entry("n", name="x" * 201))
    assert env["error"]["kind"] == "invalid_arguments" and env["error"]["errors"][0]["path"] == "/name"


def test_list_is_capped_and_says_so(make_entry, memory_factory):
    small = memory_factory(list_limit=3)
    for i in range(5):
        small.call("remember_shared", make_entry(f"e{i}"))
    data = small.call("list_memory", {})["data"]
    assert [e["slug"] for e in data["entries"]] == ["e0", "e1", "e2"]
    assert "more than 3" in data["truncated"]


def test_a_full_layer_refuses_new_entries_but_accepts_updates(memory_factory, make_entry):
    small = memory_factory(max_entries_per_layer=2)
    small.call("remember_shared", make_entry("a"))
    small.call("remember_shared", make_entry("b"))
    env = small.call("remember_shared", make_entry("c"))
    assert env["error"]["kind"] == "execution_error" and "limit" in env["error"]["message"]
    assert small.call("remember_shared", make_entry("a", "new body"))["data"]["status"] == "updated"
    # Another agent's layer has its own budget.
    assert small.call("remember_agent", make_entry("c"), agent="ann")["status"] == "ok"


def test_context_settings_default_when_the_host_registers_none(tmp_path, make_entry):
    import asyncio

    from reyn_tools_memory.tools import MEMORY_TOOLS

    from reyn_core import ToolOrigin
    from reyn_core.host import RegistryBuilder, dispatch_tool

    reg = RegistryBuilder()
    for t in MEMORY_TOOLS:
        reg.register(t, origin=ToolOrigin(kind="plugin", plugin_id="memory"))
    ctx = ToolContext(surface="router", workspace=tmp_path)
    env = asyncio.run(dispatch_tool(reg.freeze(), "remember_shared", make_entry("d"), ctx))
    assert env["status"] == "ok"
    assert (tmp_path / ".reyn" / "memory.db").is_file()
