"""One test per path attack, on real files and links in a temp dir, through the real dispatcher.

Each test asserts the specific refusal (``PathRefused.reason``) and that nothing outside the root
was read (the outside secret never appears in a result, access times unchanged where recorded),
written or deleted (the outside tree is byte-for-byte and stat-for-stat as before).
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import threading

import pytest
from pydantic import ValidationError
from reyn_tools_file.descriptors import open_directory, open_parent, open_regular_at
from reyn_tools_file.paths import PathRefused
from reyn_tools_file.scope import Scope, _host_protected
from reyn_tools_file.settings import FileSettings

from reyn_core import InvalidToolArguments, ToolDenied, ToolRuntimeMissing

WRITE_TOOLS = (
    ("write_file", {"content": "pwned"}),
    ("edit_file", {"old_string": "TOP", "new_string": "pwned"}),
    ("delete_file", {}),
)


async def refused(tools, name: str, reason: str, **args) -> PathRefused:
    with pytest.raises(PathRefused) as info:
        await tools.call(name, **args)
    assert info.value.reason == reason, info.value.message
    assert isinstance(info.value, ToolDenied)  # the model sees kind "denied"
    return info.value


async def test_dotdot_segment_is_refused(tools, outside):
    errors = [await refused(tools, "read_file", "dotdot", path="../outside/secret.txt")]
    errors.append(await refused(tools, "read_file", "dotdot", path="out/../../outside/secret.txt"))
    errors.append(await refused(tools, "list_directory", "dotdot", path=".."))
    for name, extra in WRITE_TOOLS:
        errors.append(await refused(tools, name, "dotdot", path="../outside/secret.txt", **extra))
    assert "'..' segment" in errors[0].message
    outside.assert_untouched(*(e.message for e in errors))


async def test_dotdot_inside_the_root_is_refused_too(tools, workspace, outside):
    # Refused even when it would stay inside: a path is checked as written, never normalised.
    await refused(tools, "read_file", "dotdot", path="out/../hello.txt")
    outside.assert_untouched()


async def test_absolute_path_outside_roots_is_refused(tools, outside):
    target = str(outside.root / "secret.txt")
    errors = [await refused(tools, "read_file", "outside_roots", path=target)]
    errors.append(await refused(tools, "grep_files", "outside_roots", pattern="TOP", path=str(outside.root)))
    errors.append(await refused(tools, "glob_files", "outside_roots", pattern="**/*", path=str(outside.root)))
    for name, extra in WRITE_TOOLS:
        errors.append(await refused(tools, name, "outside_roots", path=target, **extra))
    assert "outside the readable roots" in errors[0].message
    outside.assert_untouched(*(e.message for e in errors))


async def test_absolute_path_inside_the_root_is_accepted(tools, workspace):
    result = await tools.call("read_file", path=str(workspace / "hello.txt"))
    assert result["content"] == "hello\nworld\n"
    assert result["path"] == "hello.txt"


async def test_sibling_prefix_directory_is_refused(tools, workspace, outside):
    evil = workspace.parent / (workspace.name + "-evil")  # /tmp/.../ws-evil shares the prefix "ws"
    evil.mkdir()
    (evil / "secret.txt").write_text(outside.secret)
    before = sorted(evil.iterdir())
    errors = [await refused(tools, "read_file", "outside_roots", path=str(evil / "secret.txt"))]
    errors.append(await refused(tools, "list_directory", "outside_roots", path=str(evil)))
    for name, extra in WRITE_TOOLS:
        errors.append(await refused(tools, name, "outside_roots", path=str(evil / "secret.txt"), **extra))
    errors.append(
        await refused(tools, "write_file", "outside_roots", path=str(evil / "new.txt"), content="x")
    )
    assert sorted(evil.iterdir()) == before
    assert (evil / "secret.txt").read_text() == outside.secret
    outside.assert_untouched(*(e.message for e in errors))


async def test_symlinked_leaf_pointing_outside_is_refused(tools, workspace, outside):
    link = workspace / "leak.txt"
    link.symlink_to(outside.root / "secret.txt")
    errors = [await refused(tools, "read_file", "symlink", path="leak.txt")]
    for name, extra in WRITE_TOOLS:
        errors.append(await refused(tools, name, "symlink", path="leak.txt", **extra))
    assert "never follow links" in errors[0].message
    assert link.is_symlink()  # not replaced, not deleted
    grep = await tools.call("grep_files", pattern="TOP-SECRET")
    assert grep["matches"] == []
    outside.assert_untouched(grep, *(e.message for e in errors))


async def test_symlinked_directory_pointing_outside_is_refused(tools, workspace, outside):
    (workspace / "docs").symlink_to(outside.root, target_is_directory=True)
    errors = [await refused(tools, "read_file", "symlink", path="docs/secret.txt")]
    errors.append(await refused(tools, "list_directory", "symlink", path="docs"))
    errors.append(await refused(tools, "grep_files", "symlink", pattern="TOP", path="docs"))
    errors.append(await refused(tools, "write_file", "symlink", path="docs/new.txt", content="pwned"))
    errors.append(await refused(tools, "write_file", "symlink", path="docs/d/deeper/new.txt", content="x"))
    errors.append(await refused(tools, "delete_file", "symlink", path="docs/secret.txt"))
    walked = await tools.call("glob_files", pattern="**/*")
    grep = await tools.call("grep_files", pattern="TOP-SECRET")
    listing = await tools.call("list_directory", path=".")
    assert "docs/secret.txt" not in walked["files"]
    assert grep["matches"] == []
    assert {"name": "docs", "type": "symlink"} in listing["entries"]
    outside.assert_untouched(walked, grep, *(e.message for e in errors))


async def test_symlink_inside_the_root_is_refused_too(tools, workspace, outside):
    (workspace / "alias.txt").symlink_to(workspace / "hello.txt")
    error = await refused(tools, "read_file", "symlink", path="alias.txt")
    assert (workspace / "hello.txt").read_text() == "hello\nworld\n"
    outside.assert_untouched(error.message)


def test_directory_swapped_for_symlink_after_walk_cannot_escape(workspace, outside):
    (workspace / "sub").mkdir()
    (workspace / "sub" / "secret.txt").write_text("inside\n")
    scope = Scope.from_settings(FileSettings(), workspace)
    loc = scope.locate("sub/secret.txt")
    with open_parent(loc) as parent:
        # The check is done and we hold the directory: now an attacker swaps in a link.
        os.rename(workspace / "sub", workspace / "parked")
        (workspace / "sub").symlink_to(outside.root, target_is_directory=True)
        fd, _ = open_regular_at(parent, loc.name, loc.display)
        try:
            data = os.read(fd, 4096)
        finally:
            os.close(fd)
    assert data == b"inside\n"  # the directory that was checked, never the link's target
    outside.assert_untouched(data)


def test_leaf_swapped_for_symlink_after_check_is_refused(workspace, outside):
    (workspace / "note.txt").write_text("inside\n")
    scope = Scope.from_settings(FileSettings(), workspace)
    loc = scope.locate("note.txt")
    with open_parent(loc) as parent:
        (workspace / "note.txt").unlink()
        (workspace / "note.txt").symlink_to(outside.root / "secret.txt")
        with pytest.raises(PathRefused) as info:
            open_regular_at(parent, loc.name, loc.display)
    assert info.value.reason == "symlink"
    outside.assert_untouched(info.value.message)


def test_directory_swapped_during_walk_is_refused(workspace, outside):
    (workspace / "a").mkdir()
    (workspace / "a" / "b").mkdir()
    scope = Scope.from_settings(FileSettings(), workspace)
    loc = scope.locate("a/b/secret.txt")
    with open_directory(loc, upto=1) as a_fd:
        os.rename(workspace / "a" / "b", workspace / "a" / "parked")
        (workspace / "a" / "b").symlink_to(outside.root, target_is_directory=True)
        from reyn_tools_file.descriptors import open_subdir

        with pytest.raises(PathRefused) as info:
            open_subdir(a_fd, "b", "a/b")
    assert info.value.reason == "symlink"
    outside.assert_untouched(info.value.message)


async def test_symlink_swapped_in_concurrently_never_escapes(tools, workspace, outside):
    sub, parked = workspace / "sub", workspace / "parked"
    sub.mkdir()
    (sub / "secret.txt").write_text("inside\n")
    stop = threading.Event()
    swaps = []

    def attacker() -> None:
        while not stop.is_set():
            os.rename(sub, parked)
            sub.symlink_to(outside.root, target_is_directory=True)
            sub.unlink()
            os.rename(parked, sub)
            swaps.append(1)

    thread = threading.Thread(target=attacker)
    thread.start()
    seen = []
    try:
        for i in range(150):
            seen.append(await tools.envelope("read_file", {"path": "sub/secret.txt"}))
            seen.append(
                await tools.envelope(
                    "write_file", {"path": f"sub/new-{i}.txt", "content": "x", "create_dirs": False}
                )
            )
    finally:
        stop.set()
        thread.join()
    assert swaps and sub.is_dir() and not sub.is_symlink()
    for env in seen:
        assert env["status"] == "ok" or env["error"]["kind"] in ("denied", "execution_error"), env
        if env["status"] == "ok" and "content" in env["data"]:
            assert env["data"]["content"] == "inside\n"
    outside.assert_untouched(seen)


async def test_hardlink_to_outside_file_is_never_read_written_or_deleted(tools, workspace, outside):
    os.link(outside.root / "secret.txt", workspace / "hard.txt")
    outside.refresh()  # the outside file now has two links; everything else must stay as it is
    errors = []
    for name, extra in WRITE_TOOLS:
        errors.append(await refused(tools, name, "hardlink", path="hard.txt", **extra))
    errors.append(await refused(tools, "read_file", "hardlink", path="hard.txt"))
    assert "has 2 hard links" in errors[0].message
    assert "allow_hardlinked_reads" in errors[-1].message
    assert (workspace / "hard.txt").exists()
    outside.assert_untouched(*(e.message for e in errors))


async def test_hardlinked_files_are_skipped_by_grep(tools, workspace, outside):
    os.link(outside.root / "secret.txt", workspace / "hard.txt")
    grep = await tools.call("grep_files", pattern="TOP-SECRET")
    assert grep["matches"] == []
    assert "hard links were skipped" in grep["note"]


async def test_nul_byte_in_path_is_refused(tools, outside):
    errors = [await refused(tools, "read_file", "nul", path="hello.txt\x00../../outside/secret.txt")]
    errors.append(await refused(tools, "write_file", "nul", path="new\x00.txt", content="x"))
    assert "NUL byte" in errors[0].message
    outside.assert_untouched(*(e.message for e in errors))


async def test_fifo_is_refused_without_blocking(tools, workspace, outside):
    os.mkfifo(workspace / "pipe")
    errors = [await refused(tools, "read_file", "special_file", path="pipe")]
    errors.append(await refused(tools, "write_file", "special_file", path="pipe", content="x"))
    errors.append(await refused(tools, "delete_file", "special_file", path="pipe"))
    grep = await tools.call("grep_files", pattern="x")  # walks past the FIFO without opening it
    assert "FIFO" in errors[0].message
    assert stat.S_ISFIFO((workspace / "pipe").lstat().st_mode)
    outside.assert_untouched(grep, *(e.message for e in errors))


async def test_device_file_is_refused(tools, workspace, outside):
    try:
        os.mknod(workspace / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero: endless
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    errors = [await refused(tools, "read_file", "special_file", path="zero")]
    errors.append(await refused(tools, "write_file", "special_file", path="zero", content="x"))
    grep = await tools.call("grep_files", pattern="x")
    assert "character device" in errors[0].message
    assert stat.S_ISCHR((workspace / "zero").lstat().st_mode)
    outside.assert_untouched(grep, *(e.message for e in errors))


async def test_proc_self_paths_are_refused(tools, outside):
    error = await refused(tools, "read_file", "outside_roots", path="/proc/self/environ")
    assert "PATH=" not in error.message
    outside.assert_untouched(error.message)


def test_pseudo_filesystem_roots_fail_at_settings_load():
    for root in ("/proc", "/proc/self", "/sys/kernel", "/dev"):
        with pytest.raises(ValidationError, match="pseudo-filesystem"):
            FileSettings(read_roots=(root,))


def test_root_resolving_into_proc_is_refused(tmp_path):
    (tmp_path / "p").symlink_to("/proc/self", target_is_directory=True)
    with pytest.raises(ToolDenied, match="pseudo-filesystem"):
        Scope.from_settings(FileSettings(read_roots=("p",)), tmp_path)


async def test_very_long_path_is_refused(tools, outside):
    errors = [await refused(tools, "read_file", "too_long", path="a/" * 2100 + "b")]
    errors.append(await refused(tools, "write_file", "too_long", path="x" * 300, content="x"))
    assert "limit is 4096" in errors[0].message
    assert "longer than 255 bytes" in errors[1].message
    outside.assert_untouched(*(e.message for e in errors))


async def test_non_utf8_name_is_refused_and_listing_skips_it(tools, workspace, outside):
    raw = os.fsencode(workspace) + b"/\xff\xfe.txt"
    with open(raw, "wb") as fh:
        fh.write(b"hidden\n")
    # A model's JSON can carry lone surrogates, which would map back to those raw bytes: the
    # dispatcher refuses them for every tool before the handler runs (the pack's own "not_utf8"
    # refusal stays behind it), for JSON text and a host's dict alike
    env = await tools.envelope("read_file", json.dumps({"path": "\udcff\udcfe.txt"}))
    assert env["status"] == "error" and env["error"]["kind"] == "invalid_arguments"
    assert env["error"]["errors"][0]["path"] == "/path"
    assert "holds text UTF-8 cannot carry" in env["error"]["message"]
    with pytest.raises(InvalidToolArguments):
        await tools.call("write_file", path="\udcff.txt", content="x")
    listing = await tools.call("list_directory", path=".")
    assert "1 entries with non-UTF-8 names are not shown" in listing["note"]
    json.dumps(listing)  # still JSON-safe
    grep = await tools.call("grep_files", pattern="hidden")
    assert grep["matches"] == []
    outside.assert_untouched(env, listing)


async def test_protected_paths_are_never_written_or_deleted(tools, workspace, outside):
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / "reyn.toml").write_text("[plugins]\n")
    (workspace / "reyn.lock").write_text("")
    errors = [
        await refused(tools, "write_file", "protected", path=".git/config", content="x"),
        await refused(tools, "write_file", "protected", path=".git/hooks/pre-commit", content="x"),
        await refused(tools, "write_file", "protected", path=".GIT/config", content="x"),
        await refused(tools, "write_file", "protected", path="vendor/lib/.git/config", content="x"),
        await refused(tools, "write_file", "protected", path="sub/.git", content="gitdir: /elsewhere"),
        await refused(
            tools, "edit_file", "protected", path="reyn.toml", old_string="plugins", new_string="x"
        ),
        await refused(tools, "delete_file", "protected", path="reyn.lock"),
        await refused(tools, "write_file", "protected", path="reyn.lock", content="x"),
    ]
    assert "is protected ('.git/')" in errors[0].message
    assert (workspace / ".git" / "config").read_text() == "[core]\n"
    assert (workspace / "reyn.lock").exists()
    assert not (workspace / "sub").exists()
    # Reading a protected file is allowed: protection is about writes.
    assert (await tools.call("read_file", path=".git/config"))["content"] == "[core]\n"
    outside.assert_untouched()


async def test_path_outside_write_roots_is_refused_for_writes(make_tools, workspace, outside):
    tools = make_tools(write_roots=("out",))
    error = await refused(tools, "write_file", "outside_roots", path="hello.txt", content="x")
    assert "outside the writable roots; allowed: 'out'" in error.message
    assert (workspace / "hello.txt").read_text() == "hello\nworld\n"
    outside.assert_untouched()


async def test_pyproject_and_reyn_state_are_protected_by_default(tools, workspace, outside):
    (workspace / "pyproject.toml").write_text("[tool.reyn]\n")
    (workspace / ".reyn").mkdir()
    (workspace / ".reyn" / "memory.db").write_bytes(b"SQLite format 3\x00")
    errors = [
        await refused(tools, "write_file", "protected", path="pyproject.toml", content="x"),
        await refused(
            tools, "edit_file", "protected", path="pyproject.toml", old_string="tool", new_string="x"
        ),
        await refused(tools, "delete_file", "protected", path="pyproject.toml"),
        await refused(tools, "write_file", "protected", path=".reyn/memory.db", content="x"),
        await refused(tools, "delete_file", "protected", path=".reyn/memory.db"),
        await refused(tools, "write_file", "protected", path=".reyn/mcp-snapshot.json", content="{}"),
        await refused(tools, "write_file", "protected", path="sub/.REYN/audit.log", content="x"),
    ]
    assert "is protected ('pyproject.toml')" in errors[0].message
    assert "is protected ('.reyn/')" in errors[3].message
    assert (workspace / "pyproject.toml").read_text() == "[tool.reyn]\n"
    assert sorted(p.name for p in (workspace / ".reyn").iterdir()) == ["memory.db"]
    assert not (workspace / "sub").exists()
    # Only those: a neighbour is written, and the protected files can still be read.
    assert (await tools.call("write_file", path="pyproject.toml.bak", content="ok"))["created"] is True
    assert (await tools.call("read_file", path="pyproject.toml"))["content"] == "[tool.reyn]\n"
    outside.assert_untouched()


async def test_host_protected_paths_are_never_written_or_deleted(make_tools, workspace, outside):
    (workspace / "profiles").mkdir()
    profile = workspace / "profiles" / "dev.toml"
    profile.write_text("[plugins]\n")
    (workspace / "state").mkdir()
    lock = workspace / "state" / "dev.lock"
    lock.write_text("lock\n")
    (workspace / "alias").symlink_to(workspace / "state", target_is_directory=True)
    tools = make_tools(write_roots=(".",))
    # The host names the files it loaded; the lock through a link, which is resolved too.
    tools.ctx = _with_protected(
        tools.ctx, [str(profile), str(workspace / "alias" / "dev.lock"), workspace / "vault"]
    )
    errors = [
        await refused(tools, "write_file", "protected", path="profiles/dev.toml", content="x"),
        await refused(
            tools, "edit_file", "protected", path="profiles/dev.toml", old_string="plugins", new_string="x"
        ),
        await refused(tools, "delete_file", "protected", path=str(profile)),
        await refused(tools, "write_file", "protected", path="state/dev.lock", content="x"),
        await refused(tools, "delete_file", "protected", path="state/DEV.lock"),
        await refused(
            tools, "write_file", "protected", path="vault/new.txt", content="x"
        ),  # below a protected dir
    ]
    assert "is protected by the host" in errors[0].message
    assert profile.read_text() == "[plugins]\n" and lock.read_text() == "lock\n"
    assert not (workspace / "vault").exists()
    # Everything else is writable as before; reads of protected files still work.
    assert (await tools.call("write_file", path="profiles/other.toml", content="x"))["created"] is True
    assert (await tools.call("read_file", path="state/dev.lock"))["content"] == "lock\n"
    outside.assert_untouched()


def _with_protected(ctx, value):
    return dataclasses.replace(ctx, host_files={str(path): "a file of the host" for path in value})


async def test_malformed_host_protected_paths_fail_closed(make_tools, workspace, outside):
    # ToolContext.host_files is checked where the context is built: a malformed list never reaches
    # a tool (and the file pack's own reading refuses anything but absolute paths, for a context
    # that crossed a process boundary).
    tools = make_tools(write_roots=(".",))
    for bad in ("/etc/reyn.toml", ["/etc/reyn.toml"], {"relative/reyn.toml": "x"}, {42: "x"}, {"/a": 1}):
        with pytest.raises(TypeError, match="host_files"):
            dataclasses.replace(tools.ctx, host_files=bad)
    for bad in ("/etc/reyn.toml", ["relative/reyn.toml"], [42]):
        with pytest.raises(ToolRuntimeMissing, match="host_files"):
            _host_protected(bad)
    # positive control: a well-formed list that does not cover the file lets the write run
    tools.ctx = _with_protected(tools.ctx, [str(workspace / "elsewhere.toml")])
    assert (await tools.call("write_file", path="new.txt", content="x"))["created"] is True
    outside.assert_untouched()


async def test_pseudo_filesystems_are_refused_under_a_broad_root(make_tools):
    # Read only, on this machine's real /proc: the root "/" would otherwise reach kernel state.
    tools = make_tools(read_roots=("/",), write_roots=())
    pid = os.getpid()
    errors = [
        await refused(tools, "read_file", "pseudo_filesystem", path=f"/proc/{pid}/status"),
        await refused(tools, "read_file", "pseudo_filesystem", path="/proc/self/environ"),
        await refused(tools, "read_file", "pseudo_filesystem", path="/sys/kernel/hostname"),
        await refused(tools, "read_file", "pseudo_filesystem", path="/dev/null"),
        await refused(tools, "list_directory", "pseudo_filesystem", path="/proc"),
        await refused(tools, "grep_files", "pseudo_filesystem", pattern="PATH", path="/proc/self"),
        await refused(tools, "glob_files", "pseudo_filesystem", pattern="*", path="/sys"),
        await refused(tools, "glob_files", "pseudo_filesystem", pattern="proc/self/*", path="/"),
    ]
    assert "pseudo-filesystem" in errors[0].message
    for error in errors:
        assert "PATH=" not in error.message and "VmRSS" not in error.message
    listing = await tools.call("list_directory", path="/")
    names = {e["name"] for e in listing["entries"]}
    assert not names & {"proc", "sys", "dev"} and names  # the rest of "/" is still listed
    assert "pseudo-filesystems" in listing["note"]
    walked = await tools.call("glob_files", pattern="*/*", path="/")
    assert walked["files"]  # /etc/* and the like are found...
    assert not [
        f for f in walked["files"] if f.split("/")[1] in ("proc", "sys", "dev")
    ]  # ...never kernel state
    assert "pseudo-filesystems" in walked["note"]


async def test_socket_is_refused(tools, workspace, outside, monkeypatch):
    import socket

    monkeypatch.chdir(workspace)  # bind a short relative name: socket paths are limited to ~108 bytes
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind("sock")
        errors = [await refused(tools, "read_file", "special_file", path="sock")]
        errors.append(await refused(tools, "write_file", "special_file", path="sock", content="x"))
        errors.append(
            await refused(tools, "edit_file", "special_file", path="sock", old_string="a", new_string="b")
        )
        errors.append(await refused(tools, "delete_file", "special_file", path="sock"))
        grep = await tools.call("grep_files", pattern="x")  # walks past the socket without opening it
    finally:
        server.close()
    assert "is a socket" in errors[0].message
    assert stat.S_ISSOCK((workspace / "sock").lstat().st_mode)
    assert (workspace / "hello.txt").read_text() == "hello\nworld\n"
    outside.assert_untouched(grep, *(e.message for e in errors))
