"""The ``reyn`` argument parser: the built-in commands (one module each, with ``register(sub,
common)``), the options every command takes, and the names plugins may not use for their own
commands. The package's ``main`` and the completion and plugin-command modules all build on it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .global_options import COMMON_OPTIONS, WORKSPACE_OPTION

if TYPE_CHECKING:
    import argparse

# Built-in command name -> module, in help order. Each module defines register(subparsers, common).
COMMANDS: dict[str, str] = {
    "init": "reyn_core.cli.profile_file",
    "plugins": "reyn_core.cli.plugins",
    "tools": "reyn_core.cli.tools",
    "doctor": "reyn_core.cli.doctor",
    "approvals": "reyn_core.cli.approvals",
    "completion": "reyn_core.cli.completion",
}


def builtin_command_names() -> tuple[str, ...]:
    """Names plugins may not use for their own commands."""
    return (*COMMANDS, "help")


COMMON_DEFAULTS: dict[str, object] = {
    "profile": None,
    "profile_file": None,
    "json": False,
    "traceback": False,
}


def add_group(sub: Any, common: argparse.ArgumentParser, name: str, help: str) -> Any:
    """A command that has subcommands (``reyn tools list``): add them to what this returns (one is
    required; the chosen one's name is ``args.<name>_command``)."""
    group = sub.add_parser(name, parents=[common], help=help).add_subparsers(
        dest=f"{name}_command", metavar="SUBCOMMAND"
    )
    group.required = True
    return group


def add_command(
    sub: Any,
    common: argparse.ArgumentParser | None,
    name: str,
    run: Any,
    help: str,
    *,
    loads: bool = False,
    **kwargs: Any,
) -> argparse.ArgumentParser:
    """One (sub)command: its parser, with the common options (unless ``common`` is None), ``help`` and
    the function ``run(args)`` that runs it (``args.func``); ``kwargs`` go to ``add_parser``.

    ``loads``: the command loads the profile's plugins (``load_from_args``), so it takes
    ``--workspace``, the folder the load's tools work in. ``reyn`` resolves that option once for the
    whole invocation (``global_options.workspace_words``) and hands this parser the result; a command
    that loads nothing refuses it (``refuse_workspace``)."""
    p = sub.add_parser(name, parents=[common] if common is not None else [], help=help, **kwargs)
    p.set_defaults(func=run)
    if loads:  # its default None marks the command as one that loads (``load_from_args`` checks)
        p.add_argument("--workspace", **WORKSPACE_OPTION)
    return p


def refuse_workspace(leaf: argparse.ArgumentParser, args: argparse.Namespace, workspace: str | None) -> None:
    """A ``--workspace`` given to a command that loads no plugins is a usage error saying so (not
    "unrecognized arguments", and never silently ignored)."""
    if workspace is not None and "workspace" not in args:
        leaf.error(
            f"`{leaf.prog}` loads no plugins, so a workspace means nothing to it: --workspace is for the "
            "commands that load (tools, plugins list/show/lock/audit, doctor, approvals, plugins' commands)"
        )


def common_parser() -> argparse.ArgumentParser:
    """Options every command takes: ``--profile``, ``--profile-file``, ``--json``, ``--traceback``.

    They are accepted at every level (``reyn --json plugins list`` and ``reyn plugins list --json``);
    defaults are suppressed so a nested parser never resets a value given earlier, and ``main``
    fills in ``COMMON_DEFAULTS`` afterwards.
    """
    import argparse

    from .reporting import argument_parser_class

    common = argument_parser_class()(add_help=False)
    for flag, spec in COMMON_OPTIONS:
        common.add_argument(flag, default=argparse.SUPPRESS, **spec)
    return common


def build_parser(only: str | None = None, epilog: str | None = None) -> argparse.ArgumentParser:
    """The ``reyn`` argument parser; ``only`` registers just that command's module (a fast start).

    ``epilog`` ends ``reyn --help``: the package's ``main`` passes the commands installed plugins
    declare, from metadata, with whether the selected profile enables each."""
    import argparse

    from .reporting import argument_parser_class

    common = common_parser()
    parser = argument_parser_class()(
        prog="reyn",
        description="Reyn: one registry of LLM tools.",
        parents=[common],
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"reyn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    modules = (COMMANDS[only],) if only in COMMANDS else COMMANDS.values()
    for name in modules:
        importlib.import_module(name).register(sub, common)
    _mark_leaves(parser)
    return parser


def _mark_leaves(parser: argparse.ArgumentParser) -> None:
    """Record on each command parser that has no subcommands itself its own parser (``_leaf``), so
    an argument left over is reported with that command's usage, not the top-level one."""
    subcommands = getattr(parser, "subcommands", None)
    if subcommands is None:
        parser.set_defaults(_leaf=parser)
        return
    for child in dict.fromkeys(subcommands.choices.values()):
        _mark_leaves(child)


__all__ = [
    "COMMANDS",
    "COMMON_DEFAULTS",
    "add_command",
    "add_group",
    "build_parser",
    "builtin_command_names",
    "common_parser",
    "refuse_workspace",
]
