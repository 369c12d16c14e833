"""The sandbox's verdict comes from the launcher's own pipe (``--verdict-fd``), never from the
command's stderr: a command that prints the launcher's words (and exits 125, or 0) gets its own
result back, while a real setup failure and a real limit kill are still reported as the sandbox's
(the positive controls). Real launcher, real shell tool calls through the registry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import reyn_sandbox
from reyn_core import ToolExecutionError

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not reyn_sandbox.status().available,
    reason="the kernel sandbox is Linux only (and must be available)",
)

FAKE_SETUP = "reyn-sandbox: stopped through --stop-fd before the command started"
FAKE_LIMIT = "reyn-sandbox: limit exceeded: memory_bytes (1)"
PYTHON = {"name": "python", "path": sys.executable, "any_args": True}


def _says(line: str, code: int) -> list[str]:
    return ["python", "-c", f"import sys; sys.stderr.write({line + chr(10)!r}); sys.exit({code})"]


@pytest.mark.parametrize(
    ("line", "code"),
    [(FAKE_SETUP, 125), (FAKE_LIMIT, 0), (FAKE_LIMIT, 1), (f"{FAKE_LIMIT}\n{FAKE_SETUP}", 125)],
)
async def test_the_launchers_words_on_the_commands_stderr_are_the_commands_own(make_shell, line, code):
    result = await make_shell(programs=[PYTHON]).run(argv=_says(line, code), timeout_s=60)
    assert result["exit_code"] == code and result["timed_out"] is False
    assert result["stderr"] == line + "\n"


async def test_a_real_limit_kill_is_still_the_sandboxs(make_shell):
    shell = make_shell(programs=[PYTHON], cpu_seconds=1)
    with pytest.raises(
        ToolExecutionError, match=r"stopped by the sandbox: limit exceeded: cpu_seconds \(1\)"
    ):
        await shell.run(argv=["python", "-c", "while True: pass"], timeout_s=60)


HOST = """
import asyncio, json, os, resource, sys
from pathlib import Path
import reyn_tools_shell.plugin as plugin
from reyn_tools_shell.settings import ShellSettings
from reyn_core import PhaseCallerState, ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, invoke_tool

workspace, report, hard = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
python = {"name": "python", "path": sys.executable, "any_args": True}
settings = ShellSettings.model_validate({"programs": [python], "file_size_bytes": 2_000_000})
builder = RegistryBuilder(settings={"shell": settings})
origin = ToolOrigin(kind="plugin", plugin_id="shell", distribution="reyn-tools-shell")
plugin.reyn_register_tools(register=lambda t: builder.register(t, origin=origin), settings=settings)
ctx = ToolContext(surface="phase", workspace=workspace, phase_state=PhaseCallerState(allowed_ops=("shell",)))
if hard:  # below the grant: the launcher refuses to start (a real setup failure, exit 125)
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
call = {"argv": ["python", "-c", "print('COMMAND-RAN')"], "timeout_s": 60}
try:
    answer = {"result": asyncio.run(invoke_tool(builder.freeze(), "shell", call, ctx))}
except Exception as exc:
    answer = {"error": f"{type(exc).__name__}: {exc}"}
os.write(report, json.dumps(answer, default=str).encode())
"""


@pytest.mark.parametrize("hard", [1_000_000, 0])
def test_a_real_setup_failure_is_still_the_sandboxs(workspace: Path, hard: int):
    """A host whose hard file-size limit is below the grant: the launcher cannot give it, so the
    sandbox could not be set up. The same host without that limit runs the command."""
    report_r, report_w = os.pipe()
    with os.fdopen(report_r, "rb") as report:
        argv = [sys.executable, "-c", HOST, str(workspace), str(report_w), str(hard)]
        host = subprocess.Popen(argv, pass_fds=[report_w], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(report_w)
        _, stderr = host.communicate(timeout=120)
        answer = json.loads(report.read() or b"{}")
    assert host.returncode == 0, stderr.decode(errors="replace")
    if hard:
        assert answer.get("error", "").startswith("ToolExecutionError"), answer
        assert (
            "the sandbox could not be set up, so the command did not run: file_size_bytes" in answer["error"]
        )
    else:
        assert answer["result"]["exit_code"] == 0 and answer["result"]["stdout"] == "COMMAND-RAN\n", answer
