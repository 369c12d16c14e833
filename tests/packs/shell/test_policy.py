"""The shell pack's argument policy (``reyn_tools_shell/policy.py``), one attack per test, with real
subprocesses through the real dispatcher: which program, which arguments, which working directory,
which executable and which environment. Each refusal is asserted with its message, and that nothing
ran (the workspace is unchanged) or that the rest still works."""

from __future__ import annotations

import os
import re

import pytest

from reyn_core import InvalidToolArguments, ToolDenied, ToolRuntimeMissing

# --------------------------------------------------------------------------- working directory


async def test_working_directory_is_inside_the_workspace(shell, workspace):
    assert (await shell.run(argv=["pwd"]))["stdout"] == f"{workspace}\n"
    assert (await shell.run(argv=["pwd"], cwd="sub"))["stdout"] == f"{workspace / 'sub'}\n"


@pytest.mark.parametrize(
    "cwd, message",
    [
        ("..", "'..' segment"),
        ("sub/../..", "'..' segment"),
        ("/tmp", "outside the workspace"),
        ("missing", "not a directory"),
        ("a\x00b", "NUL byte"),
    ],
)
async def test_working_directory_outside_the_workspace_is_refused(shell, cwd, message):
    with pytest.raises(ToolDenied, match=message):
        await shell.run(argv=["pwd"], cwd=cwd)


async def test_working_directory_through_a_symlink_outside_is_refused(shell, workspace, tmp_path):
    (workspace / "escape").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(ToolDenied, match="outside the workspace"):
        await shell.run(argv=["pwd"], cwd="escape")


# --------------------------------------------------------------------------- allowlist


async def test_unlisted_program_is_refused_naming_what_is_allowed(shell, workspace):
    with pytest.raises(ToolDenied) as info:
        await shell.run(argv=["rm", "-rf", str(workspace)])
    assert "program 'rm' is not allowed" in info.value.message
    assert "git (status, diff, log)" in info.value.message
    assert workspace.exists()


async def test_program_given_as_a_path_is_refused(shell):
    with pytest.raises(ToolDenied, match="programs are named, not given as paths"):
        await shell.run(argv=["/usr/bin/echo", "x"])


@pytest.mark.parametrize(
    "command, reason",
    [
        ("git push", "may only run the subcommands"),
        ("git -c core.pager=touch log", "deny rule '^-c'"),
        ("git --upload-pack=touch log", "deny rule '^--upload-pack'"),
        ("git log --exec=touch", "deny rule '^--exec'"),
        ("git diff --output=/tmp/x", "deny rule '^--output'"),
        ("git log --format=%x", "is not allowed for git"),
        ("git status; touch pwned", "may only run the subcommands"),
        ("find . -exec touch pwned ;", "deny rule"),
        ("find . -delete", "deny rule"),
        ("env sh -c id", "takes no further arguments"),
        ("touch ../escape", "is not allowed for touch"),
    ],
)
async def test_argument_injection_is_refused(shell, workspace, command, reason):
    with pytest.raises(ToolDenied, match=re.escape(reason)):
        await shell.run(command=command)
    assert sorted(p.name for p in workspace.iterdir()) == ["sub"]


async def test_allowed_program_that_is_not_installed_is_runtime_missing(make_shell):
    shell = make_shell(programs=[{"name": "no-such-program-xyz"}])
    with pytest.raises(ToolRuntimeMissing, match="not installed on the command PATH"):
        await shell.run(argv=["no-such-program-xyz"])


async def test_executable_inside_the_workspace_is_refused(make_shell, workspace):
    script = workspace / "tool"
    script.write_text("#!/bin/sh\necho pwned\n")
    script.chmod(0o755)
    shell = make_shell(programs=[{"name": "tool", "path": str(script)}])
    with pytest.raises(ToolDenied, match="inside the workspace"):
        await shell.run(argv=["tool"])


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"argv": ["echo"], "command": "echo"},
        {"argv": []},
        {"command": "echo 'unbalanced"},
        {"command": "   "},
        {"argv": ["echo", "a\x00b"]},
        {"argv": "echo hi"},
    ],
)
async def test_malformed_arguments_are_invalid(shell, args):
    env = await shell.envelope(args)
    assert env["status"] == "error" and env["error"]["kind"] == "invalid_arguments", env
    assert (await shell.run(argv=["echo", "still works"]))["stdout"] == "still works\n"


async def test_invalid_arguments_raise_the_typed_error(shell):
    with pytest.raises(InvalidToolArguments, match="No closing quotation"):
        await shell.run(command="echo 'x")


# --------------------------------------------------------------------------- environment


async def test_environment_drops_loader_interpreter_and_secret_variables(make_shell, monkeypatch):
    for name, value in {
        "LD_LIBRARY_PATH": "/nonexistent",
        "DYLD_INSERT_LIBRARIES": "x.dylib",
        "PYTHONPATH": "/evil",
        "PYTHONSTARTUP": "/evil.py",
        "MY_API_TOKEN": "s3cret",
        "AWS_SECRET_ACCESS_KEY": "s3cret",
        "DB_PASSWORD": "s3cret",
        "GITHUB_PAT": "s3cret",
        "REYN_SAFE_VALUE": "visible",
    }.items():
        monkeypatch.setenv(name, value)
    shell = make_shell(env_allow=["*"])  # even "allow everything" never passes these through
    result = await shell.run(argv=["env"])
    names = {line.split("=", 1)[0] for line in result["stdout"].splitlines()}
    assert "REYN_SAFE_VALUE" in names and "PATH" in names
    assert not names & {
        "LD_LIBRARY_PATH",
        "DYLD_INSERT_LIBRARIES",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "MY_API_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "GITHUB_PAT",
    }
    assert "s3cret" not in result["stdout"]


async def test_environment_is_allowlisted_by_default(shell, monkeypatch):
    monkeypatch.setenv("SOME_HOST_SETTING", "x")
    monkeypatch.setenv("LANG", "C.UTF-8")
    names = {line.split("=", 1)[0] for line in (await shell.run(argv=["env"]))["stdout"].splitlines()}
    assert "SOME_HOST_SETTING" not in names
    assert {"PATH", "LANG"} <= names


async def test_path_keeps_absolute_entries_only(make_shell, monkeypatch, workspace):
    monkeypatch.setenv("PATH", f".:sub:{os.environ['PATH']}")
    (workspace / "echo").write_text("#!/bin/sh\necho pwned\n")
    (workspace / "echo").chmod(0o755)
    shell = make_shell()
    result = await shell.run(argv=["echo", "real"])
    assert result["stdout"] == "real\n"
    env_out = (await shell.run(argv=["env"]))["stdout"]
    path = next(line for line in env_out.splitlines() if line.startswith("PATH="))[5:]
    assert all(p.startswith("/") for p in path.split(":"))


async def test_env_set_values_reach_the_command(make_shell):
    shell = make_shell(env_set={"GIT_AUTHOR_NAME": "Reyn Bot", "LC_ALL": "C"})
    names = dict(line.split("=", 1) for line in (await shell.run(argv=["env"]))["stdout"].splitlines())
    assert names["GIT_AUTHOR_NAME"] == "Reyn Bot" and names["LC_ALL"] == "C"
