"""The hooks a Reyn plugin may implement (pluggy project ``reyn``).

A plugin is a module named by an entry point in group ``reyn.plugins`` (entry-point name = plugin
id). It declares ``REYN_API = 1`` and implements any of these hooks with ``@reyn_core.hookimpl``::

    from reyn_core import hookimpl, tool

    REYN_API = 1

    @tool(cluster="text", purity="read_only")
    def word_count(text: str) -> int:
        \"\"\"Count the words in a text.\"\"\"
        return len(text.split())

    @hookimpl
    def reyn_register_tools(register, settings):
        register(word_count)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pluggy

PROJECT = "reyn"
API_VERSION = 1

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class ReynHookSpecs:
    """Hook specifications. Plugins implement them as module-level functions (no ``self``)."""

    @hookspec
    def reyn_register_tools(self, register: Callable[[Any], Any], settings: Any, workspace: Path) -> None:
        """Register this plugin's tools by calling ``register(tool)`` once per tool.

        ``tool`` is a ``ToolDefinition`` (usually made with ``@tool``) or a typed function.
        ``settings`` is the plugin's validated settings model instance (None without a model).
        ``workspace`` (optional to accept) is the load's workspace (``load(workspace=)``, absolute):
        the folder the host's tools work in and ``reyn_trusted_files`` protects, so a plugin that
        builds tools from a file there reads the very file the load protects.
        """

    @hookspec(firstresult=True)
    def reyn_settings_model(self) -> Any:
        """Return a pydantic model class for ``[plugins.<id>.settings]`` (extra keys forbidden)."""

    @hookspec
    def reyn_before_tool_call(self, call: Any) -> str | None:
        """Called before every tool call (``call`` is a ``reyn_core.host.ToolCall``). Return a reason string
        to deny it, or None to allow. Raising ``ToolDenied`` also denies. ``call.arguments`` are
        read-only: changing them raises ``TypeError``, which denies the call."""

    @hookspec
    def reyn_after_tool_call(self, call: Any, outcome: Any) -> None:
        """Called after every tool call with its ``ToolCallOutcome``. Must not raise."""

    @hookspec
    def reyn_diagnostics(self, settings: Any) -> list[Any] | None:
        """Report findings about this plugin's configuration (for the load report and ``reyn doctor``).

        Return a list of mappings with ``code`` (the plugin's own family, e.g. ``RW001``: ``R``, one
        or two capital letters, three digits), ``severity`` (``error``, ``warning`` or ``info``),
        ``message``, and optionally ``hint``, ``tool`` and ``path``. Called once per load, after the
        plugin's tools are registered; findings never stop the plugin from loading.
        """

    @hookspec
    def reyn_agent_tools(self, settings: Any) -> Mapping[str, Sequence[str]] | None:
        """Declare the tool lists of the agents this plugin defines: ``{agent name: [tool names]}``.

        Each list becomes that agent's allowlist on every surface (``gates.check``, layer ``call``,
        rule ``agent_tools``: render and dispatch alike) for a caller whose ``ToolContext.agent`` is
        the name; an agent not listed is not narrowed. The profile's ``[agents.<name>] tools``
        replaces a plugin's list; lists of one agent from several plugins all apply. Called once per
        load; a name no loaded tool has is reported (``RC010``).
        """

    @hookspec
    def reyn_trusted_files(self, settings: Any, workspace: Any) -> Mapping[str, str] | None:
        """Name the files and folders this plugin trusts: ``{absolute path: what it is}``.

        A file the plugin reads back as truth (its database, a snapshot it builds tools from, a CA
        bundle, the files that decide an agent's tools) joins the host's own files for this load
        (``LoadResult.host_files``): no confined process may write it or the folder that holds it,
        and the file pack does not write it. Paths are absolute (``str`` or ``os.PathLike``: resolve
        a relative setting against ``workspace``, the load's workspace as a ``Path``: the folder the
        host's tools work in, ``load(workspace=)``, else the working directory — also when the plugin
        runs isolated; at most 64 components, one printable UTF-8 line); "what it is" is a short
        phrase such as ``"the memory pack's database"``. Called once per load, after settings are
        validated and before the plugin's tools are registered. A hook that raises, answers
        anything else, or names a path another isolated plugin may write refuses the plugin
        (``RI013``): what it trusts would be unknown or writable.
        """

    @hookspec
    def reyn_cli_commands(self) -> dict[str, Any] | None:
        """Contribute ``reyn`` subcommands: return ``{name: fn}`` where ``fn(argv, loaded) -> int``.

        Only loaded plugins are asked, once per load; the answer is kept as data on the
        ``LoadResult`` (``loaded.commands``). ``reyn <name> ...`` then runs ``fn`` with the words after
        the command and the ``LoadResult`` of the profile the user chose (``--profile`` /
        ``--profile-file`` before or after the command), so a command reads its plugin's validated
        settings with ``loaded.plugin_settings("<id>")`` and never loads the profile again. Import
        heavy modules inside ``fn``, not in the hook (e.g. the memory pack's ``reyn memory export``).
        """


class RetiredHookSpecs:
    """Hooks this API no longer calls, still accepted so that a plugin written for an earlier minor
    version loads: an implementation is registered, never called, and reported once per load
    (``RI011``, docs/diagnostics.md). Accepted through reyn-core 0.1.x; removed in 0.2, after
    which an implementation is an unknown hook again (``RI004``)."""

    @hookspec(firstresult=True)
    def reyn_load_inputs(self, settings: Any) -> Any:
        """Retired: declared what a load read so that ``reyn tools render`` could replay a stored
        render; renders are no longer stored, so there is nothing to declare."""


RETIRED_HOOKS: dict[str, str] = {
    "reyn_load_inputs": "reyn tools render no longer replays stored output, so there is nothing to declare",
}
"""Retired hook name → why it is no longer called (the text of its ``RI011`` diagnostic)."""


def plugin_manager() -> pluggy.PluginManager:
    """A plugin manager for one plugin module: the current hooks plus the retired ones, so that
    ``check_pending`` refuses a misspelt hook but not one this API used to define."""
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(ReynHookSpecs)
    pm.add_hookspecs(RetiredHookSpecs)
    return pm
