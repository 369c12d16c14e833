"""A sandboxed shell call starts one process: the sandbox launcher, holding the call's stop pipe.

The launcher's PID 1 is init of the command's PID namespace; the host closes the stop pipe on timeout
or cancellation (and its death closes it), and the launcher exits only once the kernel has reaped
every process of the sandbox. So when the call returns, nothing it started is left: asserted at
once, with no waiting, after the grandchild was seen alive (the positive control). Real launcher,
real processes, found through the host's ``/proc``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import reyn_sandbox

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not reyn_sandbox.status().available,
    reason="the kernel sandbox is Linux only (and must be available)",
)

# The command starts a grandchild that leaves its session and double-forks; both name the tag.
GRANDCHILD = """
import subprocess, sys, time
code = "import os, time; os.setsid(); pid = os.fork(); pid and os._exit(0); time.sleep(120)  # " + sys.argv[1]
subprocess.Popen([sys.executable, "-c", code])
print("started", flush=True)
time.sleep(120)
"""


def _processes() -> dict[int, tuple[int, bytes]]:
    """Every process the host sees: pid → (parent pid, command line)."""
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
                with open(f"/proc/{name}/cmdline", "rb") as fh:
                    found[int(name)] = (ppid, fh.read())
            except (OSError, IndexError, ValueError):
                continue
    return found


def _naming(tag: str) -> list[int]:
    return [pid for pid, (_ppid, cmdline) in _processes().items() if tag.encode() in cmdline]


def _tag() -> str:
    return f"reyn-shell-one-{os.getpid()}-{time.monotonic_ns()}"


async def _until_running(tag: str, count: int = 2) -> None:
    """Wait (bounded) until ``count`` processes run the command's own code: the command, and with 2
    its grandchild (the launcher, its PID 1 and the supervisor name the tag too, in the command line
    they carry)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        tree = _processes()
        runners = (b"reyn_sandbox", b"supervisor.py")
        if sum(not any(r in tree[p][1] for r in runners) for p in _naming(tag) if p in tree) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the sandboxed command never started its grandchild: {_naming(tag)}")


def _between_host_and(pid: int) -> list[bytes]:
    """The command lines of the processes from ``pid``'s parent up to this test process (excluded)."""
    tree = _processes()
    chain = []
    here = tree[pid][0]
    while here != os.getpid():
        assert here in tree and here > 1, "the command is not a descendant of this process"
        chain.append(tree[here][1])
        here = tree[here][0]
    return chain


async def test_a_sandboxed_call_starts_the_launcher_alone(shell, make_shell):
    """Between the host and the command: the launcher and its PID 1 (a fork of it, no second
    interpreter). Unconfined, the same call runs under the supervisor (the positive control)."""
    chains = {}
    for label, tool in (("sandboxed", shell), ("unconfined", make_shell(sandbox="off"))):
        tag = _tag()
        code = f"import time; time.sleep(120)  # {tag}"
        task = asyncio.create_task(tool.run(argv=["python", "-c", code], timeout_s=60))
        await _until_running(tag, count=1)
        tree, tagged = _processes(), _naming(tag)
        command = next(
            p for p in tagged if not any(tree.get(q, (0, b""))[0] == p for q in tagged)
        )  # the innermost
        chains[label] = _between_host_and(command)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert len(chains["sandboxed"]) == 2
    assert all(b"reyn_sandbox._launch" in line for line in chains["sandboxed"])
    assert not any(b"supervisor.py" in line for line in chains["sandboxed"])
    assert len(chains["unconfined"]) == 1 and b"supervisor.py" in chains["unconfined"][0]


async def test_a_timeout_kills_the_grandchild_before_the_call_returns(shell):
    tag = _tag()
    task = asyncio.create_task(shell.run(argv=["python", "-c", GRANDCHILD, tag], timeout_s=4))
    await _until_running(tag)  # positive control: the grandchild lived in the sandbox
    result = await task
    left = _naming(tag)  # at once: the launcher exited only after the kernel reaped them all
    assert result["timed_out"] is True and result["exit_code"] == -9
    assert result["stdout"] == "started\n" and result["stdout_truncated"] is False
    assert left == []


async def test_cancelling_the_call_kills_the_grandchild_before_the_cancel_completes(shell):
    tag = _tag()
    task = asyncio.create_task(shell.run(argv=["python", "-c", GRANDCHILD, tag], timeout_s=60))
    await _until_running(tag)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _naming(tag) == []


HOST = """
import asyncio, sys
from pathlib import Path
import reyn_tools_shell.plugin as plugin
from reyn_tools_shell.settings import ShellSettings
from reyn_core import PhaseCallerState, ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, invoke_tool

python = {"name": "python", "path": sys.executable, "any_args": True}
settings = ShellSettings.model_validate({"programs": [python]})
builder = RegistryBuilder(settings={"shell": settings})
origin = ToolOrigin(kind="plugin", plugin_id="shell", distribution="reyn-tools-shell")
plugin.reyn_register_tools(register=lambda t: builder.register(t, origin=origin), settings=settings)
state = PhaseCallerState(allowed_ops=("shell",))
ctx = ToolContext(surface="phase", workspace=Path(sys.argv[1]), phase_state=state)
call = {"argv": ["python", "-c", sys.argv[2], sys.argv[3]], "timeout_s": 600}
print(asyncio.run(invoke_tool(builder.freeze(), "shell", call, ctx)))
"""


async def test_the_hosts_death_ends_the_sandboxed_call(workspace: Path):
    """A host killed mid-call (no timeout of its own can run): its end of the stop pipe closes with
    it, and the launcher ends the sandbox; the grandchild was alive before (the positive control)."""
    tag = _tag()
    host = subprocess.Popen([sys.executable, "-c", HOST, str(workspace), GRANDCHILD, tag],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        await _until_running(tag)
    finally:
        host.send_signal(signal.SIGKILL)
        _, stderr = host.communicate(timeout=30)
    deadline = time.monotonic() + 10  # the host is gone: its end of the pipe closed by the kernel
    while _naming(tag) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert _naming(tag) == [], stderr.decode(errors="replace")


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import os, sys; os.close(1); os.close(2); sys.exit(5)", 5),
        ("import sys; sys.stdout.write('x' * 300_000); sys.stdout.flush(); sys.exit(3)", 3),
        ("pass", 0),
    ],
)
async def test_the_commands_status_is_the_calls_whatever_its_output(shell, code, expected):
    """(Exit codes and signals themselves: test_shell_tool.py, ``..._128_plus_its_number``.)"""
    result = await shell.run(argv=["python", "-c", code], timeout_s=60)
    assert result["exit_code"] == expected and result["timed_out"] is False, result


CLOSED_HOST = """
import asyncio, json, os, sys
from pathlib import Path
import reyn_tools_shell.plugin as plugin
from reyn_tools_shell.settings import ShellSettings
from reyn_core import PhaseCallerState, ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, invoke_tool

workspace, report, closed, sandbox = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
python = {"name": "python", "path": sys.executable, "any_args": True}
settings = ShellSettings.model_validate({"programs": [python], "sandbox": sandbox})
builder = RegistryBuilder(settings={"shell": settings})
origin = ToolOrigin(kind="plugin", plugin_id="shell", distribution="reyn-tools-shell")
plugin.reyn_register_tools(register=lambda t: builder.register(t, origin=origin), settings=settings)
ctx = ToolContext(surface="phase", workspace=workspace, phase_state=PhaseCallerState(allowed_ops=("shell",)))
call = {"argv": ["python", "-c", "print('COMMAND-RAN')"], "timeout_s": 60}

async def main():
    for fd in map(int, filter(None, closed.split(","))):
        os.close(fd)  # once running: the loop's own descriptors are taken, the next pipe gets these
    try:
        answer = {"result": await invoke_tool(builder.freeze(), "shell", call, ctx)}
    except Exception as exc:
        answer = {"error": f"{type(exc).__name__}: {exc}"}
    os.write(report, json.dumps(answer, default=str).encode())

asyncio.run(main())
"""


@pytest.mark.parametrize("closed", ["0,1", "0,1,2", ""])
@pytest.mark.parametrize("sandbox", ["required", "off"])
async def test_a_host_with_standard_descriptors_closed_runs_sandboxed_commands(
    workspace: Path, closed: str, sandbox: str
):
    """A host that closed 0 and 1 (and 2) gets those numbers back for the call's pipe: its ends are
    moved to 3 and up, so the launcher takes its ``--stop-fd`` and the command runs. The host as-is,
    and the same with ``sandbox = "off"``, are the positive controls."""
    import json

    report_r, report_w = os.pipe()
    try:
        host = subprocess.Popen(
            [sys.executable, "-c", CLOSED_HOST, str(workspace), str(report_w), closed, sandbox],
            pass_fds=[report_w], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        os.close(report_w)
        report_w = -1
        _, stderr = host.communicate(timeout=120)
        with os.fdopen(report_r, "rb") as fh:
            report_r = -1
            answer = json.loads(fh.read() or b"{}")
    finally:
        for fd in (report_r, report_w):
            if fd >= 0:
                os.close(fd)
    assert host.returncode == 0, stderr.decode(errors="replace")
    assert "result" in answer, answer
    assert answer["result"]["exit_code"] == 0 and answer["result"]["stdout"] == "COMMAND-RAN\n", answer


async def test_a_timeout_stops_the_sandbox_while_a_fork_of_the_host_holds_the_stop_pipe(
    shell, monkeypatch: pytest.MonkeyPatch
):
    """A process forked from the host mid-call holds a copy of the stop pipe's write end, so the
    host closing its own does not hang the pipe up: the byte it writes first stops the launcher. The
    grace before the group kill is made far longer than the wait allowed here, so the call returns
    only through the launcher. A call with no fork around is the positive control."""
    import reyn_tools_shell.process as process

    monkeypatch.setattr(process, "STOP_GRACE_S", 3600.0)
    results = {}
    for label in ("no fork", "fork holds the pipe"):
        tag = _tag()
        task = asyncio.create_task(shell.run(argv=["python", "-c", GRANDCHILD, tag], timeout_s=4))
        await _until_running(tag)
        child = 0
        if label != "no fork":
            child = os.fork()
            if child == 0:  # the fork: holds every descriptor of the host, the stop pipe's included
                try:
                    time.sleep(60)  # then gone: on the old close-only stop the call ends at last
                finally:
                    os._exit(0)
        try:
            result = await asyncio.wait_for(task, 40)  # a bound on waiting, far below the grace
            left = _naming(tag)
        finally:
            if child:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
        results[label] = (result["timed_out"], result["exit_code"], result["stdout"], left)
    assert results["no fork"] == (True, -9, "started\n", [])
    assert results["fork holds the pipe"] == (True, -9, "started\n", [])


async def test_a_host_with_sigpipe_at_its_default_survives_a_sandboxed_call(workspace: Path):
    """A host that restored SIGPIPE's default (as command-line programs do) runs a sandboxed call
    that ends by itself: the launcher has exited and been waited for, so the host only closes its
    end of the stop pipe — a stop byte to a pipe with no reader would kill it (exit -13). The call's
    own output is the positive control."""
    host = HOST.replace(
        "import asyncio, sys\n",
        "import asyncio, signal, sys\nsignal.signal(signal.SIGPIPE, signal.SIG_DFL)\n",
    )
    done = subprocess.run([sys.executable, "-c", host, str(workspace), "print('hi')", "tag"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert "'exit_code': 0" in done.stdout and "hi" in done.stdout, done.stdout
