"""Running ``reyn <name> ...`` for a command contributed by an enabled plugin (``reyn_cli_commands``)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..errors import ReynError
from . import COMMANDS, EXIT_FAILED, EXIT_USAGE


def _split_globals(argv: Sequence[str]) -> tuple[str | None, str | None, list[str]]:
    """Leading ``--profile X`` / ``--profile-file X`` (or ``=X``) / ``--json``, then the command words."""
    profile = profile_file = None
    rest = list(argv)
    while rest and rest[0].startswith("-"):
        word = rest.pop(0)
        key, eq, value = word.partition("=")
        if key in ("--profile", "--profile-file"):
            if not eq:
                value = rest.pop(0) if rest else ""
            if key == "--profile":
                profile = value
            else:
                profile_file = value
    return profile, profile_file, rest


def _profile_options(args: Sequence[str]) -> tuple[str | None, str | None]:
    """``--profile`` / ``--profile-file`` values among a plugin command's own arguments (left in place)."""
    found: dict[str, str] = {}
    it = iter(args)
    for word in it:
        if word == "--":
            break
        key, eq, value = word.partition("=")
        if key in ("--profile", "--profile-file") and key not in found:
            found[key] = value if eq else next(it, "")
    return found.get("--profile"), found.get("--profile-file")


@contextlib.contextmanager
def _chosen_profile(profile_file: str | None, profile_name: str | None) -> Iterator[None]:
    """Let the plugin's command see the profile this command was given, wherever the options stood:
    ``reyn --profile-file X mcp refresh`` and ``reyn mcp refresh --profile-file X`` load the same
    profile, because ``load_profile()`` reads ``$REYN_PROFILE_FILE`` / ``$REYN_PROFILE``."""
    chosen = {
        "REYN_PROFILE_FILE": str(Path(profile_file).resolve()) if profile_file else None,
        "REYN_PROFILE": profile_name,
    }
    saved = {key: os.environ.get(key) for key in chosen}
    try:
        for key, value in chosen.items():
            if value:
                os.environ[key] = value
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


def run_plugin_command(argv: Sequence[str]) -> int:
    """Load the profile, find the command among enabled plugins, run it with the remaining arguments."""
    from reyn_core.loading.loader import load

    from ..profile import load_profile

    profile_name, profile_file, words = _split_globals(argv)
    name, args = words[0], words[1:]
    # `reyn memory export --profile ci`: the same profile must decide whether the plugin is enabled.
    later_name, later_file = _profile_options(args)
    profile_name = profile_name if profile_name is not None else later_name
    profile_file = profile_file if profile_file is not None else later_file
    result = load(load_profile(profile_file=profile_file, profile_name=profile_name))
    commands, diagnostics = result.cli_commands()
    for d in diagnostics:
        print(f"reyn: warning: {d.render()}", file=sys.stderr)
    if name not in commands:
        extra = ", ".join(sorted(commands))
        print(
            f"reyn: error: unknown command {name!r} (built-in: {', '.join(COMMANDS)}"
            + (f"; from enabled plugins: {extra}" if extra else "; no enabled plugin adds commands")
            + ")",
            file=sys.stderr,
        )
        return EXIT_USAGE
    plugin_id, fn = commands[name]
    try:
        with _chosen_profile(profile_file, profile_name):
            return int(fn(list(args)) or 0)
    except ReynError:
        raise
    except SystemExit as exc:  # argparse inside a plugin command exits; keep its code
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_FAILED)
    except Exception as exc:
        print(
            f"reyn: error: command {name!r} of plugin {plugin_id!r} failed: {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return EXIT_FAILED
