"""The one reader of ``reyn``'s global options (``--profile``, ``--profile-file``, ``--workspace``,
``--json``, ``--traceback``) and the command word, for the fast paths that run before argparse (which command
module to import, and which profile a plugin command's load uses)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

_VALUED = ("--profile", "--profile-file", "--workspace")
_FLAGS = ("--json", "--traceback")


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


def scan_global_options(argv: Sequence[str]) -> GlobalOptions:
    """Read the global options and the command word from ``argv`` (nothing is consumed or checked)."""
    found: dict[str, str] = {}
    words = list(argv)
    flags: set[str] = set()
    i = 0
    while i < len(words):
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
        key, eq, value = word.partition("=")
        if key in _VALUED and key not in found:
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


__all__ = ["GlobalOptions", "scan_global_options"]
