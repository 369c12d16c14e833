"""The shell tool: real subprocesses, through the real dispatcher."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reyn_tools_shell.settings import ShellSettings

from reyn_core import PhaseCallerState, ToolContext, ToolGateRefused
from reyn_core.host import dispatch_tool, invoke_tool, render_phase, render_router


@pytest.fixture
def unconfined(make_shell):
    """The pack's own supervision, without the sandbox: its PID namespace would hide the PIDs
    these tests watch (the launcher's own tests cover the group dying inside the sandbox)."""
    return make_shell(sandbox="off")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _wait_gone(pids: list[int], within_s: float = 10.0) -> list[int]:
    """The pids still alive after waiting up to ``within_s`` (init needs a moment to reap orphans)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


# --------------------------------------------------------------------------- surfaces


def test_shell_renders_on_the_phase_surface_only(shell):
    assert render_router(shell.registry, shell.ctx.with_surface("router")) == []
    phase = render_phase(shell.registry, shell.ctx, ["shell"])
    assert [op.kind for op in phase.ops] == ["shell"]
    described = json.dumps(phase.ops[0].args_schema)
    assert "Allowed programs: echo; touch; env; pwd; python; git (status, diff, log); find" in described


async def test_shell_is_refused_on_the_router_surface_even_when_named(shell, workspace):
    router_ctx = ToolContext(surface="router", workspace=workspace)
    env = await shell.envelope({"argv": ["touch", "marker"]}, surface="router")
    assert (
        env["status"] == "error"
        and env["error"]["kind"] == "gate_refused"
        and env["error"]["layer"] == "role"
    )
    with pytest.raises(ToolGateRefused) as info:
        await invoke_tool(shell.registry, "shell", {"argv": ["touch", "marker"]}, router_ctx)
    assert "not offered on the router surface" in info.value.message
    assert not (workspace / "marker").exists()  # the handler never ran


async def test_shell_without_programs_is_unavailable_and_says_how_to_configure(build_registry, workspace):
    for registry in (build_registry(None), build_registry(ShellSettings())):
        ctx = ToolContext(
            surface="phase", workspace=workspace, phase_state=PhaseCallerState(allowed_ops=("shell",))
        )
        assert render_phase(registry, ctx, ["shell"]).ops == ()
        env = await dispatch_tool(registry, "shell", {"argv": ["echo", "x"]}, ctx)
        assert env["error"]["kind"] == "gate_refused"
        assert "[[plugins.shell.settings.programs]]" in env["error"]["message"]


# --------------------------------------------------------------------------- running


async def test_argv_runs_and_returns_the_full_result(shell):
    result = await shell.run(argv=["echo", "hello", "world"])
    assert result["exit_code"] == 0
    assert result["stdout"] == "hello world\n"
    assert result["stderr"] == ""
    assert result["timed_out"] is False
    assert isinstance(result["duration_s"], float)
    assert result["stdout_truncated"] is False and result["stderr_truncated"] is False


async def test_command_string_is_split_with_shlex(shell):
    result = await shell.run(command="echo 'a  b' \"c d\" e")
    assert result["stdout"] == "a  b c d e\n"


async def test_shell_syntax_is_never_interpreted(shell, workspace):
    result = await shell.run(command="echo hi && touch pwned; $(touch pwned2) `touch pwned3` > out.txt *")
    assert result["stdout"] == "hi && touch pwned; $(touch pwned2) `touch pwned3` > out.txt *\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["sub"]


async def test_nonzero_exit_is_a_result_not_an_error(shell):
    result = await shell.run(argv=["python", "-c", "import sys; print('bye'); sys.exit(3)"])
    assert result["exit_code"] == 3 and result["stdout"] == "bye\n"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_allowed_git_subcommand_runs(shell, workspace):
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    result = await shell.run(command="git status --porcelain")
    assert result["exit_code"] == 0
    assert result["stdout"] == "?? sub/\n" or result["stdout"] == ""


# --------------------------------------------------------------------------- limits


GRANDCHILD = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open(sys.argv[1], "w") as fh:
    fh.write(f"{os.getpid()} {child.pid}")
time.sleep(120)
"""


async def test_timeout_kills_the_whole_process_group(unconfined, workspace):
    pidfile = workspace / "pids"
    result = await unconfined.run(argv=["python", "-c", GRANDCHILD, str(pidfile)], timeout_s=4)
    assert result["timed_out"] is True
    assert result["exit_code"] == -9
    assert "killed after 4 s with its whole process group" in result["note"]
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2
    assert _wait_gone(pids) == []  # neither the child nor the grandchild survives


BACKGROUND = """
import os, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(child.pid)
"""


async def test_background_children_do_not_outlive_the_call(unconfined):
    result = await unconfined.run(argv=["python", "-c", BACKGROUND])
    assert result["exit_code"] == 0 and result["timed_out"] is False
    assert _wait_gone([int(result["stdout"])]) == []


ESCAPER = """
import os, subprocess, sys, time
# A grandchild that leaves the process group (and session) with setsid(), then double-forks.
code = "import os, sys, time; os.setsid(); pid = os.fork(); pid and os._exit(0); " \\
       "open(sys.argv[1], 'a').write(f' {os.getpid()}'); time.sleep(120)"
child = subprocess.Popen([sys.executable, "-c", code, sys.argv[1]])  # it keeps stdout and stderr open
child.wait()
while len(open(sys.argv[1]).read().split()) < 1:
    time.sleep(0.05)
print("ready", flush=True)
if sys.argv[2] == "hang":
    time.sleep(120)
"""


def _escaped_pid(pidfile: Path) -> int:
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 1
    return pids[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper supervisor is Linux only")
async def test_a_grandchild_that_calls_setsid_does_not_survive_a_timeout(unconfined, workspace):
    pidfile = workspace / "escaped"
    pidfile.write_text("")
    result = await unconfined.run(argv=["python", "-c", ESCAPER, str(pidfile), "hang"], timeout_s=5)
    assert result["timed_out"] is True and result["exit_code"] == -9
    assert result["stdout"] == "ready\n"  # read to the end: nothing is left holding the pipe
    assert result["stdout_truncated"] is False
    assert _wait_gone([_escaped_pid(pidfile)]) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper supervisor is Linux only")
async def test_a_daemonised_grandchild_does_not_outlive_a_normal_exit(unconfined, workspace):
    pidfile = workspace / "escaped"
    pidfile.write_text("")
    result = await unconfined.run(argv=["python", "-c", ESCAPER, str(pidfile), "exit"], timeout_s=60)
    assert result["timed_out"] is False and result["exit_code"] == 0
    assert result["stdout"] == "ready\n" and result["stdout_truncated"] is False
    assert _wait_gone([_escaped_pid(pidfile)]) == []


async def test_exit_codes_and_signals_pass_through_the_supervisor(unconfined):
    assert (await unconfined.run(argv=["python", "-c", "import sys; sys.exit(7)"]))["exit_code"] == 7
    killed = await unconfined.run(
        argv=["python", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"]
    )
    assert killed["exit_code"] == -15 and killed["timed_out"] is False


async def test_in_the_sandbox_a_signal_is_reported_as_128_plus_its_number(shell):
    assert (await shell.run(argv=["python", "-c", "import sys; sys.exit(7)"]))["exit_code"] == 7
    killed = await shell.run(argv=["python", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"])
    assert killed["exit_code"] == 128 + 15 and killed["timed_out"] is False


async def test_timeout_is_capped_by_the_settings(make_shell, workspace):
    shell = make_shell(timeout_s=1, max_timeout_s=2)
    result = await shell.run(argv=["python", "-c", "import time; time.sleep(60)"], timeout_s=3600)
    assert result["timed_out"] is True
    assert "killed after 2 s" in result["note"]


async def test_output_is_capped_with_a_truncation_marker(make_shell):
    shell = make_shell(max_output_bytes=1000)
    code = "import sys; sys.stdout.write('o' * 500_000); sys.stderr.write('e' * 3000)"
    result = await shell.run(argv=["python", "-c", code])
    assert result["stdout"].startswith("o" * 1000)
    assert result["stdout"].endswith(
        "[... 499000 more bytes of stdout not shown: output is capped at 1000 bytes]"
    )
    assert result["stderr"].endswith(
        "[... 2000 more bytes of stderr not shown: output is capped at 1000 bytes]"
    )
    assert result["stdout_truncated"] is True and result["stderr_truncated"] is True
    assert result["exit_code"] == 0


def test_the_python_used_by_these_tests_is_outside_the_workspace(workspace):
    assert not Path(os.path.realpath(sys.executable)).is_relative_to(workspace)


async def test_cancelling_the_call_kills_the_process_group(unconfined, workspace):
    import asyncio

    pidfile = workspace / "pids"
    task = asyncio.ensure_future(
        unconfined.run(argv=["python", "-c", GRANDCHILD, str(pidfile)], timeout_s=120)
    )
    for _ in range(600):  # wait (bounded) until both processes exist
        if pidfile.exists() and len(pidfile.read_text().split()) == 2:
            break
        await asyncio.sleep(0.05)
    pids = [int(p) for p in pidfile.read_text().split()]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _wait_gone(pids) == []
