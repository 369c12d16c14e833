"""``lint_skill``: the catalogue's own checks on a skill folder of the workspace, every problem with
its file and line; phase only. The loader and the op share one implementation (``checks.py``), so a
file the lint passes is a file the catalogue loads, and each problem the lint names is one the
loader reports."""

from __future__ import annotations

import os
from typing import Any

import pytest
from reyn_tools_catalog import CatalogSettings
from reyn_tools_catalog.catalog import load_catalog

from .conftest import Workspace, build_registry

CLEAN = """\
---
name: summarize
description: Summarize a document in three sentences.
category: writing
input_schema: {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
---
Read the file, then write the summary. See [the style guide](style.md) and ![a chart](img/chart.png).
```
[not a link](inside-code.md)
```
"""


def lint(ws: Workspace, path: str, **kw: Any) -> dict[str, Any]:
    return ws.call("lint_skill", {"path": path}, surface="phase", allowed_ops=["lint_skill"], **kw)


def _clean_skill(ws: Workspace, folder: str = "summarize") -> None:
    ws.skill(folder, CLEAN)
    (ws.root / "skills" / folder / "style.md").write_text("Short sentences.\n")
    (ws.root / "skills" / folder / "img").mkdir()
    (ws.root / "skills" / folder / "img" / "chart.png").write_bytes(b"\x89PNG")


def _codes(result: dict[str, Any]) -> list[tuple[str, int]]:
    return [(p["code"], p["line"]) for p in result["problems"]]


def test_a_clean_skill_has_no_problems_and_loads(ws: Workspace) -> None:
    _clean_skill(ws)
    data = lint(ws, "skills/summarize")["data"]
    assert data == {
        "skill": "summarize",
        "file": "skills/summarize/SKILL.md",
        "loads": True,
        "errors": 0,
        "warnings": 0,
        "problems": [],
    }
    assert "summarize" in load_catalog(ws.settings, ws.root).skills  # and the catalogue agrees


def test_the_skill_file_itself_may_be_named(ws: Workspace) -> None:
    _clean_skill(ws)
    assert lint(ws, "skills/summarize/SKILL.md")["data"]["loads"] is True


def test_every_problem_of_a_file_is_reported_with_its_line(ws: Workspace) -> None:
    ws.skill(
        "broken",
        """\
        ---
        name: not a valid name
        category: "two\\nlines"
        input_schema: {"type": "array"}
        colour: blue
        ---
        Use [the helper](scripts/helper.py) and [a sibling](../other/SKILL.md).
        """,
    )
    data = lint(ws, "skills/broken")["data"]
    assert data["loads"] is False and data["skill"] is None
    assert _codes(data) == [
        ("RK002", 2),  # the name
        ("RK002", 0),  # no description: the whole file
        ("RK002", 3),  # category on two lines
        ("RK007", 4),  # the input schema's root is no object
        ("RK005", 5),  # unknown key, a warning
        ("RK009", 7),  # a link to a missing file
        ("RK009", 7),  # a link out of the skill's folder
    ]
    assert data["errors"] == 4 and data["warnings"] == 3
    assert all(p["file"] == "skills/broken/SKILL.md" for p in data["problems"])
    by_code = {p["code"]: p for p in data["problems"]}
    assert (
        "scripts/helper.py" in data["problems"][5]["message"]
        and "does not exist" in data["problems"][5]["message"]
    )
    assert "outside the skill's folder" in data["problems"][6]["message"]
    assert by_code["RK005"]["hint"].startswith("allowed keys:")


def test_the_loader_reports_the_same_problems_and_skips_the_file(ws: Workspace) -> None:
    ws.skill("broken", "---\nname: bad name\ncolour: blue\n---\nSee [x](gone.md).\n")
    linted = [(p["code"], p["line"]) for p in lint(ws, "skills/broken")["data"]["problems"]]
    loaded = load_catalog(ws.settings, ws.root)
    assert "bad name" not in loaded.skills
    assert [(d.code, d.line) for d in loaded.diagnostics] == linted
    assert loaded.diagnostics[0].message.startswith("skill file skipped: ")


def test_malformed_front_matter_is_reported_at_its_line(ws: Workspace) -> None:
    ws.skill("fm", "---\nname: x\n  nested: 1\n---\n")
    data = lint(ws, "skills/fm")["data"]
    assert (
        _codes(data) == [("RK001", 3)]
        and "nested mappings are not supported" in data["problems"][0]["message"]
    )


def test_a_missing_skill_file_is_reported(ws: Workspace) -> None:
    (ws.root / "skills" / "empty").mkdir()
    data = lint(ws, "skills/empty")["data"]
    assert _codes(data) == [("RK006", 0)] and "no SKILL.md" in data["problems"][0]["message"]


def test_a_name_another_loaded_skill_has_is_reported(ws: Workspace, tmp_path) -> None:
    _clean_skill(ws)
    draft = ws.root / "drafts" / "again"
    draft.mkdir(parents=True)
    (draft / "SKILL.md").write_text(
        CLEAN.replace("See [the style guide](style.md) and ![a chart](img/chart.png).", "")
    )
    data = lint(ws, "drafts/again")["data"]
    assert _codes(data) == [("RK003", 0)] and data["loads"] is False


def test_two_files_of_the_skill_folders_with_one_name_are_reported(ws: Workspace) -> None:
    _clean_skill(ws, "first")
    _clean_skill(ws, "second")
    data = lint(ws, "skills/second")["data"]
    assert _codes(data) == [("RK003", 0)] and "skills/first/SKILL.md" in data["problems"][0]["message"]


# --------------------------------------------------------------------------- size limits, hostile input


def test_a_file_over_the_size_limit_is_refused_with_the_limit(ws: Workspace) -> None:
    ws.skill("big", "---\nname: big\ndescription: Big.\n---\n" + "x" * 300_000 + "\n")
    data = lint(ws, "skills/big")["data"]
    assert _codes(data) == [("RK006", 0)]
    assert "over the limit of 262,144" in data["problems"][0]["message"]
    assert "max_file_bytes" in data["problems"][0]["hint"]


def test_huge_front_matter_is_refused_with_the_limit(tmp_path) -> None:
    ws = Workspace(tmp_path)
    ws.settings = CatalogSettings(skill_dirs=["skills"], max_file_bytes=4 * 1024 * 1024)
    ws.registry = build_registry(ws.settings)
    ws.skill("huge", "---\nname: huge\ndescription: |\n" + "  word\n" * 300_000 + "---\nBody.\n")
    data = lint(ws, "skills/huge")["data"]
    assert _codes(data) == [("RK001", 1)]
    assert "the limit is 1048576" in data["problems"][0]["message"]


def test_deeply_nested_yaml_json_is_refused_with_the_limit(ws: Workspace) -> None:
    deep = '{"a": ' * 200 + "1" + "}" * 200
    ws.skill("deep", f"---\nname: deep\ndescription: Deep.\ninput_schema: {deep}\n---\n")
    data = lint(ws, "skills/deep")["data"]
    assert _codes(data) == [("RK001", 4)] and "nests more than 64 levels" in data["problems"][0]["message"]


def test_a_line_of_unclosed_link_brackets_is_no_link(ws: Workspace) -> None:
    ws.skill("brackets", "---\nname: brackets\ndescription: B.\n---\n" + "](" * 50_000 + "\n")
    assert lint(ws, "skills/brackets")["data"]["loads"] is True


def test_a_skill_file_that_is_a_link_is_refused(ws: Workspace, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "SKILL.md"
    outside.write_text("---\nname: secret\ndescription: S.\n---\nPRIVATE\n")
    (ws.root / "skills" / "linked").mkdir()
    os.symlink(outside, ws.root / "skills" / "linked" / "SKILL.md")
    data = lint(ws, "skills/linked")["data"]
    assert _codes(data) == [("RK006", 0)] and "symbolic link" in data["problems"][0]["message"]
    assert "PRIVATE" not in str(data)


@pytest.mark.parametrize("path", ["../outside", "/etc", "escape"])
def test_a_folder_outside_the_workspace_is_refused(ws: Workspace, tmp_path_factory, path: str) -> None:
    outside = tmp_path_factory.mktemp("elsewhere")
    (outside / "SKILL.md").write_text("---\nname: x\ndescription: X.\n---\n")
    os.symlink(outside, ws.root / "escape")  # a link in the workspace to a folder outside it
    if path == "../outside":
        os.symlink(outside, ws.root.parent / "outside")
    env = lint(ws, path)
    assert env["status"] == "error" and env["error"]["kind"] == "invalid_arguments"
    assert "outside the workspace" in env["error"]["message"] and env["error"]["errors"][0]["path"] == "/path"


def test_a_folder_inside_the_workspace_through_a_link_inside_it_is_checked(ws: Workspace) -> None:
    # positive control for the refusals above: a link that stays in the workspace is followed
    _clean_skill(ws)
    os.symlink(ws.root / "skills" / "summarize", ws.root / "alias")
    assert lint(ws, "alias")["data"]["loads"] is True


# --------------------------------------------------------------------------- surfaces


def test_the_router_refuses_it_by_its_role_gate(ws: Workspace) -> None:
    _clean_skill(ws)
    env = ws.call("lint_skill", {"path": "skills/summarize"})
    assert env["error"]["kind"] == "gate_refused" and env["error"]["layer"] == "role"


def test_a_phase_must_name_it_in_allowed_ops(ws: Workspace) -> None:
    _clean_skill(ws)
    env = ws.call("lint_skill", {"path": "skills/summarize"}, surface="phase", allowed_ops=None)
    assert (
        env["error"]["kind"] == "gate_refused" and env["error"]["layer"] == "call"
    )  # default: file, ask_user
    for ops in (["lint_skill"], ["catalog"]):  # by name, or by its cluster
        assert (
            ws.call("lint_skill", {"path": "skills/summarize"}, surface="phase", allowed_ops=ops)["status"]
            == "ok"
        )


def test_mcp_clients_of_reyn_mcp_serve_are_not_offered_it(ws: Workspace) -> None:
    import asyncio

    from reyn_tools_mcp.serve import ServedRegistry

    _clean_skill(ws)
    served = ServedRegistry(ws.registry, ws.ctx(extras={"registry": ws.registry, "served_by": "mcp"}))
    names = {t.name for t in served.tools(True)}
    assert "list_skills" in names and "lint_skill" not in names  # served as the router surface
    result = asyncio.run(served.call("lint_skill", {"path": "skills/summarize"}))
    assert result.is_error and "not offered on the router surface" in str(result.content[0])


async def test_the_real_reyn_mcp_serve_does_not_list_it(tmp_path) -> None:
    import asyncio
    import sys
    from pathlib import Path

    from mcp import Client, StdioServerParameters

    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["catalog", "mcp"]\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("REYN_")}
    env["REYN_CACHE_DIR"] = str(tmp_path / ".cache")
    reyn = str(Path(sys.executable).parent / "reyn")
    params = StdioServerParameters(command=reyn, args=["mcp", "serve"], cwd=str(tmp_path), env=env)

    async def served() -> tuple[set[str], bool]:
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            called = await client.call_tool("lint_skill", {"path": "."})
        return names, called.is_error

    names, refused = await asyncio.wait_for(served(), 120)
    assert "list_skills" in names and "lint_skill" not in names  # positive control beside it
    assert refused
