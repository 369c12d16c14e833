"""The file pack's path-attack table replayed through ``reyn mcp serve`` (stdio, real SDK client):
every attack comes back as an ``isError`` result naming the refusal, the outside secret never
appears in any result, and nothing outside the workspace (or protected inside it) changes."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import mcp_types as types
from mcp import Client

from .conftest import ServeWorld

PROFILE = """\
[plugins]
enable = ["file", "mcp"]

[plugins.file.settings]
write_roots = ["."]

[audit]
log = "audit.jsonl"
"""


def _tree(root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        out[rel] = (
            f"-> {os.readlink(path)}"
            if path.is_symlink()
            else (path.read_bytes() if path.is_file() else "dir")
        )
    return out


def _attacks(ws: Path, outside: Path) -> list[tuple[str, str, dict[str, object], str]]:
    """(case, tool, arguments, expected words in the refusal)."""
    secret_file = str(outside / "secret.txt")
    evil = ws.parent / (ws.name + "-evil")
    return [
        ("dotdot read", "read_file", {"path": "../outside/secret.txt"}, "'..' segment"),
        ("dotdot nested", "read_file", {"path": "sub/../../outside/secret.txt"}, "'..' segment"),
        ("dotdot list", "list_directory", {"path": ".."}, "'..' segment"),
        ("dotdot write", "write_file", {"path": "../outside/new.txt", "content": "pwned"}, "'..' segment"),
        ("dotdot delete", "delete_file", {"path": "../outside/secret.txt"}, "'..' segment"),
        ("absolute read", "read_file", {"path": secret_file}, "outside the readable roots"),
        (
            "absolute grep",
            "grep_files",
            {"pattern": "TOP", "path": str(outside)},
            "outside the readable roots",
        ),
        (
            "absolute glob",
            "glob_files",
            {"pattern": "**/*", "path": str(outside)},
            "outside the readable roots",
        ),
        ("absolute write", "write_file", {"path": secret_file, "content": "pwned"}, "outside"),
        (
            "absolute edit",
            "edit_file",
            {"path": secret_file, "old_string": "TOP", "new_string": "x"},
            "outside",
        ),
        ("sibling prefix", "read_file", {"path": str(evil / "secret.txt")}, "outside the readable roots"),
        ("symlink leaf read", "read_file", {"path": "leak.txt"}, "never follow links"),
        ("symlink leaf write", "write_file", {"path": "leak.txt", "content": "pwned"}, "link"),
        ("symlink leaf delete", "delete_file", {"path": "leak.txt"}, "link"),
        ("symlinked dir read", "read_file", {"path": "docs/secret.txt"}, "link"),
        ("symlinked dir list", "list_directory", {"path": "docs"}, "link"),
        ("symlinked dir write", "write_file", {"path": "docs/new.txt", "content": "pwned"}, "link"),
        ("protected .git", "write_file", {"path": ".git/config", "content": "x"}, "is protected"),
        ("protected .GIT", "write_file", {"path": ".GIT/config", "content": "x"}, "is protected"),
        (
            "protected profile",
            "edit_file",
            {"path": "reyn.toml", "old_string": "file", "new_string": "x"},
            "protected",
        ),
        ("protected lock", "delete_file", {"path": "reyn.lock"}, "is protected"),
        ("protected pyproject", "write_file", {"path": "pyproject.toml", "content": "x"}, "is protected"),
        ("protected state", "write_file", {"path": ".reyn/mcp-tools.json", "content": "{}"}, "is protected"),
        ("protected audit", "delete_file", {"path": "audit.jsonl"}, ""),
        ("nul byte", "read_file", {"path": "notes.txt\x00../../outside/secret.txt"}, ""),
        ("proc self", "read_file", {"path": "/proc/self/environ"}, ""),
        ("very long", "read_file", {"path": "a/" * 3000 + "x"}, ""),
    ]


async def test_the_path_attack_table_over_mcp_escapes_nothing(serve_world: ServeWorld) -> None:
    ws = serve_world.root
    serve_world.write_profile(PROFILE)
    outside = ws.parent / "outside"
    outside.mkdir()
    secret = "TOP-SECRET-" + secrets.token_hex(8)
    (outside / "secret.txt").write_text(f"{secret}\n")
    evil = ws.parent / (ws.name + "-evil")
    evil.mkdir()
    (evil / "secret.txt").write_text(f"{secret}\n")
    (ws / "leak.txt").symlink_to(outside / "secret.txt")
    (ws / "docs").symlink_to(outside, target_is_directory=True)
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "reyn.lock").write_text("# lock\n")
    (ws / "pyproject.toml").write_text("[tool.x]\n")
    (ws / "audit.jsonl").write_text("")
    before_outside, before_evil = _tree(outside), _tree(evil)
    protected = {
        p: (ws / p).read_bytes() for p in (".git/config", "reyn.toml", "reyn.lock", "pyproject.toml")
    }

    results = {}
    async with Client(serve_world.stdio()) as client:
        served = {t.name for t in (await client.list_tools()).tools}
        assert {"read_file", "write_file", "edit_file", "delete_file"} <= served
        for case, tool, args, _words in _attacks(ws, outside):
            results[case] = await client.call_tool(tool, args)
        walked = await client.call_tool("glob_files", {"pattern": "**/*"})
        grep = await client.call_tool("grep_files", {"pattern": "TOP-SECRET"})

    for case, result in results.items():
        text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
        assert result.is_error, f"{case}: not refused: {text}"
        assert secret not in text, case
        words = next(w for c, _, _, w in _attacks(ws, outside) if c == case)
        assert words in text, f"{case}: {text}"
        assert "Traceback" not in text, case
    assert not walked.is_error and "docs/secret.txt" not in walked.structured_content["files"]
    assert not grep.is_error and grep.structured_content["matches"] == []
    assert secret not in repr(walked) + repr(grep)
    assert _tree(outside) == before_outside and _tree(evil) == before_evil
    assert {p: (ws / p).read_bytes() for p in protected} == protected
    assert (ws / "leak.txt").is_symlink() and (ws / "docs").is_symlink()
