"""The router and phase surfaces through the REAL litellm client: text UTF-8 cannot carry (a
lone surrogate) never makes a model request that cannot be encoded. A tool result holding one (a
file name that is not UTF-8) reaches the model as that call's error, naming where; a model reply
holding one (a tool call's arguments, a phase reply) is sent back with its JSON escape, and a call
holding one is refused by the validator. Before, the next request failed to encode ("surrogates not
allowed") and the run was lost."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from registry_kit import frozen_registry

from reyn_core import ToolContext, tool
from reyn_loops import PhaseRunner, RouterLoop
from reyn_loops.errors import LLMCallError
from reyn_loops.llm import LLMRequest
from reyn_loops.testing.scripted_server import ScriptedReply as R
from reyn_loops.testing.scripted_server import tool_results

from .conftest import MODEL

FINE = "café 😀.md"


def _notes(workspace: Path) -> object:
    @tool(cluster="notes", purity="read_only")
    def list_notes() -> list[str]:
        """The names of the notes in the workspace."""
        return sorted(os.listdir(workspace))  # a name that is not UTF-8 comes back with surrogateescape

    return frozen_registry([list_notes])


async def test_a_result_utf8_cannot_carry_is_an_error_the_model_sees(tmp_path: Path, scripted) -> None:
    os.close(os.open(os.fsencode(tmp_path) + b"/caf\xe9.md", os.O_CREAT | os.O_WRONLY, 0o600))
    ctx = ToolContext(surface="router", agent="tester", workspace=tmp_path)
    server, client = scripted(R.calls(("list_notes", {})), R.text("cannot read that name"))
    result = await RouterLoop(_notes(tmp_path), model=MODEL, ctx=ctx, client=client).run("list")
    assert result.status == "done" and result.text == "cannot read that name"
    error = tool_results(server.requests[1].body)["call_1_0"]["error"]
    assert error["kind"] == "execution_error"
    assert "returned text that UTF-8 cannot carry (a lone surrogate) at /0" in error["message"]
    # the control: the same listing of ordinary non-ASCII names
    os.remove(os.fsencode(tmp_path) + b"/caf\xe9.md")
    (tmp_path / FINE).write_text("x")
    server, client = scripted(R.calls(("list_notes", {})), R.text("one note"))
    await RouterLoop(_notes(tmp_path), model=MODEL, ctx=ctx, client=client).run("list")
    assert tool_results(server.requests[1].body)["call_1_0"] == {"status": "ok", "data": [FINE]}


async def test_a_model_reply_utf8_cannot_carry_is_sent_back_escaped(tmp_path: Path, scripted) -> None:
    ctx = ToolContext(surface="router", agent="tester", workspace=tmp_path)
    server, client = scripted(
        R.calls(("list_notes", '{"filter": "caf\udce9"}'), content="looking for caf\udce9"),
        R.text("done"),
    )
    result = await RouterLoop(_notes(tmp_path), model=MODEL, ctx=ctx, client=client).run("list")
    assert result.status == "done" and result.text == "done"
    second = server.requests[1].body
    assistant = second["messages"][1]
    assert assistant["content"] == "looking for caf\\udce9"  # a message: shown with its escape
    # JSON text: the escape is the same JSON string, so the arguments are exactly the model's
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"filter": "caf\\udce9"}'
    refused = tool_results(second)["call_1_0"]["error"]
    assert refused["kind"] == "invalid_arguments"


async def test_a_phase_reply_utf8_cannot_carry_is_sent_back_escaped(tools, ctx, scripted) -> None:
    # the phase surface sends the model's reply back with the contract's feedback
    summary = json.dumps(
        {
            "control": {"type": "finish", "decision": "finish", "next_phase": None},
            "control_ir": [],
            "artifact": {"type": "summary", "data": {"text": "done"}},
        }
    )
    server, client = scripted(R.text('{"control": "caf\udce9'), R.text(summary))
    result = await PhaseRunner(tools.registry, model=MODEL, ctx=ctx, client=client, name="p").run("go")
    assert result.status == "finish"
    sent = server.requests[1].body["messages"]
    assert sent[-2] == {"role": "assistant", "content": '{"control": "caf\\udce9'}
    assert "not valid JSON" in sent[-1]["content"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("caf\udce9", "holds text UTF-8 cannot carry (a lone surrogate) at /messages/0/content"),
        (object(), "is not JSON data (TypeError: Object of type object is not JSON serializable)"),
        (float("inf"), "is not JSON data (ValueError: Out of range float values are not JSON compliant)"),
    ],
)
async def test_a_request_that_cannot_be_sent_fails_at_once_without_retries(
    scripted, content: object, says: str
) -> None:
    # a local fault, not the provider's: before, "(no response from the provider)" after 2 retries
    server, client = scripted(R.text("never"), R.text("never"), R.text("never"))
    request = LLMRequest(model=MODEL, messages=[{"role": "user", "content": content}])
    with pytest.raises(LLMCallError) as failed:
        await client.complete(request)
    message = str(failed.value)
    assert f"the request to model {MODEL!r} cannot be sent: it {says}; nothing was sent" in message
    assert failed.value.kind == "UnsendableRequest" and "retr" not in message
    assert server.requests == []
    # the control: the same request with text UTF-8 can carry is sent once and answered
    reply = await client.complete(LLMRequest(model=MODEL, messages=[{"role": "user", "content": FINE}]))
    assert reply.text == "never" and len(server.requests) == 1
