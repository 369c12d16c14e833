"""The ``reyn`` command. Each subcommand lives in its own module with a ``register(sub, common)``
function; heavy imports happen inside the command functions, never at module import.

Exit codes: 0 success; 1 a check failed (audit drift, doctor errors, a tool call returned an error,
a plugin command failed); 2 usage, profile or load error. Errors are one clear line on stderr,
never a traceback (set ``REYN_DEBUG=1`` to see one for an unexpected internal error).

Commands contributed by enabled plugins (the ``reyn_cli_commands`` hook) run as ``reyn <name> ...``.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import ReynError
from .global_options import scan_global_options

if TYPE_CHECKING:
    import argparse

# Built-in command name -> module, in help order. Each module defines register(subparsers, common).
COMMANDS: dict[str, str] = {
    "init": "reyn_core.cli.profile_file",
    "plugins": "reyn_core.cli.plugins",
    "tools": "reyn_core.cli.tools",
    "doctor": "reyn_core.cli.doctor",
    "chat": "reyn_core.cli.chat",
    "phase": "reyn_core.cli.phase",
}
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(COMMANDS.values()))

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def builtin_command_names() -> tuple[str, ...]:
    """Names plugins may not use for their own commands."""
    return (*COMMANDS, "help")


COMMON_DEFAULTS: dict[str, object] = {
    "profile": None,
    "profile_file": None,
    "json": False,
    "traceback": False,
}


def add_profile_options(p: argparse.ArgumentParser) -> None:
    """``--profile`` / ``--profile-file`` without ``--json`` (for commands that have no JSON output)."""
    import argparse

    p.add_argument(
        "--profile",
        default=argparse.SUPPRESS,
        help="named profile to apply ([profiles.<name>]); default $REYN_PROFILE",
    )
    p.add_argument(
        "--profile-file",
        default=argparse.SUPPRESS,
        help="profile TOML file; default $REYN_PROFILE_FILE, ./reyn.toml, ...",
    )


def common_parser() -> argparse.ArgumentParser:
    """Options every command takes: ``--profile``, ``--profile-file``, ``--json``, ``--traceback``.

    They are accepted at every level (``reyn --json plugins list`` and ``reyn plugins list --json``);
    defaults are suppressed so a nested parser never resets a value given earlier, and ``main``
    fills in ``COMMON_DEFAULTS`` afterwards.
    """
    import argparse

    common = argparse.ArgumentParser(add_help=False)
    add_profile_options(common)
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable JSON output"
    )
    common.add_argument(
        "--traceback",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print the full Python traceback behind a load error (a plugin that failed to import); "
        "also with REYN_DEBUG=1",
    )
    return common


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``reyn`` argument parser; ``only`` registers just that command's module (a fast start)."""
    import argparse

    common = common_parser()
    parser = argparse.ArgumentParser(
        prog="reyn",
        description="Reyn: one registry of LLM tools.",
        parents=[common],
        epilog="Enabled plugins may add commands: `reyn plugins show ID` lists them.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"reyn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    modules = (COMMANDS[only],) if only in COMMANDS else COMMAND_MODULES
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # a command another issue has not landed yet
                continue
            raise
        module.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``reyn`` console script. Returns the exit code."""
    args_list = list(argv) if argv is not None else sys.argv[1:]
    try:
        options = scan_global_options(args_list)
        command = options.command
        if command is not None and command not in COMMANDS and command != "help":
            from .plugin_commands import run_plugin_command

            return run_plugin_command(args_list)
        return _run_builtin(args_list, command)
    except ReynError as exc:
        print(f"reyn: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("reyn: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `reyn tools list | head`
        try:
            sys.stdout = open(os.devnull, "w")  # silence the flush at exit
        except OSError:
            pass
        return EXIT_OK
    except Exception as exc:
        if os.environ.get("REYN_DEBUG"):
            raise
        print(
            f"reyn: internal error: {type(exc).__name__}: {_one_line(exc)} "
            "(set REYN_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return EXIT_USAGE


def _run_builtin(args_list: list[str], command: str | None) -> int:
    parser = build_parser(command)
    args = parser.parse_args(args_list)
    for key, value in COMMON_DEFAULTS.items():
        if not hasattr(args, key):
            setattr(args, key, value)
    return int(args.func(args) or 0)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split("\n")).strip()
    return text or type(exc).__name__


__all__ = ["main"]
