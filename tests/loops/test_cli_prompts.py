"""A prompt is never a command's output (issue 24): ``reyn phase run --json`` asked a question on a
terminal writes its ``answer>`` prompt on stderr, so stdout is exactly one JSON document; ``reyn
chat``'s ``you>`` prompt goes to stderr too, stdout keeping the conversation. A real terminal (a
pseudo-terminal as stdin), a real ``reyn`` subprocess, the scripted model server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from reyn_loops.testing.scripted_server import ScriptedModelServer
from reyn_loops.testing.scripted_server import ScriptedReply as R

REYN = (sys.executable, "-m", "reyn_core")


def on_a_terminal(
    argv: tuple[str, ...], typed: str, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """``reyn ARGV`` with a pseudo-terminal as stdin on which ``typed`` was already typed."""
    controller, terminal = pty.openpty()
    try:
        os.write(controller, typed.encode())
        return subprocess.run(
            [*REYN, *argv], stdin=terminal, capture_output=True, text=True, cwd=cwd, env=env, timeout=300
        )
    finally:
        os.close(terminal)
        os.close(controller)


def ask_then_finish() -> list[R]:
    ask = {
        "control": {"type": "finish", "decision": "finish"},
        "control_ir": [{"kind": "ask_user", "question": "Which file?"}],
    }
    done = {"control": {"type": "finish", "decision": "finish"}, "artifact": {"type": "answer", "data": {}}}
    return [R.text(json.dumps(ask)), R.text(json.dumps(done))]


def test_phase_run_json_asked_on_a_terminal_writes_only_json_on_stdout(
    tmp_path: Path, reyn_environment: Callable[..., dict[str, str]]
):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["loops", "catalog"]\n')
    (tmp_path / "phase.toml").write_text(
        'name = "ask"\ntask = "ask which file"\nmodel = "openai/scripted"\nallowed_ops = ["ask_user"]\n'
    )
    with ScriptedModelServer(ask_then_finish(), lifetime_s=300) as server:
        argv = ("phase", "run", "phase.toml", "--api-base", server.base_url, "--json")
        proc = on_a_terminal(argv, "todo.md\n", tmp_path, reyn_environment(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(proc.stdout)  # the whole of stdout: one JSON document
    assert summary["status"] == "finish"
    assert "question: Which file?" in proc.stderr and "answer> " in proc.stderr
    assert "user answers: todo.md" in proc.stderr


def test_chat_on_a_terminal_prompts_on_stderr(
    tmp_path: Path, reyn_environment: Callable[..., dict[str, str]]
):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["loops"]\n')
    with ScriptedModelServer([R.text("Hello there.")], lifetime_s=300) as server:
        argv = ("chat", "--model", "openai/scripted", "--api-base", server.base_url, "--no-stream")
        proc = on_a_terminal(argv, "hi\n/exit\n", tmp_path, reyn_environment(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Hello there." in proc.stdout  # control: the conversation is the output
    assert "you> " not in proc.stdout and proc.stderr.count("you> ") == 2
