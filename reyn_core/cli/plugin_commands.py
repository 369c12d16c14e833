"""Running ``reyn <name> ...`` for a command contributed by an enabled plugin (``reyn_cli_commands``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import ReynError
from .global_options import scan_global_options
from .loading import check_loaded_profile, print_load_tracebacks
from .parser import COMMANDS, builtin_command_names
from .reporting import EXIT_FAILED, report_error

if TYPE_CHECKING:
    from reyn_core.loading.diagnostics import Diagnostic
    from reyn_core.loading.report import LoadResult, PluginCommand


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


def command_words(argv: Sequence[str], args: Sequence[str]) -> list[str]:
    """The words a plugin command gets: those after its name, plus a ``--json`` given before the name
    (``reyn --json NAME ...``, before any ``--``), so the command answers it as it would answer
    ``reyn NAME ... --json`` — honoured or refused, never silently dropped."""
    words = list(args)
    before = list(argv[: len(argv) - len(args)])
    if "--json" in before:
        end = words.index("--") if "--" in words else len(words)
        if "--json" not in words[:end]:
            words.insert(end, "--json")
    return words


def run_plugin_command(argv: Sequence[str]) -> int:
    """Load the chosen profile once, find the command among enabled plugins, and run it with the
    remaining arguments and that load's result."""
    from reyn_core.loading.loader import load
    from reyn_core.loading.step1_profile.profile import load_profile

    from .telemetry import export_spans

    options = scan_global_options(argv)
    assert options.command is not None
    name = options.command
    profile = load_profile(profile_file=options.profile_file, profile_name=options.profile)
    export_spans(profile)  # before the load, so its own spans are exported
    result = load(profile)
    print_load_tracebacks(result, options.traceback)
    check_loaded_profile(result)
    commands, shadowing = usable_commands(result)
    load_warnings = [d for d in result.report.diagnostics if d.code == "RI007"]
    for d in (*load_warnings, *shadowing):
        print(f"reyn: warning: {d.render()}", file=sys.stderr)
    if name not in commands:
        from reyn_core.moved import moved_command_hint

        extra = ", ".join(sorted(commands))
        moved = moved_command_hint(name)
        return report_error(
            f"unknown command {name!r} (built-in: {', '.join(COMMANDS)}"
            + (f"; from enabled plugins: {extra}" if extra else "; no enabled plugin adds commands")
            + ")"
            + (f"; {moved}" if moved else "")
        )
    command = commands[name]
    try:
        return int(command.run(command_words(argv, options.args), result) or 0)
    except ReynError:
        raise
    except SystemExit as exc:  # argparse inside a plugin command exits; keep its code
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_FAILED)
    except Exception as exc:
        return report_error(
            f"command {name!r} of plugin {command.plugin_id!r} failed: {type(exc).__name__}: {exc}",
            code="failed",
            exit_code=EXIT_FAILED,
        )
