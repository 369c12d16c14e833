"""``command_parser``: the argument parser of a command a plugin adds to ``reyn`` (``reyn_cli_commands``).

``reyn`` reads its own options (``--profile``, ``--profile-file``, ``--workspace``, ``--json``,
``--traceback``) wherever the user wrote them, loads that profile, and hands the command its own words
followed by those options in one form (``global_options.command_words``: ``--workspace=ABS``,
resolved once). A parser from here declares them all, on itself and on every subcommand parser it
adds, so the command accepts every invocation ``reyn`` accepts: a command cannot forget one, and no
command repeats their declaration. Its usage errors are ``reyn``'s own (one line on stderr, a JSON
object under ``--json``; exit 2).
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Mapping
from typing import Any

from .global_options import COMMON_OPTIONS, WORKSPACE_OPTION
from .reporting import argument_parser_class

OPTIONS = (*COMMON_OPTIONS, ("--workspace", WORKSPACE_OPTION))


class _CommandParser(argument_parser_class()):  # type: ignore[misc]
    """A parser with ``reyn``'s options declared. A subcommand's parser (``nested``) declares them with
    suppressed defaults, so a value given before the subcommand word is not reset by it."""

    def __init__(
        self, *args: Any, option_help: Mapping[str, str] | None = None, nested: bool = False, **kwargs: Any
    ):
        super().__init__(*args, **kwargs)
        self._option_help = dict(option_help or {})
        unknown = set(self._option_help) - {flag for flag, _ in OPTIONS}
        if unknown:
            raise ValueError(f"option_help names no option of reyn's: {', '.join(sorted(unknown))}")
        for flag, spec in OPTIONS:
            given = {"help": self._option_help[flag]} if flag in self._option_help else {}
            self.add_argument(flag, **{**spec, **given}, **({"default": argparse.SUPPRESS} if nested else {}))

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault(
            "parser_class", functools.partial(_CommandParser, nested=True, option_help=self._option_help)
        )
        return super().add_subparsers(**kwargs)


def command_parser(
    prog: str, *, option_help: Mapping[str, str] | None = None, **kwargs: Any
) -> argparse.ArgumentParser:
    """An ``argparse.ArgumentParser`` for ``reyn <command>`` with ``reyn``'s own options declared:
    ``args.profile``, ``args.profile_file`` and ``args.workspace`` (None when not given on the command
    line; the workspace absolute, the same folder as ``loaded.workspace``), ``args.json`` and
    ``args.traceback`` (False). The profile ``reyn`` loaded is ``loaded.profile`` whichever way it was
    chosen (option or environment): read it there.

    ``prog`` is the usage's name (``"reyn notes"``); ``option_help`` replaces the help of those options
    (``{"--workspace": "what the folder is to this command"}``; ``argparse.SUPPRESS`` hides one the
    command refuses); ``kwargs`` go to ``ArgumentParser``. Subcommand parsers
    (``add_subparsers().add_parser(...)``) declare the same options, so ``reyn notes export DIR --json``
    and ``reyn --json notes export DIR`` are one invocation. A usage error raises out of
    ``parse_args`` to ``reyn``, which reports it as its own (exit 2): do not catch it.
    """
    return _CommandParser(prog=prog, option_help=option_help, **kwargs)


__all__ = ["command_parser"]
