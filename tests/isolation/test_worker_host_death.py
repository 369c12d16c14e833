"""A host killed with ``SIGKILL`` leaves no confined process of its workers behind (issue 24).

A worker's sandbox is stopped through the launcher's stop pipe (``reyn_sandbox.StopPipe``), whose
write end only the host holds: its death hangs the pipe up however it dies. Before, the worker relied
on ``PR_SET_PDEATHSIG`` alone, which the launcher can arm only after its own setup: a host that died
before that left a launcher that went on to start the worker, confined code running for nobody.

Each scenario runs under a *reaper* (a child subreaper, so every orphan of the scenario is its child
and is reaped and accounted for) that starts a real host process, which starts a real worker through
``reyn_isolation``; the reaper kills the host with ``SIGKILL``, then reports every process of the
worker's sandbox (looked up by pid in /proc) and how the launcher ended. Real processes, the real
launcher; nothing is timed: each step waits for a state the kernel shows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import reyn_sandbox

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 120

HOST = r"""
import os, sys, time
from reyn_isolation.grants import GrantedPermissions
from reyn_isolation.launch import worker_command
from reyn_isolation.process import WorkerProcess

argv, env, _ = worker_command(GrantedPermissions(), [], {})
late = sys.argv[1] == "late"

def start(stop_fd):
    launcher = argv(stop_fd)
    # "late": the launcher starts only once the reaper lets it (its shell stops itself first), which
    # is after the host's death: as a host killed before the launcher armed PR_SET_PDEATHSIG
    return ["/bin/sh", "-c", 'kill -STOP $$; exec "$@"', "sh", *launcher] if late else launcher

process = WorkerProcess(start, env, "host-death")
process.start()
print(process.popen.pid, flush=True)
time.sleep(3600)  # until the reaper kills it
"""

REAPER = r"""
import ctypes, json, os, signal, subprocess, sys

PR_SET_CHILD_SUBREAPER = 36
assert ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
mode = sys.argv[1]
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
    while not any(b"reyn_isolation.worker" in cmdline(p) for p in tree(launcher) - {launcher}):
        os.sched_yield()  # the worker runs: the launcher armed PR_SET_PDEATHSIG before forking it
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


def _scenario(mode: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", REAPER, mode, HOST],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_a_host_killed_while_its_worker_runs_leaves_no_confined_process() -> None:
    """The host is killed while its worker runs: every process of the sandbox (the launcher, the
    sandbox's PID 1, the worker) is gone once the scenario's orphans are reaped. The positive
    control is the same lookup finding them all alive before the kill."""
    result = _scenario("running")
    running = result["running"]
    assert isinstance(running, list) and len(running) >= 3, result  # launcher, PID 1, the worker
    assert result["left"] == [], result


def test_a_host_killed_before_the_launcher_armed_its_death_signal_starts_no_worker() -> None:
    """The host dies before its launcher has run a line (its shell stopped itself first and is let
    go only after the host's death): the stop pipe has hung up, so the launcher starts nothing
    (125: stopped before the command started). Before, the launcher went on to start the worker for
    a host that was gone. Positive control: the running scenario above, a worker that did start."""
    result = _scenario("late")
    assert result["launcher"] is not None, result
    status = result["launcher"]
    assert isinstance(status, int)
    assert os.waitstatus_to_exitcode(status) == reyn_sandbox.SETUP_FAILED_EXIT, result
    assert result["left"] == [], result
