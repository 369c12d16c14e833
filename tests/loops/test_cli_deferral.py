"""``reyn tools render | list | search`` and ``reyn chat`` with ``[surfaces.router.defer]``, as
subprocesses with the installed packs (and a scripted model on 127.0.0.1 for chat)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reyn_loops.testing.scripted_server import ScriptedReply as R
from reyn_loops.testing.scripted_server import tool_names


@pytest.fixture
def workspace(notes_workspace) -> Path:
    return notes_workspace('[surfaces.router.defer]\nplugins = ["file"]\n')


def test_render_sends_the_split_and_says_what_is_deferred(workspace, reyn_cli):
    proc = reyn_cli("tools", "render", "--surface", "router", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    names = [t["function"]["name"] for t in json.loads(proc.stdout)]
    assert names == ["convert_units", "text_stats", "find_tools"]
    assert "4 tool(s) deferred" in proc.stderr and "read_file (defer.plugins)" in proc.stderr
    again = reyn_cli("tools", "render", "--surface", "router", cwd=workspace)
    assert again.stdout == proc.stdout  # byte-stable
    full = reyn_cli("tools", "render", "--surface", "router", "--no-defer", cwd=workspace)
    assert "read_file" in [t["function"]["name"] for t in json.loads(full.stdout)] and full.stderr == ""


def test_list_marks_deferred_tools(workspace, reyn_cli):
    proc = reyn_cli("tools", "list", "--json", cwd=workspace)
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert rows["read_file"]["deferred"] == "defer.plugins" and rows["text_stats"]["deferred"] is None
    assert rows["delete_file"]["deferred"] is None  # hidden by a gate, so not "deferred"


def test_search_ranks_visible_tools_with_reasons(workspace, reyn_cli):
    proc = reyn_cli("tools", "search", "read", "a", "file", "--json", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert rows[0]["name"] == "read_file" and rows[0]["deferred"] == "defer.plugins"
    assert "read" in rows[0]["matched"]["name"]
    # delete_file / write_file are refused by the file pack's own gate here: never found.
    assert not {"delete_file", "write_file", "edit_file"} & {r["name"] for r in rows}
    human = reyn_cli("tools", "search", "read a file", cwd=workspace)
    assert human.stdout.splitlines()[0].split() == ["NAME", "DEFERRED", "SUMMARY", "MATCHED"]


def test_search_refuses_a_bad_limit(workspace, reyn_cli):
    proc = reyn_cli("tools", "search", "x", "--limit", "21", cwd=workspace)
    assert proc.returncode == 2 and "--limit must be between 1 and 20" in proc.stderr


def test_a_deferral_name_matching_nothing_is_a_one_line_error(notes_workspace, reyn_cli):
    workspace = notes_workspace('[surfaces.router.defer]\nplugins = ["file"]\ntools = ["read_fiel"]\n')
    proc = reyn_cli("tools", "render", "--surface", "router", cwd=workspace)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "surfaces.router.defer.tools[0]" in proc.stderr and "did you mean 'read_file'" in proc.stderr


def test_chat_finds_a_deferred_tool_and_uses_it(workspace, reyn_chat):
    script = [
        R.calls(("find_tools", {"query": "read a text file"})),
        R.calls(("read_file", {"path": "notes.md"})),
        R.text("The notes list one and two."),
    ]
    proc, requests = reyn_chat(script, "--no-stream", cwd=workspace, stdin="what is in my notes?\n")
    bodies = [r.body for r in requests]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "read_file" not in tool_names(bodies[0]) and "find_tools" in tool_names(bodies[0])
    offered = list(tool_names(bodies[1]))
    # Every deferred tool the search returned is added after the search tool, in result order
    # (a tool already in the array, like text_stats, keeps its place).
    found = [t["name"] for t in json.loads(bodies[1]["messages"][-1]["content"])["data"]["tools"]]
    assert found[0] == "read_file" and offered[offered.index("find_tools") + 1 :] == [
        n for n in found if n not in ("text_stats", "convert_units")
    ]
    last_tool = [m for m in bodies[2]["messages"] if m["role"] == "tool"][-1]
    assert "- one" in json.loads(last_tool["content"])["data"]["content"]


def test_deferring_without_the_search_pack_is_one_clear_error_and_the_rest_works(notes_workspace, reyn_cli):
    workspace = notes_workspace('[surfaces.router.defer]\nplugins = ["file"]\n')
    profile = workspace / "reyn.toml"
    profile.write_text(profile.read_text().replace(', "search"]', "]"))
    for command in (("tools", "render", "--surface", "router"), ("tools", "search", "read a file")):
        proc = reyn_cli(*command, cwd=workspace)
        assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
        assert "no tool 'find_tools' is loaded" in proc.stderr and '"search"' in proc.stderr
    # Control: the phase surface does not use the router's deferral and keeps working.
    assert reyn_cli("tools", "render", "--surface", "phase", cwd=workspace).returncode == 0
