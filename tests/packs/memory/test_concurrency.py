"""Durability and concurrency, shown with real processes writing one real SQLite file."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from reyn_tools_memory import MemoryStore

DEADLINE_S = 120  # a bound so a broken store fails the test instead of hanging CI


def acked(path: Path) -> list[str]:
    """The slugs a worker acknowledged: complete lines only."""
    text = path.read_text() if path.exists() else ""
    return [line for line in text.split("\n")[:-1] if line]


def expected_body(prefix: str, i: int) -> str:
    return f"entry {i} written by {prefix}\n" + "x" * (i % 97)


def shared_rows(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT slug, body FROM entries WHERE layer = 'shared'"))


def test_eight_processes_writing_500_entries_each_lose_nothing(tmp_path, worker):
    db = tmp_path / "memory.db"
    procs = []
    for n in range(8):
        out = open(tmp_path / f"w{n}.out", "wb")
        err = open(tmp_path / f"w{n}.err", "wb")
        procs.append(
            (subprocess.Popen(worker("write", str(db), f"w{n}", "500"), stdout=out, stderr=err), out, err)
        )
    for proc, out, err in procs:
        proc.wait(timeout=DEADLINE_S)
        out.close()
        err.close()
    for n in range(8):
        assert (tmp_path / f"w{n}.err").read_text() == ""
    rows = shared_rows(db)
    for n, (proc, _, _) in enumerate(procs):
        assert proc.returncode == 0
        slugs = acked(tmp_path / f"w{n}.out")
        assert len(slugs) == 500
        for i, slug in enumerate(slugs):
            assert rows[slug] == expected_body(f"w{n}", i)
    assert len(rows) == 8 * 500
    assert MemoryStore(db).integrity_check() == "ok"


def test_writers_killed_at_random_moments_keep_every_acknowledged_write(tmp_path, worker):
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    db = tmp_path / "memory.db"
    outputs: list[tuple[str, Path]] = []
    for round_no in range(3):
        procs = []
        for n in range(3):
            prefix = f"r{round_no}w{n}"
            path = tmp_path / f"{prefix}.out"
            out = open(path, "wb")
            proc = subprocess.Popen(
                worker("write", str(db), prefix, "1000000"), stdout=out, stderr=subprocess.DEVNULL
            )
            procs.append((proc, out, path))
            outputs.append((prefix, path))
        for proc, _out, path in procs:
            # Some writers die before their first write, most in the middle of writing.
            want = rng.choice([0, 1, 5, 40, 150])
            end = time.monotonic() + DEADLINE_S
            while len(acked(path)) < want and proc.poll() is None and time.monotonic() < end:
                time.sleep(0.005)
            time.sleep(rng.uniform(0, 0.05))
            proc.send_signal(signal.SIGKILL)
        for proc, out, _ in procs:
            assert proc.wait(timeout=DEADLINE_S) == -signal.SIGKILL, f"seed {seed}"
            out.close()
    store = MemoryStore(db)
    assert store.integrity_check() == "ok", f"seed {seed}"
    rows = shared_rows(db)
    total = 0
    for prefix, path in outputs:
        for slug in acked(path):
            i = int(slug.rsplit("-", 1)[1])
            assert rows.get(slug) == expected_body(prefix, i), f"acknowledged {slug} lost (seed {seed})"
            total += 1
    assert total > 0
    # The store reopens and takes new writes.
    assert (
        store.put(
            "shared", "", "after-the-crash", name="n", description="d", type="user", body="still works"
        ).status
        == "created"
    )
    assert store.get("shared", "", "after-the-crash").body == "still works"  # type: ignore[union-attr]


def test_a_long_reader_and_a_writer_never_see_database_is_locked(tmp_path, worker):
    db = tmp_path / "memory.db"
    stop = tmp_path / "stop"
    MemoryStore(db).put("shared", "", "seed", name="n", description="d", type="user", body="b")
    reader = subprocess.Popen(
        worker("read", str(db), str(stop)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        writer = subprocess.run(
            worker("write", str(db), "lw", "300"), capture_output=True, text=True, timeout=DEADLINE_S
        )
    finally:
        stop.touch()
    out, err = reader.communicate(timeout=DEADLINE_S)
    assert "locked" not in writer.stderr + err
    assert writer.returncode == 0, writer.stderr
    assert len(writer.stdout.split()) == 300
    assert reader.returncode == 0, err
    reads, errors = int(out.split()[1]), int(out.split()[3])
    assert reads > 0 and errors == 0
    assert len(shared_rows(db)) == 301


def test_agent_layer_written_by_another_process_is_invisible_to_other_agents(memory, worker):
    result = subprocess.run(
        worker("write", str(memory.db), "secret", "3", "--agent", "bob"),
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )
    assert result.returncode == 0, result.stderr
    assert memory.call("list_memory", {"layer": "agent"}, agent="alice")["data"]["entries"] == []
    env = memory.call("read_memory_body", {"slug": "secret-000000"}, agent="alice")
    assert env["status"] == "error" and "no entry 'secret-000000'" in env["error"]["message"]
    assert memory.call("read_memory_body", {"slug": "secret-000000"}, agent="bob")["status"] == "ok"
