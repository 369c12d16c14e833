"""How a tool's own ``available(ctx)`` is asked (``own_check``): callers ask at once, each an ask of
its own; a listing asks its checks at once and waits one deadline (``CHECK_DEADLINE_S``) in all; a
check whose ask runs past its deadline is not asked again until it returns (a later ask fails at
once, no thread started); at most ``MAX_LATE`` threads are held by late asks process-wide (past it
asks fail closed at once); a check asked from within its own ask fails at once. Real threads; the
checks block on Events and Barriers the tests release — no timing decides a pass, except "a
listing returns within the bound" with a wide margin. Each refusal beside its positive control."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from waiting import until

from reyn_core import ToolContext, ToolDefinition, own_check
from reyn_core.host import RegistryBuilder, ToolRegistry
from reyn_core.own_check import CHECK_DEADLINE_S

CTX = ToolContext(surface="router", agent="a")


def registry_of(checks: dict[str, Callable[[ToolContext], Any]]) -> ToolRegistry:
    builder = RegistryBuilder()
    for name, check in checks.items():
        builder.register(
            ToolDefinition(
                name=name,
                description="T.",
                parameters={"type": "object", "properties": {}},
                handler=str,
                available=check,
            )
        )
    return builder.freeze()


def shown(registry: ToolRegistry, ctx: ToolContext = CTX) -> list[str]:
    return [t.name for t in registry.visible("router", ctx)]


def logged(registry: ToolRegistry) -> str:
    """What the registry's log of failures recorded (its references' records are in the file)."""
    return " ".join(str(k) for k in registry.failures._refs)


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An Event every blocking check of a test waits on; set at the end (the threads end)."""
    event = threading.Event()
    yield event
    event.set()
    assert until(lambda: not own_check._late)


def test_callers_ask_at_once_each_their_own_ask(operator_log: Any) -> None:
    """16 threads list at once; the check answers only once all 16 asks run together (a Barrier):
    asks of one check by different callers are not queued behind each other."""
    together = threading.Barrier(16, timeout=30)
    agents: list[str | None] = []

    def admits(ctx: ToolContext) -> bool:
        agents.append(ctx.agent)
        together.wait()
        return True

    registry = registry_of({"t": admits})
    seen: dict[int, list[str]] = {}

    def lists(i: int) -> None:
        seen[i] = shown(registry, ToolContext(surface="router", agent=f"agent{i}"))

    threads = [threading.Thread(target=lists, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not together.broken
    assert seen == {i: ["t"] for i in range(16)} and not logged(registry)
    assert sorted(agents) == sorted(f"agent{i}" for i in range(16))  # each its own ctx


def test_a_listings_checks_share_one_deadline(release: threading.Event, operator_log: Any) -> None:
    """Three checks that never answer (until released): one listing asks all three at once and
    waits one deadline in all, not one per check. Control: the checks of a listing that answer show
    their tools."""
    started = threading.Barrier(3, timeout=30)
    passed: list[bool] = []

    def hangs(ctx: ToolContext) -> bool:
        started.wait()  # only when the three asks run together
        passed.append(True)
        release.wait()
        return True

    def make() -> Callable[[ToolContext], bool]:
        return lambda ctx: hangs(ctx)

    registry = registry_of({"a": make(), "b": make(), "c": make(), "d": lambda ctx: True})
    began = time.monotonic()
    assert shown(registry) == ["d"]
    took = time.monotonic() - began
    assert until(lambda: len(passed) == 3)
    assert took < 2.5 * CHECK_DEADLINE_S  # one deadline, with a wide margin (three would be 3 s)
    assert "CheckLate" in logged(registry) and "did not answer within" in operator_log.text()

    release.set()  # control: once they return, the next listing asks them anew and shows them
    assert until(lambda: not own_check._late)
    started.reset()
    assert shown(registry) == ["a", "b", "c", "d"]


def test_a_late_check_is_not_asked_again_while_its_ask_runs(
    release: threading.Event, operator_log: Any
) -> None:
    """A hung check costs its first asker one deadline; every later ask — 8 threads listing at once
    included — fails at once (no thread started, the check not called), naming the earlier ask.
    Control: a check of the same registry that answers shows its tool on every listing."""
    asked: list[str | None] = []

    def hangs(ctx: ToolContext) -> bool:
        asked.append(ctx.agent)
        release.wait()
        return True

    registry = registry_of({"hung": hangs, "quick": lambda ctx: True})
    assert shown(registry) == ["quick"]
    threads_before = sum(1 for t in threading.enumerate() if t.name == "reyn-available-check")
    seen: list[list[str]] = []
    lists = [threading.Thread(target=lambda: seen.append(shown(registry))) for _ in range(8)]
    for thread in lists:
        thread.start()
    for thread in lists:
        thread.join()
    assert seen == [["quick"]] * 8 and asked == ["a"]
    assert sum(1 for t in threading.enumerate() if t.name == "reyn-available-check") <= threads_before
    assert "an earlier ask of it still runs past its deadline" in operator_log.text()
    release.set()
    assert until(lambda: shown(registry) == ["hung", "quick"])


def test_threads_held_by_late_checks_are_bounded(
    release: threading.Event, operator_log: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hung checks built per load (closures: each a check of its own): past ``MAX_LATE`` late asks
    process-wide, a check is not asked at all — it fails closed at once, saying why — and no more
    threads are held. Control: once the late asks return, checks are asked and answer again."""
    monkeypatch.setattr(own_check, "MAX_LATE", 2)
    asked: list[int] = []
    registries = []
    for load in range(4):

        def hangs(ctx: ToolContext, load: int = load) -> bool:
            asked.append(load)
            release.wait()
            return True

        registries.append(registry_of({"t": hangs}))
    for registry in registries:
        assert shown(registry) == []
    assert asked == [0, 1] and len(own_check._late) == 2
    assert "2 checks' threads are held by checks past their deadline" in operator_log.text()
    assert shown(registry_of({"other": lambda ctx: True})) == []  # fail closed: every check
    release.set()
    assert until(lambda: not own_check._late)
    assert shown(registries[3]) == ["t"] and shown(registry_of({"other": lambda ctx: True})) == ["other"]


def test_a_check_asked_from_within_its_own_ask_fails_at_once(operator_log: Any) -> None:
    """A check that lists its own registry: the nested ask of itself fails at once (not a thread
    per level, nor a wait for itself); the rest of the nested listing is answered. Control: the
    outer listing shows the tool, whose check answered True."""
    inner: list[list[str]] = []
    holder: dict[str, ToolRegistry] = {}

    def lists_itself(ctx: ToolContext) -> bool:
        inner.append(shown(holder["registry"], ToolContext(surface="router", agent="inner")))
        return True

    holder["registry"] = registry_of({"t": lists_itself, "u": lambda ctx: True})
    threads_before = threading.active_count()
    assert shown(holder["registry"]) == ["t", "u"]
    assert inner == [["u"]]
    assert threading.active_count() <= threads_before + 2
    assert "asked from within its own ask" in operator_log.text()
