"""The core's one observation seam (issue 24): an observer installed with ``observe_with`` is handed
every dispatched call (and runs it), each load phase, and nothing when none is installed. The
observer here is a plain recorder, no tracing library: the seam names none."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from reyn_core import ToolContext, tool
from reyn_core.host import (
    ObservedCall,
    Profile,
    RegistryBuilder,
    ToolRegistry,
    dispatch_tool,
    load,
    observe_with,
    tool_call_id,
)


class Recorder:
    """Records what the core hands it; ``call`` runs the call and notes how it ended."""

    tracer = None

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str | None, str]] = []
        self.phases: list[tuple[str, str | None]] = []
        self.diagnostics: list[str] = []

    async def call(self, call: ObservedCall, proceed: Callable[[], Awaitable[Any]]) -> Any:
        parsed, problems = call.arguments(call.args)
        try:
            result = await proceed()
        except Exception as exc:
            self.calls.append((call.name, call.surface, call.call_id, type(exc).__name__))
            raise
        self.calls.append((call.name, call.surface, call.call_id, f"ok {parsed!r} {problems!r}"))
        return result

    @contextmanager
    def phase(self, name: str, plugin: str | None) -> Iterator[Any]:
        self.phases.append((name, plugin))
        recorder = self

        class Phase:
            def diagnostics(self, diags: Sequence[Any]) -> None:
                recorder.diagnostics += [d.code for d in diags]

            def set(self, key: str, value: Any) -> None:
                return None

        yield Phase()

    def carrier(self) -> dict[str, str] | None:
        return None

    def adopt(self, records: Any) -> int:
        return 0


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    observer = Recorder()
    observe_with(observer)
    try:
        yield observer
    finally:
        observe_with(None)


def _registry() -> ToolRegistry:
    @tool(purity="read_only")
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    @tool(purity="read_only")
    async def outer(ctx: ToolContext, text: str) -> Any:
        """Call ``echo`` through the dispatcher."""
        return await dispatch_tool(ctx.extras["registry"], "echo", {"text": text}, ctx)

    builder = RegistryBuilder()
    builder.register(echo)
    builder.register(outer)
    return builder.freeze()


async def test_each_call_is_handed_to_the_observer_once_and_its_result_passes_through(
    recorder: Recorder,
) -> None:
    registry = _registry()
    ctx = ToolContext(surface="router", extras={"registry": registry})
    with tool_call_id("call_7"):
        envelope = await dispatch_tool(registry, "outer", {"text": "hi"}, ctx)
    assert envelope == {"status": "ok", "data": {"status": "ok", "data": "hi"}}
    # the nested call is observed on its own, the outer one exactly once
    assert [c[0] for c in recorder.calls] == ["echo", "outer"]
    assert recorder.calls[1] == ("outer", "router", "call_7", "ok {'text': 'hi'} []")


async def test_a_refused_call_reaches_the_observer_with_its_error(recorder: Recorder) -> None:
    envelope = await dispatch_tool(_registry(), "nosuch", {}, ToolContext(surface="router"))
    assert envelope["status"] == "error"
    assert recorder.calls == [("nosuch", "router", None, "ToolNotFound")]


async def test_once_removed_the_observer_sees_nothing() -> None:
    observer = Recorder()
    observe_with(observer)
    registry = _registry()
    await dispatch_tool(registry, "echo", {"text": "a"}, ToolContext(surface="router"))  # positive control
    observe_with(None)
    envelope = await dispatch_tool(registry, "echo", {"text": "b"}, ToolContext(surface="router"))
    assert envelope == {"status": "ok", "data": "b"}
    assert [c[3] for c in observer.calls] == ["ok {'text': 'a'} []"]


def test_a_load_hands_each_phase_and_its_diagnostics_to_the_observer(
    recorder: Recorder, isolated_profile_env: None
) -> None:
    load(Profile.from_toml_text('[plugins]\nenable = []\n\n[plugins.forgotten]\nprefix = "f"\n'))
    names = [name for name, _ in recorder.phases]
    assert names[0] == "reyn.load" and "reyn.load.discovery" in names and "reyn.load.registration" in names
    assert recorder.diagnostics == ["RC004"]
