"""``reyn chat`` and ``reyn phase run`` as subprocesses, against a scripted model on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reyn_loops.testing.scripted_server import ScriptedModelServer
from reyn_loops.testing.scripted_server import ScriptedReply as R


@pytest.fixture
def workspace(notes_workspace) -> Path:
    return notes_workspace('write_roots = ["out"]\n')


def test_chat_session_runs_tools_and_keeps_the_conversation(workspace, reyn_chat):
    script = [
        R.calls(("convert_units", {"value": 1, "from_unit": "km", "to_unit": "m"})),
        R.text("1 km is 1000 m."),
        R.text("You asked about kilometres."),
    ]
    stdin = "/tools\nhow many m in a km?\nwhat did I ask?\n/exit\n"
    proc, requests = reyn_chat(script, "--no-stream", cwd=workspace, stdin=stdin)
    second = requests[2].body["messages"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "convert_units" in proc.stdout.splitlines()[1]  # /tools
    assert "→ convert_units(" in proc.stdout and "← convert_units: ok:" in proc.stdout
    assert "1 km is 1000 m." in proc.stdout and "You asked about kilometres." in proc.stdout
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "assistant", "user"]


def test_chat_reports_a_provider_error_and_exits_1(workspace, reyn_chat):
    proc, _ = reyn_chat([R.error(500, "upstream down")], cwd=workspace, stdin="hello\n")
    assert proc.returncode == 1
    assert "model error" in proc.stderr and "upstream down" in proc.stderr and "Traceback" not in proc.stderr


def test_phase_run_writes_the_artifact_and_answers_questions(workspace, reyn_cli):
    (workspace / "phase.toml").write_text("""
name = "notes"
task = "Copy notes.md to out/copy.md"
model = "openai/scripted"
allowed_ops = ["file"]
artifact_type = "copy"
""")
    ops = [
        {"kind": "read_file", "path": "notes.md"},
        {"kind": "write_file", "path": "out/copy.md", "content": "- one\n"},
    ]
    script = [
        R.text(json.dumps({"control": {"type": "finish", "decision": "finish"}, "control_ir": ops})),
        R.text(
            json.dumps(
                {
                    "control": {"type": "finish", "decision": "finish"},
                    "artifact": {"type": "copy", "data": {"path": "out/copy.md"}},
                }
            )
        ),
    ]
    with ScriptedModelServer(script, lifetime_s=300) as server:
        proc = reyn_cli("phase", "run", "phase.toml", "--api-base", server.base_url, "--json", cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["status"] == "finish" and summary["artifact"] == {
        "type": "copy",
        "data": {"path": "out/copy.md"},
    }
    assert [o["kind"] for o in summary["ops"]] == ["read_file", "write_file"]
    assert (workspace / "out" / "copy.md").read_text() == "- one\n"
    assert "op → write_file" in proc.stderr  # the transcript goes to stderr with --json


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('name = "x"\ntask = "t"\nmodle = "typo"\n', "modle: Extra inputs are not permitted"),
        ('name = "x"\n', "task: Field required"),
        ('name = "x"\ntask = "t"\n', "names no model"),
        ("name = [", "is not valid TOML"),
    ],
)
def test_bad_phase_files_are_clear_errors(workspace, content, message, reyn_cli):
    (workspace / "phase.toml").write_text(content)
    proc = reyn_cli("phase", "run", "phase.toml", cwd=workspace, timeout=120)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_missing_phase_file_is_a_clear_error(workspace, reyn_cli):
    proc = reyn_cli("phase", "run", "nope.toml", cwd=workspace, timeout=120)
    assert proc.returncode == 2 and "does not exist" in proc.stderr
