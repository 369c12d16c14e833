"""The ``reyn`` command. Each subcommand lives in its own module with a ``register(sub, common)``
function; heavy imports happen inside the command functions, never at module import.

Exit codes: 0 success; 1 a check failed (audit drift, doctor errors, a tool call returned an error,
a plugin command failed); 2 usage, profile or load error; 141 stdout took no more output (its
reader went away, ``reyn doctor | head -1``, or it was closed) — silently, whatever the command was
doing (``stdout_guard``). Errors are one clear line on stderr,
never a traceback (set ``REYN_DEBUG=1`` to see one for an unexpected internal error).

Commands contributed by enabled plugins (the ``reyn_cli_commands`` hook) run as ``reyn <name> ...``;
each is declared in its distribution's ``reyn.commands`` metadata, so ``reyn --help`` lists it (and
the step that enables its plugin) without importing the plugin.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..code_table import CodeTableError
from ..errors import ReynError, describe_exception
from .global_options import GlobalOptions, scan_global_options, workspace_words
from .parser import COMMANDS, COMMON_DEFAULTS, build_parser, refuse_workspace
from .reporting import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, report_error, set_json_mode
from .stdout_guard import EXIT_OUTPUT_CLOSED, guarded_stdout, is_output_closed, silence

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``reyn`` console script. Returns the exit code."""
    if os.environ.get("_ARGCOMPLETE") and argv is None:  # the shell asks for completions (TAB)
        from .completion import complete

        return complete()
    stdout = sys.stdout
    sys.stdout = guarded_stdout(stdout)
    try:
        code = _run(argv)
        sys.stdout.flush()  # what is still buffered fails here, not at the interpreter's exit
        return code
    except BaseException as exc:
        if not is_output_closed(exc):
            raise
        silence(stdout)
        return EXIT_OUTPUT_CLOSED  # silently, as a command a closed pipe ended (stdout_guard)
    finally:
        sys.stdout = stdout


def _run(argv: Sequence[str] | None) -> int:
    args_list = list(argv) if argv is not None else sys.argv[1:]
    try:
        set_json_mode("--json" in args_list[: args_list.index("--") if "--" in args_list else None])
        args_list = workspace_words(args_list)  # the one reading of --workspace, resolved once
        options = scan_global_options(args_list)
        set_json_mode(options.json)
        if options.command == "help":  # `reyn help [COMMAND ...]` is `reyn [COMMAND ...] --help`
            at = len(args_list) - len(options.args) - 1
            args_list = [*args_list[:at], *options.args, "--help"]
            options = scan_global_options(args_list)
        command = options.command
        if command is not None and command not in COMMANDS:
            from .plugin_commands import run_plugin_command

            return run_plugin_command(args_list)
        return _run_builtin(args_list, options)
    except UsageError as exc:
        return report_error(exc.message, usage=exc.usage, prefix=f"{exc.prog}: error: ")
    except ReynError as exc:
        return report_error(str(exc), code=getattr(exc, "code", None) or "usage", hint=_hint(exc))
    except CodeTableError as exc:  # a damaged installation: one clear line, not an internal error
        return report_error(str(exc), code="RD007")
    except KeyboardInterrupt:
        return report_error("interrupted", code="interrupted", exit_code=130, prefix="reyn: ")
    except Exception as exc:
        if os.environ.get("REYN_DEBUG"):
            raise
        return report_error(
            f"{describe_exception(exc)} (set REYN_DEBUG=1 for a traceback)",
            code="internal",
            prefix="reyn: internal error: ",
        )


def _run_builtin(args_list: list[str], options: GlobalOptions) -> int:
    command = options.command
    epilog = None if command in COMMANDS else _plugin_commands_epilog(options)
    parser = build_parser(command, epilog)
    args, extra = parser.parse_known_args(args_list)
    leaf = getattr(args, "_leaf", parser)
    refuse_workspace(leaf, args, options.workspace)
    # A command with free KEY=VALUE words (``tools call``) takes them before, between and after its
    # options: argparse stops a ``nargs="*"`` positional at the first option and leaves the rest over.
    # (``parse_intermixed_args`` would do this but refuses a parser with subcommands.)
    intermixed = getattr(args, "intermixed", None)
    if extra and intermixed:
        getattr(args, intermixed).extend(w for w in extra if not w.startswith("-") or w == "-")
        extra = [w for w in extra if w.startswith("-") and w != "-"]
    if extra:
        leaf.error(f"unrecognized arguments: {' '.join(extra)}")
    for name in ("_leaf", "intermixed"):
        if hasattr(args, name):
            delattr(args, name)
    for key, value in COMMON_DEFAULTS.items():
        if not hasattr(args, key):
            setattr(args, key, value)
    return int(args.func(args) or 0)


def _plugin_commands_epilog(options: GlobalOptions) -> str:
    """The end of ``reyn --help``: the commands installed plugins declare (metadata only)."""
    from .loading import profile_from_args
    from .plugin_commands import commands_epilog

    try:
        profile = profile_from_args(options)
    except ReynError:  # help still lists the commands; the profile error shows on a real command
        profile = None
    return commands_epilog(profile)


def _hint(exc: BaseException) -> str | None:
    hint = getattr(exc, "hint", None)
    return hint if isinstance(hint, str) and hint else None
