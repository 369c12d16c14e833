"""One running worker process: started from a thread of its own, its stderr kept as a bounded tail.

The worker's sandbox is stopped through the launcher's stop pipe (``reyn_sandbox.StopPipe``, the
launcher's ``--stop-fd``), the one way every caller of the launcher stops it: ``kill`` writes a byte
and closes the host's end, and the host's death closes it however it dies — before the launcher
could arm ``PR_SET_PDEATHSIG`` too — so no confined process outlives the host. The launcher also
dies with the *thread* that started it (``PR_SET_PDEATHSIG``), so each worker is started by a daemon
thread that then lives exactly as long as the worker: it reads the worker's stderr (the last
``STDERR_TAIL`` bytes are kept for messages; the rest is dropped) and reaps it.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence

from reyn_sandbox import StopPipe

STDERR_TAIL = 4096
KILL_AFTER_S = StopPipe.KILL_AFTER_S
"""How long `kill()` lets the launcher end the sandbox itself before it is sent SIGKILL."""


class WorkerProcess:
    """A started worker: ``stdin`` / ``stdout`` are raw file descriptors of its protocol pipes."""

    def __init__(self, argv: Callable[[int], Sequence[str]], env: Mapping[str, str], name: str) -> None:
        self._argv = argv  # the launcher's argv given the read end of the stop pipe
        self._env = dict(env)
        self._name = name
        self._ready = threading.Event()
        self._error: OSError | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        self._stop: StopPipe | None = None
        self._tail = bytearray()
        self._lock = threading.Lock()
        self.exited = threading.Event()

    def start(self, timeout: float = 30.0) -> None:
        """Start the process (raises ``OSError`` when it cannot be started)."""
        threading.Thread(target=self._run, name=f"reyn-isolated-{self._name}", daemon=True).start()
        if not self._ready.wait(timeout):
            raise OSError(f"starting the worker took more than {timeout:g} s")
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        stop: StopPipe | None = None
        try:
            stop = StopPipe()
            assert stop.launcher_fd is not None
            popen = subprocess.Popen(
                self._argv(stop.launcher_fd),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env,
                cwd="/",
                close_fds=True,
                pass_fds=(stop.launcher_fd,),
            )
        except (OSError, ValueError) as exc:  # ValueError: GrantsError, a root changed since the load
            if stop is not None:
                stop.stop()
            self._error = exc if isinstance(exc, OSError) else OSError(str(exc))
            self._ready.set()
            return
        stop.launched()
        self._stop = stop
        self._popen = popen
        self._ready.set()
        assert popen.stderr is not None
        fd = popen.stderr.fileno()
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            with self._lock:
                self._tail += data
                if len(self._tail) > STDERR_TAIL:
                    del self._tail[: len(self._tail) - STDERR_TAIL]
        popen.wait()
        self.exited.set()

    @property
    def popen(self) -> subprocess.Popen[bytes]:
        assert self._popen is not None
        return self._popen

    @property
    def stdin(self) -> int:
        assert self.popen.stdin is not None
        return self.popen.stdin.fileno()

    @property
    def stdout(self) -> int:
        assert self.popen.stdout is not None
        return self.popen.stdout.fileno()

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def stderr_tail(self, lines: int = 5) -> str:
        """The worker's last stderr lines (at most ``STDERR_TAIL`` bytes), for a message."""
        with self._lock:
            text = self._tail.decode("utf-8", "replace")
        return " | ".join(line for line in text.strip().splitlines()[-lines:] if line.strip())

    def describe_exit(self) -> str:
        """``exit status 1; stderr: …`` — what is known of why the worker stopped."""
        self.exited.wait(0.5)  # the reaping thread usually finishes within milliseconds of EOF
        code = self.returncode
        status = (
            "it is still running"
            if code is None
            else (f"signal {-code}" if code < 0 else f"exit status {code}")
        )
        tail = self.stderr_tail()
        return status + (f"; last stderr: {tail}" if tail else "")

    def kill(self) -> None:
        """Stop the worker — through the stop pipe: the launcher kills the sandbox, every process in
        it, and exits once the kernel has reaped them all — and close the pipes. A launcher that has
        not exited ``KILL_AFTER_S`` later (stuck before it reads the pipe) is killed with ``SIGKILL``;
        its death signal then ends what it started."""
        if self._popen is None:
            return
        running = self._popen.poll() is None
        if self._stop is not None:
            if running:
                self._stop.stop()
            else:  # waited for: nothing to stop
                self._stop.close()
        if running:
            threading.Thread(target=self._kill_late, name=f"reyn-kill-{self._name}", daemon=True).start()
        for stream in (self._popen.stdin, self._popen.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def _kill_late(self) -> None:
        if not self.exited.wait(KILL_AFTER_S):
            self.popen.kill()


__all__ = ["WorkerProcess"]
