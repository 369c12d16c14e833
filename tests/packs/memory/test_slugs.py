"""Hostile and malformed slugs: each refused with a message saying what was wrong, on every tool."""

from __future__ import annotations

import pytest
from reyn_tools_memory import slug_problem

HOSTILE = {
    "parent traversal": ("../etc/passwd", "looks like a path"),
    "bare dot-dot": ("..", "looks like a path"),
    "absolute path": ("/etc/passwd", "looks like a path"),
    "windows separator": ("a\\b", "looks like a path"),
    "hidden file": (".bashrc", "looks like a path"),
    "nul byte": ("a\x00b", "NUL byte"),
    "newline": ("a\nb", "whitespace or control characters"),
    "space": ("a b", "whitespace or control characters"),
    "uppercase": ("Notes", "uppercase letters; use 'notes'"),
    "unicode lookalike": ("n\u043etes", "contains '\u043e'"),
    "shell metacharacters": ("a;rm", "contains ';'"),
    "leading dash": ("-rf", "must start and end with a letter or digit"),
    "trailing underscore": ("note_", "must start and end with a letter or digit"),
    "too long": ("a" * 65, "65 characters long, over the limit of 64"),
    "huge": ("a" * 100_000, "100000 characters long"),
    "empty": ("", "the slug is empty"),
    "windows device name": ("con", "reserved device name"),
    "windows device name com1": ("com1", "reserved device name"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_slug_is_refused_with_its_reason(name):
    slug, reason = HOSTILE[name]
    problem = slug_problem(slug)
    assert problem is not None and reason in problem


@pytest.mark.parametrize("slug", ["a", "release-checklist", "user_prefs", "2024-q3", "a" * 64])
def test_plain_slugs_are_accepted(slug):
    assert slug_problem(slug) is None


def test_a_non_string_slug_is_refused():
    assert "must be a string" in slug_problem(3)  # type: ignore[operator]


@pytest.mark.parametrize("tool", ["remember_shared", "remember_agent", "read_memory_body", "forget_memory"])
@pytest.mark.parametrize("name", ["parent traversal", "nul byte", "too long", "absolute path"])
def test_every_tool_refuses_hostile_slugs_at_dispatch(memory, make_entry, tool, name):
    slug, reason = HOSTILE[name]
    args = make_entry(slug) if tool.startswith("remember") else {"slug": slug, "layer": "agent"}
    env = memory.call(tool, args, agent="ann")
    assert env["status"] == "error" and env["error"]["kind"] == "invalid_arguments"
    assert env["error"]["errors"] == [{"path": "/slug", "message": slug_problem(slug)}]
    assert reason in env["error"]["message"]
    # The store is untouched and still works.
    assert memory.call("remember_shared", make_entry("fine"))["status"] == "ok"
