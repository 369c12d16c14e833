"""Edges of ``reyn chat``, ``reyn phase run`` and ``reyn-demo``, and of the model client's errors:
deferred calls answered every time, missing keys caught before any request, provider errors with
the right exit code, allowed_ops that match nothing, options that would be ignored."""

from __future__ import annotations

import io
import json
import socket
import sys
from pathlib import Path

import pytest

from reyn_loops import LiteLLMClient, LLMCallError, LLMRequest, RouterLoop
from reyn_loops.cli.chat import _session
from reyn_loops.testing.scripted_server import ScriptedModelServer, tool_results
from reyn_loops.testing.scripted_server import ScriptedReply as R
from reyn_loops.transcript import Transcript

from .conftest import MODEL

KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
# `reyn chat` / `reyn phase` are the `loops` plugin's commands: a profile enables it like any plugin.
LOOPS_ONLY = '[plugins]\nenable = ["loops"]\n'


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    # the reyn child (reyn_cli) inherits this environment: no real provider key reaches it
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def workspace(notes_workspace) -> Path:
    return notes_workspace()


# --------------------------------------------------------------------------- chat: deferred calls


async def test_chat_answers_every_deferred_call_not_only_the_first(tools, ctx, scripted, monkeypatch, capsys):
    server, client = scripted(
        R.calls(("delegate", {"agent": "a", "task": "t"})),
        R.calls(("delegate", {"agent": "b", "task": "t"})),
        R.text("No agents here, so I did it myself."),
    )
    loop = RouterLoop(
        tools.registry, model=MODEL, ctx=ctx, client=client, on_event=Transcript(show_model_calls=False)
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO("hand it off\n/exit\n"))
    assert await _session(loop, MODEL, 8) == 0
    out = capsys.readouterr().out
    assert "No agents here, so I did it myself." in out
    assert len(server.requests) == 3
    assert tool_results(server.requests[1].body)["call_1_0"]["error"]["kind"] == "runtime_missing"
    assert tool_results(server.requests[2].body)["call_2_0"]["error"]["kind"] == "runtime_missing"


async def test_chat_bounds_deferred_calls_and_keeps_a_valid_conversation(
    tools, ctx, scripted, monkeypatch, capsys
):
    server, client = scripted(
        *[R.calls(("delegate", {"agent": "a", "task": str(i)})) for i in range(3)],
        R.text("ok, something else then"),
    )
    loop = RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client, max_turns=2)
    monkeypatch.setattr(sys, "stdin", io.StringIO("hand it off\nthen?\n/exit\n"))
    assert await _session(loop, MODEL, 2) == 0
    assert "kept calling deferred tools 2 times" in capsys.readouterr().out
    last = server.requests[3].body["messages"]
    calls = [c["id"] for m in last for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in last if m["role"] == "tool"]
    assert calls == answered and last[-1] == {"role": "user", "content": "then?"}  # every call answered


# --------------------------------------------------------------------------- keys and provider errors


async def test_missing_key_fails_before_any_request_without_an_http_code(monkeypatch):
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    with ScriptedModelServer([R.text("never sent")], lifetime_s=60) as server:
        client = LiteLLMClient(api_base=server.base_url, num_retries=2)
        with pytest.raises(LLMCallError) as info:
            await client.complete(LLMRequest(MODEL, [{"role": "user", "content": "x"}]))
        assert server.requests == []  # checked up front: nothing sent, nothing retried
    err = info.value
    assert err.kind == "MissingAPIKey" and err.status_code is None
    assert "OPENAI_API_KEY" in str(err) and "--api-key-env" in str(err) and "HTTP" not in str(err)


async def test_no_response_is_not_labelled_with_an_http_status():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: connections are refused
    client = LiteLLMClient(api_base=f"http://127.0.0.1:{port}/v1", api_key="k", num_retries=0, timeout_s=10)
    with pytest.raises(LLMCallError) as info:
        await client.complete(LLMRequest(MODEL, [{"role": "user", "content": "x"}]))
    assert info.value.status_code is None
    assert "(no response from the provider)" in str(info.value) and "HTTP" not in str(info.value)


def test_chat_without_a_key_exits_2_naming_the_variable(workspace, reyn_cli):
    proc = reyn_cli("chat", "--model", "openai/gpt-4o-mini", cwd=workspace, stdin="hello\n", timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (
        "OPENAI_API_KEY" in proc.stderr and "--api-key-env" in proc.stderr and "Traceback" not in proc.stderr
    )
    assert "reyn chat —" not in proc.stdout  # the session never started


def test_phase_run_provider_error_exits_1_like_chat(workspace, reyn_cli):
    (workspace / "phase.toml").write_text(
        'name = "p"\ntask = "t"\nmodel = "openai/scripted"\nallowed_ops = ["file"]\n'
    )
    with ScriptedModelServer([R.error(500, "upstream down")], lifetime_s=300) as server:
        proc = reyn_cli("phase", "run", "phase.toml", "--api-base", server.base_url, "--json", cwd=workspace)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model error" in proc.stderr and "upstream down" in proc.stderr and "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["status"] == "error"


# --------------------------------------------------------------------------- phase: allowed_ops


@pytest.mark.parametrize(
    ("ops_line", "expected"),
    [
        ('allowed_ops = ["fiel"]\n', "'fiel' matches no tool name or cluster"),
        ("", "match no op a phase may use (from the profile's [surfaces.phase] default_allowed_ops)"),
    ],
)
def test_phase_run_refuses_allowed_ops_that_match_nothing(tmp_path, ops_line, expected, reyn_cli):
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["loops", "example"]\n'
    )  # no file pack: defaults match nothing
    (tmp_path / "phase.toml").write_text(f'name = "p"\ntask = "t"\nmodel = "openai/scripted"\n{ops_line}')
    with ScriptedModelServer([R.text("never")], lifetime_s=300) as server:
        proc = reyn_cli(
            "phase", "run", "phase.toml", "--api-base", server.base_url, cwd=tmp_path, timeout=120
        )
        assert server.requests == []  # the model is never called
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert expected in proc.stderr
    assert (
        "known ops: " in proc.stderr
        and "markdown_outline" in proc.stderr
        and "clusters: example" in proc.stderr
    )


# --------------------------------------------------------------------------- options that would be ignored


@pytest.mark.parametrize(
    "argv",
    [
        ("chat", "--model", "m", "--json"),
        ("--json", "chat", "--model", "m"),
    ],
)
def test_options_a_command_would_ignore_are_usage_errors(tmp_path, argv, reyn_cli):
    (tmp_path / "reyn.toml").write_text(LOOPS_ONLY)
    proc = reyn_cli(*argv, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert (
        "unrecognized arguments" in proc.stderr
        or "does not take" in proc.stderr
        or "no --json" in proc.stderr
    )


@pytest.mark.parametrize("argv", [("--json",), ("--profile", "ci"), ("--profile-file", "x.toml")])
def test_the_demo_takes_none_of_the_common_options(tmp_path, argv, reyn_cli):
    proc = reyn_cli(*argv, cwd=tmp_path, timeout=120, command=(sys.executable, "-m", "reyn_demo"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "unrecognized arguments" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""  # refused before anything ran


def test_reyn_itself_has_no_demo_command(tmp_path, reyn_cli):
    proc = reyn_cli("demo", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    assert "unknown command 'demo'" in proc.stderr


def test_chat_help_explains_the_session_commands_the_key_and_exit_codes(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text(LOOPS_ONLY)
    proc = reyn_cli("chat", "--help", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0
    for text in ("/tools", "/exit", "OPENAI_API_KEY", "--api-key-env", "Exit codes", "--profile-file"):
        assert text in proc.stdout, text
    assert "--json" not in proc.stdout


def test_chat_with_no_tools_says_how_to_enable_plugins(tmp_path, reyn_chat):
    (tmp_path / "empty.toml").write_text(LOOPS_ONLY)  # the commands' plugin, no tools
    proc, _ = reyn_chat(
        [], "--profile-file", "empty.toml", cwd=tmp_path, stdin="/tools\n/exit\n", timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 tools" in proc.stdout and "empty.toml enables no plugin tools" in proc.stdout
    assert "[plugins] enable" in proc.stdout and "reyn plugins list" in proc.stdout
