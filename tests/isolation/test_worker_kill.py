"""``WorkerProcess.kill()`` ends the worker however far its launcher got (issue 24).

The stop pipe is the way a worker is stopped: the launcher reads it and kills its sandbox. A launcher
that never reads it (stuck before its setup reached the pipe) is sent ``SIGKILL`` ``KILL_AFTER_S``
after the stop; the positive control is a real launcher, which ends its sandbox itself through the
pipe and is never sent ``SIGKILL``. Real processes; nothing is timed beyond a bound on the wait.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from reyn_isolation import process as process_module
from reyn_isolation.grants import GrantedPermissions
from reyn_isolation.launch import worker_command
from reyn_isolation.process import WorkerProcess

BOUND = 60.0


def test_a_launcher_that_never_reads_the_stop_pipe_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_module, "KILL_AFTER_S", 0.5)
    # a stand-in for a stuck launcher: holds the stop pipe's read end and never reads it
    stuck = WorkerProcess(lambda _fd: ["/bin/sleep", "600"], {}, "stuck")
    stuck.start()
    stuck.kill()
    assert stuck.exited.wait(BOUND), "the stuck launcher outlived kill()"
    assert stuck.returncode == -signal.SIGKILL


def test_a_real_launcher_ends_its_sandbox_through_the_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_module, "KILL_AFTER_S", BOUND)
    argv, env, _ = worker_command(GrantedPermissions(), [], {})
    worker = WorkerProcess(argv, env, "control")
    worker.start()
    worker.kill()
    assert worker.exited.wait(BOUND), "the launcher did not stop through its pipe"
    assert worker.returncode is not None and worker.returncode != -signal.SIGKILL


# A host with SIGPIPE at its default kills a worker that has already exited (a stand-in launcher
# that exits at once, its end of the stop pipe closed with it).
DEFAULT_SIGPIPE_HOST = """
import signal
from reyn_isolation.process import WorkerProcess
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
worker = WorkerProcess(lambda _fd: ["/bin/true"], {}, "gone")
worker.start()
assert worker.exited.wait(60)
worker.kill()
print("host-alive", worker.returncode)
"""


def test_killing_an_exited_worker_never_kills_the_host_by_sigpipe() -> None:
    """Before, ``kill()`` wrote the stop byte to a pipe whose only reader had exited: the host died
    of SIGPIPE (-13) where it is at its default. Now the pipe of a reaped launcher is only closed
    (``StopPipe.close``). The host prints after ``kill()`` and exits 0; the worker ran (status 0)."""
    host = subprocess.run([sys.executable, "-c", DEFAULT_SIGPIPE_HOST], capture_output=True, text=True,
                          timeout=BOUND)  # fmt: skip
    assert (host.returncode, host.stdout) == (0, "host-alive 0\n"), host.stderr
