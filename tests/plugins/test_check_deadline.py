"""A tool's own ``available(ctx)`` that never returns does not hang a listing (``own_check``): it is
asked with a deadline (``CHECK_DEADLINE_S``) in a checks' thread, and past it the tool is hidden as a
failed check (``RT011``, the operator's log naming the plugin and the deadline). While that ask still
runs the check is not asked again (no second thread, no growth over many listings) and the tool stays
hidden; nothing replays an answer: once the check returns, the next listing asks it anew. The rest of
every listing keeps working, for sync and async callers and through ``reyn tools list``, whose
process still exits. A real installed plugin; its check blocks on an Event the test releases.
Control: a check of the same plugin that answers shows its tool on every listing."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from site_plugin import install_site_plugin
from waiting import until

from reyn_core import ToolContext
from reyn_core.host import Profile, dispatch_tool, load, render_router
from reyn_core.loading.step2_discovery.discovery import discover
from reyn_core.own_check import CHECK_DEADLINE_S

PLUGIN = """
import threading

from reyn_core import hookimpl, tool

REYN_API = 1
RELEASE = threading.Event()
ASKED = []  # one entry per ask of the blocking check that started


def blocks(ctx):
    ASKED.append(ctx.surface)
    RELEASE.wait()
    return True


def answers(ctx):
    return True


@tool(purity="read_only", available=blocks)
def slow() -> str:
    \"\"\"Hidden while its check blocks.\"\"\"
    return "slow ran"


@tool(purity="read_only", available=answers)
def quick() -> str:
    \"\"\"Shown: its check answers.\"\"\"
    return "quick ran"


@tool(purity="read_only")
def plain() -> str:
    \"\"\"Shown: no check.\"\"\"
    return "plain ran"


@hookimpl
def reyn_register_tools(register, settings):
    register(slow)
    register(quick)
    register(plain)
"""


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The installed plugin's module (loaded by the first ``load``); its check released at the end."""
    site = tmp_path / "site"
    install_site_plugin(site, "hangs", PLUGIN)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    discover()
    released: list[threading.Event] = []
    yield released
    for event in released:
        event.set()
    sys.modules.pop("reyn_site_hangs", None)
    discover()


def _names(registry: Any, ctx: ToolContext) -> list[str]:
    return [t["function"]["name"] for t in render_router(registry, ctx)]


def _checks_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "reyn-available-check")


def test_a_check_that_never_returns_hides_its_tool_and_the_listing_goes_on(
    plugin: list[threading.Event], operator_log: Any
) -> None:
    result = load(Profile.from_toml_text('[plugins]\nenable = ["hangs"]\n'))
    module = importlib.import_module("reyn_site_hangs")
    plugin.append(module.RELEASE)
    registry, ctx = result.registry, ToolContext(surface="router")

    assert _names(registry, ctx) == ["plain", "quick"]  # waited for the check once, until its deadline
    assert _names(registry, ctx) == ["plain", "quick"]  # quick's check: a thread besides the hung one
    threads = _checks_threads()
    for _ in range(50):  # every later listing: the ask still runs, so it is not asked again
        assert _names(registry, ctx) == ["plain", "quick"]
        assert registry.visible_names("router", ctx) == {"plain", "quick"}
    assert module.ASKED == ["router"]
    assert _checks_threads() == threads

    # a call is refused in fixed words; the operator's log names the plugin and the deadline
    reply = asyncio.run(dispatch_tool(registry, "slow", {}, ctx))
    assert reply["status"] == "error" and reply["error"]["kind"] == "gate_refused"
    assert "its availability check failed (RT011)" in reply["error"]["message"]
    record = operator_log.record(json.dumps(reply))
    assert "plugin 'hangs'" in record and "an earlier ask of it still runs past its deadline" in record
    assert "CheckLate" in record and f"did not answer within {CHECK_DEADLINE_S:g} s" in operator_log.text()

    async def an_async_host() -> tuple[list[str], dict[str, Any], dict[str, Any]]:
        listed = _names(registry, ctx)
        return (
            listed,
            await dispatch_tool(registry, "quick", {}, ctx),
            await dispatch_tool(registry, "slow", {}, ctx),
        )

    listed, quick, slow = asyncio.run(an_async_host())
    assert listed == ["plain", "quick"] and quick == {"status": "ok", "data": "quick ran"}
    assert slow["error"]["kind"] == "gate_refused"
    assert module.ASKED == ["router"] and _checks_threads() == threads

    # once the check returns, the next listing asks it anew (nothing kept of the late answer)
    module.RELEASE.set()
    assert until(lambda: "slow" in _names(registry, ctx))
    assert _names(registry, ctx) == ["plain", "quick", "slow"]
    assert len(module.ASKED) >= 2
    assert asyncio.run(dispatch_tool(registry, "slow", {}, ctx)) == {"status": "ok", "data": "slow ran"}
    assert _checks_threads() == threads


def test_tools_list_lists_the_rest_and_exits(
    plugin: list[threading.Event], tmp_path: Path, reyn_cli: Any
) -> None:
    """``reyn tools list`` in its own process: the check never returns there (nothing releases it);
    the command lists the other tools, says the slow one is hidden, and its process ends."""
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["hangs"]\n', encoding="utf-8")
    env = {"PYTHONPATH": str(tmp_path / "site"), "REYN_CACHE_DIR": str(tmp_path / "cache")}
    proc = reyn_cli("tools", "list", "--json", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    listed = {t["name"]: t for t in json.loads(proc.stdout)}
    assert set(listed) == {"plain", "quick", "slow"}
    assert "RT011" in json.dumps(listed["slow"]) and "RT011" not in json.dumps(listed["quick"])


def test_listings_at_once_each_get_an_answer_of_their_own() -> None:
    """Control: a check asked from several threads at once (each listing an ask of its own) admits
    its tool on every listing of every thread."""
    from reyn_core import ToolDefinition
    from reyn_core.host import RegistryBuilder

    asked: list[str] = []

    def admits(ctx: ToolContext) -> bool:
        asked.append(ctx.surface)
        return True

    schema = {"type": "object", "properties": {}}
    builder = RegistryBuilder()
    builder.register(
        ToolDefinition(name="t", description="T.", parameters=schema, handler=str, available=admits)
    )
    registry, ctx = builder.freeze(), ToolContext(surface="router")
    seen: list[list[str]] = []

    def lists() -> None:
        seen.extend(_names(registry, ctx) for _ in range(50))

    threads = [threading.Thread(target=lists) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [["t"]] * 400 and len(asked) == 400  # every listing asked the check itself
