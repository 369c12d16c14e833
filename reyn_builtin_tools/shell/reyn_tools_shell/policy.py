"""What a command may be: its program and arguments, working directory, executable and environment."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path

from reyn_core import ArgumentProblem, InvalidToolArguments, ToolDenied, ToolRuntimeMissing

from .settings import ProgramRule, ShellSettings, is_dropped_env


def parse_command(argv: list[str] | None, command: str | None) -> list[str]:
    """The argv to run: the list as given, or ``command`` split with ``shlex`` (never run by a shell)."""
    if command is not None:
        try:
            parsed = shlex.split(command)
        except ValueError as exc:
            raise InvalidToolArguments(
                f"command cannot be parsed: {exc}", problems=[ArgumentProblem("/command", str(exc))]
            ) from None
    else:
        parsed = list(argv or [])
    if not parsed:
        raise InvalidToolArguments("the command is empty", problems=[ArgumentProblem("/command", "empty")])
    for i, arg in enumerate(parsed):
        if "\x00" in arg:
            raise InvalidToolArguments(
                f"argument {i} contains a NUL byte",
                problems=[ArgumentProblem(f"/argv/{i}", "contains a NUL byte")],
            )
    return parsed


def allowed_rule(settings: ShellSettings, argv: list[str]) -> ProgramRule:
    """The rule that allows ``argv``, or ``ToolDenied`` saying what is allowed instead."""
    program = argv[0]
    rule = settings.rule_for(program)
    if rule is None:
        allowed = ", ".join(r.summary() for r in settings.programs) or "none"
        how = "; programs are named, not given as paths" if "/" in program else ""
        raise ToolDenied(f"program {program[:100]!r} is not allowed{how}; allowed programs: {allowed}")
    reason = rule.refusal(argv)
    if reason is not None:
        raise ToolDenied(f"command refused: {reason}")
    return rule


def workspace_of(settings: ShellSettings, host_workspace: Path) -> Path:
    """The real path of the workspace commands run in."""
    base = Path(host_workspace)
    return Path(os.path.realpath(base / settings.workspace if settings.workspace else base))


def resolve_cwd(workspace: Path, cwd: str) -> Path:
    """The working directory: a directory inside the workspace (after resolving links)."""
    problem = None
    if "\x00" in cwd:
        problem = "contains a NUL byte"
    elif ".." in cwd.split("/"):
        problem = "contains a '..' segment"
    if problem:
        raise ToolDenied(f"working directory {cwd[:100]!r} {problem}; give a directory inside the workspace")
    target = Path(os.path.realpath(workspace / cwd))
    if os.path.commonpath([workspace, target]) != str(workspace):
        raise ToolDenied(f"working directory {cwd[:100]!r} is outside the workspace")
    if not target.is_dir():
        raise ToolDenied(f"working directory {cwd[:100]!r} is not a directory in the workspace")
    return target


def command_env(
    settings: ShellSettings, host_env: Mapping[str, str], workspace: Path | None = None
) -> dict[str, str]:
    """The environment a command gets: allowlisted host variables minus code-injection variables
    (loader, interpreter, shell, git, editor and pager hooks), secret-looking names and values that
    carry credentials, plus ``env_set``. ``PATH`` keeps absolute entries only; ``HOME`` is dropped
    when it lies inside the workspace (programs read their configuration from there)."""
    import fnmatch

    env = {
        k: v
        for k, v in host_env.items()
        if any(fnmatch.fnmatchcase(k, pat) for pat in settings.env_allow)
        and not is_dropped_env(k, settings.secret_patterns, v)
    }
    env.update(settings.env_set)
    path = env.get("PATH", os.defpath)
    env["PATH"] = os.pathsep.join(p for p in path.split(os.pathsep) if p.startswith("/"))
    home = env.get("HOME")
    if home is not None and workspace is not None:
        real = os.path.realpath(home) if home.startswith("/") else str(workspace)
        if os.path.commonpath([str(workspace), real]) == str(workspace):
            del env["HOME"]
    return env


def resolve_executable(rule: ProgramRule, env: Mapping[str, str], workspace: Path) -> str:
    """The absolute executable for ``rule``: its ``path``, or a lookup on the command's ``PATH``.

    An executable inside the workspace is refused: a model can write files there.
    """
    found = rule.path if rule.path else shutil.which(rule.name, path=env.get("PATH", ""))
    if not found or not os.access(found, os.X_OK) or not os.path.isfile(found):
        raise ToolRuntimeMissing(
            f"program {rule.name!r} is allowed but not installed"
            + (f" at {rule.path!r}" if rule.path else " on the command PATH")
            + "; install it or set its `path` in [plugins.shell.settings]"
        )
    real = os.path.realpath(found)
    if os.path.commonpath([workspace, real]) == str(workspace):
        raise ToolDenied(f"program {rule.name!r} resolves to {real}, inside the workspace; refused")
    return found
