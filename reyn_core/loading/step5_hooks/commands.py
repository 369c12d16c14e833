"""Plugin commands: what loaded plugins contribute through ``reyn_cli_commands``, collected as data."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.report import PluginCommand


def collect_commands(session: LoadSession, p: PluginState) -> None:
    """Ask a loaded plugin's ``reyn_cli_commands`` hook for ``{name: fn(argv, loaded)}``.

    A hook that raises or returns something unusable, a name that is not a word, a function that
    cannot take ``(argv, loaded)``, or a name the plugin's distribution does not declare in its
    ``reyn.commands`` entry points gives an ``RI007`` warning and is skipped; the plugin still loads.
    The declaration is what lets ``reyn --help`` list a command before its plugin is enabled, from
    metadata alone, so a command without one is not offered at all.
    """
    results = p.call_hook("reyn_cli_commands", "RI007")
    if results is None:
        return
    declared = p.candidate.commands if p.candidate is not None else frozenset()
    for result in results:
        if result is None:
            continue
        if not isinstance(result, Mapping):
            p.warn("RI007", f"reyn_cli_commands returned {type(result).__name__}, not a dict")
            continue
        for name, fn in result.items():
            if not isinstance(name, str) or not name or name.startswith("-") or not callable(fn):
                p.warn("RI007", f"command {name!r} is not a name with a callable")
            elif not _takes_argv_and_loaded(fn):
                p.warn(
                    "RI007",
                    f"command {name!r}: {getattr(fn, '__qualname__', fn)!r} must take (argv, loaded), "
                    "the arguments after the command and the LoadResult",
                )
            elif name not in declared:
                dist = p.candidate.distribution if p.candidate else "the plugin's distribution"
                p.warn(
                    "RI007",
                    f"command {name!r} is not declared in the metadata of {dist}: add "
                    f'`{name} = "{p.plugin_id}"` under [project.entry-points."reyn.commands"] in its '
                    "pyproject.toml and reinstall",
                )
            else:
                p.commands.setdefault(name, fn)


def resolve_commands(plugins: Sequence[PluginState]) -> dict[str, PluginCommand]:
    """Every contributed command by name; a name claimed by several plugins is used by none (RI007)."""
    owners: dict[str, list[PluginState]] = {}
    for p in plugins:
        if p.ok:
            for name in p.commands:
                owners.setdefault(name, []).append(p)
    commands: dict[str, PluginCommand] = {}
    for name, claimants in sorted(owners.items()):
        if len(claimants) == 1:
            commands[name] = PluginCommand(name, claimants[0].plugin_id, claimants[0].commands[name])
            continue
        ids = ", ".join(c.plugin_id for c in claimants)
        for c in claimants:
            c.warn("RI007", f"command {name!r} is contributed by several plugins ({ids}); none is used")
    return commands


def _takes_argv_and_loaded(fn: Callable[..., Any]) -> bool:
    try:
        inspect.signature(fn).bind(["--help"], None)
    except TypeError:
        return False
    except ValueError:  # no signature to inspect (some builtins): let the call decide
        return True
    return True


__all__ = ["collect_commands", "resolve_commands"]
