"""``reyn tools search`` calls whatever tool ``[surfaces.router.defer] search_tool`` names: an
answer that is not a search result (``{"tools": [{"name": ...}, ...]}``) is a clear error naming
the tool and what it answered, never a traceback; hits without ``summary`` / ``matched`` are shown
with those empty; the search pack's own ``find_tools`` is the positive control."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from site_plugin import install_site_plugin

ODD = """
import json, os
from reyn_core import hookimpl, tool

REYN_API = 1

@tool(name="oddsearch", cluster="odd", purity="read_only")
def oddsearch(query: str, limit: int = 5) -> object:
    \"\"\"Search, answering whatever ODD_ANSWER holds.\"\"\"
    return json.loads(os.environ["ODD_ANSWER"])

@hookimpl
def reyn_register_tools(register, settings):
    register(oddsearch)
"""

PROFILE = """\
[plugins]
enable = ["odd", "file", "search"]

[surfaces.router.defer]
search_tool = "{tool}"
tools = ["grep_files"]
"""


@pytest.fixture
def search(reyn_cli, tmp_path: Path):  # type: ignore[no-untyped-def]
    site = tmp_path / "site"
    install_site_plugin(site, "odd", ODD)

    def run(tool: str, answer: object, *extra: str):  # type: ignore[no-untyped-def]
        (tmp_path / "reyn.toml").write_text(PROFILE.format(tool=tool))
        env = {
            "PYTHONPATH": str(site),
            "REYN_CACHE_DIR": str(tmp_path / "cache"),
            "ODD_ANSWER": json.dumps(answer),
        }
        return reyn_cli("tools", "search", "search", "text", *extra, cwd=tmp_path, env=env)

    return run


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("just text", "answered a str"),
        ({"results": []}, "answered an object with keys ['results']"),
        ({"tools": "grep_files"}, "answered an object with keys ['tools']"),
        (None, "answered null"),
    ],
)
def test_an_answer_of_another_shape_is_a_clear_error(search, answer: object, said: str) -> None:
    proc = search("oddsearch", answer)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "reyn tools search: the search tool 'oddsearch'" in proc.stderr and said in proc.stderr
    assert '{"tools": [{"name": ...' in proc.stderr


def test_hits_without_summary_or_matched_are_shown(search) -> None:
    answer = {"tools": [{"name": "grep_files"}, "junk", {"name": 3}, {"name": "read_file", "summary": 7}]}
    proc = search("oddsearch", answer)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["NAME", "DEFERRED", "SUMMARY", "MATCHED"]
    assert lines[1].split() == ["grep_files", "defer.tools"] and lines[2].split() == ["read_file", "-", "7"]
    rows = json.loads(search("oddsearch", answer, "--json").stdout)
    assert [r["name"] for r in rows] == ["grep_files", "read_file"]


def test_positive_control_the_search_packs_tool(search) -> None:
    proc = search("find_tools", None)
    assert proc.returncode == 0, proc.stderr
    assert "grep_files" in proc.stdout and "defer.tools" in proc.stdout
