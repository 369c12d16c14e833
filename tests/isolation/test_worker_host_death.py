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

import os
from pathlib import Path

from host_death_kit import scenario

import reyn_sandbox

REPO = Path(__file__).resolve().parents[2]

HOST = r"""
import os, sys, time
from reyn_isolation.grants import GrantedPermissions
from reyn_isolation.launch import worker_command
from reyn_isolation.process import WorkerProcess

from host_death_kit import LATE_WRAP

argv, env, _ = worker_command(GrantedPermissions(), [], {})
late = sys.argv[1] == "late"

def start(stop_fd):
    launcher = argv(stop_fd)
    # "late": the launcher starts only once the reaper lets it (its shell stops itself first), which
    # is after the host's death: as a host killed before the launcher armed PR_SET_PDEATHSIG
    return [*LATE_WRAP, *launcher] if late else launcher

process = WorkerProcess(start, env, "host-death")
process.start()
print(process.popen.pid, flush=True)
time.sleep(3600)  # until the reaper kills it
"""


def _scenario(mode: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return scenario(HOST, mode, "reyn_isolation.worker", cwd=REPO, env=env)


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
