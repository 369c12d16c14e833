"""How a tool's own ``available(ctx)`` is asked (``own_check``): callers ask at once, each an ask of
its own; a listing asks its checks at once and waits one deadline (``CHECK_DEADLINE_S``) in all; a
check whose ask runs past its deadline is not asked again until it returns (a later ask fails at
once, no thread started) while any late ask of it runs; at most ``MAX_THREADS`` checks' threads
exist process-wide (past it an ask waits for a free one until its deadline); a check asked from
within its own ask fails at once; an interrupted listing leaves no ask behind. Real threads; the
checks block on Events and Barriers the tests release — no timing decides a pass, except "a
listing returns within the bound" with a wide margin. Each refusal beside its positive control."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from waiting import until

from reyn_core import ToolContext, ToolDefinition, ToolOrigin, own_check
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


def checks_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "reyn-available-check")


def test_checks_threads_are_capped_process_wide(release: threading.Event, operator_log: Any) -> None:
    """40 hung checks built per load (closures: each a check of its own), listed at once: at most
    ``MAX_THREADS`` checks' threads exist (busy and idle) — the asks past the cap wait for a thread
    until the deadline, then fail closed saying why, never run. Control: once the hung checks return,
    a listing of 30 checks shows all 30."""
    entered: list[int] = []

    def make(i: int) -> Callable[[ToolContext], bool]:
        def hangs(ctx: ToolContext) -> bool:
            entered.append(i)
            release.wait()
            return True

        return hangs

    registry = registry_of({f"t{i}": make(i) for i in range(40)})
    assert shown(registry) == []
    assert 0 < len(entered) <= own_check.MAX_THREADS and checks_threads() <= own_check.MAX_THREADS
    assert f"was not run: all {own_check.MAX_THREADS} checks' threads were busy" in operator_log.text()
    release.set()
    assert until(lambda: not own_check._late)
    assert shown(registry_of({f"u{i}": lambda ctx: True for i in range(30)})) == sorted(
        f"u{i}" for i in range(30)
    )
    assert checks_threads() <= own_check.MAX_THREADS


def hold_every_thread(release: threading.Event, first: threading.Event | None = None) -> ToolRegistry:
    """Every checks' thread held by a hung check (listed once: all hidden, each its own ask), until
    ``release`` — the first of them until ``first``, when given. Returns their registry."""
    entered: list[int] = []

    def make(i: int) -> Callable[[ToolContext], bool]:
        def hangs(ctx: ToolContext) -> bool:
            entered.append(i)
            (first if first is not None and i == 0 else release).wait()
            return True

        return hangs

    busy = registry_of({f"busy{i:02}": make(i) for i in range(own_check.MAX_THREADS)})
    assert shown(busy) == []
    assert until(lambda: len(entered) == own_check.MAX_THREADS)
    return busy


def records_of(registry: ToolRegistry, operator_log: Any) -> list[str]:
    """The operator's log records of the failures ``registry``'s log of failures holds."""
    return [str(operator_log.record(cited)) for cited in registry.failures._refs.values()]


def test_an_ask_no_thread_was_free_for_says_it_was_not_run(
    release: threading.Event, operator_log: Any
) -> None:
    """All checks' threads held by hung checks, a quick check asked meanwhile waits in the queue until
    its deadline and is dropped unrun: its record says it was not run because every thread was busy,
    never that it did not answer — that is what the hung checks' records say.
    Control: once the threads are free, the same check is asked and its tool shown."""
    busy = hold_every_thread(release)
    waiting = registry_of({"queued": lambda ctx: True})
    assert shown(waiting) == []
    (record,) = records_of(waiting, operator_log)
    busy_words = f"all {own_check.MAX_THREADS} checks' threads were busy"
    assert f"was not run: {busy_words} until its deadline ({CHECK_DEADLINE_S:g} s)" in record
    assert "did not answer" not in record and "CheckLate" in record
    late = records_of(busy, operator_log)
    assert late and all(f"did not answer within {CHECK_DEADLINE_S:g} s" in r for r in late)
    release.set()
    assert until(lambda: not own_check._late)
    assert shown(waiting) == ["queued"]


def test_an_ask_that_waited_for_a_thread_then_ran_late_says_it_waited(
    release: threading.Event, operator_log: Any
) -> None:
    """A check queued while every thread is busy, that gets a thread before its deadline (one hung
    check returns) and then runs past it: its record says part of the deadline went waiting for a
    thread, not plainly that it did not answer within it. Control: a check that got a thread at once
    and ran past its deadline says just that (the busy ones)."""
    freed = threading.Event()
    busy = hold_every_thread(release, first=freed)
    running = threading.Event()

    def slow(ctx: ToolContext) -> bool:
        running.set()
        release.wait()
        return True

    waiting = registry_of({"slow": slow})
    seen: list[list[str]] = []
    lister = threading.Thread(target=lambda: seen.append(shown(waiting)))
    lister.start()
    assert until(lambda: own_check._queued == 1)  # its ask waits: every thread is busy
    freed.set()  # one thread is free: it takes the queued ask, which then runs past its deadline
    lister.join()
    assert running.is_set() and seen == [[]]
    (record,) = records_of(waiting, operator_log)
    assert (
        f"did not answer by its deadline ({CHECK_DEADLINE_S:g} s), part of which it spent waiting for a "
        f"checks' thread (all {own_check.MAX_THREADS} checks' threads were busy when it was asked)"
    ) in record
    assert "was not run" not in record
    late = records_of(busy, operator_log)
    assert late and all(f"did not answer within {CHECK_DEADLINE_S:g} s" in r for r in late)
    release.set()
    assert until(lambda: not own_check._late)
    assert shown(waiting) == ["slow"]


def test_more_checks_than_threads_in_one_listing_are_all_asked() -> None:
    """Three times ``MAX_THREADS`` distinct checks that each take a moment (a closure per tool, as the
    mcp pack and isolated plugins build them): the asks past the cap wait for a free thread within
    the deadline, so every tool is shown — the cap bounds threads, it does not hide working tools.
    (The old cap failed the 33rd ask at once: 32 of 96 shown.)"""

    def make(i: int) -> Callable[[ToolContext], bool]:
        def takes_a_moment(ctx: ToolContext) -> bool:
            time.sleep(0.005)
            return True

        return takes_a_moment

    names = [f"m{i:02}" for i in range(3 * own_check.MAX_THREADS)]
    registry = registry_of({name: make(i) for i, name in enumerate(names)})
    assert shown(registry) == sorted(names)
    assert checks_threads() <= own_check.MAX_THREADS


def test_tools_sharing_a_check_share_its_ask(release: threading.Event, operator_log: Any) -> None:
    """20 tools sharing one hung check, listed in one ctx: one ask, one thread (not one per tool).
    Control: a tool whose check answers is shown; once released, all 20 are shown."""
    entered: list[str | None] = []

    def hangs(ctx: ToolContext) -> bool:
        entered.append(ctx.agent)
        release.wait()
        return True

    registry = registry_of({**{f"w{i:02}": hangs for i in range(20)}, "quick": lambda ctx: True})
    assert shown(registry) == ["quick"]
    assert entered == ["a"] and own_check._late == {id(hangs): 1}
    release.set()
    assert until(lambda: not own_check._late)
    assert shown(registry) == sorted([*(f"w{i:02}" for i in range(20)), "quick"])


def test_a_plugins_tools_sharing_a_check_share_its_ask_in_their_plugins_context() -> None:
    """In a registry with plugin settings and host files (as every load makes), each tool's check sees
    its plugin's context; the tools of one plugin are asked in one context object, so those sharing a
    check share one ask per listing (before: a context copy per tool, an ask per tool). Control: the
    same check serving a second plugin is asked apart, in that plugin's own settings."""
    asked: list[str] = []

    def counts(ctx: ToolContext) -> bool:
        asked.append(ctx.settings["name"])
        return True

    builder = RegistryBuilder(
        settings={"p": {"name": "p"}, "q": {"name": "q"}}, host_files={"/etc/reyn-test": "a host file"}
    )
    for plugin, count in (("p", 5), ("q", 3)):
        for i in range(count):
            builder.register(
                ToolDefinition(
                    name=f"{plugin}{i}",
                    description="T.",
                    parameters={"type": "object", "properties": {}},
                    handler=str,
                    available=counts,
                ),
                origin=ToolOrigin(kind="plugin", plugin_id=plugin),
            )
    registry = builder.freeze()
    assert shown(registry) == [*(f"p{i}" for i in range(5)), *(f"q{i}" for i in range(3))]
    assert sorted(asked) == ["p", "q"]


def test_a_check_is_not_asked_while_any_late_ask_of_it_runs(
    release: threading.Event, operator_log: Any
) -> None:
    """Two late asks of one check (two ctx): the first returns after its deadline, the second
    hangs. Late asks are counted per ask, so the check stays unasked while the second runs — not one
    more hung thread per listing. Control: once it returns too, the check is asked and answers."""
    slow_may_end = threading.Event()
    entered: list[str | None] = []

    def flaky(ctx: ToolContext) -> bool:
        entered.append(ctx.agent)
        (slow_may_end if ctx.agent == "slow" else release).wait()
        return True

    tool = registry_of({"f": flaky}).get("f")
    slow, hung = ToolContext(surface="router", agent="slow"), ToolContext(surface="router", agent="hung")
    answers = own_check.ask_all([(tool, slow), (tool, hung)])
    assert [type(a.failure) for a in answers] == [own_check.CheckLate] * 2
    slow_may_end.set()
    assert until(lambda: own_check._late == {id(flaky): 1})  # the slow ask ended; the hung one runs
    for _ in range(5):
        again = own_check.ask_available(tool, CTX)
        assert not again.allowed and "still runs past its deadline" in str(again.failure)
    assert sorted(entered) == ["hung", "slow"]
    release.set()
    assert until(lambda: own_check.ask_available(tool, CTX).allowed)


def test_asks_nested_through_a_thread_of_their_own_stay_under_the_cap(operator_log: Any) -> None:
    """A check that lists its own registry from a ``ThreadPoolExecutor`` thread (no context carried,
    so not seen as nested): each level takes a checks' thread until the cap, where the ask fails at
    once and the nesting unwinds — never more than ``MAX_THREADS`` checks' threads. Control: a plain
    check of the same registry answers."""
    peak: list[int] = []
    holder: dict[str, ToolRegistry] = {}

    def lists_itself(ctx: ToolContext) -> bool:
        peak.append(checks_threads())
        with ThreadPoolExecutor(1) as pool:
            pool.submit(shown, holder["registry"]).result()
        return True

    holder["registry"] = registry_of({"t": lists_itself, "u": lambda ctx: True})
    assert "u" in shown(holder["registry"])
    # the bound is on threads, not on asks: under load an ask queued at the cap may still run once a
    # level unwinds and frees its thread (seen on a loaded machine: 33 asks, never over 32 threads)
    assert peak and max(peak) <= own_check.MAX_THREADS
    assert until(lambda: not own_check._late)
    assert checks_threads() <= own_check.MAX_THREADS


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


def test_a_listing_interrupted_by_a_check_leaves_no_ask_behind(release: threading.Event) -> None:
    """A check raising ``CancelledError`` ends the listing (an interruption propagates, by design);
    the listing's other asks are not abandoned: a hung one counts as late (it is not asked again by
    the next 40 listings), so the threads do not fill with it. (Before: 32 asks of the hung check, and
    then every check of the process failed "all 32 busy".) Control: a quick check still answers."""
    import asyncio

    asked: list[int] = []

    def cancels(ctx: ToolContext) -> bool:
        raise asyncio.CancelledError()

    def hangs(ctx: ToolContext) -> bool:
        asked.append(1)
        release.wait()
        return True

    registry = registry_of({"cancels": cancels, "hangs": hangs})
    for _ in range(40):
        with pytest.raises(asyncio.CancelledError):
            shown(registry, ToolContext(surface="router", agent="a"))
    assert until(lambda: len(asked) >= 1)
    assert len(asked) == 1 and own_check._late == {id(hangs): 1}
    assert shown(registry_of({"quick": lambda ctx: True})) == ["quick"]
    assert checks_threads() <= own_check.MAX_THREADS


def test_threads_busy_with_asks_of_the_same_check_are_not_said_busy_with_other_checks(
    release: threading.Event, operator_log: Any
) -> None:
    """40 callers, each its own ``ctx`` (an ask each), list one tool whose check is slow: every
    checks' thread runs an ask of that one check, the asks past ``MAX_THREADS`` are not run. Their
    record says the threads were busy — not "with other checks", which would be false here. Control:
    once the check answers, the tool is shown."""
    callers = own_check.MAX_THREADS + 8
    together = threading.Barrier(callers, timeout=30)

    def slow(ctx: ToolContext) -> bool:
        release.wait()
        return True

    registry = registry_of({"slow": slow})
    seen: list[list[str]] = []

    def lists(i: int) -> None:
        together.wait()
        seen.append(shown(registry, ToolContext(surface="router", agent=f"agent{i}")))

    threads = [threading.Thread(target=lists, args=(i,)) for i in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [[]] * callers
    log = operator_log.text()
    assert "was not run: all" in log and "other checks" not in log
    unrun = [r for r in records_of(registry, operator_log) if "was not run" in r]
    assert unrun and all(f"all {own_check.MAX_THREADS} checks' threads were busy" in r for r in unrun)
    release.set()
    assert until(lambda: not own_check._late)
    assert shown(registry) == ["slow"]
