"""The ``reyn`` command. Each subcommand lives in its own module with a ``register(sub, common)``
function; heavy imports happen inside the command functions, never at module import.

Exit codes: 0 success; 1 a check failed (audit drift, doctor errors, a tool call returned an error);
2 usage, profile or load error. Errors are one clear line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ..errors import ReynError

# Subcommand modules, in help order. Each defines register(subparsers, common_parent_parser).
COMMAND_MODULES: tuple[str, ...] = (
    "reyn_core.cli.plugins",
    "reyn_core.cli.tools",
    "reyn_core.cli.doctor",
    "reyn_core.cli.demo",
    "reyn_core.cli.chat",
    "reyn_core.cli.phase",
)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def common_parser() -> argparse.ArgumentParser:
    """Options every command takes: ``--profile``, ``--profile-file``, ``--json``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--profile", help="named profile to apply ([profiles.<name>]); default $REYN_PROFILE")
    common.add_argument("--profile-file", help="profile TOML file; default $REYN_PROFILE_FILE, ./reyn.toml, ...")
    common.add_argument("--json", action="store_true", help="machine-readable JSON output")
    return common


def build_parser() -> argparse.ArgumentParser:
    """The full ``reyn`` argument parser."""
    common = common_parser()
    parser = argparse.ArgumentParser(prog="reyn", description="Reyn: one registry of LLM tools.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
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
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        return int(args.func(args) or 0)
    except ReynError as exc:
        print(f"reyn: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("reyn: interrupted", file=sys.stderr)
        return 130
