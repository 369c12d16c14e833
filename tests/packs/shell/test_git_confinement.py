"""Code execution through git's own configuration (``reyn_tools_shell/confine.py``), with real git
and real subprocesses. Every attack writes a configuration whose command would create a marker file
*outside* the workspace; each test asserts the marker does not exist. The same configurations do run
their command under plain git (``test_the_payloads_run_under_plain_git`` proves the test setup
would catch a regression), and ordinary git use in the workspace's own repository still works."""

from __future__ import annotations

import http.server
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from local_server import QuietHandler

from reyn_core import ToolDenied

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")

# A git rule that allows everything the operator might: the only limits left are Reyn's own.
GIT_RULE = {"name": "git", "any_args": True, "match": ["git status"]}
IDENTITY = {
    n: v
    for who in ("AUTHOR", "COMMITTER")
    for n, v in ((f"GIT_{who}_NAME", "t"), (f"GIT_{who}_EMAIL", "t@x"))
}
PLAIN_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Plain git for setting up fixtures (no Reyn in between). ``safe.directory=*``: a workspace
    handed to the sandbox's unprivileged user (``git_shell``) is not the host user's."""
    full = {
        **PLAIN_ENV,
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "safe.directory",
        "GIT_CONFIG_VALUE_0": "*",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        **(env or {}),
    }
    full["GIT_COMMITTER_NAME"], full["GIT_COMMITTER_EMAIL"] = "t", "t@x"
    return subprocess.run(
        [GIT or "git", *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=60
    )


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "tracked.txt").write_text("one\n")
    git(path, "add", "tracked.txt")
    git(path, "commit", "-q", "-m", "init")
    (path / "tracked.txt").write_text("two\n")  # a change: status, diff and filters have work to do
    return path


def payload(marker: Path) -> str:
    return f"touch {marker}; false"


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "PWNED"


@pytest.fixture
def git_shell(make_shell, workspace, writable_by_sandbox):
    init_repo(workspace)
    (workspace / "out").mkdir()
    writable_by_sandbox(workspace)  # ordinary git use commits: the workspace is a write root here
    return make_shell(programs=[GIT_RULE], env_set=IDENTITY, write_roots=["."])


# --------------------------------------------------------------------------- payloads, per family


def family(marker: Path, repo: Path) -> dict[str, tuple[str, list[str]]]:
    """name -> (config text for ``repo``, git argv that triggers it)."""
    cmd = payload(marker)
    (repo / "evil.inc").write_text(f'[alias]\n\tst = "!{cmd}"\n')
    hooks = repo / "myhooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_text(f"#!/bin/sh\n{cmd}\n")
    (hooks / "pre-commit").chmod(0o755)
    return {
        "fsmonitor": (f'[core]\n\tfsmonitor = "{cmd}"\n', ["git", "status"]),
        "alias": (f'[alias]\n\tst = "!{cmd}"\n', ["git", "st"]),
        "include.path": ("[include]\n\tpath = ../evil.inc\n", ["git", "st"]),
        "diff.external": (f'[diff]\n\texternal = "{cmd}"\n', ["git", "diff"]),
        "filter.clean": (
            f'[filter "x"]\n\tclean = "{cmd}"\n',
            ["git", "diff"],
        ),
        "core.hooksPath": (f"[core]\n\thooksPath = {hooks}\n", ["git", "commit", "-q", "-am", "m"]),
        "core.sshCommand": (
            f'[core]\n\tsshCommand = "{cmd}"\n[remote "origin"]\n\turl = ssh://example.invalid/x\n',
            ["git", "ls-remote", "origin"],
        ),
        "core.editor": (f'[core]\n\teditor = "{cmd}"\n', ["git", "commit", "-a"]),
    }


FAMILY = [
    "fsmonitor",
    "alias",
    "include.path",
    "diff.external",
    "filter.clean",
    "core.hooksPath",
    "core.sshCommand",
    "core.editor",
]


def arm(repo: Path, gitdir: Path, marker: Path, name: str) -> list[str]:
    """Append family member ``name`` to the configuration in ``gitdir``; return its trigger."""
    config, argv = family(marker, repo)[name]
    if name == "filter.clean":  # before the filter exists: setting up must not run it
        (repo / ".gitattributes").write_text("* filter=x\n")
        git(repo, "update-index", "--refresh")
        os.utime(repo / "tracked.txt", ns=(0, 0))  # stat-dirty: git re-reads it through the filter
    with open(gitdir / "config", "a") as fh:
        fh.write(config)
    return argv


@pytest.mark.parametrize("name", FAMILY)
def test_the_payloads_run_under_plain_git(tmp_path, marker, name):
    """Without Reyn, every payload runs: the tests below would notice a hardening that stopped working."""
    repo = init_repo(tmp_path / "plain")
    argv = arm(repo, repo / ".git", marker, name)
    git(repo, *argv[1:])
    assert marker.exists(), name


# --------------------------------------------------------------------------- confinement


@pytest.mark.parametrize("name", FAMILY)
async def test_a_nested_repository_is_never_used(git_shell, workspace, marker, name):
    nested = init_repo(workspace / "out" / "nested")
    argv = arm(nested, nested / ".git", marker, name)
    with pytest.raises(ToolDenied, match=r"git would use the repository at 'out/nested/\.git'"):
        await git_shell.run(argv=argv, cwd="out/nested")
    assert not marker.exists()


def bare_layout(directory: Path, config: str) -> None:
    """The review's layout: HEAD, objects/, refs/ and a config, written as plain files."""
    (directory / "objects").mkdir(parents=True)
    (directory / "refs" / "heads").mkdir(parents=True)
    (directory / "HEAD").write_text("ref: refs/heads/main\n")
    (directory / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n" + config)


@pytest.mark.parametrize("cwd", ["out", "out/deeper"])
async def test_a_bare_repository_layout_in_a_writable_directory_is_never_used(
    git_shell, workspace, marker, cwd
):
    bare_layout(
        workspace / "out", f'\tfsmonitor = "{payload(marker)}"\n[alias]\n\tst = "!{payload(marker)}"\n'
    )
    (workspace / "out" / "deeper").mkdir()
    for argv in (["git", "status"], ["git", "st"], ["git", "log"]):
        with pytest.raises(ToolDenied, match=r"'out/HEAD' makes 'out' look like a git directory"):
            await git_shell.run(argv=argv, cwd=cwd)
    assert not marker.exists()


async def test_a_gitdir_file_pointing_into_a_writable_directory_is_never_used(git_shell, workspace, marker):
    evil = workspace / "out" / "evil"
    evil.mkdir()
    bare_layout(evil, f'\tfsmonitor = "{payload(marker)}"\n\tworktree = {workspace / "sub"}\n')
    (workspace / "sub" / ".git").write_text(f"gitdir: {evil}\n")
    with pytest.raises(ToolDenied, match=r"repository at 'sub/\.git'"):
        await git_shell.run(argv=["git", "status"], cwd="sub")
    assert not marker.exists()


async def test_a_linked_dot_git_at_the_workspace_root_is_not_the_workspace_repository(
    make_shell, workspace, tmp_path, marker
):
    elsewhere = init_repo(tmp_path / "elsewhere")
    (elsewhere / ".git" / "config").open("a").write(f'[core]\n\tfsmonitor = "{payload(marker)}"\n')
    (workspace / ".git").symlink_to(elsewhere / ".git")
    shell = make_shell(programs=[GIT_RULE])
    with pytest.raises(ToolDenied, match=r"repository at '\.git'"):
        await shell.run(argv=["git", "status"])
    assert not marker.exists()


async def test_a_case_variant_marker_is_refused_too(git_shell, workspace):
    (workspace / "out" / "Head").write_text("ref: refs/heads/main\n")
    with pytest.raises(ToolDenied, match="look like a git directory"):
        await git_shell.run(argv=["git", "status"], cwd="out")


# --------------------------------------------------------------------------- hardening (own repository)


@pytest.mark.parametrize("name", ["fsmonitor", "core.hooksPath", "core.sshCommand", "core.editor"])
async def test_the_workspace_repository_configuration_cannot_run_commands_either(
    git_shell, workspace, marker, name
):
    """Defence in depth: even the workspace's own .git/config (never written by the file tools)
    cannot start fsmonitor, hooks, editors or ssh commands. Aliases, include.path, filters and
    diff.external there are the operator's own and still apply — so they are not asserted here."""
    argv = arm(workspace, workspace / ".git", marker, name)
    await git_shell.run(argv=argv)
    assert not marker.exists()


async def test_hooks_in_the_workspace_repository_do_not_run(git_shell, workspace, marker):
    hook = workspace / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\n{payload(marker)}\n")
    hook.chmod(0o755)
    result = await git_shell.run(argv=["git", "commit", "-q", "-am", "change"])
    assert result["exit_code"] == 0, result
    assert not marker.exists()


@pytest.mark.parametrize("where", ["home", "xdg"])
async def test_a_writable_global_configuration_is_never_read(
    make_shell, workspace, tmp_path, monkeypatch, marker, where
):
    init_repo(workspace)
    home = tmp_path / "home"
    config = home / ".gitconfig" if where == "home" else home / ".config" / "git" / "config"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[core]\n\tfsmonitor = "{payload(marker)}"\n[alias]\n\tst = "!{payload(marker)}"\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    shell = make_shell(programs=[GIT_RULE], env_allow=["PATH", "HOME", "XDG_*"], env_set=IDENTITY)
    assert (await shell.run(argv=["git", "status"]))["exit_code"] == 0
    assert (await shell.run(argv=["git", "st"]))["exit_code"] != 0  # the alias does not exist
    assert not marker.exists()


@pytest.mark.parametrize(
    "name, value",
    [
        ("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='{cmd}'"),
        ("GIT_SSH_COMMAND", "{cmd}"),
        ("GIT_EXTERNAL_DIFF", "{cmd}"),
        ("GIT_EDITOR", "{cmd}"),
        ("GIT_DIR", "{bare}"),
    ],
)
async def test_git_variables_of_the_host_never_reach_git(
    make_shell, git_shell, workspace, monkeypatch, marker, name, value
):
    bare = workspace.parent / "bare"
    bare_layout(bare, f'\tfsmonitor = "{payload(marker)}"\n\tworktree = {workspace}\n')
    monkeypatch.setenv(name, value.format(cmd=payload(marker), bare=bare))
    (workspace / ".git" / "config").open("a").write('[remote "origin"]\n\turl = ssh://example.invalid/x\n')
    shell = make_shell(programs=[GIT_RULE], env_allow=["*"])  # even "allow everything"
    for argv in (["git", "status"], ["git", "diff"], ["git", "ls-remote", "origin"], ["git", "commit", "-a"]):
        await shell.run(argv=argv)
    assert not marker.exists()


async def test_credential_helpers_and_askpass_do_not_run(git_shell, workspace, marker):
    """A real HTTP server on 127.0.0.1 answers 401, so git would ask its credential helper and askpass."""

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            self.reply(401, headers={"WWW-Authenticate": 'Basic realm="x"'})

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.timeout = 5
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/repo.git"
        cmd = payload(marker)
        with open(workspace / ".git" / "config", "a") as fh:
            fh.write(f'[credential]\n\thelper = "!{cmd}"\n[core]\n\taskPass = {marker}.sh\n')
            fh.write(f'[remote "web"]\n\turl = {url}\n')
        Path(f"{marker}.sh").write_text(f"#!/bin/sh\n{cmd}\n")
        Path(f"{marker}.sh").chmod(0o755)
        result = await git_shell.run(argv=["git", "ls-remote", "web"], timeout_s=30)
        assert result["exit_code"] != 0 and not result["timed_out"]
        assert not marker.exists()
        # The same configuration under plain git does run the helper: the test can fail.
        git(workspace, "ls-remote", "web", env={"GIT_TERMINAL_PROMPT": "0"})
        assert marker.exists()
    finally:
        server.shutdown()
        server.server_close()


async def test_the_hardening_survives_the_scrubber_and_env_set(make_shell, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "0")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "0")
    shell = make_shell(env_allow=["*"], env_set={"LC_ALL": "C"})
    env = dict(line.split("=", 1) for line in (await shell.run(argv=["env"]))["stdout"].splitlines())
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    pairs = {
        env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"] for i in range(int(env["GIT_CONFIG_COUNT"]))
    }
    assert pairs["safe.bareRepository"] == "explicit"
    assert pairs["core.fsmonitor"] == "false" and pairs["core.hooksPath"] == "/dev/null"
    assert pairs["credential.helper"] == "" and pairs["protocol.ext.allow"] == "never"


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    "command, reason",
    [
        ("git -c core.pager=touch log", "before the subcommand is refused"),
        ("git --config-env=core.pager=X log", "before the subcommand is refused"),
        ("git -C out status", "before the subcommand is refused"),
        ("git --git-dir=out status", "before the subcommand is refused"),
        ("git --work-tree=out status", "before the subcommand is refused"),
        ("git --exec-path=out status", "before the subcommand is refused"),
        ("git -p log", "before the subcommand is refused"),
        ("git config core.fsmonitor touch", "'config' is refused"),
        ("git config --global alias.x !touch", "'config' is refused"),
        ("git help log", "'help' is refused"),
        ("git submodule foreach touch", "'submodule' is refused"),
        ("git bisect run touch", "'bisect' is refused"),
        ("git difftool -x touch", "'difftool' is refused"),
        ("git credential fill", "'credential' is refused"),
        ("git log --output=.git/config", "--output"),
        ("git log --out=.git/config", "--output"),
        ("git fetch --upload-pack=touch origin", "--upload-pack"),
        ("git fetch --upload-p=touch origin", "--upload-pack"),
        ("git push --receive-pack=touch origin", "--receive-pack"),
        ("git push --exec=touch origin", "--exec"),
        ("git ls-remote -u touch origin", "-u names a command"),
        ("git clone -u touch src dst", "-uc names a command"),
        ("git clone -c core.fsmonitor=touch src dst", "-uc names a command"),
        ("git clone --config core.fsmonitor=touch src dst", "--config"),
        ("git clone --template=out src dst", "--template"),
        ("git init --separate-git-dir=out/x", "--separate-git-dir"),
        ("git grep -O two", "-O names a command"),
        ("git grep -iO two", "-O names a command"),
        ("git grep --open-files-in-pager=touch two", "--open-files-in-pager"),
        ("git rebase -x touch main", "-x names a command"),
        ("git rebase --exec=touch main", "--exec"),
        ("git status --help", "--help"),
        ("git archive --remote=x --exec=touch HEAD", "--exec"),
    ],
)
async def test_git_arguments_that_escape_the_hardening_are_refused(
    git_shell, workspace, marker, command, reason
):
    before = (workspace / ".git" / "config").read_text()
    with pytest.raises(ToolDenied, match=re.escape(reason)):
        await git_shell.run(command=command)
    assert (workspace / ".git" / "config").read_text() == before
    assert not (workspace / "out" / "x").exists()


# --------------------------------------------------------------------------- ordinary use still works


async def test_ordinary_git_use_in_the_workspace_repository_works(git_shell, workspace):
    status = await git_shell.run(argv=["git", "status", "--porcelain"])
    assert status["exit_code"] == 0 and status["stdout"] == " M tracked.txt\n"
    assert (await git_shell.run(argv=["git", "status", "--porcelain"], cwd="sub"))["exit_code"] == 0
    diff = await git_shell.run(command="git diff")
    assert "-one\n+two" in diff["stdout"]
    assert (await git_shell.run(command="git --no-pager log --oneline"))["stdout"].endswith(" init\n")
    assert (await git_shell.run(command="git grep -n two"))["stdout"] == "tracked.txt:1:two\n"
    commit = await git_shell.run(command="git commit -q -am 'second change'")
    assert commit["exit_code"] == 0, commit
    log = await git_shell.run(command="git log --format=%s")
    assert log["stdout"] == "second change\ninit\n"


def test_git_version_is_asked_again_when_the_binary_is_replaced_with_size_and_mtime_kept(tmp_path):
    """The version kept per git binary is keyed by inode and the kernel's ctime too: a binary
    rewritten with the same size and its old mtime put back is asked again. Control: the untouched
    binary is not run a second time."""
    import asyncio

    from reyn_tools_shell.confine import git_version

    runs = tmp_path / "runs"
    git = tmp_path / "git"

    def write(version: str) -> None:
        git.write_text(f"#!/bin/sh\necho run >> {runs}\necho 'git version {version}'\n")
        git.chmod(0o755)

    write("2.20.1")
    before = git.stat()
    assert asyncio.run(git_version(str(git))) == (2, 20)
    assert asyncio.run(git_version(str(git))) == (2, 20)
    assert runs.read_text().count("run") == 1  # control: kept while the binary is unchanged
    while True:  # two changes may fall in one clock tick; wait until the kernel's ctime moved
        write("2.45.1")
        os.utime(git, ns=(before.st_atime_ns, before.st_mtime_ns))
        if git.stat().st_ctime_ns != before.st_ctime_ns:
            break
    assert (git.stat().st_size, git.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert asyncio.run(git_version(str(git))) == (2, 45)
    assert runs.read_text().count("run") == 2
