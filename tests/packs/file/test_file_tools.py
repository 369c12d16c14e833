"""The seven file tools, called through the real dispatcher on real files."""

from __future__ import annotations

import asyncio
import os
import stat
import tracemalloc

import pytest
from pydantic import ValidationError
from reyn_tools_file.settings import FileSettings

from reyn_core import InvalidToolArguments, ToolContext, ToolExecutionError, ToolGateRefused
from reyn_core.host import dispatch_tool, render_phase, render_router

FILE_TOOLS = [
    "delete_file",
    "edit_file",
    "glob_files",
    "grep_files",
    "list_directory",
    "read_file",
    "write_file",
]
WRITE_TOOLS = ["delete_file", "edit_file", "write_file"]


# --------------------------------------------------------------------------- surfaces and settings


def test_all_seven_tools_render_on_both_surfaces(tools):
    router = [t["function"]["name"] for t in render_router(tools.registry, tools.ctx)]
    phase = render_phase(tools.registry, tools.ctx.with_surface("phase"), ["file"])
    assert router == FILE_TOOLS
    assert sorted(op.kind for op in phase.ops) == FILE_TOOLS
    assert all(t.cluster == "file" for t in tools.registry.tools())


def test_write_tools_are_hidden_without_a_write_root(make_tools):
    tools = make_tools(write_roots=())
    router = [t["function"]["name"] for t in render_router(tools.registry, tools.ctx)]
    assert router == [n for n in FILE_TOOLS if n not in WRITE_TOOLS]


async def test_write_tool_named_without_a_write_root_is_refused_with_how_to_configure(make_tools, workspace):
    tools = make_tools(write_roots=())
    with pytest.raises(ToolGateRefused) as info:
        await tools.call("write_file", path="x.txt", content="x")
    assert info.value.layer == "call"
    assert "write_roots" in info.value.message
    assert not (workspace / "x.txt").exists()


async def test_without_settings_the_defaults_allow_reading_only(build_registry, workspace):
    from reyn_core import ToolOrigin
    from reyn_core.host import RegistryBuilder

    registry = RegistryBuilder()  # no settings at all: the pack falls back to FileSettings()
    import reyn_tools_file.plugin as plugin

    plugin.reyn_register_tools(
        register=lambda t: registry.register(t, origin=ToolOrigin(kind="plugin", plugin_id="file")),
        settings=None,
    )
    ctx = ToolContext(surface="router", workspace=workspace)
    env = await dispatch_tool(registry.freeze(), "read_file", {"path": "hello.txt"}, ctx)
    assert env["data"]["content"] == "hello\nworld\n"
    env = await dispatch_tool(registry.freeze(), "write_file", {"path": "x", "content": "x"}, ctx)
    assert env["error"]["kind"] == "gate_refused"


def test_settings_reject_unknown_keys_and_bad_values():
    with pytest.raises(ValidationError, match="extra"):
        FileSettings.model_validate({"read_root": ["."]})
    with pytest.raises(ValidationError):
        FileSettings(max_read_bytes=0)
    with pytest.raises(ValidationError, match="protected entry"):
        FileSettings(protected=("../x",))
    with pytest.raises(ValidationError, match="NUL"):
        FileSettings(write_roots=("a\x00b",))


async def test_bad_arguments_get_pointed_errors(tools):
    env = await tools.envelope("read_file", {"path": 3})
    assert env["error"]["kind"] == "invalid_arguments"
    env = await tools.envelope("read_file", {"path": "hello.txt", "offset": 0})
    assert env["error"]["kind"] == "invalid_arguments" and env["error"]["errors"][0]["path"] == "/offset"
    env = await tools.envelope("read_file", '{"path": ')
    assert env["error"]["kind"] == "invalid_arguments"
    env = await tools.envelope("read_file", {"path": "hello.txt", "mode": "rb"})
    assert env["error"]["kind"] == "invalid_arguments"
    assert (await tools.call("read_file", path="hello.txt"))["content"] == "hello\nworld\n"  # still works


# --------------------------------------------------------------------------- read_file


async def test_read_file_returns_lines_from_offset_with_limit(tools, workspace):
    (workspace / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await tools.call("read_file", path="n.txt", offset=3, limit=2)
    assert result["content"] == "line 3\nline 4\n"
    assert (result["start_line"], result["end_line"]) == (3, 4)
    assert "offset=5" in result["note"]
    tail = await tools.call("read_file", path="n.txt", offset=10)
    assert tail["content"] == "line 10\n" and "note" not in tail
    past = await tools.call("read_file", path="n.txt", offset=50)
    assert past["content"] == "" and "past the end" in past["note"]


async def test_missing_file_says_it_does_not_exist(tools):
    env = await tools.envelope("read_file", {"path": "nope/missing.txt"})
    assert env["error"] == {"kind": "execution_error", "message": "'nope' does not exist"}


async def test_large_file_is_truncated_with_a_clear_message_and_never_loaded_whole(make_tools, workspace):
    tools = make_tools(max_read_bytes=4096)
    line = "x" * 99 + "\n"
    with open(workspace / "big.txt", "w") as fh:
        for _ in range(200_000):  # 20 MB
            fh.write(line)
    tracemalloc.start()
    try:
        result = await tools.call("read_file", path="big.txt", offset=100_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(result["content"].encode()) <= 4096
    assert result["truncated"] is True
    assert result["start_line"] == 100_000
    assert "truncated at 4096 bytes" in result["note"] and "20000000 bytes" in result["note"]
    assert f"offset={result['end_line'] + 1}" in result["note"]
    assert peak < 2_000_000  # a 20 MB file streamed in bounded chunks


async def test_one_huge_line_is_cut_at_the_byte_cap(make_tools, workspace):
    tools = make_tools(max_read_bytes=2048)
    (workspace / "min.js").write_text("a" * 100_000)
    result = await tools.call("read_file", path="min.js")
    assert result["content"] == "a" * 2048
    assert "line 1 was cut" in result["note"]


async def test_binary_file_is_refused(tools, workspace):
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(1000))
    with pytest.raises(ToolExecutionError, match="binary file"):
        await tools.call("read_file", path="img.png")


async def test_invalid_utf8_text_is_read_with_replacement_characters(tools, workspace):
    (workspace / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    result = await tools.call("read_file", path="latin1.txt")
    assert result["content"] == "caf\ufffd\n"


async def test_reading_a_directory_is_refused(tools):
    env = await tools.envelope("read_file", {"path": "out"})
    assert env["error"]["kind"] == "denied" and "is a directory" in env["error"]["message"]


# ----------------------------------------------------------------------- write_file / edit_file / delete_file


async def test_write_file_creates_parents_and_reports_creation(tools, workspace):
    first = await tools.call("write_file", path="out/a/b/new.txt", content="one\n")
    again = await tools.call("write_file", path="out/a/b/new.txt", content="two\n")
    assert first == {"path": "out/a/b/new.txt", "bytes_written": 4, "created": True}
    assert again["created"] is False
    assert (workspace / "out/a/b/new.txt").read_text() == "two\n"
    assert [p.name for p in (workspace / "out/a/b").iterdir()] == ["new.txt"]  # no temp file left


async def test_write_file_without_create_dirs_fails_on_missing_parent(tools, workspace):
    env = await tools.envelope("write_file", {"path": "out/none/x.txt", "content": "x", "create_dirs": False})
    assert env["error"]["message"] == "'out/none' does not exist"


async def test_write_file_keeps_the_existing_mode(tools, workspace):
    script = workspace / "out" / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    await tools.call("write_file", path="out/run.sh", content="#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o750


async def test_write_file_over_the_size_limit_is_invalid(make_tools, workspace):
    tools = make_tools(max_write_bytes=1024)
    with pytest.raises(InvalidToolArguments, match="write limit is 1024"):
        await tools.call("write_file", path="out/x.txt", content="x" * 2000)
    assert not (workspace / "out/x.txt").exists()


async def test_edit_file_replaces_a_unique_string(tools, workspace):
    (workspace / "out/c.py").write_text("a = 1\nb = 2\n")
    result = await tools.call("edit_file", path="out/c.py", old_string="b = 2", new_string="b = 3")
    assert result == {"path": "out/c.py", "replacements": 1}
    assert (workspace / "out/c.py").read_text() == "a = 1\nb = 3\n"


async def test_edit_file_fails_clearly_when_old_string_is_missing(tools, workspace):
    (workspace / "out/c.py").write_text("a = 1\n")
    with pytest.raises(ToolExecutionError, match=r"old_string was not found in 'out/c\.py'"):
        await tools.call("edit_file", path="out/c.py", old_string="a  = 1", new_string="a = 2")
    assert (workspace / "out/c.py").read_text() == "a = 1\n"


async def test_edit_file_fails_clearly_when_old_string_is_ambiguous(tools, workspace):
    (workspace / "out/c.py").write_text("x = 1\nx = 1\n")
    with pytest.raises(ToolExecutionError, match=r"appears 2 times.*replace_all=true"):
        await tools.call("edit_file", path="out/c.py", old_string="x = 1", new_string="x = 2")
    result = await tools.call(
        "edit_file", path="out/c.py", old_string="x = 1", new_string="x = 2", replace_all=True
    )
    assert result["replacements"] == 2
    assert (workspace / "out/c.py").read_text() == "x = 2\nx = 2\n"


async def test_edit_file_refuses_identical_strings_and_binary_files(tools, workspace):
    with pytest.raises(InvalidToolArguments, match="identical"):
        await tools.call("edit_file", path="hello.txt", old_string="a", new_string="a")
    (workspace / "out/bin").write_bytes(b"ab\x00cd")
    with pytest.raises(ToolExecutionError, match="binary"):
        await tools.call("edit_file", path="out/bin", old_string="ab", new_string="x")


async def test_delete_file_deletes_files_only(tools, workspace):
    (workspace / "out/gone.txt").write_text("x")
    assert await tools.call("delete_file", path="out/gone.txt") == {"path": "out/gone.txt", "deleted": True}
    assert not (workspace / "out/gone.txt").exists()
    env = await tools.envelope("delete_file", {"path": "out"})
    assert env["error"]["kind"] == "denied" and "is a directory" in env["error"]["message"]
    assert (workspace / "out").is_dir()
    env = await tools.envelope("delete_file", {"path": "out/gone.txt"})
    assert env["error"]["message"] == "'out/gone.txt' does not exist"


async def test_concurrent_writes_leave_complete_files_only(tools, workspace):
    payloads = [f"writer {i}\n" * (20_000 + i * 1_000) for i in range(8)]  # all under the read cap
    stop = asyncio.Event()
    torn = []

    async def reader() -> None:  # reads the contended file while the writers run
        while not stop.is_set():
            env = await tools.envelope("read_file", {"path": "out/same.txt"})
            if env["status"] == "ok" and env["data"]["content"] not in payloads:
                torn.append(len(env["data"]["content"]))
            await asyncio.sleep(0)

    reading = asyncio.create_task(reader())
    results = await asyncio.gather(
        *(tools.call("write_file", path=f"out/different-{i}.txt", content=p) for i, p in enumerate(payloads)),
        *(tools.call("write_file", path="out/same.txt", content=p) for p in payloads),
    )
    stop.set()
    await reading
    assert all(r["bytes_written"] > 0 for r in results)
    for i, p in enumerate(payloads):
        assert (workspace / f"out/different-{i}.txt").read_text() == p
    assert (workspace / "out/same.txt").read_text() in payloads
    assert torn == []
    assert sorted(os.listdir(workspace / "out")) == sorted(
        [f"different-{i}.txt" for i in range(8)] + ["same.txt"]
    )  # no temp files left behind


# --------------------------------------------------------------------------- list / glob / grep


async def test_list_directory_reports_types_and_sizes(tools, workspace):
    (workspace / "link").symlink_to("hello.txt")
    result = await tools.call("list_directory", path=".")
    assert result["entries"] == [
        {"name": "hello.txt", "type": "file", "size": 12},
        {"name": "link", "type": "symlink"},
        {"name": "out", "type": "directory"},
    ]
    assert result["truncated"] is False


async def test_list_directory_is_capped_by_max_results(make_tools, workspace):
    tools = make_tools(max_results=5)
    for i in range(12):
        (workspace / "out" / f"f{i:02}").write_text("")
    result = await tools.call("list_directory", path="out")
    assert [e["name"] for e in result["entries"]] == [f"f{i:02}" for i in range(5)]
    assert result["truncated"] is True and "showing 5 of 12 entries" in result["note"]


async def test_list_directory_of_a_file_is_refused(tools):
    env = await tools.envelope("list_directory", {"path": "hello.txt"})
    assert env["error"]["kind"] == "denied" and "not a directory" in env["error"]["message"]


@pytest.fixture
def tree(workspace):
    for rel in (
        "src/a.py",
        "src/pkg/b.py",
        "src/pkg/c.txt",
        "top.py",
        ".git/objects/x.py",
        "node_modules/m/index.py",
    ):
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(f"# {rel}\nneedle = 1\n")
    return workspace


async def test_glob_files_matches_recursive_and_anchored_patterns(tools, tree):
    assert (await tools.call("glob_files", pattern="**/*.py"))["files"] == [
        "src/a.py",
        "src/pkg/b.py",
        "top.py",
    ]
    assert (await tools.call("glob_files", pattern="*.py"))["files"] == ["top.py"]
    assert (await tools.call("glob_files", pattern="src/*/*.txt"))["files"] == ["src/pkg/c.txt"]
    assert (await tools.call("glob_files", pattern="*.py", path="src"))["files"] == ["src/a.py"]
    assert (await tools.call("glob_files", pattern="src/pkg/[bc].*"))["files"] == [
        "src/pkg/b.py",
        "src/pkg/c.txt",
    ]
    assert (await tools.call("glob_files", pattern="nothing/**/*.py"))["files"] == []


async def test_glob_files_skips_vcs_and_dependency_dirs_unless_named(tools, tree):
    files = (await tools.call("glob_files", pattern="**/*.py"))["files"]
    assert not any(f.startswith((".git/", "node_modules/")) for f in files)
    assert (await tools.call("glob_files", pattern=".git/**/*.py"))["files"] == [".git/objects/x.py"]


async def test_glob_files_refuses_escaping_patterns(tools, tree):
    for pattern in ("../*", "/etc/*", "src/../../x"):
        env = await tools.envelope("glob_files", {"pattern": pattern})
        assert env["error"]["kind"] == "invalid_arguments" and env["error"]["errors"][0]["path"] == "/pattern"


async def test_glob_files_is_capped(make_tools, tree):
    tools = make_tools(max_results=2)
    result = await tools.call("glob_files", pattern="**/*")
    assert len(result["files"]) == 2 and result["truncated"] is True
    assert "result limit" in result["note"]


async def test_grep_files_finds_lines_with_context_and_filters(tools, tree):
    result = await tools.call("grep_files", pattern=r"needle\s*=", glob="*.py", context=1)
    assert [m["path"] for m in result["matches"]] == ["src/a.py", "src/pkg/b.py", "top.py"]
    first = result["matches"][0]
    assert first == {
        "path": "src/a.py",
        "line": 2,
        "text": "needle = 1",
        "before": ["# src/a.py"],
        "after": [],
    }
    only_txt = await tools.call("grep_files", pattern="NEEDLE", ignore_case=True, glob="src/**/*.txt")
    assert [m["path"] for m in only_txt["matches"]] == ["src/pkg/c.txt"]
    one_file = await tools.call("grep_files", pattern="needle", path="top.py")
    assert [m["path"] for m in one_file["matches"]] == ["top.py"]


async def test_grep_files_caps_matches(tools, tree):
    result = await tools.call("grep_files", pattern="needle", max_matches=2)
    assert len(result["matches"]) == 2 and result["truncated"] is True


async def test_grep_files_rejects_a_bad_regex(tools):
    env = await tools.envelope("grep_files", {"pattern": "(unclosed"})
    assert env["error"]["kind"] == "invalid_arguments"
    assert env["error"]["errors"][0]["path"] == "/pattern"
    assert "missing )" in env["error"]["message"]


async def test_grep_files_skips_binary_and_oversized_files(make_tools, workspace):
    tools = make_tools(max_grep_file_bytes=1024)
    (workspace / "blob.bin").write_bytes(b"needle\x00")
    (workspace / "huge.txt").write_text("needle\n" * 1000)
    (workspace / "small.txt").write_text("needle\n")
    result = await tools.call("grep_files", pattern="needle")
    assert [m["path"] for m in result["matches"]] == ["small.txt"]
    assert "1 binary files were skipped" in result["note"]
    assert "larger than 1024 bytes were skipped" in result["note"]


async def test_glob_files_supports_classes_negation_and_trailing_double_star(tools, tree):
    assert (await tools.call("glob_files", pattern="src/pkg/[!b].*"))["files"] == ["src/pkg/c.txt"]
    assert (await tools.call("glob_files", pattern="src/**"))["files"] == [
        "src/a.py",
        "src/pkg/b.py",
        "src/pkg/c.txt",
    ]
    assert (await tools.call("glob_files", pattern="src/?.py"))["files"] == ["src/a.py"]


async def test_settings_workspace_overrides_the_host_workspace(make_tools, workspace, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "there.txt").write_text("there\n")
    tools = make_tools(workspace=str(other), write_roots=())
    assert (await tools.call("read_file", path="there.txt"))["content"] == "there\n"
    env = await tools.envelope("read_file", {"path": str(workspace / "hello.txt")})
    assert env["error"]["kind"] == "denied"


async def test_empty_file_reads_as_empty(tools, workspace):
    (workspace / "empty.txt").write_text("")
    result = await tools.call("read_file", path="empty.txt")
    assert result["content"] == "" and result["truncated"] is False and "note" not in result
