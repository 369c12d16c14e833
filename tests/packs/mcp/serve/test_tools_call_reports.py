"""``reyn tools call`` on a reporting tool: a progress line on a terminal (a real pseudo-terminal
as stderr), none in a pipe; the tool's log lines at info and above either way; stdout stays the
JSON envelope. (The ``serve_probe`` plugin of this folder supplies the reporting tool.)"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time

from .conftest import REYN, ServeWorld


def test_progress_is_drawn_on_a_terminal(serve_world: ServeWorld) -> None:
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [REYN, "tools", "call", "probe_progress", "steps=3"],
        cwd=serve_world.root,
        env=serve_world.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    out, _ = proc.communicate(timeout=60)
    os.close(leader)
    text = seen.decode(errors="replace")
    assert proc.returncode == 0, text
    assert json.loads(out) == {"status": "ok", "data": {"steps": 3}}
    assert "probe_progress: [" in text and "] 3/3  step 3 of 3" in text
    assert "reyn: probe_progress: info: did step 1" in text
    assert "starting" not in text  # debug is not shown


def test_in_a_pipe_only_the_log_lines_appear(serve_world: ServeWorld) -> None:
    proc = serve_world.reyn("tools", "call", "probe_progress_sync", "steps=2")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"status": "ok", "data": {"steps": 2}}
    assert "[" not in proc.stderr and "\r" not in proc.stderr
    assert proc.stderr.splitlines()[-2:] == [
        "reyn: probe_progress_sync: info: did step 1",
        "reyn: probe_progress_sync: info: did step 2",
    ]
