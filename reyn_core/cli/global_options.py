"""The one reader of ``reyn``'s global options (``--profile``, ``--profile-file``, ``--workspace``,
``--json``, ``--traceback``) and the command word, for the fast paths that run before argparse (which command
module to import, and which profile a plugin command's load uses)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ReynError

_VALUED = ("--profile", "--profile-file", "--workspace")
_FLAGS = ("--json", "--traceback")

# The options ``reyn`` reads itself, wherever they stand (``scan_global_options``): every built-in command
# and every plugin command's parser (``command_parser``) declares them from here.
COMMON_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("--profile", {"help": "named profile to apply ([profiles.<name>]); default $REYN_PROFILE"}),
    ("--profile-file", {"help": "profile TOML file; default $REYN_PROFILE_FILE, ./reyn.toml, ..."}),
    ("--json", {"action": "store_true", "help": "machine-readable JSON output"}),
    (
        "--traceback",
        {
            "action": "store_true",
            "help": "print the full Python traceback behind a load error (a plugin that failed to "
            "import); also with REYN_DEBUG=1",
        },
    ),
)
WORKSPACE_OPTION: dict[str, Any] = {
    "metavar": "DIR",
    "help": "the folder the tools work in and the plugins' own files are found in (default: the "
    "current directory); also before the command: reyn --workspace DIR ...",
}


@dataclass(frozen=True)
class GlobalOptions:
    """What ``argv`` says before argparse sees it.

    ``command`` is the first word after the leading global options (None when the first other word is
    an option such as ``--help``); ``args`` are the words after it. ``profile`` and ``profile_file``
    come from before the command or, when absent there, from the command's own arguments (stopping at
    ``--``): ``reyn --profile ci memory export`` and ``reyn memory export --profile ci`` mean the same.
    ``json`` and ``traceback`` are given before the command or among its own arguments (before ``--``):
    ``reyn --json tools list`` and ``reyn tools list --json``. ``workspace`` is read the same way:
    a plugin command's ``--workspace`` (``reyn mcp serve --workspace WS``) is the workspace its load
    resolves the plugins' own files against (``load(workspace=)``), the one its tools then work in.
    """

    command: str | None = None
    args: list[str] = field(default_factory=list)
    profile: str | None = None
    profile_file: str | None = None
    json: bool = False
    traceback: bool = False
    workspace: str | None = None


class GlobalOptionError(ReynError):
    """A valued global option given twice or abbreviated: the scan and the command's argparse would
    read it differently (argparse keeps the last and expands prefixes), so it is refused."""


def _check_word(word: str, found: dict[str, str]) -> None:
    key = word.partition("=")[0]
    if key in found:
        raise GlobalOptionError(f"{key} given twice; give it once")
    if key.startswith("--") and len(key) > 2 and key not in _VALUED:
        for full in _VALUED:
            if full.startswith(key):
                raise GlobalOptionError(f"{key} is an abbreviation of {full}; spell it out")


def scan_global_options(argv: Sequence[str]) -> GlobalOptions:
    """Read the global options and the command word from ``argv``. A valued option given twice or
    abbreviated (before ``--``) raises ``GlobalOptionError``; nothing is consumed."""
    found: dict[str, str] = {}
    words = list(argv)
    flags: set[str] = set()
    i = 0
    while i < len(words):
        _check_word(words[i], found)
        key, eq, value = words[i].partition("=")
        if key in _VALUED:
            if not eq:
                i += 1
                value = words[i] if i < len(words) else ""
            found.setdefault(key, value)
        elif words[i] in _FLAGS:
            flags.add(words[i])
        elif words[i].startswith("-"):
            return _options(None, [], found, flags)
        else:
            break
        i += 1
    if i >= len(words):
        return _options(None, [], found, flags)
    command, args = words[i], words[i + 1 :]
    later = iter(args)
    for word in later:
        if word == "--":
            break
        _check_word(word, found)
        key, eq, value = word.partition("=")
        if key in _VALUED:
            found[key] = value if eq else next(later, "")
        elif word in _FLAGS:
            flags.add(word)
    return _options(command, args, found, flags)


def _options(command: str | None, args: list[str], found: dict[str, str], flags: set[str]) -> GlobalOptions:
    return GlobalOptions(
        command,
        args,
        found.get("--profile"),
        found.get("--profile-file"),
        "--json" in flags,
        "--traceback" in flags,
        found.get("--workspace"),
    )


def command_words(options: GlobalOptions) -> list[str]:
    """The words a plugin command gets: its own (those after its name, in their order, ``reyn``'s
    options taken out), then ``reyn``'s options as ``options`` read them — wherever the user wrote
    them, before or after the name — in one form (``--profile=NAME``, ``--workspace=ABS``,
    ``--json``, ...), before any ``--``. A command that picks its action by its first word
    (``reyn mcp --profile ci serve``) finds it first, and a parser from ``command_parser``, which
    declares these options on every subcommand, accepts them at the end."""
    words = list(options.args)
    end = words.index("--") if "--" in words else len(words)
    own: list[str] = []
    i = 0
    while i < end:
        key, eq, _ = words[i].partition("=")
        if key in _VALUED:
            i += 1 if eq else 2
            continue
        if words[i] not in _FLAGS:
            own.append(words[i])
        i += 1
    valued = zip(_VALUED, (options.profile, options.profile_file, options.workspace), strict=True)
    given = [f"{key}={value}" for key, value in valued if value is not None]
    given += [flag for flag, on in zip(_FLAGS, (options.json, options.traceback), strict=True) if on]
    return [*own, *given, *words[end:]]


def workspace_words(argv: Sequence[str]) -> list[str]:
    """``argv`` with its one ``--workspace`` (before the command or among its arguments) resolved
    once — ``~`` expanded, made absolute, symlinks resolved, as ``choose_workspace`` does — and
    moved among the command's own words as ``--workspace=ABS``. The load and the command then read
    the same folder: one reader per invocation. A missing folder raises ``ReynError``."""
    options = scan_global_options(argv)
    if options.workspace is None:
        return list(argv)
    if not options.workspace:
        raise GlobalOptionError("--workspace needs a folder")
    if options.command is None:  # else argparse takes the folder for the command ("invalid choice: 'ws'")
        raise GlobalOptionError(
            f"--workspace {options.workspace!r} is given but no command: it is the folder a command's "
            "tools work in (reyn --workspace DIR COMMAND ...)"
        )
    path = Path(options.workspace).expanduser().resolve()
    if not path.is_dir():
        raise GlobalOptionError(f"--workspace {options.workspace!r} is not a directory")
    words = list(argv)
    start = len(words) - len(options.args)
    out: list[str] = []
    i = 0
    end = words.index("--", start) if "--" in words[start:] else len(words)
    while i < end:
        key, eq, _ = words[i].partition("=")
        if key == "--workspace":
            i += 1 if eq else 2
            continue
        out.append(words[i])
        i += 1
    return [*out, f"--workspace={path}", *words[end:]]


__all__ = [
    "COMMON_OPTIONS",
    "WORKSPACE_OPTION",
    "GlobalOptionError",
    "GlobalOptions",
    "command_words",
    "scan_global_options",
    "workspace_words",
]
