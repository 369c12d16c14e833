"""No audit line is lost for a call that returned (issue 27): a real subprocess dispatches calls
concurrently through an audited registry and reports each call on stdout the moment it returns to
its caller; it is SIGKILL-ed after a number of reports picked by a seeded generator (so the points
are arbitrary but the test is the same every run). Every reported call has its line in the log; every
complete line is well-formed JSON. Whatever the timing, the property must hold, so the outcome does
not depend on it.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reyn_core.dispatch import argument_hash

KEY = b"k" * 32
CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from reyn_core import ToolContext, tool
    from reyn_core.host import JsonlAuditLog, RegistryBuilder, dispatch_tool

    @tool()
    async def echo(n: int) -> int:
        "Return n."
        await asyncio.sleep(0)
        return n

    log = JsonlAuditLog(sys.argv[1], hash_key=b"k" * 32)
    builder = RegistryBuilder(hooks=log.hooks())
    builder.register(echo)
    registry = builder.freeze()
    ctx = ToolContext(surface="router", agent="kill")
    out = sys.stdout

    async def one(n):
        envelope = await dispatch_tool(registry, "echo", {"n": n}, ctx)
        assert envelope["status"] == "ok", envelope
        out.write(f"{n}\\n")  # the call has returned to its caller
        out.flush()

    async def main():
        for start in range(0, 200_000, 250):  # until killed (bounded all the same)
            await asyncio.gather(*(one(n) for n in range(start, start + 250)))

    asyncio.run(main())
    """
)


def _run_until_killed(log: Path, reports: int) -> list[int]:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    returned: list[int] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            returned.append(int(line))
            if len(returned) >= reports:
                proc.send_signal(signal.SIGKILL)
                break
        # what the child reported before it died is still in the pipe: those calls returned too
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    returned.extend(int(x) for x in rest.split())
    assert proc.returncode == -signal.SIGKILL, err
    return returned


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_call_that_returned_has_its_line_after_a_sigkill(tmp_path: Path, seed: int) -> None:
    reports = random.Random(seed).randrange(1, 3000)
    log = tmp_path / "audit.jsonl"
    returned = _run_until_killed(log, reports)
    assert len(returned) >= reports

    lines = log.read_bytes().split(b"\n")
    complete, tail = lines[:-1], lines[-1]  # a write cut by the kill can leave one partial last line
    records = [json.loads(line) for line in complete]
    assert not tail or len(tail) < max(len(x) for x in complete) + 1
    logged = {r["args_sha256"] for r in records}
    missing = [n for n in returned if argument_hash({"n": n}, key=KEY) not in logged]
    assert not missing, f"{len(missing)} of {len(returned)} returned calls have no line: {missing[:10]}"
    assert all(r["status"] == "ok" and r["tool"] == "echo" for r in records)
