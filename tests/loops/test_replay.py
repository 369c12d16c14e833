"""LLM replay: JSONL fixtures keyed by the request, record mode, clear errors, the pytest fixture."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reyn_loops import (
    LLMCallError,
    LLMRequest,
    PhaseRunner,
    PhaseState,
    ReplayClient,
    ReplayFixtureError,
    ReplayMissing,
    RouterLoop,
)
from reyn_loops.testing.scripted_server import ScriptedReply as R

from .conftest import MODEL

HERE = Path(__file__).parent


async def test_recorded_conversation_replays_offline_identically(tools, ctx, scripted, tmp_path):
    fixture = tmp_path / "fx" / "add.jsonl"
    _server, client = scripted(R.calls(("add", {"a": 2, "b": 2})), R.text("4"))
    recorder = ReplayClient(fixture, inner=client, record=True)
    recorded = await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=recorder).run("2+2")
    lines = fixture.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["key"].startswith("sha256:") for line in lines)
    replayer = ReplayClient(fixture, record=False)  # no server, no inner client
    replayed = await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=replayer).run("2+2")
    assert replayed.messages == recorded.messages and replayer.calls == 2


async def test_missing_key_names_the_key_the_fixture_and_how_to_record(tmp_path):
    fixture = tmp_path / "empty.jsonl"
    request = LLMRequest(MODEL, [{"role": "user", "content": "never recorded"}])
    with pytest.raises(ReplayMissing) as info:
        await ReplayClient(fixture, record=False).complete(request)
    text = str(info.value)
    assert request.key() in text and str(fixture) in text and "REYN_LLM_RECORD=1" in text
    assert "never recorded" in text


def test_key_covers_model_messages_tools_and_tool_choice():
    base = LLMRequest(
        MODEL, [{"role": "user", "content": "x"}], tools=[{"type": "function", "function": {"name": "a"}}]
    )
    assert (
        base.key()
        == LLMRequest(
            MODEL,
            [{"role": "user", "content": "x"}],
            tools=[{"type": "function", "function": {"name": "a"}}],
            stream=True,
        ).key()
    )
    variants = [
        LLMRequest("openai/other", base.messages, tools=base.tools),
        LLMRequest(MODEL, [{"role": "user", "content": "y"}], tools=base.tools),
        LLMRequest(MODEL, base.messages, tools=[{"type": "function", "function": {"name": "b"}}]),
        LLMRequest(MODEL, base.messages, tools=base.tools, tool_choice="required"),
    ]
    assert len({base.key(), *(v.key() for v in variants)}) == 5


async def test_corrupt_fixture_line_is_reported_with_file_and_line(tmp_path):
    fixture = tmp_path / "bad.jsonl"
    fixture.write_text('{"key": "sha256:x", "reply": {"message": {}}}\nnot json\n')
    with pytest.raises(ReplayFixtureError, match=r"bad\.jsonl:2: not valid JSON"):
        ReplayClient(fixture)
    fixture.write_text('{"reply": {}}\n')
    with pytest.raises(ReplayFixtureError, match="needs a string 'key'"):
        ReplayClient(fixture)


async def test_failed_call_in_record_mode_writes_nothing(scripted, tmp_path):
    fixture = tmp_path / "f.jsonl"
    _server, client = scripted(R.error(500, "boom"), num_retries=0)
    with pytest.raises(LLMCallError):
        await ReplayClient(fixture, inner=client, record=True).complete(
            LLMRequest(MODEL, [{"role": "user", "content": "x"}])
        )
    assert not fixture.exists()


def test_record_mode_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("REYN_LLM_RECORD", "1")
    assert ReplayClient(tmp_path / "x.jsonl").record is True
    monkeypatch.setenv("REYN_LLM_RECORD", "0")
    assert ReplayClient(tmp_path / "x.jsonl").record is False


@pytest.mark.llm_replay("llm_fixtures/router_add.jsonl")
async def test_committed_fixture_replays_through_the_marker(llm_replay, tools, ctx):
    result = await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=llm_replay).run("What is 20 + 22?")
    assert result.status == "done" and result.text == "20 + 22 = 42"
    assert tools.calls.names() == ["add"] and llm_replay.calls == 2
    assert llm_replay.fixture == HERE / "llm_fixtures" / "router_add.jsonl"


def test_fixture_and_marker_work_in_another_project(tmp_path, child_pytest):
    """A plugin author's suite: the pytest11 plugin provides the marker and the fixture."""
    (tmp_path / "llm_fixtures").mkdir()
    test = tmp_path / "test_author.py"
    test.write_text(
        textwrap.dedent("""
        import pytest
        from reyn_loops import LLMRequest, ReplayMissing

        @pytest.mark.llm_replay("rec/one.jsonl")
        async def test_missing(llm_replay):
            with pytest.raises(ReplayMissing, match="rec/one.jsonl"):
                await llm_replay.complete(LLMRequest("m", [{"role": "user", "content": "x"}]))

        def test_default_path(llm_replay):
            assert llm_replay.fixture.name == "test_author__test_default_path.jsonl"
            assert llm_replay.fixture.parent.name == "llm_fixtures"
    """)
    )
    proc = child_pytest(str(test), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout


def test_importing_reyn_core_the_host_api_and_the_loops_does_not_import_litellm():
    code = (
        "import sys, reyn_core, reyn_loops, reyn_loops.testing.scripted_server, "
        "reyn_loops.testing.replay, reyn_core.host, reyn_loops.cli.chat, reyn_loops.cli.phase; "
        "bad = [m for m in ('litellm', 'openai', 'httpx', 'mcp') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


PHASE_FIXTURE = HERE / "llm_fixtures" / "phase_ask_resume.jsonl"


def phase_script() -> list[R]:
    """The scripted model the phase fixture was recorded against (REYN_LLM_RECORD=1 re-records it)."""

    def reply(ops: list[dict] | None = None, artifact: dict | None = None) -> R:
        body: dict = {"control": {"type": "finish", "decision": "finish"}, "control_ir": ops or []}
        if artifact:
            body["artifact"] = artifact
        return R.text(json.dumps(body))

    return [
        reply([{"kind": "ask_user", "question": "Which note?"}, {"kind": "read_note", "name": "todo.md"}]),
        reply([{"kind": "write_note", "name": "summary.md", "text": "2 todos"}]),
        reply(artifact={"type": "summary", "data": {"note": "todo.md", "todos": 2}}),
    ]


@pytest.mark.llm_replay("llm_fixtures/phase_ask_resume.jsonl")
async def test_committed_phase_fixture_replays_a_suspend_and_resume(llm_replay, tools, ctx, scripted):
    client = llm_replay
    if llm_replay.record:  # re-record against the scripted local server, not a paid model
        _server, inner = scripted(*phase_script())
        client = ReplayClient(llm_replay.fixture, inner=inner, record=True)

    def runner() -> PhaseRunner:
        return PhaseRunner(
            tools.registry,
            model=MODEL,
            ctx=ctx,
            client=client,
            name="summarise",
            allowed_ops=["notes", "ask_user"],
            structured=False,
            artifact_type="summary",
        )

    first = await runner().run("Summarise the note the user picks.")
    assert first.status == "suspended" and first.question == "Which note?"
    assert tools.calls.names() == ["ask_user"]  # read_note waits for the answer
    state = PhaseState.from_json(first.state.to_json())
    done = await runner().resume(state, "todo.md")  # a new runner, as in another process
    assert done.status == "finish"
    assert done.artifact == {"type": "summary", "data": {"note": "todo.md", "todos": 2}}
    assert tools.calls.names() == ["ask_user", "read_note", "write_note"]
    assert (tools.workspace / "summary.md").read_text() == "2 todos"
    assert client.calls == 3 and llm_replay.fixture == PHASE_FIXTURE
    records = [json.loads(line) for line in PHASE_FIXTURE.read_text().splitlines()]
    assert len(records) == 3 and {r["request"]["model"] for r in records} == {MODEL}


def test_the_llm_replay_fixture_and_marker_come_from_reyn_loops_own_pytest_plugin(tmp_path):
    """Entry point ``pytest11: reyn_loops``: in a suite that configures nothing, once reyn-loops is
    installed (the core's kit, ``pytest11: reyn``, no longer carries it)."""
    run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    fixtures = subprocess.run([*run, "--fixtures"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    section = fixtures.stdout.split("fixtures defined from reyn_loops.testing.replay", 1)
    assert len(section) == 2, fixtures.stdout[-3000:]
    assert "llm_replay -- " in section[1].split("fixtures defined from", 1)[0]
    markers = subprocess.run([*run, "--markers"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "@pytest.mark.llm_replay(" in markers.stdout
