"""git's hardening: defence in depth under the kernel sandbox (``sandbox.py``).

The promise is the sandbox's: whatever a program runs, including code from a configuration a model
wrote, reaches only the grants. These rules stay on top because they are cheap and keep git from
running a model-written hook or fsmonitor at all — and because files a model writes into a write
root (``.git/hooks``, ``conftest.py``, ``.envrc``) may later be run by the *operator*, outside any
sandbox, which no sandbox can prevent (the file pack's protected names guard those). They are a
list, not a guarantee; do not extend them to chase programs (the sandbox covers the class):

- **git** runs only against the workspace's own repository, with hardened configuration:

  1. *confined*: from the working directory up to the workspace, no directory may hold a ``.git``
     (directory, ``gitdir:`` file or link) or a ``HEAD`` (a bare-repository layout), except the
     workspace's own ``.git``; otherwise git would read a repository configuration a tool may have
     written (``core.fsmonitor``, hooks, aliases, filters, ``include.path`` ...);
  2. *hardened*: every command gets ``HARDENING_ENV`` — no system or global configuration
     (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``, so a writable ``$HOME/.gitconfig``
     is never read), and command-scope configuration (``GIT_CONFIG_COUNT``, which outranks the
     repository's own) that turns off fsmonitor, hooks, pagers, editors, askpass and credential
     helpers, refuses bare repositories found by discovery and the ``ext::`` transport. It is set
     after the environment is scrubbed, so the scrubber (which drops the host's ``GIT_*``) cannot
     strip it, and after ``env_set``, so a profile cannot weaken it;
  3. *argument rules* on top of the operator's: no global option but a few harmless ones (``-c``,
     ``--config-env``, ``-C``, ``--git-dir``, ``--work-tree``, ``--exec-path`` are refused), no
     subcommand that writes configuration or runs a command by design (``config``, ``help``,
     ``submodule``, ``bisect``, ``difftool`` ...), and no option that names a command or writes
     configuration or files (``--upload-pack``, ``--receive-pack``, ``--exec``, ``--config``,
     ``--template``, ``--output``, ``--open-files-in-pager`` ... and every abbreviation of them);
  4. git older than 2.38 (which would ignore parts of the hardening) is refused.

"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from pathlib import Path

from reyn_core import ToolDenied, ToolRuntimeMissing

from .settings import ProgramRule

MIN_GIT_VERSION = (2, 38)


# --------------------------------------------------------------------------- git: hardening env

_GIT_COMMAND_CONFIG: tuple[tuple[str, str], ...] = (
    ("safe.bareRepository", "explicit"),  # a bare layout found by discovery is refused by git too
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),  # no hook can be found there
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.askPass", ""),
    ("core.sshCommand", "ssh"),
    ("core.gitProxy", ""),
    ("credential.helper", ""),  # an empty value clears every helper configured before it
    ("protocol.ext.allow", "never"),
    ("submodule.recurse", "false"),
    ("uploadpack.packObjectsHook", ""),
)


def _hardening_env() -> dict[str, str]:
    env = {
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_SYSTEM": "/dev/null",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "",  # set but empty: git asks no program (and ignores SSH_ASKPASS)
        "GIT_PAGER": "cat",
        "GIT_EDITOR": "false",
        "GIT_SEQUENCE_EDITOR": "false",
        "GIT_CONFIG_COUNT": str(len(_GIT_COMMAND_CONFIG)),
    }
    for i, (key, value) in enumerate(_GIT_COMMAND_CONFIG):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


# Set on every command (a program may run git itself), after scrubbing and after ``env_set``.
HARDENING_ENV: dict[str, str] = _hardening_env()

# --------------------------------------------------------------------------- git: arguments

_SAFE_GLOBAL_OPTIONS = frozenset(
    {
        "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs",
        "--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--version",
    }
)  # fmt: skip
_REFUSED_SUBCOMMANDS = frozenset(
    {
        "config", "help", "daemon", "difftool", "mergetool", "filter-branch", "instaweb", "send-email",
        "submodule", "bisect", "credential", "credential-cache", "credential-cache--daemon",
        "credential-store", "upload-pack", "receive-pack", "upload-archive", "shell", "remote-ext",
        "remote-fd", "http-backend", "hook", "web--browse", "fsmonitor--daemon", "maintenance",
        "archimport", "cvsexportcommit", "cvsimport", "cvsserver", "p4", "svn", "quiltimport",
    }
)  # fmt: skip
# Long options that name a command, write configuration or write files: refused after the
# subcommand, and so is every abbreviation of them (git accepts unique prefixes).
_REFUSED_LONG_OPTIONS: tuple[str, ...] = (
    "upload-pack", "receive-pack", "exec", "extcmd", "exec-path", "open-files-in-pager", "config",
    "config-env", "template", "separate-git-dir", "output", "help", "git-dir", "work-tree", "tool",
)  # fmt: skip
# Short options that do the same for one subcommand (``clone -u``/``-c``, ``grep -O``, ``rebase -x``).
_REFUSED_SHORT_OPTIONS: dict[str, str] = {
    "clone": "uc",
    "ls-remote": "u",
    "grep": "O",
    "rebase": "x",
    "archive": "o",
    "fetch": "",
}


def git_argument_refusal(argv: list[str]) -> str | None:
    """Why Reyn refuses these git arguments (on top of the operator's rule), or None."""
    args = argv[1:]
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] not in _SAFE_GLOBAL_OPTIONS:
            return (
                f"git option {args[i][:100]!r} before the subcommand is refused (it can change which "
                "repository, configuration or programs git uses); only "
                f"{sorted(_SAFE_GLOBAL_OPTIONS)} may come first"
            )
        i += 1
    if i == len(args):
        return None
    sub = args[i]
    if sub in _REFUSED_SUBCOMMANDS or sub.startswith("credential-"):
        return f"git {sub!r} is refused: it writes configuration or runs commands by design"
    shorts = _REFUSED_SHORT_OPTIONS.get(sub, "")
    for arg in args[i + 1 :]:
        if arg == "--":
            break
        if arg.startswith("--"):
            name = arg[2:].split("=", 1)[0]
            hit = next((o for o in _REFUSED_LONG_OPTIONS if name and o.startswith(name)), None)
            if hit is not None:
                return (
                    f"git option {arg[:100]!r} is refused (it is or abbreviates --{hit}, which names a "
                    "command, or writes configuration or files)"
                )
        elif arg.startswith("-") and len(arg) > 1 and set(arg[1:]) & set(shorts):
            return (
                f"git {sub} option {arg[:100]!r} is refused "
                f"(-{shorts} names a command or writes configuration)"
            )
    return None


# --------------------------------------------------------------------------- which program is which


def _names(rule: ProgramRule, executable: str) -> set[str]:
    names = {rule.name, os.path.basename(executable)}
    if rule.path:
        names.add(os.path.basename(rule.path))
    names.add(os.path.basename(os.path.realpath(executable)))
    return names


def is_git(rule: ProgramRule, executable: str) -> bool:
    """Whether the rule runs git (by its name, its path or what the executable resolves to)."""
    return "git" in _names(rule, executable)


# --------------------------------------------------------------------------- git: repository confinement


def _shown(path: Path, workspace: Path) -> str:
    rel = os.path.relpath(path, workspace)
    return "." if rel == "." else rel


def repository_refusal(cwd: Path, workspace: Path) -> str | None:
    """Why git may not run in ``cwd``: a directory from ``cwd`` up to the workspace that holds a
    repository other than the workspace's own (``.git`` of any kind, or a bare layout's ``HEAD``).
    Names are compared case-insensitively (case-insensitive file systems match them so)."""
    here = cwd
    while True:
        try:
            names = {n.casefold(): n for n in os.listdir(here)}
        except OSError as exc:
            return f"cannot list {_shown(here, workspace)!r} to look for repositories: {exc.strerror or exc}"
        if ".git" in names:
            marker = here / names[".git"]
            st = os.lstat(marker)
            own = here == workspace and names[".git"] == ".git"
            if own and (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                return None  # the workspace's own repository (the file tools never write .git)
            where = _shown(marker, workspace)
            return (
                f"git would use the repository at {where!r}; Reyn runs git only against the "
                "workspace's own repository (a nested or linked repository's configuration can run "
                "commands, and a tool may have written it)"
            )
        if "head" in names:
            where = _shown(here / names["head"], workspace)
            return (
                f"{where!r} makes {_shown(here, workspace)!r} look like a git directory (a bare "
                "repository layout), whose configuration can run commands; Reyn runs git only against "
                "the workspace's own repository"
            )
        if here == workspace or here.parent == here:
            return None
        here = here.parent


_version_cache: dict[tuple[str, int, int, int, int], tuple[int, ...]] = {}


async def git_version(executable: str) -> tuple[int, ...]:
    """The version of the git at ``executable``, run with the hardening env; kept per file while its
    inode, size, mtime and the kernel's ctime (which ``os.utime`` cannot set) are unchanged."""
    st = os.stat(executable)
    key = (os.path.realpath(executable), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if key not in _version_cache:
        proc = await asyncio.create_subprocess_exec(
            executable,
            "--version",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={"PATH": os.defpath, **HARDENING_ENV},
            cwd="/",
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), 10)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
            out = b""
        found = re.search(rb"(\d+)\.(\d+)", out)
        _version_cache[key] = tuple(int(x) for x in found.groups()) if found else ()
    return _version_cache[key]


async def confine(rule: ProgramRule, executable: str, argv: list[str], cwd: Path, workspace: Path) -> None:
    """Refuse (``ToolDenied``) git arguments that escape the hardening and git outside the
    workspace's own repository; refuse a git that cannot be hardened (``ToolRuntimeMissing``)."""
    if not is_git(rule, executable):
        return
    found = git_argument_refusal(argv) or repository_refusal(cwd, workspace)
    if found:
        raise ToolDenied(f"command refused: {found}")
    version = await git_version(executable)
    if version < MIN_GIT_VERSION:
        shown = ".".join(map(str, version)) or "unknown"
        raise ToolRuntimeMissing(
            f"git at {executable} is version {shown}; Reyn needs git >= "
            f"{'.'.join(map(str, MIN_GIT_VERSION))} to harden it (GIT_CONFIG_GLOBAL, GIT_CONFIG_COUNT, "
            "safe.bareRepository)"
        )
