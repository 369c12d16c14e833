"""Running ``reyn <name> ...`` for a command contributed by an enabled plugin (``reyn_cli_commands``),
and listing the commands installed plugins declare (``reyn.commands`` metadata) for ``reyn --help``.

The metadata answers first, before any plugin is imported: a name no installed distribution declares
is an unknown command, and a command whose plugin the profile does not enable is refused with the
step that enables it. Only then is the profile loaded and the command run.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..errors import ReynError, describe_exception
from .global_options import command_words, scan_global_options
from .loading import load_from_args, profile_from_args
from .parser import COMMANDS, builtin_command_names
from .reporting import EXIT_FAILED, UsageError, report_error

if TYPE_CHECKING:
    from reyn_core.loading.diagnostics import Diagnostic
    from reyn_core.loading.report import LoadResult, PluginCommand
    from reyn_core.loading.step1_profile.profile import Profile
    from reyn_core.loading.step2_discovery.discovery import DeclaredCommand


def declared_commands() -> dict[str, tuple[DeclaredCommand, ...]]:
    """Commands installed plugins declare (``reyn.commands``), by name, without built-in names;
    from metadata only (nothing is imported)."""
    from reyn_core.loading.step2_discovery.discovery import discover

    builtins = set(builtin_command_names())
    return {n: d for n, d in discover().declared_commands().items() if n not in builtins}


def enable_step(plugin_id: str) -> str:
    """How to enable ``plugin_id`` (the step ``reyn --help`` and a refused command print)."""
    return f"`reyn plugins enable {plugin_id}` (or --profile-file FILE whose [plugins] enable lists it)"


def commands_epilog(profile: Profile | None) -> str:
    """The ``reyn --help`` lines for plugin commands: each declared command, the plugin and
    distribution it comes from, and whether ``profile`` enables it (else the step that does)."""
    commands = declared_commands()
    if not commands:
        return "Installed plugins add no commands (a plugin declares them in its `reyn.commands` metadata)."
    enabled = set(profile.enabled) if profile is not None else set()
    width = max(len(n) for n in commands)
    lines = ["commands from installed plugins (read from their metadata; none is imported):"]
    for name, declarations in commands.items():
        first = declarations[0]
        where = ", ".join(f"{d.distribution} {d.version}".strip() for d in declarations)
        if len(declarations) > 1:
            state = f"declared by {len(declarations)} distributions ({where}); none is used"
        elif first.plugin_id in enabled:
            state = f"plugin {first.plugin_id!r} ({where}), enabled"
        else:
            state = (
                f"plugin {first.plugin_id!r} ({where}), not enabled: `reyn plugins enable {first.plugin_id}`"
            )
        lines.append(f"  {name.ljust(width)}  {state}")
        if first.summary and len(declarations) == 1:
            lines.append(f"  {' ' * width}  {first.summary}")
    return "\n".join(lines)


def _refuse_before_loading(name: str, profile: Profile) -> int | None:
    """An error exit when the metadata already says ``name`` cannot run with ``profile``; None to
    go on and load."""
    declarations = declared_commands().get(name, ())
    if not declarations:
        return report_error(_unknown(name, declared_commands(), "installed", "declares commands"))
    if len(declarations) == 1 and declarations[0].plugin_id not in profile.enabled:
        d = declarations[0]
        return report_error(
            f"command {name!r} comes from plugin {d.plugin_id!r} ({d.distribution} {d.version}), which "
            f"is installed but not enabled by {profile.describe_source()}: run {enable_step(d.plugin_id)}",
            code="not_enabled",
        )
    return None


def usable_commands(result: LoadResult) -> tuple[dict[str, PluginCommand], list[Diagnostic]]:
    """The plugin commands ``reyn`` can run: a name that would shadow a built-in command is left out
    with an ``RI007`` warning (other unusable commands were reported by the load)."""
    from reyn_core.loading.diagnostics import Diagnostic

    builtins = set(builtin_command_names())
    usable: dict[str, PluginCommand] = {}
    diagnostics: list[Diagnostic] = []
    for name, command in result.commands.items():
        if name in builtins:
            diagnostics.append(
                Diagnostic.make(
                    "RI007",
                    f"command {name!r} would shadow a built-in reyn command; ignored",
                    plugin=command.plugin_id,
                )
            )
        else:
            usable[name] = command
    return usable, diagnostics


def _not_offered(name: str, result: LoadResult, commands: dict[str, PluginCommand]) -> str:
    """Why a declared command of an enabled plugin is not there after the load."""
    declarations = declared_commands().get(name, ())
    if len(declarations) == 1:
        plugin_id = declarations[0].plugin_id
        info = next((p for p in result.report.plugins if p.plugin_id == plugin_id), None)
        if info is not None and info.status != "loaded":
            reasons = "; ".join(d.render() for d in info.diagnostics[:3]) or "see `reyn doctor`"
            return f"command {name!r} is not available: plugin {plugin_id!r} is {info.status} ({reasons})"
        return (
            f"command {name!r} is not available: plugin {plugin_id!r} loaded but did not offer it "
            "(RI007 above says why)"
        )
    return _unknown(name, sorted(commands), "enabled", "adds commands")


def _unknown(name: str, others: Iterable[str], which: str, none: str) -> str:
    """``name`` is no command: the built-in ones, those of the ``which`` (installed, enabled) plugins
    (``no {which} plugin {none}`` when there are none), and where a command that left the core went."""
    from reyn_core.moved import moved_command_hint

    extra = ", ".join(others)
    moved = moved_command_hint(name)
    return (
        f"unknown command {name!r} (built-in: {', '.join(COMMANDS)}"
        + (f"; from {which} plugins: {extra}" if extra else f"; no {which} plugin {none}")
        + ")"
        + (f"; {moved}" if moved else "")
    )


def run_plugin_command(argv: Sequence[str]) -> int:
    """Load the chosen profile once, find the command among enabled plugins, and run it with the
    remaining arguments and that load's result."""
    options = scan_global_options(argv)
    assert options.command is not None
    name = options.command
    profile = profile_from_args(options)
    refused = _refuse_before_loading(name, profile)
    if refused is not None:
        return refused
    result = load_from_args(options, profile=profile)
    commands, shadowing = usable_commands(result)
    load_warnings = [d for d in result.report.diagnostics if d.code == "RI007"]
    for d in (*load_warnings, *shadowing):
        print(f"reyn: warning: {d.render()}", file=sys.stderr)
    if name not in commands:
        return report_error(_not_offered(name, result, commands))
    command = commands[name]
    try:
        return int(command.run(command_words(options), result) or 0)
    except (ReynError, UsageError):  # reported by `main` as a built-in command's are (exit 2)
        raise
    except SystemExit as exc:  # argparse inside a plugin command exits; keep its code
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_FAILED)
    except Exception as exc:
        return report_error(
            f"command {name!r} of plugin {command.plugin_id!r} failed: {describe_exception(exc)}",
            code="failed",
            exit_code=EXIT_FAILED,
        )
