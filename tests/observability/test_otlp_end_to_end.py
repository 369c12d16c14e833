"""End to end over the wire (issue 27): the real OTLP/HTTP exporter sends to a receiver on 127.0.0.1
that decodes the protobuf with ``opentelemetry-proto``.

- ``reyn chat`` (a subprocess; real litellm against the scripted model server) with
  ``[observability] tracing = true``: the ``reyn`` command sets up the SDK from ``OTEL_*`` itself;
  a two-turn conversation yields the load's spans and a ``chat`` span per turn whose children are
  the turn's ``execute_tool`` spans, and a call the operator's profile refuses carries the layer.
- An MCP call from the real SDK client, inside a span of the client's, continues the client's trace
  through ``reyn mcp serve`` (a subprocess; SERVER spans for every method) and into an upstream stdio
  server reached through the mcp pack's gateway (which exports its own spans).
- Over streamable HTTP the SERVER spans carry ``network.transport = tcp``, the client's address
  and, for a handshake-era client that opens a session, ``mcp.session.id``.
- No argument or result text is in any exported byte, nor the API key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the dev extra installs it")

from local_server import free_port, wait_listening
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from opentelemetry import trace

from reyn_loops.testing.scripted_server import ScriptedModelServer, ScriptedReply

from .otlp_receiver import OtlpReceiver, ReceivedSpan

REYN = str(Path(sys.executable).parent / "reyn")
UPSTREAM = Path(__file__).parent / "servers" / "traced_upstream.py"
MODEL = "openai/scripted"
API_KEY = "sk-canary-api-key-4e7d0b"
PATH_CANARY = "canary-path-93c1.txt"
CONTENT_CANARY = "canary-content-5fa2"
ARGUMENT_CANARY = "canary-argument-b81e"


def _env(root: Path, receiver: OtlpReceiver, service: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REYN_", "OTEL_"))}
    env.update(
        REYN_CACHE_DIR=str(root / ".cache"),
        REYN_ARGUMENT_KEY_FILE=str(root / ".config" / "argument-hash.key"),
        XDG_CONFIG_HOME=str(root / ".xdg"),
        OTEL_SERVICE_NAME=service,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=receiver.endpoint,
        OTEL_BSP_SCHEDULE_DELAY="50",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        OPENAI_API_KEY=API_KEY,
    )
    return env


def _children(spans: list[ReceivedSpan], parent: ReceivedSpan) -> list[ReceivedSpan]:
    return [s for s in spans if s.parent_span_id == parent.span_id and s.trace_id == parent.trace_id]


def _no_content(receiver: OtlpReceiver, *canaries: str) -> None:
    wire = b"".join(receiver.bodies)
    for canary in canaries:
        assert canary.encode() not in wire, f"{canary!r} reached the exported spans"


def test_a_router_conversation_is_exported_as_a_span_tree_with_the_refusing_layer(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / PATH_CANARY).write_text(CONTENT_CANARY + "\n")
    (root / "reyn.toml").write_text(
        '[plugins]\nenable = ["loops", "file"]\n\n[surfaces.router]\nexclude = ["write_file"]\n\n'
        "[observability]\ntracing = true\n"
    )
    script = [
        ScriptedReply.calls(
            ("read_file", {"path": PATH_CANARY}),
            ("write_file", {"path": "out.txt", "content": ARGUMENT_CANARY}),
        ),
        ScriptedReply.text("the notes say hello"),
    ]
    with OtlpReceiver() as receiver, ScriptedModelServer(script, lifetime_s=120) as model:
        proc = subprocess.run(
            [REYN, "chat", "--model", MODEL, "--api-base", model.base_url, "--no-stream"],
            input="what do the notes say?\n/exit\n",
            cwd=root,
            env=_env(root, receiver, "reyn-chat"),
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert len(model.requests) == 2
        chats = sorted(receiver.wait_for(f"chat {MODEL}", 2), key=lambda s: s.span_id)
        reads = receiver.wait_for("execute_tool read_file")
        writes = receiver.wait_for("execute_tool write_file")
        loads = receiver.wait_for("reyn.load")
        spans = list(receiver.spans)

    assert {s.service for s in spans} == {"reyn-chat"}
    assert all(c.kind == "CLIENT" and c.attributes["gen_ai.usage.input_tokens"] == 10 for c in chats)
    first = next(c for c in chats if _children(spans, c))
    assert {s.name for s in _children(spans, first)} == {"execute_tool read_file", "execute_tool write_file"}
    (read,), (write,) = reads, writes
    assert read.kind == "INTERNAL" and read.attributes["reyn.gate.outcome"] == "allowed"
    assert read.attributes["reyn.plugin.id"] == "file"
    assert read.attributes["gen_ai.tool.call.id"] and read.attributes["reyn.surface"] == "router"
    assert read.attributes["reyn.tool.arguments.hmac_sha256"].startswith("hmac-sha256:")
    assert write.attributes["error.type"] == "gate_refused" and write.status_code == 2  # ERROR
    assert write.attributes["reyn.gate.outcome"] == "refused"
    assert write.attributes["reyn.gate.layer"] == "operator"
    (load,) = loads
    assert {"reyn.load.discovery", "reyn.load.registration"} <= {s.name for s in _children(spans, load)}
    _no_content(receiver, PATH_CANARY, CONTENT_CANARY, ARGUMENT_CANARY, API_KEY)


def _gateway_profile(receiver: OtlpReceiver) -> str:
    endpoint = json.dumps(receiver.endpoint)  # the upstream exports its own spans there
    return (
        '[plugins]\nenable = ["mcp"]\n\n'
        f"[plugins.mcp.settings.servers.up]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(UPSTREAM))}]\nimport_tools = true\nnetwork = true\n"
        f"env = {{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = {endpoint} }}\n"
        f"read_roots = ['.', {json.dumps(str(UPSTREAM.parent))}]\n\n"
        "[observability]\ntracing = true\n"
    )


async def test_an_mcp_call_continues_the_clients_trace_through_reyn_and_into_the_upstream(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    with OtlpReceiver() as receiver:
        (root / "reyn.toml").write_text(_gateway_profile(receiver))
        env = _env(root, receiver, "reyn-serve")
        refresh = subprocess.run(
            [REYN, "mcp", "refresh"], cwd=root, env=env, capture_output=True, text=True, timeout=180
        )
        assert refresh.returncode == 0, refresh.stdout + refresh.stderr
        receiver.spans.clear()
        receiver.bodies.clear()

        tracer = trace.get_tracer("the-mcp-client")
        params = StdioServerParameters(command=REYN, args=["mcp", "serve"], cwd=str(root), env=env)
        with tracer.start_as_current_span("client work") as client_span:
            async with Client(params) as client:
                listed = {t.name for t in (await client.list_tools()).tools}
                result = await client.call_tool("up__echo", {"text": ARGUMENT_CANARY})
        trace_id = format(client_span.get_span_context().trace_id, "032x")

        assert "up__echo" in listed
        assert not result.is_error
        served = receiver.wait_for("tools/call up__echo", service="reyn-serve")
        upstream = receiver.wait_for("tools/call echo", service="upstream")
        receiver.wait_for("tools/list", service="reyn-serve")
        executed = receiver.wait_for("execute_tool up__echo", service="reyn-serve")
        all_spans = list(receiver.spans)

    served_spans = [s for s in all_spans if s.service == "reyn-serve"]
    answered = [s for s in served_spans if s.kind == "SERVER"]
    # every method the client sent (this SDK client opens with server/discover, 2026-07-28)
    assert {"tools/list", "tools/call up__echo"} <= {s.name for s in answered}
    for span in answered:
        assert span.trace_id == trace_id, span.name
        assert span.name.startswith(span.attributes["mcp.method.name"])
        assert span.attributes["network.transport"] == "pipe"
    (call,) = served
    assert call.attributes["gen_ai.tool.name"] == "up__echo"
    assert call.attributes["gen_ai.operation.name"] == "execute_tool"
    (execute,) = executed
    assert execute.parent_span_id == call.span_id  # the dispatcher's span inside the SERVER span
    # the gateway's request upstream: a CLIENT span under execute_tool, the upstream's SERVER span under it
    (up,) = upstream
    assert up.kind == "SERVER"
    # every request the gateway sent upstream (its handshake and listing too) is in the client's trace
    upstream_spans = [s for s in all_spans if s.service == "upstream"]
    assert {"initialize", "tools/list", "tools/call echo"} <= {s.name for s in upstream_spans}
    # (the SDK's client injects trace context into requests; a notification starts its own trace)
    requests = [s for s in upstream_spans if "jsonrpc.request.id" in s.attributes]
    assert {s.trace_id for s in requests} == {trace_id}, [(s.name, s.trace_id) for s in upstream_spans]
    (sent,) = [s for s in served_spans if s.span_id == up.parent_span_id]
    assert sent.kind == "CLIENT" and sent.attributes["mcp.method.name"] == "tools/call"
    assert sent.parent_span_id == execute.span_id
    _no_content(receiver, ARGUMENT_CANARY, API_KEY)


async def test_over_streamable_http_the_server_spans_carry_the_transport_and_the_client(
    tmp_path: Path,
) -> None:
    import signal

    root = tmp_path / "ws"
    root.mkdir()
    (root / PATH_CANARY).write_text(CONTENT_CANARY + "\n")
    (root / "reyn.toml").write_text(
        '[plugins]\nenable = ["file", "mcp"]\n\n[observability]\ntracing = true\n'
    )
    port = free_port()
    with OtlpReceiver() as receiver:
        log = root / "serve.log"
        with open(log, "w") as err:
            proc = subprocess.Popen(
                [REYN, "mcp", "serve", "--http", f"127.0.0.1:{port}"],
                cwd=root,
                env=_env(root, receiver, "reyn-http"),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        try:
            wait_listening(proc, port, log=log, what="reyn mcp serve --http")
            tracer = trace.get_tracer("the-mcp-client")
            with tracer.start_as_current_span("client work") as client_span:
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:  # 2026-07-28: no session
                    result = await client.call_tool("read_file", {"path": PATH_CANARY})
                # a handshake-era client (2025-11-25) opens a session: its id is on the spans
                async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write, *_):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        listed = await session.list_tools()
        finally:
            proc.send_signal(signal.SIGTERM)  # a clean stop sends the queued spans
            proc.wait(60)
        assert not result.is_error
        trace_id = format(client_span.get_span_context().trace_id, "032x")
        (call,) = receiver.wait_for("tools/call read_file", service="reyn-http")
        in_session = receiver.wait_for("tools/list", service="reyn-http")
        (execute,) = receiver.wait_for("execute_tool read_file", service="reyn-http")

    assert call.kind == "SERVER" and call.trace_id == trace_id
    assert call.attributes["network.transport"] == "tcp"
    assert call.attributes["network.protocol.name"] == "http"
    assert call.attributes["client.address"] == "127.0.0.1"
    assert isinstance(call.attributes["client.port"], int)
    assert execute.parent_span_id == call.span_id
    assert "read_file" in {t.name for t in listed.tools}
    (listing,) = [s for s in in_session if s.attributes.get("mcp.protocol.version") == "2025-11-25"]
    assert listing.trace_id == trace_id and listing.attributes["network.transport"] == "tcp"
    assert isinstance(listing.attributes["mcp.session.id"], str) and listing.attributes["mcp.session.id"]
    _no_content(receiver, PATH_CANARY, CONTENT_CANARY, API_KEY)
