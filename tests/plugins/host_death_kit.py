"""A host killed with ``SIGKILL`` while it runs a confined command, or before that command's launcher
has run a line: what is left of the sandbox afterwards (issue 24). Shared by the isolation and mcp
tests, whose hosts start their launchers each their own way.

``scenario(host, mode, marker)`` runs ``host`` (a Python script: ``python -c HOST MODE``) under a
*reaper* (a child subreaper, so every orphan of the scenario is its child and is reaped and
accounted for). The host starts a launcher and prints its pid on stdout; in mode ``late`` it wraps
the launcher in a shell that stops itself first (``LATE_WRAP``), and the reaper lets it go only after
the host's death — as a host killed before the launcher armed ``PR_SET_PDEATHSIG``. In any other
mode the reaper waits until a process of the launcher's tree has ``marker`` in a command line that
is not the launcher's (its forks keep the launcher's until they exec). Then it kills the host with
``SIGKILL``, reaps every orphan, and reports every process of the sandbox seen before the kill
(``running``), those still there (``left``) and the launcher's wait status (``launcher``). Nothing
is timed: each step waits for a state the kernel shows; the reaper bounds itself with an alarm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

TIMEOUT = 120
LATE_WRAP = ["/bin/sh", "-c", 'kill -STOP $$; exec "$@"', "sh"]
"""Put before a launcher's argv: its shell stops itself until the reaper lets it go (mode ``late``)."""

REAPER = r"""
import ctypes, json, os, signal, subprocess, sys

PR_SET_CHILD_SUBREAPER = 36
assert ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
mode, marker = sys.argv[1], sys.argv[3].encode()
signal.alarm(90)  # a bound: a leaked process would otherwise hold this scenario forever

def stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            text = handle.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])  # state, parent

def tree(root):
    found, grew = {root}, True
    while grew:
        grew = False
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) not in found:
                seen = stat(int(entry))
                if seen is not None and seen[1] in found:
                    found.add(int(entry))
                    grew = True
    return found

def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""

host = subprocess.Popen([sys.executable, "-c", sys.argv[2], mode], stdout=subprocess.PIPE)
launcher = int(host.stdout.readline())
if mode == "late":
    while stat(launcher)[0] != "T":  # the launcher's shell has stopped itself
        os.sched_yield()
else:
    # The command runs: the launcher armed PR_SET_PDEATHSIG before forking it. The launcher's own
    # forks carry its command line (with the marker in the command it will run) until they exec, so
    # only a process whose command line is no longer the launcher's has started the command.
    while not any(
        marker in (line := cmdline(p)) and line != cmdline(launcher) for p in tree(launcher) - {launcher}
    ):
        os.sched_yield()
running = sorted(tree(launcher))
host.kill()
host.wait()
if mode == "late":
    os.kill(launcher, signal.SIGCONT)
ended = {}
while True:  # every orphan of the scenario is this process's child now: reap them all
    try:
        pid, status = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    ended[pid] = status
left = [pid for pid in running if stat(pid) is not None]
print(json.dumps({"running": running, "left": left, "launcher": ended.get(launcher)}))
"""


def scenario(host: str, mode: str, marker: str, *, cwd: Path, env: Mapping[str, str]) -> dict[str, object]:
    """Run ``host`` in ``mode`` under the reaper (see the module docstring) and return its report;
    ``env``'s ``PYTHONPATH`` gets this kit's folder (the host may import ``LATE_WRAP``)."""
    paths = [str(Path(__file__).parent), *filter(None, [env.get("PYTHONPATH")])]
    done = subprocess.run(
        [sys.executable, "-c", REAPER, mode, host, marker],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=str(cwd),
        env={**env, "PYTHONPATH": os.pathsep.join(paths)},
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result
