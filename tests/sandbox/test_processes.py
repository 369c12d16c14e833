"""Processes: limits end the command with a report line, nothing outlives the sandbox, no signal leaves it."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

from reyn_sandbox import Grants

from .conftest import DOUBLE_FORK, TIMEOUT, Sandbox

FORK_BOMB = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
MEMORY_HOG = "hog = []\nwhile True:\n    hog.append(bytearray(1024 * 1024))\n"
BUSY_LOOP = "while True:\n    pass\n"


def test_a_fork_bomb_ends_at_max_processes(sandbox: Sandbox) -> None:
    result = sandbox.python_code(FORK_BOMB, Grants(max_processes=16))

    assert result.returncode == 128 + signal.SIGKILL
    assert result.stderr.splitlines()[-1] == "reyn-sandbox: limit exceeded: max_processes (16)"


def test_a_few_processes_under_max_processes_run(sandbox: Sandbox) -> None:
    code = "import subprocess, sys\nfor _ in range(4):\n    subprocess.run([sys.executable, '-c', 'pass'])\n"

    result = sandbox.python_ok(code, Grants(max_processes=16))

    assert "limit exceeded" not in result.stderr


THREADS = (
    "import threading\n"
    "def threads(pid):\n"
    "    with open(f'/proc/{pid}/status') as status:\n"
    "        return next(line.split()[1] for line in status if line.startswith('Threads:'))\n"
    "alone = threads('self')\n"
    "done = threading.Event()\n"
    "threading.Thread(target=done.wait).start()\n"
    "print(threads(1), alone, threads('self'))\n"
    "done.set()\n"
)


def test_the_sandboxs_pid_1_is_one_task(sandbox: Sandbox) -> None:
    """PID 1 samples the sandbox from a timer's signal, not from a thread: one task of the sandbox's
    uid besides the command's (``SUPERVISOR_TASKS``, which RLIMIT_NPROC adds to max_processes)."""
    result = sandbox.python_ok(THREADS, Grants())

    # Positive control: the same reading sees the command's own second thread.
    assert result.stdout.split() == ["1", "1", "2"]


def test_a_memory_hog_ends_at_memory_bytes(sandbox: Sandbox) -> None:
    limit = 256 * 1024 * 1024

    result = sandbox.python_code(MEMORY_HOG, Grants(memory_bytes=limit))

    assert result.returncode == 1
    assert "MemoryError" in result.stderr
    assert result.stderr.splitlines()[-1] == f"reyn-sandbox: limit exceeded: memory_bytes ({limit})"


def test_memory_under_memory_bytes_is_usable(sandbox: Sandbox) -> None:
    code = "data = bytearray(64 * 1024 * 1024); print(len(data))"

    result = sandbox.python_ok(code, Grants(memory_bytes=256 * 1024 * 1024))

    assert "limit exceeded" not in result.stderr


def test_a_busy_loop_ends_at_cpu_seconds(sandbox: Sandbox) -> None:
    result = sandbox.python_code(BUSY_LOOP, Grants(cpu_seconds=1))

    assert result.returncode == 128 + signal.SIGXCPU
    assert result.stderr.splitlines()[-1] == "reyn-sandbox: limit exceeded: cpu_seconds (1)"


def test_a_file_beyond_file_size_bytes_ends_the_command(sandbox: Sandbox, area: Path) -> None:
    target = area / "write" / "big.bin"
    # dd, not Python: CPython ignores SIGXFSZ and sees EFBIG ("File too large") instead.
    command = ["dd", "if=/dev/zero", f"of={target}", "bs=1M", "count=2"]

    result = sandbox.run(command, Grants(write_roots=(str(area / "write"),), file_size_bytes=1024 * 1024))

    assert result.returncode == 128 + signal.SIGXFSZ
    assert result.stderr.splitlines()[-1] == f"reyn-sandbox: limit exceeded: file_size_bytes ({1024 * 1024})"
    assert target.stat().st_size == 1024 * 1024


def test_a_file_under_file_size_bytes_is_written(sandbox: Sandbox, area: Path) -> None:
    target = area / "write" / "small.bin"
    command = ["dd", "if=/dev/zero", f"of={target}", "bs=1K", "count=16"]

    result = sandbox.run(command, Grants(write_roots=(str(area / "write"),), file_size_bytes=1024 * 1024))

    assert result.returncode == 0, result.stderr
    assert target.stat().st_size == 16 * 1024


def test_the_command_starts_with_default_signal_dispositions(sandbox: Sandbox) -> None:
    result = sandbox.run(["grep", "SigIgn", "/proc/self/status"], Grants())

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["SigIgn:", "0000000000000000"]


IGNORE_THEN_EXEC = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
number = {"x86_64": 13, "aarch64": 134}[os.uname().machine]
ignored = (ctypes.c_ulong * 4)(1, 0, 0, 0)  # SIG_IGN: a parent that left signals ignored
for sig in (10, 32, 33):
    assert libc.syscall(ctypes.c_long(number), sig, ctypes.byref(ignored), None, ctypes.c_ulong(8)) == 0
os.execvp(sys.argv[1], sys.argv[1:])
"""


def test_signals_a_parent_left_ignored_are_default_again_inside(sandbox: Sandbox) -> None:
    # Python's signal module cannot reset 32 and 33 (glibc reserves them); the launcher must.
    argv = sandbox.argv(["grep", "SigIgn", "/proc/self/status"], Grants())
    result = subprocess.run(
        [sys.executable, "-c", IGNORE_THEN_EXEC, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
    )
    outside = subprocess.run(
        [sys.executable, "-c", IGNORE_THEN_EXEC, "/bin/grep", "SigIgn", "/proc/self/status"],
        capture_output=True,
        text=True,
        timeout=60,
    )

    ignored_outside = int(outside.stdout.split()[1], 16)
    for sig in (10, 32, 33):  # control: without the launcher they stay ignored through execve
        assert ignored_outside & (1 << (sig - 1)), outside.stdout
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["SigIgn:", "0000000000000000"]


def test_a_double_forked_child_dies_with_the_sandbox(sandbox: Sandbox) -> None:
    read_end, write_end = os.pipe()
    try:
        result = sandbox.python_code(DOUBLE_FORK, Grants(), str(write_end), pass_fds=[write_end])
        os.close(write_end)
        # EOF on the pipe means every holder of the write end — the grandchild too — is gone.
        ready, _, _ = select.select([read_end], [], [], TIMEOUT)
        output = os.read(read_end, 1000) if ready else b"(still open)"
        rest = os.read(read_end, 1000) if ready and output else b""
    finally:
        os.close(read_end)

    assert result.returncode == 0, result.stderr
    assert output == b"grandchild-alive\n"  # positive control: it ran and was alive inside
    assert rest == b""


def test_killing_the_launcher_kills_the_whole_sandbox(sandbox: Sandbox) -> None:
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            sandbox.argv([sandbox.python, "-c", DOUBLE_FORK.replace("time.sleep(0.5)", "time.sleep(3600)"),
                          str(write_end)], Grants(), [write_end]),
            pass_fds=[write_end],
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
        )  # fmt: skip
        os.close(write_end)
        ready, _, _ = select.select([read_end], [], [], TIMEOUT)
        alive = os.read(read_end, 1000) if ready else b""
        process.kill()
        process.wait(TIMEOUT)
        ready, _, _ = select.select([read_end], [], [], TIMEOUT)
        after = os.read(read_end, 1000) if ready else b"(still open)"
    finally:
        os.close(read_end)

    assert alive == b"grandchild-alive\n"
    assert after == b""


def test_signals_to_host_processes_fail(sandbox: Sandbox) -> None:
    code = (
        "import os, signal, sys\n"
        "os.kill(os.getpid(), 0); print('self ok')\n"
        "try:\n"
        "    os.kill(int(sys.argv[1]), signal.SIGTERM); print('host signalled')\n"
        "except OSError as exc:\n"
        "    print('host refused', type(exc).__name__)\n"
    )

    result = sandbox.python_ok(code, Grants(), str(os.getpid()))

    assert "self ok" in result.stdout
    assert "host refused" in result.stdout


def test_other_processes_proc_is_unreachable_and_own_proc_works(sandbox: Sandbox) -> None:
    code = (
        "import os, sys\n"
        "print('own', b'REYN_MARKER=own-env' in open('/proc/self/environ', 'rb').read())\n"
        "try:\n"
        "    print('host', open(f'/proc/{sys.argv[1]}/environ', 'rb').read()[:20])\n"
        "except OSError as exc:\n"
        "    print('host refused', type(exc).__name__)\n"
        "print('pids', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
    )

    result = sandbox.python_ok(code, Grants(), str(os.getpid()), env={"REYN_MARKER": "own-env"})

    assert "own True" in result.stdout
    assert "host refused" in result.stdout
    pids = eval(result.stdout.split("pids ", 1)[1])
    assert max(pids) < 10  # only the sandbox's own processes exist in its /proc


def test_a_python_child_inherits_every_restriction(sandbox: Sandbox, area: Path) -> None:
    secret = area / "outside" / "secret.txt"
    secret.write_text("outside-secret")
    secret.chmod(0o644)
    child = (
        "import os, socket\n"
        "status = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
        "print('uid', os.getuid(), 'nnp', status['NoNewPrivs'].strip(), 'seccomp', status['Seccomp'].strip(),"
        " 'caps', status['CapEff'].strip(), status['CapBnd'].strip())\n"
        f"try:\n    open({str(secret)!r}).read(); print('secret read')\n"
        "except OSError:\n    print('secret refused')\n"
        "try:\n    socket.socket(socket.AF_INET); print('inet created')\n"
        "except OSError:\n    print('inet refused')\n"
    )
    code = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {child!r}], check=True)\n"

    result = sandbox.python_ok(code, Grants())

    assert "nnp 1 seccomp 2 caps 0000000000000000 0000000000000000" in result.stdout
    assert "uid 0 " not in result.stdout
    assert "secret refused" in result.stdout and "inet refused" in result.stdout


def test_the_command_runs_in_a_session_of_its_own(sandbox: Sandbox) -> None:
    # The session leader is the sandbox's PID 1: no terminal of the caller's session is controlling.
    code = "import os; print(os.getsid(0), open('/proc/self/stat').read().split()[6])"

    result = sandbox.python_ok(code, Grants())

    session, tty_nr = result.stdout.split()
    assert (session, tty_nr) == ("1", "0")


ALARMS_TO_PID_1 = """
import os, signal, time
sleepers = []
for _ in range(100):  # a sample reads /proc/N/status of each: a slow sample
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    sleepers.append(pid)
end = time.monotonic() + 3
while time.monotonic() < end:
    os.kill(1, signal.SIGALRM)  # PID 1 samples on its timer's SIGALRM; this one is not the timer's
    time.sleep(0.001)
for pid in sleepers:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
print("done")
"""


def test_alarms_the_command_sends_pid_1_neither_nest_samples_nor_stop_them(sandbox: Sandbox) -> None:
    """The command shares PID 1's namespace and may send it SIGALRM: such a signal is dropped, so
    samples neither nest (a storm of them once overflowed PID 1's stack: exit 1, a traceback) nor
    stop. Positive control: under the same storm a fork bomb still ends at ``max_processes``."""
    result = sandbox.python_code(ALARMS_TO_PID_1, Grants(max_processes=400))

    assert (result.returncode, result.stdout, result.stderr) == (0, "done\n", "")

    storm = "import os, signal\nif os.fork() == 0:\n    while True:\n        os.kill(1, signal.SIGALRM)\n"
    bomb = sandbox.python_code(storm + FORK_BOMB, Grants(max_processes=16))
    assert bomb.stderr.splitlines()[-1] == "reyn-sandbox: limit exceeded: max_processes (16)"
