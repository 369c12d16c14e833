"""``dispatch_batch``: one model turn's calls in purity order. Reads overlap (they all reach one
barrier, which sequential calls never could), a side-effecting call is an ordered barrier (a read
after a write sees it; a read before it has finished first), ``external`` calls are limited per
plugin, and a failed side-effecting call stops the calls after it (``not_run``)."""

from __future__ import annotations

import asyncio

import pytest

from reyn_core import ToolContext, ToolOrigin, tool
from reyn_core.host import RegistryBuilder, dispatch_batch

GUARD_S = 30  # only a deadlock guard: a correct run never waits on it


class Barrier:
    """``n`` callers each wait until all ``n`` have arrived, then the next ``n`` (asyncio.Barrier is
    3.11+): calls that ran one after another would never all arrive."""

    def __init__(self, n: int) -> None:
        self.n, self.count, self.event = n, 0, asyncio.Event()

    async def wait(self) -> None:
        self.count += 1
        event = self.event
        if self.count == self.n:
            self.count, self.event = 0, asyncio.Event()
            event.set()
        await event.wait()


def _registry(n_reads: int = 0, external_limit_probe: bool = False):
    state: dict[str, object] = {"note": "", "log": [], "inflight": 0, "peak": 0}
    barrier = Barrier(n_reads) if n_reads else None
    pair = Barrier(2)

    @tool(purity="read_only")
    async def meet(i: int) -> int:
        """Wait at the barrier every read must reach."""
        state["log"].append(f"meet{i}")
        assert barrier is not None
        await barrier.wait()
        return i

    @tool(purity="read_only")
    async def read_note() -> str:
        """Read the note."""
        await asyncio.sleep(0)
        state["log"].append("read")
        return str(state["note"])

    @tool(purity="side_effect")
    async def write_note(text: str) -> str:
        """Write the note."""
        state["log"].append(f"write:{text}")
        await asyncio.sleep(0)
        if text == "fail":
            raise RuntimeError("disk full")
        state["note"] = text
        return text

    @tool(purity="external")
    async def fetch(i: int) -> int:
        """An external call: counts how many run at once; pairs meet at a barrier of two."""
        state["inflight"] = int(state["inflight"]) + 1
        state["peak"] = max(int(state["peak"]), int(state["inflight"]))
        await pair.wait()
        state["inflight"] = int(state["inflight"]) - 1
        return i

    builder = RegistryBuilder()
    for t in (meet, read_note, write_note):
        builder.register(t)
    builder.register(fetch, origin=ToolOrigin(kind="plugin", plugin_id="net"))
    return builder.freeze(), state


def _run(registry, calls, **kw):
    ctx = ToolContext(surface="router")
    return asyncio.run(asyncio.wait_for(dispatch_batch(registry, calls, ctx, **kw), GUARD_S))


def test_reads_run_concurrently_they_all_reach_one_barrier():
    registry, _ = _registry(n_reads=5)
    envelopes = _run(registry, [("meet", {"i": i}) for i in range(5)])
    assert [e["data"] for e in envelopes] == [0, 1, 2, 3, 4]


def test_a_read_after_a_write_sees_the_write():
    registry, state = _registry()
    envelopes = _run(registry, [("read_note", {}), ("write_note", {"text": "new"}), ("read_note", {})])
    assert [e["data"] for e in envelopes] == ["", "new", "new"]
    assert state["log"] == ["read", "write:new", "read"]


def test_writes_run_one_at_a_time_in_the_order_emitted():
    registry, state = _registry()
    _run(registry, [("write_note", {"text": t}) for t in "abc"])
    assert state["log"] == ["write:a", "write:b", "write:c"] and state["note"] == "c"


def test_a_failed_write_stops_the_calls_after_it_and_not_those_before():
    registry, state = _registry()
    envelopes = _run(
        registry,
        [
            ("read_note", {}),
            ("write_note", {"text": "fail"}),
            ("write_note", {"text": "b"}),
            ("read_note", {}),
        ],
    )
    assert [e["status"] for e in envelopes] == ["ok", "error", "error", "error"]
    assert envelopes[1]["error"]["kind"] == "execution_error"
    assert {e["error"]["kind"] for e in envelopes[2:]} == {"not_run"}
    assert "#2 ('write_note')" in envelopes[2]["error"]["message"]
    assert state["log"] == ["read", "write:fail"]  # nothing after the failed write started


def test_a_failed_read_does_not_stop_the_batch():
    # Positive control for the rule above: only side-effecting calls are barriers that stop a batch.
    registry, _ = _registry()
    envelopes = _run(registry, [("no_such_tool", {}), ("write_note", {"text": "a"}), ("read_note", {})])
    assert [e["status"] for e in envelopes] == ["error", "ok", "ok"]
    assert envelopes[2]["data"] == "a"


def test_external_calls_are_limited_per_plugin():
    registry, state = _registry()
    envelopes = _run(registry, [("fetch", {"i": i}) for i in range(4)], external_limit=2)
    assert [e["data"] for e in envelopes] == [0, 1, 2, 3]
    assert state["peak"] == 2  # two met at each barrier of two; never more at once


def test_external_limit_must_be_positive():
    registry, _ = _registry()
    with pytest.raises(ValueError, match="external_limit"):
        _run(registry, [("read_note", {})], external_limit=0)


def test_one_approval_for_a_whole_batch_is_refused():
    registry, _ = _registry()
    with pytest.raises(TypeError, match="no approval"):
        _run(registry, [("read_note", {})], approval="apr-1")
