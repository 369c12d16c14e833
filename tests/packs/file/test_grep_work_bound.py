"""grep_files bounds its work inside one file, not only between files (issue 21): a pattern RE2
matches slowly (its DFA runs out of memory, so every byte costs every instruction) over one big
file stops at ``search_seconds`` with the matches found so far, marked partial — and the worker
thread ends with the call: nothing is left burning CPU after it returned."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

# RE2 needs ~60 ns per byte and instruction for it: ~200 s on 3.6 MB, far past the 60 s timeout
SLOW = "[ab]*a[ab]{900}c"
FIRST_LINE = "a" * 901 + "c"  # line 1 matches: found before the time runs out


def big_file(path: Path, size: int = 3_600_000) -> None:
    table = bytes((ord("a") if i % 2 else ord("b")) for i in range(256))
    body = os.urandom(size).translate(table)
    lines = [body[i : i + 99] for i in range(0, len(body), 99)]
    path.write_bytes(FIRST_LINE.encode() + b"\n" + b"\n".join(lines) + b"\n")


def grep_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "reyn-tool-grep_files"]


def assert_nothing_left_running() -> None:
    for thread in grep_threads():
        thread.join(5)  # it delivered its result; let it return from its last line
    assert grep_threads() == []
    before = time.process_time()
    time.sleep(1.0)
    assert time.process_time() - before < 0.5  # no search is still burning CPU in this process


@pytest.mark.parametrize(
    "pattern",
    [SLOW, "\\A" + SLOW, "(?i)" + SLOW.upper().replace("[AB]", "[ab]")],
    ids=["whole-text search", "line by line", "case-insensitive"],
)
async def test_one_big_file_stops_at_the_budget_with_a_partial_result(make_tools, workspace, pattern):
    big_file(workspace / "big.txt")
    tools = make_tools(write_roots=(".",), search_seconds=0.3)
    result = await tools.call("grep_files", pattern=pattern, path="big.txt")
    assert result["truncated"] is True
    assert "stopped after 0.3 s (the time limit) with partial results" in result["note"]
    assert [m["line"] for m in result["matches"]] == [1]  # what was found before the stop is kept
    assert_nothing_left_running()


async def test_a_directory_search_stops_inside_its_first_big_file(make_tools, workspace):
    for name in ("a.txt", "b.txt", "c.txt"):
        big_file(workspace / name, size=1_000_000)
    tools = make_tools(write_roots=(".",), search_seconds=0.3)
    result = await tools.call("grep_files", pattern=SLOW)
    assert result["truncated"] is True and "the time limit" in result["note"]
    assert result["files_searched"] < 3
    assert_nothing_left_running()


async def test_a_fast_search_of_the_same_file_is_complete(make_tools, workspace):
    big_file(workspace / "big.txt")
    tools = make_tools(write_roots=(".",), search_seconds=20)
    result = await tools.call("grep_files", pattern="^a{901}c$", path="big.txt")
    assert result["truncated"] is False and "note" not in result
    assert [m["line"] for m in result["matches"]] == [1]
    assert_nothing_left_running()


def test_search_seconds_stays_inside_the_tool_timeout():
    from pydantic import ValidationError
    from reyn_tools_file.settings import FileSettings

    with pytest.raises(ValidationError):
        FileSettings(search_seconds=60)
    with pytest.raises(ValidationError):
        FileSettings(search_seconds=0)
