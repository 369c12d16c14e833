"""``reyn chat`` and ``reyn phase``: commands the ``loops`` plugin contributes to ``reyn`` through
the ``reyn_cli_commands`` hook (``reyn_loops.plugin``). Each is ``main(argv, loaded) -> int``: the
words after the command and the ``LoadResult`` of the profile ``reyn`` loaded for it."""

from __future__ import annotations

import argparse

EXIT_OK = 0
EXIT_FAILED = 1


def command_parser(prog: str, **kwargs: object) -> argparse.ArgumentParser:
    """An argument parser for ``reyn <command>`` that also accepts the options ``reyn`` itself reads
    before the command runs (``--profile``, ``--profile-file``, ``--traceback``), so they may follow
    the command as they may follow a built-in one."""
    parser = argparse.ArgumentParser(prog=prog, **kwargs)  # type: ignore[arg-type]
    add_reyn_options(parser)
    return parser


def add_reyn_options(parser: argparse.ArgumentParser) -> None:
    """``--profile``, ``--profile-file`` and ``--traceback``: read by ``reyn`` before the command runs."""
    parser.add_argument(
        "--profile", default=argparse.SUPPRESS, help="named profile to apply ([profiles.<name>])"
    )
    parser.add_argument(
        "--profile-file", default=argparse.SUPPRESS, help="profile TOML file (default ./reyn.toml, ...)"
    )
    parser.add_argument(
        "--traceback", action="store_true", default=argparse.SUPPRESS, help="full tracebacks of load errors"
    )


__all__ = ["EXIT_FAILED", "EXIT_OK", "add_reyn_options", "command_parser"]
