"""``reyn``'s text output shows a remote party's text escaped (issue 24): a tool description from an
MCP snapshot carrying ESC sequences, a bidi override and a C1 control is shown with each of them as
its escape by every text command that shows it — by the one rule the operator's log uses — while
ordinary Unicode (é, 😀, CJK) reads as written and ``--json`` keeps the value exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reyn_core.cli.text_fields import printable_json, shown, shown_data
from reyn_core.remote_log import shown_raw

HOSTILE = "Say hello \x1b[2J\x1b[31mred\u202eevil\x9b2J done"
ORDINARY = "café 😀 東京"
ESCAPED = "Say hello \\x1b[2J\\x1b[31mred\\u202eevil\\x9b2J done"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The mcp pack importing one tool, ``demo__hello``, from a snapshot (no server is started)."""
    tool = {"name": "hello", "description": f"{HOSTILE}; {ORDINARY}", "input_schema": {"type": "object"}}
    snapshot = {"version": 1, "servers": {"demo": {"tools": [tool]}}}
    (tmp_path / "snap.json").write_text(json.dumps(snapshot))
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["mcp", "search"]\n[plugins.mcp.settings]\nsnapshot_file = "snap.json"\n'
        '[plugins.mcp.settings.servers.demo]\ncommand = "/bin/false"\nimport_tools = true\n'
    )
    return tmp_path


TEXT_COMMANDS = [
    ("tools", "search", "hello"),
    ("plugins", "show", "mcp"),
    ("tools", "render", "--surface", "phase", "--allowed-ops", "mcp"),
]


@pytest.mark.parametrize("argv", TEXT_COMMANDS, ids=[" ".join(a) for a in TEXT_COMMANDS])
def test_every_text_command_shows_the_description_escaped(workspace, reyn_cli, argv):
    proc = reyn_cli(*argv, cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert ESCAPED in proc.stdout
    for raw in ("\x1b", "\u202e", "\x9b"):
        assert raw not in proc.stdout
    assert ORDINARY in proc.stdout  # control: printable Unicode reads as written


def test_a_field_stays_one_line_and_the_rule_is_the_logs():
    """A line break or tab in a field is escaped (it cannot forge a line or a cell); otherwise a
    field is shown exactly as the operator's log shows a remote party's text."""
    every = "".join(chr(c) for c in range(0x3000)) + "\U000e0041\U0001f600"
    assert shown("a\nb\tc") == "a\\x0ab\\x09c"
    assert shown(every).isprintable()
    assert shown(every.replace("\n", "").replace("\t", "")) == shown_raw(
        every.replace("\n", "").replace("\t", "")
    )
    assert shown_data({"k\x1b": ["v\u202e", 3, None]}) == {"k\\x1b": ["v\\u202e", 3, None]}


def test_json_in_a_text_command_is_printable_and_the_same_value():
    value = {"d": every_unprintable() + ORDINARY}
    text = printable_json(value)
    assert all(line.isprintable() for line in text.split("\n"))
    assert json.loads(text) == value and ORDINARY in text


def every_unprintable() -> str:
    return "".join(ch for ch in map(chr, range(0x3000)) if not ch.isprintable()) + "\U000e0041\ud800"


def test_json_output_keeps_the_value_exactly(workspace, reyn_cli):
    search = reyn_cli("tools", "search", "hello", "--json", cwd=workspace)
    show = reyn_cli("plugins", "show", "mcp", "--json", cwd=workspace)
    assert search.returncode == 0 and show.returncode == 0, search.stderr + show.stderr
    assert json.loads(search.stdout)[0]["summary"] == f"{HOSTILE}; {ORDINARY}"
    (tool,) = [t for t in json.loads(show.stdout)["tools"] if t["name"] == "demo__hello"]
    assert tool["description"] == f"{HOSTILE}; {ORDINARY}"
