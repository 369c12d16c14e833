"""A host killed with ``SIGKILL`` leaves no confined upstream stdio server behind (issue 24).

A confined server is started on the launcher's stop pipe (``reyn_sandbox.StopPipe``, ``--stop-fd``),
whose write end only the host holds, so the host's death ends the sandbox however it dies. Before,
the SDK's ``stdio_client`` closed every descriptor but 0-2 at the spawn, so the server relied on the
launcher's ``PR_SET_PDEATHSIG`` alone: a host that died before the launcher armed it left the server
running for nobody — here one that ignores the end of its stdin (``linger``).

Each scenario is a real host process calling a real server through the dispatcher, under the
reaper of ``host_death_kit`` (see there); nothing is timed.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from host_death_kit import scenario

import reyn_sandbox

MISBEHAVING = Path(__file__).parent / "servers" / "misbehaving_server.py"
MARKER = "linger-issue24-host-death"

HOST = r"""
import asyncio, json, os, sys, threading, time
from pathlib import Path
from reyn_core import ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, dispatch_tool
from reyn_tools_mcp import plugin, stdio_transport
from reyn_tools_mcp.settings import McpSettings

from host_death_kit import LATE_WRAP

if sys.argv[1] == "late":  # the launcher's shell stops itself until the host is dead
    confined = stdio_transport.confined_command
    stdio_transport.confined_command = lambda *a, **k: [*LATE_WRAP, *confined(*a, **k)]
settings = McpSettings.model_validate(json.loads(os.environ["HOST_SETTINGS"]))
reg = RegistryBuilder(settings={"mcp": settings})
plugin.reyn_register_tools(
    lambda t: reg.register(t, origin=ToolOrigin(kind="plugin", plugin_id="mcp")), settings, Path.cwd()
)
reg = reg.freeze()
call = dispatch_tool(reg, "call_mcp_tool", {"server": "linger", "tool": "pid"}, ToolContext(surface="router"))
threading.Thread(target=asyncio.run, args=(call,), daemon=True).start()

def children():
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as handle:
                text = handle.read()
        except (OSError, ValueError):
            continue
        if int(text[text.rindex(")") + 2 :].split()[1]) == os.getpid():
            found.append(int(entry))
    return found

while not (launcher := children()):
    time.sleep(0.01)
print(launcher[0], flush=True)
time.sleep(3600)  # until the reaper kills it
"""


@pytest.fixture(autouse=True)
def _needs_sandbox() -> None:
    from reyn_tools_mcp.sandbox import unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"the kernel sandbox is unavailable here: {reason}")


def _scenario(mode: str, tmp_path: Path) -> dict[str, object]:
    here = tmp_path / "srv"
    here.mkdir()
    shutil.copy(MISBEHAVING, here / "misbehaving_server.py")
    server = {
        "command": sys.executable,
        "args": ["misbehaving_server.py", "linger", MARKER],
        "cwd": str(here),
    }
    settings = {"servers": {"linger": server}, "connect_timeout_s": 60, "call_timeout_s": 60}
    env = {**os.environ, "HOST_SETTINGS": json.dumps(settings)}
    return scenario(HOST, mode, MARKER, cwd=here, env=env)


def test_a_host_killed_while_its_server_runs_leaves_no_confined_process(tmp_path: Path) -> None:
    """The host is killed while the server runs: every process of the sandbox is gone. The positive
    control is the same lookup finding them alive before the kill."""
    result = _scenario("running", tmp_path)
    running = result["running"]
    assert isinstance(running, list) and len(running) >= 3, result  # launcher, PID 1, the server
    assert result["left"] == [], result


def test_a_host_killed_before_the_launcher_armed_its_death_signal_starts_no_server(tmp_path: Path) -> None:
    """The host dies before its launcher has run a line: the stop pipe has hung up, so the launcher
    starts nothing (125). Before, it started the server for a host that was gone, which ran until
    it chose to exit (it ignores the end of stdin). The control: the running scenario above."""
    result = _scenario("late", tmp_path)
    status = result["launcher"]
    assert isinstance(status, int), result
    assert os.waitstatus_to_exitcode(status) == reyn_sandbox.SETUP_FAILED_EXIT, result
    assert result["left"] == [], result
