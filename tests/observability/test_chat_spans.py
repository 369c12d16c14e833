"""``chat`` spans per RouterLoop turn, with the real litellm client and the scripted server (issue 27).

A two-turn conversation (a tool call, then an answer) yields two ``chat`` spans with the model and the
token usage the server reported; the turn's ``execute_tool`` span is a child of its ``chat`` span and
carries the model's call id. With litellm's own OpenTelemetry callback on, no ``chat`` span is made
(litellm's would double it), while ``execute_tool`` spans stay.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from reyn_core import ToolContext, tool
from reyn_core.host import RegistryBuilder, ToolRegistry
from reyn_loops import LiteLLMClient, RouterLoop
from reyn_loops.testing.scripted_server import ScriptedModelServer, ScriptedReply

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
MODEL = "openai/scripted"


@tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def registry() -> ToolRegistry:
    builder = RegistryBuilder()
    builder.register(add)
    return builder.freeze()


async def converse() -> Any:
    script = [ScriptedReply.calls(("add", {"a": 2, "b": 3})), ScriptedReply.text("5")]
    with ScriptedModelServer(script, lifetime_s=60) as server:
        client = LiteLLMClient(api_base=server.base_url, api_key="test-key", num_retries=0, timeout_s=30)
        loop = RouterLoop(
            registry(), model=MODEL, ctx=ToolContext(surface="router", agent="t"), client=client
        )
        return await loop.run("what is 2 + 3?")


async def test_a_router_conversation_yields_chat_spans_with_tool_spans_as_children(
    spans: InMemorySpanExporter,
) -> None:
    result = await converse()
    assert result.status == "done"
    finished = spans.get_finished_spans()
    chats = [s for s in finished if s.name == f"chat {MODEL}"]
    tools = [s for s in finished if s.name == "execute_tool add"]
    assert len(chats) == 2 and len(tools) == 1
    for chat in chats:
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.request.model"] == MODEL
        assert chat.attributes["gen_ai.usage.input_tokens"] == 10
        assert chat.attributes["gen_ai.usage.output_tokens"] == 5
    first = min(chats, key=lambda s: s.start_time)
    assert tools[0].parent is not None and tools[0].parent.span_id == first.context.span_id
    assert tools[0].attributes["gen_ai.tool.call.id"] == result.tool_calls[0].id


async def test_no_chat_span_when_litellms_otel_callback_is_on(
    spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    import litellm
    from litellm.integrations.custom_logger import CustomLogger

    class OpenTelemetryCallback(CustomLogger):  # detected by name, as litellm's OpenTelemetry class is
        pass

    # litellm copies callbacks into its internal lists during a call: each is restored afterwards
    for attr in (
        "success_callback",
        "failure_callback",
        "_async_success_callback",
        "_async_failure_callback",
        "input_callback",
        "service_callback",
    ):
        if isinstance(getattr(litellm, attr, None), list):
            monkeypatch.setattr(litellm, attr, list(getattr(litellm, attr)))
    monkeypatch.setattr(litellm, "callbacks", [OpenTelemetryCallback()])
    result = await converse()
    assert result.status == "done"
    names = [s.name for s in spans.get_finished_spans()]
    assert f"chat {MODEL}" not in names and "execute_tool add" in names


@tool(cluster="math")
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


async def test_a_phase_run_yields_a_chat_span_per_step_with_its_ops_as_children(
    spans: InMemorySpanExporter,
) -> None:
    import json

    from reyn_loops import PhaseRunner

    def step(control: str, ops: list[dict[str, Any]]) -> ScriptedReply:
        body = {"control": {"type": control, "decision": control, "next_phase": None}, "control_ir": ops}
        return ScriptedReply.text(json.dumps(body))

    builder = RegistryBuilder()
    builder.register(multiply)
    script = [step("finish", [{"kind": "multiply", "a": 6, "b": 7}]), step("finish", [])]
    with ScriptedModelServer(script, lifetime_s=60) as server:
        client = LiteLLMClient(api_base=server.base_url, api_key="test-key", num_retries=0, timeout_s=30)
        phase = PhaseRunner(
            builder.freeze(),
            model=MODEL,
            ctx=ToolContext(surface="phase"),
            client=client,
            allowed_ops=["math"],
        )
        result = await phase.run("what is 6 * 7?")
    assert result.status == "finish", result.error
    finished = spans.get_finished_spans()
    chats = sorted((s for s in finished if s.name == f"chat {MODEL}"), key=lambda s: s.start_time)
    ops = [s for s in finished if s.name == "execute_tool multiply"]
    assert len(chats) == 2 and len(ops) == 1
    for chat in chats:
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.usage.input_tokens"] == 10
    assert ops[0].parent is not None and ops[0].parent.span_id == chats[0].context.span_id
    assert ops[0].attributes["reyn.surface"] == "phase"
    assert ops[0].attributes["reyn.gate.outcome"] == "allowed"
