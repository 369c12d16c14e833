"""What the tools sharing one availability check cost the operator's log, and what context a check
and a handler see (review of issue 24's shared asks).

- A check shared by 300 tools of a plugin fails: one record per check and kind of failure (keyed
  by the check — module-qualified name and plugin — not by tool), counting its tools and naming the
  first few; listed again and again, no record is written again (before: one record per tool, and
  past the log's 256 kinds every listing rewrote every record).
- A tool of a plugin without settings sees None as its settings — in its check and its handler —
  not the settings of the plugin whose handler listed the registry or called it.

Each beside its positive control; real threads, a real log file."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from reyn_core import ToolContext, ToolDefinition, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, gates, invoke_tool

CTX = ToolContext(surface="router", agent="a")
TOOLS = 300


def plugin_registry(tools: dict[str, tuple[str | None, Callable[[ToolContext], Any] | None, Any]], **kw: Any):
    """A registry of ``tools``: name → (plugin, check, handler)."""
    builder = RegistryBuilder(**kw)
    for name, (plugin, check, handler) in tools.items():
        builder.register(
            ToolDefinition(
                name=name,
                description="T.",
                parameters={"type": "object", "properties": {}},
                handler=handler or str,
                available=check,
            ),
            origin=ToolOrigin(kind="plugin", plugin_id=plugin) if plugin else None,
        )
    return builder.freeze()


def shown(registry: ToolRegistry, ctx: ToolContext = CTX) -> list[str]:
    return [t.name for t in registry.visible("router", ctx)]


def records(text: str) -> list[str]:
    """The records of the operator's log ``text``."""
    return [
        r for r in re.split(r"^(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ reyn\.remote)", text, flags=re.M) if r
    ]


def disk_gone(ctx: ToolContext) -> bool:
    raise OSError("the disk the server needs is gone")


def test_tools_sharing_a_failing_check_write_one_record_for_all_of_them(operator_log: Any) -> None:
    """300 tools of one plugin share a check raising ``OSError``; ten listings: every tool hidden,
    one record in all — naming the check and its plugin, counting the 300 tools, citing the first few
    and no more — and every refusal cites it. Control: a tool with a working check is shown."""
    registry = plugin_registry(
        {
            **{f"t{i:03}": ("srv", disk_gone, None) for i in range(TOOLS)},
            "ok": ("other", lambda ctx: True, None),
        }
    )
    for _ in range(10):
        assert shown(registry) == ["ok"]
    (record,) = records(operator_log.text())
    assert "OSError: the disk the server needs is gone" in record
    assert f"{disk_gone.__module__}.disk_gone (plugin 'srv')" in record
    assert f"{TOOLS} tool(s)" in record and "'t000', 't001', 't002', 't003', 't004' and 295 more" in record
    assert "'t005'" not in record and "'t299'" not in record  # bounded: not every name
    for i in (0, 150, 299):  # a call's gate cites the same record
        decision = gates.check(registry.get(f"t{i:03}"), "router", CTX, registry=registry)
        assert not decision and operator_log.record(decision.reason) == record
        assert f"tool 't{i:03}' is unavailable: its availability check failed (RT011)" in decision.reason
    assert len(records(operator_log.text())) == 1
    assert len(registry.failures._refs) == 1  # one kind of one check remembered, not one per tool


def test_control_the_same_tools_with_a_working_check_are_all_shown(operator_log: Any) -> None:
    registry = plugin_registry({f"t{i:03}": ("srv", lambda ctx: True, None) for i in range(TOOLS)})
    for _ in range(3):
        assert shown(registry) == [f"t{i:03}" for i in range(TOOLS)]
    assert operator_log.text() == ""


def test_another_kind_of_failure_of_the_shared_check_is_one_more_record(operator_log: Any) -> None:
    """The record is kept per check *and* kind: the shared check failing another way writes one more
    record (for all its tools), then none again."""
    failures = iter([OSError("first"), OSError("first"), ValueError("second"), ValueError("second")])

    def flaky(ctx: ToolContext) -> bool:
        raise next(failures)

    registry = plugin_registry({f"t{i:03}": ("srv", flaky, None) for i in range(TOOLS)})
    for _ in range(4):
        assert shown(registry) == []
    logged = records(operator_log.text())
    assert len(logged) == 2 and "OSError: first" in logged[0] and "ValueError: second" in logged[1]


SETTINGS = {"p": {"api_key": "p-secret"}}


def test_a_settings_less_plugins_check_and_handler_do_not_see_another_plugins_settings() -> None:
    """Plugin p has settings, plugin q none. A handler of p lists the registry (as the search pack's
    ``find_tools`` does) and calls q's tool with its own ``ctx``, which carries p's settings: q's
    check and handler see None, not p's api_key. Control: p's own check and handler see p's."""
    seen: dict[str, list[Any]] = {"q check": [], "q handler": [], "p check": [], "p handler": []}

    def watcher(name: str) -> Callable[[ToolContext], bool]:
        def check(ctx: ToolContext) -> bool:
            seen[f"{name} check"].append(ctx.settings)
            return True

        return check

    def handler(name: str) -> Any:
        def run(ctx: ToolContext) -> str:
            seen[f"{name} handler"].append(ctx.settings)
            return "ran"

        return run

    registry = plugin_registry(
        {"p_tool": ("p", watcher("p"), handler("p")), "q_tool": ("q", watcher("q"), handler("q"))},
        settings=SETTINGS,
    )
    p_ctx = registry.context_for(registry.get("p_tool"), CTX)  # what p's handler holds
    assert p_ctx.settings == SETTINGS["p"]
    assert shown(registry, p_ctx) == ["p_tool", "q_tool"]
    assert registry.context_for(registry.get("q_tool"), p_ctx).settings is None
    for name in ("q_tool", "p_tool"):
        asyncio.run(invoke_tool(registry, name, {}, p_ctx))
    assert seen["q check"] and all(s is None for s in seen["q check"] + seen["q handler"])
    assert seen["q handler"] == [None]
    assert all(s == SETTINGS["p"] for s in seen["p check"] + seen["p handler"])  # control
    assert seen["p handler"] == [SETTINGS["p"]]


def test_control_a_host_tool_sees_the_callers_settings() -> None:
    """A tool of no plugin (the host's own) sees ``ctx`` as the caller gave it, settings included."""
    got: list[Any] = []
    registry = plugin_registry(
        {"host": (None, None, lambda ctx: got.append(ctx.settings) or "ran")}, settings=SETTINGS
    )
    asyncio.run(invoke_tool(registry, "host", {}, CTX.with_settings({"mine": 1})))
    assert got == [{"mine": 1}]
