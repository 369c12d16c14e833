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

from collections.abc import Callable
from typing import Any

import pluggy

PROJECT = "reyn"
API_VERSION = 1

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class ReynHookSpecs:
    """Hook specifications. Plugins implement them as module-level functions (no ``self``)."""

    @hookspec
    def reyn_register_tools(self, register: Callable[[Any], Any], settings: Any) -> None:
        """Register this plugin's tools by calling ``register(tool)`` once per tool.

        ``tool`` is a ``ToolDefinition`` (usually made with ``@tool``) or a typed function.
        ``settings`` is the plugin's validated settings model instance (None without a model).
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

    @hookspec(firstresult=True)
    def reyn_load_inputs(self, settings: Any) -> dict[str, Any] | None:
        """Declare what this plugin's load reads besides its own installed files and its settings, so
        that ``reyn tools render`` may replay a cached result instead of loading (docs/performance.md).

        Return ``{"env": [...], "paths": [...]}`` (both optional; ``{}`` when there is nothing else):
        the names of the environment variables, and the files or folders (absolute, or relative to the
        current directory), that the tools it registers, their ``available`` checks and schema
        enrichers, its settings model and its diagnostics read. The cache replays only while each of
        them is unchanged. Return None — the default, also when the hook is not implemented — when the
        result can depend on anything else (a network service, the clock, a host callback): a load that
        enables this plugin is then never cached. Leaving an input out makes the cache replay a stale
        render, so declare only what you are sure of; ``settings`` is the validated settings (None
        without a model).
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
