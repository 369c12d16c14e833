"""Durability and concurrency, shown with real processes writing one real store of each backend."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

DEADLINE_S = 120  # a bound so a broken store fails the test instead of hanging CI


def acked(path: Path) -> list[str]:
    """The slugs a worker acknowledged: complete lines only."""
    text = path.read_text() if path.exists() else ""
    return [line for line in text.split("\n")[:-1] if line]


def expected_body(prefix: str, i: int) -> str:
    return f"entry {i} written by {prefix}\n" + "x" * (i % 97)


def shared_rows(target) -> dict[str, str]:
    """slug -> body of the shared layer, read through the store (either backend)."""
    entries = target.store.all_entries()
    rows = {e.slug: e.body for e in entries if e.layer == "shared"}
    assert len(rows) == sum(e.layer == "shared" for e in entries)  # no slug twice
    return rows


def assert_intact(target, rows: dict[str, str], seed: int) -> None:
    """Every row is a whole entry some worker wrote: nothing torn, nothing foreign."""
    for slug, body in rows.items():
        prefix, i = slug.rsplit("-", 1)
        assert body == expected_body(prefix, int(i)), f"torn entry {slug} (seed {seed})"
    if target.backend == "sqlite":
        assert target.store.integrity_check() == "ok", f"seed {seed}"


def test_eight_writers_of_500_some_killed_lose_no_acknowledged_write(target, worker, tmp_path):
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    victims = {n: rng.choice([0, 20, 120, 300]) for n in rng.sample(range(8), 3)}
    procs = []
    for n in range(8):
        out = open(tmp_path / f"w{n}.out", "wb")
        err = open(tmp_path / f"w{n}.err", "wb")
        # A victim writes until it is killed: with 500 it could finish before its turn to be killed
        # came (the victims are killed one after another), and exit 0 (seen on a quiet machine).
        cmd = worker("write", target.settings_json(), f"w{n}", "1000000" if n in victims else "500")
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=err, env=target.subprocess_env(), cwd=target.workspace
        )
        procs.append((proc, out, err))
    for n, after in victims.items():
        proc, _, _ = procs[n]
        end = time.monotonic() + DEADLINE_S
        while len(acked(tmp_path / f"w{n}.out")) < after and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    for proc, out, err in procs:
        proc.wait(timeout=DEADLINE_S)
        out.close()
        err.close()
    rows = shared_rows(target)
    assert_intact(target, rows, seed)
    for n, (proc, _, _) in enumerate(procs):
        slugs = acked(tmp_path / f"w{n}.out")
        assert all(rows.get(slug) == expected_body(f"w{n}", i) for i, slug in enumerate(slugs)), (
            f"an acknowledged write of w{n} is lost (seed {seed})"
        )
        written = sorted(s for s in rows if s.startswith(f"w{n}-"))
        if n in victims:
            assert proc.returncode == -signal.SIGKILL, f"seed {seed}"
            # At most the one write in flight when it died is there without an acknowledgement.
            assert written[: len(slugs)] == slugs and len(written) - len(slugs) <= 1, f"seed {seed}"
        else:
            assert proc.returncode == 0, (tmp_path / f"w{n}.err").read_text()
            assert (tmp_path / f"w{n}.err").read_text() == ""
            assert len(slugs) == 500 and written == slugs


def test_writers_killed_at_random_moments_keep_every_acknowledged_write(target, worker, tmp_path):
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    outputs: list[tuple[str, Path]] = []
    for round_no in range(3):
        procs = []
        for n in range(3):
            prefix = f"r{round_no}w{n}"
            path = tmp_path / f"{prefix}.out"
            out = open(path, "wb")
            proc = subprocess.Popen(
                worker("write", target.settings_json(), prefix, "1000000"),
                stdout=out,
                stderr=subprocess.DEVNULL,
                env=target.subprocess_env(),
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
    rows = shared_rows(target)
    assert_intact(target, rows, seed)
    total = 0
    for prefix, path in outputs:
        for slug in acked(path):
            i = int(slug.rsplit("-", 1)[1])
            assert rows.get(slug) == expected_body(prefix, i), f"acknowledged {slug} lost (seed {seed})"
            total += 1
    assert total > 0
    # The store takes new writes.
    store = target.store
    put = store.put(
        "shared", "", "after-the-crash", name="n", description="d", type="user", body="still works"
    )
    assert put.status == "created"
    assert store.get("shared", "", "after-the-crash").body == "still works"


def test_a_long_reader_and_a_writer_never_see_database_is_locked(tmp_path, worker):
    from reyn_tools_memory import MemoryStore

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
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] == 301


def test_agent_layer_written_by_another_process_is_invisible_to_other_agents(memory, worker):
    result = subprocess.run(
        worker("write", memory.target.settings_json(), "secret", "3", "--agent", "bob"),
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        env=memory.target.subprocess_env(),
    )
    assert result.returncode == 0, result.stderr
    assert memory.call("list_memory", {"layer": "agent"}, agent="alice")["data"]["entries"] == []
    env = memory.call("read_memory_body", {"slug": "secret-000000"}, agent="alice")
    assert env["status"] == "error" and "no entry 'secret-000000'" in env["error"]["message"]
    assert memory.call("read_memory_body", {"slug": "secret-000000"}, agent="bob")["status"] == "ok"
