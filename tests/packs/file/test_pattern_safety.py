"""Patterns a model supplies (globs, grep regexes) run in bounded time, and file tools have a timeout.

Each pathological call is awaited with a generous bound: before the fix these calls ran for minutes
(a backtracking glob translation and Python's ``re`` on the worker thread, with no timeout at all).
The bound only proves "finishes, not hangs"; the assertions are on the results and errors.
"""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path
from typing import Any

import pytest
import reyn_tools_file.tools as file_tools
from reyn_tools_file.globs import compile_glob

from reyn_core import InvalidToolArguments

BOUND_S = 20.0  # far above the real cost (milliseconds), far below the old cost (minutes)


async def bounded(tools: Any, name: str, **args: Any) -> Any:
    return await asyncio.wait_for(tools.call(name, **args), BOUND_S)


async def bounded_envelope(tools: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return await asyncio.wait_for(tools.envelope(name, args), BOUND_S)


@pytest.fixture
def long_names(workspace: Path) -> Path:
    (workspace / ("a" * 60)).write_text("x\n")
    deep = workspace.joinpath(*(["d"] * 24))
    deep.mkdir(parents=True)
    (deep / "f.txt").write_text("deep\n")
    return workspace


# --------------------------------------------------------------------------- globs


@pytest.mark.parametrize(
    "pattern",
    [
        "*a" * 11 + "*b",  # the reported case: 11 stars against a 60-character name
        "*a" * 40 + "*b",
        "?*" * 30 + "b",
        "[a]*" * 30 + "b",
        "[!b]*" * 30 + "b",
        "a**" * 30 + "b",  # ** inside a name crosses directories: .* repeated
        "**/" * 20 + "*.py",  # ** repeated over a 24-level path
        "**/" * 10 + "d/" * 10 + "*.nomatch",
    ],
)
async def test_pathological_globs_finish_and_match_nothing(tools, long_names, pattern):
    result = await bounded(tools, "glob_files", pattern=pattern)
    assert result["files"] == []


async def test_repeated_double_star_still_matches(tools, long_names):
    result = await bounded(tools, "glob_files", pattern="**/" * 20 + "*.txt")
    assert result["files"] == ["/".join(["d"] * 24) + "/f.txt", "hello.txt"]
    assert (await bounded(tools, "glob_files", pattern="*a" * 11 + "*"))["files"] == ["a" * 60]


async def test_grep_glob_filter_is_bounded_too(tools, long_names):
    result = await bounded(tools, "grep_files", pattern="x", glob="*a" * 11 + "*b")
    assert result["matches"] == []
    result = await bounded(tools, "grep_files", pattern="x", glob="*a" * 11 + "*")
    assert [m["path"] for m in result["matches"]] == ["a" * 60]


async def test_over_long_glob_is_refused_with_the_limit(tools):
    env = await bounded_envelope(tools, "glob_files", {"pattern": "*" * 1001})
    assert env["error"]["kind"] == "invalid_arguments"
    assert "1001 characters; the limit is 1000" in env["error"]["message"]
    env = await bounded_envelope(tools, "grep_files", {"pattern": "x", "glob": "?" * 5000})
    assert env["error"]["kind"] == "invalid_arguments"
    assert [e["path"] for e in env["error"]["errors"]] == ["/glob"]
    assert "limit is 1000" in env["error"]["message"]


def match(pattern: str, path: str) -> bool:
    return compile_glob(pattern, field="pattern").matches(tuple(path.split("/")))


def test_glob_classes_ranges_and_negation():
    assert match("[a-c]x", "bx") and not match("[a-c]x", "dx")
    assert match("[!a-c]x", "dx") and not match("[!a-c]x", "bx")
    assert match("[^a-c]x", "dx") and not match("[^a-c]x", "bx")  # ^ negates as ! does
    assert match("[]]x", "]x") and match("[!]]x", "ax") and not match("[!]]x", "]x")
    assert match("a[--0]b", "a-b") and match("a[--0]b", "a0b")
    assert not match("a[--0]b", "a/b") and not match("a[^x]b", "a/b")  # never across a "/"
    assert match("x[", "x[") and match("a.b", "a.b") and not match("a.b", "axb")
    assert match("[*?]", "*") and not match("[*?]", "a")  # wildcards are literal inside a class
    with pytest.raises(InvalidToolArguments, match=r"range z-a .* is reversed"):
        compile_glob("[z-a]", field="pattern")


# Ordinary patterns keep the verdicts they had before the linear-time translation: ``*`` and ``?`` stay
# inside one name, ``**/`` is zero or more directories, ``**`` inside a name crosses them, ``.`` is a
# literal, empty and ``.`` segments of the pattern are dropped. (pattern, paths it matches, paths it
# does not)
ORDINARY_GLOBS = [
    ("a.b", ["a.b"], ["aab", "a/b", "a.b/a"]),
    ("*", ["a", "ab.b", ".b"], ["a/b"]),
    ("a*", ["a", "ab", "a.b"], ["b", "ba", "a/b"]),
    ("*.b", ["a.b", ".b", "ab.b"], ["b", "a.a", "a/.b"]),
    ("?", ["a", "."], ["ab", "a/b"]),
    ("a?b", ["aab", "a.b"], ["ab", "a/b", "aabb"]),
    ("**", ["a", "a/b", "a/b/a.b"], []),
    ("**/a", ["a", "b/a", "b/b/a"], ["ba", "b/ab", "a/b"]),
    ("a/**", ["a/b", "a/b/b"], ["a", "b/a"]),
    ("a/**/b", ["a/b", "a/a/b", "a/a/a/b"], ["a/ab", "b/a/b", "a/b/a"]),
    ("a**", ["a", "ab", "a/b", "ab/b/a"], ["b/a", "ba"]),
    ("**/*.b", ["a.b", "a/a.b", "a/b/.b"], ["a/b", "a.b/a"]),
    ("a/*", ["a/b", "a/a.b"], ["a", "a/b/b", "b/b"]),
    ("*/*", ["a/b", "b/a"], ["a", "a/b/a"]),
    ("[ab]", ["a", "b"], [".", "ab"]),
    ("[!a]", ["b", "."], ["a", "bb"]),
    ("[ab]*.?", ["a.b", "bb.a", "a..b"], ["..b", "a.bb", "a/.b"]),
    ("./a//b", ["a/b"], ["a", "ab", "a/b/b"]),
]


@pytest.mark.parametrize(("pattern", "matching", "other"), ORDINARY_GLOBS, ids=[c[0] for c in ORDINARY_GLOBS])
def test_ordinary_globs_keep_their_verdicts(pattern, matching, other):
    assert [path for path in matching if not match(pattern, path)] == []
    assert [path for path in other if match(pattern, path)] == []


# --------------------------------------------------------------------------- grep


@pytest.fixture
def evil_lines(workspace: Path) -> Path:
    (workspace / "evil.txt").write_text("a" * 29 + "!\n" + "x" * 40 + "\n")
    return workspace


@pytest.mark.parametrize(
    ("pattern", "ignore_case"),
    [
        ("(a+)+$", False),  # the reported case: 45 s on a 29-byte line
        ("(A+)+$", True),
        ("(a|aa)+$", False),
        ("(x+x+)+y", False),
        ("(.*a){20}z", False),
        ("^(([a-z])+.)+[A-Z]([a-z])+$", False),
    ],
)
async def test_catastrophic_regexes_finish(tools, evil_lines, pattern, ignore_case):
    result = await bounded(tools, "grep_files", pattern=pattern, path="evil.txt", ignore_case=ignore_case)
    assert result["matches"] == []
    assert result["files_searched"] == 1


async def test_grep_still_matches_case_insensitively_and_with_anchors(tools, evil_lines):
    result = await bounded(tools, "grep_files", pattern="^(A+)+!$", path="evil.txt", ignore_case=True)
    assert [m["line"] for m in result["matches"]] == [1]
    result = await bounded(tools, "grep_files", pattern=r"\Ax+\z", path="evil.txt")
    assert [m["line"] for m in result["matches"]] == [2]


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        (r"(a)\1", "backreference \\1"),
        (r"(?P<q>a)(?P=q)", "named backreference"),
        ("foo(?=bar)", "lookahead"),
        ("foo(?!bar)", "negative lookahead"),
        ("(?<=foo)bar", "lookbehind"),
        ("(?<!foo)bar", "negative lookbehind"),
        ("a++", "possessive"),
        ("(?>a)", "atomic group"),
        (r"end\Z", r"\z"),
        ("(a{1000}){1000}", "at most 1000"),
    ],
)
async def test_constructs_re2_cannot_run_linearly_are_refused_by_name(tools, pattern, named):
    env = await bounded_envelope(tools, "grep_files", {"pattern": pattern})
    assert env["status"] == "error" and env["error"]["kind"] == "invalid_arguments"
    message = env["error"]["message"]
    assert named in message and "RE2 syntax" in message
    assert [e["path"] for e in env["error"]["errors"]] == ["/pattern"]


async def test_over_long_regex_is_refused_with_the_limit(tools):
    env = await bounded_envelope(tools, "grep_files", {"pattern": "a|" * 600 + "b"})
    assert env["error"]["kind"] == "invalid_arguments"
    assert "1201 characters; the limit is 1000" in env["error"]["message"]


async def test_huge_lines_and_binary_files(make_tools, workspace):
    tools = make_tools(max_grep_file_bytes=8 * 1024 * 1024)
    (workspace / "one_line.txt").write_text("x" * 3_000_000 + "\n" + "needle\n" + "y" * 20_000 + "needle\n")
    (workspace / "blob.bin").write_bytes(b"\x00\xff" * 500_000 + b"needle")
    result = await bounded(tools, "grep_files", pattern="(x+x+)+y|needle")
    assert [(m["path"], m["line"]) for m in result["matches"]] == [("one_line.txt", 2)]
    assert "1 binary files were skipped" in result["note"]
    # only the first 10,000 characters of a line are searched, and 500 are shown
    result = await bounded(tools, "grep_files", pattern="x$", path="one_line.txt")
    assert len(result["matches"]) == 1 and result["matches"][0]["text"] == "x" * 500
    result = await bounded(tools, "grep_files", pattern="y+needle", path="one_line.txt")
    assert result["matches"] == []


async def test_many_lines_give_the_same_matches_as_searching_line_by_line(tools, workspace):
    rng = random.Random(5)
    lines = ["".join(rng.choice("ab \t") for _ in range(rng.randint(0, 6))) for _ in range(3000)]
    (workspace / "many.txt").write_text("\r\n".join(lines) + "\u2028tail a\x0cb\n")
    all_lines = (workspace / "many.txt").read_text().splitlines()
    patterns = [
        "^a",
        "b$",
        r"a\s+b",
        "^$",
        r"\bab\b",
        r"(?i)A B",
        r"\Aa",
        r"b\z",
        "a[^x]b",
        "",
        "(?s)a.b",
        "(?-m:^a)",
        "(?i-m:B$)",
    ]
    for pattern in patterns:
        result = await bounded(tools, "grep_files", pattern=pattern, path="many.txt", max_matches=10_000)
        python = pattern.replace(r"\z", r"\Z")  # Python's name for the end of the text
        expected = [i + 1 for i, line in enumerate(all_lines) if re.search(python, line)][:200]
        assert [m["line"] for m in result["matches"]] == expected, pattern


async def test_many_files_stop_at_the_time_limit_with_partial_results(tools, workspace, monkeypatch):
    for i in range(50):
        (workspace / f"f{i}.txt").write_text("needle\n")
    monkeypatch.setattr(file_tools, "WORK_SECONDS", -1.0)  # the time limit has passed at once
    grep = await bounded(tools, "grep_files", pattern="needle")
    glob = await bounded(tools, "glob_files", pattern="**/*.txt")
    for result in (grep, glob):
        assert result["truncated"] is True
        assert "stopped after -1 s (the time limit) with partial results" in result["note"]


# --------------------------------------------------------------------------- timeouts


def test_every_file_tool_has_a_timeout(build_registry):
    from reyn_tools_file.settings import FileSettings

    registry = build_registry(FileSettings(write_roots=(".",)))
    names = [t.name for t in file_tools.TOOLS]
    assert len(names) == 7
    for name in names:
        definition = registry.get(name)
        assert definition.timeout_s == file_tools.TIMEOUT_S > file_tools.WORK_SECONDS > 0, name
