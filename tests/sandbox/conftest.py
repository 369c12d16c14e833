"""Run the real launcher, as root and as an unprivileged user, against real files, sockets and processes.

`sandbox` is parametrized by who starts the launcher: `root` (this test process's uid; the launcher
then runs the command as uid 65534 itself) and `nobody` (the launcher started through
`setpriv --reuid=65534`, taking the unprivileged user-namespace path). The unprivileged run needs a
Python interpreter and this checkout readable by uid 65534; it skips, saying why, when not.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

import reyn_sandbox

NOBODY = 65534
PACKAGE_PARENT = str(Path(reyn_sandbox.__file__).resolve().parent.parent)
TIMEOUT = 60
SECRET = "API_KEY=operator-secret"
# The standard streams of a launch that reads and shows nothing: the launcher refuses a file or a
# terminal there (pytest's own stdout and stderr are capture files, or the terminal with -s).
QUIET = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}

# A command (given a pipe's write end as its first argument) that leaves a grandchild in a new session
# that holds the pipe's write end, writes `grandchild-alive` and would sleep for an hour.
DOUBLE_FORK = (
    "import os, sys, time\n"
    "fd = int(sys.argv[1])\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        os.write(fd, b'grandchild-alive\\n'); time.sleep(3600)\n"
    "    os._exit(0)\n"
    "os.wait(); time.sleep(0.5)\n"
)


def _nobody_python() -> str | None:
    """An interpreter uid 65534 can run that can import this checkout's reyn_sandbox."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    for candidate in ("/usr/bin/python3", sys.executable):
        probe = subprocess.run(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", candidate, "-I", "-c",
             f"import sys; sys.path.insert(0, {PACKAGE_PARENT!r}); import reyn_sandbox"],
            capture_output=True,
            timeout=TIMEOUT,
        )  # fmt: skip
        if probe.returncode == 0:
            return candidate
    return None


@dataclass(frozen=True)
class Sandbox:
    """Starts commands confined, as one kind of caller; `python` runs inside the sandbox too."""

    runner: str
    python: str

    def argv(
        self,
        command: Sequence[str],
        grants: reyn_sandbox.Grants,
        pass_fds: Sequence[int] = (),
        stop_fd: int | None = None,
        verdict_fd: int | None = None,
    ) -> list[str]:
        """The launcher's argv for this caller (handing the command ``pass_fds``; watching ``stop_fd``;
        writing its verdicts to ``verdict_fd`` too)."""
        launcher = reyn_sandbox.launcher_argv(
            command, grants, pass_fds=pass_fds, stop_fd=stop_fd, verdict_fd=verdict_fd
        )
        if self.runner == "root":
            return launcher
        # The same launcher argv, started by uid 65534 with an interpreter that user can run.
        return [
            "setpriv",
            f"--reuid={NOBODY}",
            f"--regid={NOBODY}",
            "--clear-groups",
            self.python,
            *launcher[1:],
        ]

    def run(
        self,
        command: Sequence[str],
        grants: reyn_sandbox.Grants,
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        pass_fds: Sequence[int] = (),
        stop_fd: int | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run `command` confined and wait (bounded: every test's limit is far below TIMEOUT)."""
        return subprocess.run(
            self.argv(command, grants, pass_fds, stop_fd),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env={"PATH": "/usr/bin:/bin", **(env or {})},
            cwd=cwd or "/",
            pass_fds=(*pass_fds, *([] if stop_fd is None else [stop_fd])),
        )

    def python_code(
        self, code: str, grants: reyn_sandbox.Grants, *args: str, **kwargs: object
    ) -> subprocess.CompletedProcess[str]:
        """Run Python `code` confined (with this runner's interpreter), ``args`` as its ``sys.argv[1:]``."""
        return self.run([self.python, "-c", code, *args], grants, **kwargs)  # type: ignore[arg-type]

    def python_ok(
        self, code: str, grants: reyn_sandbox.Grants, *args: str, **kwargs: object
    ) -> subprocess.CompletedProcess[str]:
        """``python_code`` that must exit 0 (the positive side of a test: its stderr shows otherwise)."""
        result = self.python_code(code, grants, *args, **kwargs)
        assert result.returncode == 0, result.stderr
        return result


@pytest.fixture(params=["root", "nobody"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    """The launcher started by root, then by an unprivileged user."""
    if not reyn_sandbox.status().available:
        pytest.skip(f"no kernel sandbox here: {reyn_sandbox.status().reason}")
    if request.param == "root":
        if os.geteuid() != 0:
            pytest.skip("the root run needs the tests to run as root")
        return Sandbox("root", sys.executable)
    python = _nobody_python()
    if python is None:
        pytest.skip(
            "no interpreter (or checkout) that uid 65534 can use via setpriv; the root run covers root"
        )
    return Sandbox("nobody", python)


@pytest.fixture
def root_sandbox() -> Sandbox:
    """The launcher started by root only: for what only the root path does (uid change, idmapping)."""
    if not reyn_sandbox.status().available:
        pytest.skip(f"no kernel sandbox here: {reyn_sandbox.status().reason}")
    if os.geteuid() != 0:
        pytest.skip("the root path needs the tests to run as root")
    return Sandbox("root", sys.executable)


@pytest.fixture
def area() -> Iterator[Path]:
    """A directory both runners can reach: `area/read`, `area/write` (world-writable), `area/outside`."""
    base = Path(tempfile.mkdtemp(prefix="reyn-sandbox-test-", dir="/tmp"))
    try:
        base.chmod(0o755)
        for name, mode in (("read", 0o755), ("write", 0o777), ("outside", 0o755)):
            (base / name).mkdir()
            (base / name).chmod(mode)
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def hidden(area: Path) -> tuple[Path, reyn_sandbox.Grants]:
    """``write/sec/k`` holding ``SECRET``, readable and writable by anyone (only the grants keep a
    command from it), and the grants of a command working in ``write`` that hide ``sec``."""
    ws = area / "write"
    (ws / "sec").mkdir()
    (ws / "sec" / "k").write_text(SECRET)
    (ws / "sec" / "k").chmod(0o666)
    keys = SimpleNamespace(
        read_roots=(), write_roots=(str(ws),), network=False, hide=("sec",), read_only=(), sandbox="required"
    )
    return ws / "sec" / "k", reyn_sandbox.resolve_grants(str(ws), keys, {})
