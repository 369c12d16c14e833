"""Shell completion for ``reyn`` (argcomplete): built-in commands and options, plugin ids, tool
names — and ``reyn completion bash|zsh|fish``, which prints the script a shell sources.

**No plugin code runs on TAB.** A completion is computed by this process from what can be read
without importing a plugin: command and option names from the parser (the core's own modules),
plugin ids from installed distributions' entry-point metadata (``discover``, which never imports),
and tool names from the profile's ``reyn.lock`` (what ``reyn plugins lock`` recorded), limited to
the plugins the profile enables. Without a lock, tool names are not completed. The names of the
commands installed plugins add are completed from their metadata (``reyn.commands``, as ``reyn
--help`` lists them, enabled or not); their subcommands and options are known only by importing the
plugin, so they are not completed. A completer that fails offers nothing: TAB never prints an error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from .reporting import EXIT_OK

SHELLS = ("bash", "zsh", "fish", "tcsh", "powershell")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .parser import add_command

    p = add_command(
        sub,
        None,
        "completion",
        run,
        'print the shell completion script (eval "$(reyn completion bash)")',
        description="Print the script that makes SHELL complete reyn's commands, options, plugin ids "
        "and tool names (from reyn.lock). No plugin code runs on TAB.",
    )
    p.add_argument("shell", choices=SHELLS)


def run(args: argparse.Namespace) -> int:
    import argcomplete

    sys.stdout.write(argcomplete.shellcode(["reyn"], shell=args.shell))
    return EXIT_OK


def completes(action: argparse.Action, completer: Callable[..., list[str]]) -> None:
    """Attach ``completer`` to ``action`` (argcomplete reads the ``completer`` attribute)."""
    setattr(action, "completer", completer)  # noqa: B010 - argparse.Action declares no such field


def plugin_ids(prefix: str, **_: Any) -> list[str]:
    """Installed plugin ids starting with ``prefix``, from entry-point metadata only."""
    try:
        from reyn_core.loading.step2_discovery.discovery import discover

        return sorted(pid for pid in discover().by_id() if pid.startswith(prefix))
    except Exception:
        return []


def tool_names(prefix: str, parsed_args: argparse.Namespace | None = None, **_: Any) -> list[str]:
    """Tool names starting with ``prefix`` that the selected profile's lock records for the plugins
    it enables (``--profile`` / ``--profile-file`` as typed so far, else their defaults)."""
    try:
        from reyn_core.loading.step1_profile.profile import load_profile
        from reyn_core.loading.step3_provenance.lock_file import read_lock

        profile = load_profile(
            profile_file=getattr(parsed_args, "profile_file", None),
            profile_name=getattr(parsed_args, "profile", None),
        )
        path = profile.lock_path
        if not path.is_file():
            return []
        enabled = set(profile.enabled)
        names = {t.name for p in read_lock(path).plugins if p.plugin_id in enabled for t in p.tools}
        return sorted(n for n in names if n.startswith(prefix))
    except Exception:
        return []


def complete() -> int:
    """Answer the shell's completion request (``_ARGCOMPLETE`` is set) and exit."""
    import argcomplete

    from .parser import build_parser

    parser = build_parser()
    add_declared_commands(parser)
    argcomplete.autocomplete(parser)
    return EXIT_OK  # autocomplete exits itself; reached only when it declines


def add_declared_commands(parser: argparse.ArgumentParser) -> None:
    """Add the commands installed plugins declare (``reyn.commands`` metadata; nothing is imported)
    to ``parser`` as bare names, so TAB offers them beside the built-in ones."""
    try:
        from .plugin_commands import declared_commands

        commands = declared_commands()
        sub = getattr(parser, "subcommands", None)
        for name, declarations in commands.items():
            if sub is not None and name not in sub.choices:
                first = declarations[0]
                sub.add_parser(name, add_help=False, help=first.summary or f"from plugin {first.plugin_id!r}")
    except Exception:  # TAB never fails: without the metadata, only built-in commands are offered
        return


__all__ = ["add_declared_commands", "complete", "completes", "plugin_ids", "tool_names"]
