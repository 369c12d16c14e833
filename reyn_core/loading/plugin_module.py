"""One plugin run through the loader's own steps outside ``load()``: in reyn-isolation's worker, from
the verified provenance record the host sent (``plugin_from_record``), and in reyn-testing's
``registry_from_plugin``, from a bare module (``plugin_from_module``).

Each step is the loader's function, not a copy: the import from the digested files only and the
``REYN_API`` and hook checks (``step4_import/importing``), the settings (``step5_hooks/settings_check``),
what ``reyn_register_tools`` registers (``step5_hooks/tool_collection``) and the policy hooks around calls
(``step6_registry/call_hooks``). A failure is a ``PluginLoadError`` with the loader's code and words; what
the loader would warn about is in ``warnings``, and as facts (``warning_facts``: a hook's or a
setting's name) that a worker sends and the host words with the loader's own templates
(``worker_warnings``). Only the worker's plugin (``WorkerPlugin``, from ``plugin_from_record``) can run
a handler, for a call the host's dispatcher has already decided (``run_decided_call``); a
``PluginModule`` from ``plugin_from_module`` cannot: a host calls tools through a registry only.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from reyn_core.errors import (
    PluginLoadError,
    ToolError,
    ToolExecutionError,
    ToolGateRefused,
    ToolRuntimeMissing,
)
from reyn_core.loading.step4_import.import_origin import import_verified
from reyn_core.loading.step4_import.importing import hook_warning, plugin_hooks
from reyn_core.loading.step5_hooks.settings_check import ignored_setting, validated_settings
from reyn_core.loading.step5_hooks.tool_collection import registered_tools

if TYPE_CHECKING:
    from reyn_core.context import ToolContext
    from reyn_core.dispatch import ToolCallHooks
    from reyn_core.loading.diagnostics import Diagnostic
    from reyn_core.registry.handlers import CallShape
    from reyn_core.tool import ToolDefinition


class PluginModule:
    """A plugin's hooks registered, its API checked and its settings validated, as the loader does.

    ``settings`` is the validated settings object (None when the plugin takes none); ``warnings`` the
    loader's warnings about it (``RI004`` an undecorated hook, ``RI011`` a retired one, ``RC008`` an
    ignored setting); ``hooks`` the names of the hooks it implements; ``tools`` what
    ``register_tools`` registered, by name (the first of a name). It runs no handler: a host calls
    tools through a registry (``RegistryBuilder``, ``dispatch_tool``), where every gate applies."""

    def __init__(
        self, plugin_id: str, module: Any, where: str, settings: Mapping[str, Any] | None, source: str
    ) -> None:
        self.plugin_id = plugin_id
        self._where, self._source = where, source
        self.pm, self._unused_hooks = plugin_hooks(module, plugin_id, where)
        self.settings, self._ignored, self.setting_names = validated_settings(
            self.pm, plugin_id, settings, source
        )
        self.tools: dict[str, ToolDefinition] = {}

    @property
    def warnings(self) -> list[Diagnostic]:
        """The loader's warnings about the plugin, in the loader's words."""
        found = [hook_warning(code, name, self._where, self.plugin_id) for code, name in self._unused_hooks]
        names = self.setting_names
        return found + [ignored_setting(self.plugin_id, self._source, key, names) for key in self._ignored]

    @property
    def warning_facts(self) -> list[list[str]]:
        """``warnings`` as facts, each once: ``[code, hook name]`` (``RI004``, ``RI011``) and
        ``["RC008", setting key]`` — what ``worker_warnings`` words again, with ``setting_names``."""
        return [[code, name] for code, name in self._unused_hooks] + [["RC008", key] for key in self._ignored]

    @property
    def hooks(self) -> list[str]:
        """Every hook the plugin implements, sorted (not a list of known ones)."""
        return sorted(name for name, caller in vars(self.pm.hook).items() if caller.get_hookimpls())

    def register_tools(self, workspace: str = "") -> list[ToolDefinition | str]:
        """Run ``reyn_register_tools`` as the loader does: each registered object as a definition, or
        the ``RT001`` message for one that is not a tool. ``PluginLoadError``: ``RI005``/``RI004``.
        ``workspace``: the load's workspace (default: the working directory)."""
        registered = registered_tools(self.pm, self.settings, workspace)
        for item in registered:
            if not isinstance(item, str):
                self.tools.setdefault(item.name, item)
        return registered

    def diagnostics(self) -> Any:
        """What ``reyn_diagnostics`` returns, as JSON data (None when the plugin has no such hook);
        raises what the hook raised."""
        from reyn_core.jsondata import to_jsonable

        if not self.pm.hook.reyn_diagnostics.get_hookimpls():
            return None
        return to_jsonable(self.pm.hook.reyn_diagnostics(settings=self.settings))

    def trusted_files(self, workspace: str) -> Any:
        """What ``reyn_trusted_files`` returns (one answer per implementation), as JSON data, or None
        when the plugin has no such hook; raises what the hook raised. ``workspace``: the host's
        working directory (a worker's own is ``/``)."""
        from pathlib import Path

        from reyn_core.jsondata import to_jsonable

        if not self.pm.hook.reyn_trusted_files.get_hookimpls():
            return None
        return to_jsonable(self.pm.hook.reyn_trusted_files(settings=self.settings, workspace=Path(workspace)))

    def call_hooks(self) -> ToolCallHooks:
        """The plugin's ``reyn_before_tool_call`` / ``reyn_after_tool_call`` as the loader adds them to
        a registry (a hook that fails denies the call)."""
        from reyn_core.loading.step6_registry.call_hooks import plugin_call_hooks

        return plugin_call_hooks(self.plugin_id, self.pm)


class WorkerPlugin(PluginModule):
    """The plugin an isolated plugin's worker runs (``plugin_from_record``), and the one way it runs a
    handler: ``run_decided_call``, for a call the host's dispatcher has already decided in the host
    process — gates, approvals, policy hooks, the audit and the result bounds all applied there. For
    reyn-isolation's worker only: it applies none of them."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._shapes: dict[str, CallShape] = {}

    def run_decided_call(self, name: str, args: Mapping[str, Any], ctx: ToolContext) -> Any:
        """Worker only: run tool ``name`` for a call the host's dispatcher decided — its own
        ``available(ctx)`` asked again with this context, the arguments bound as the dispatcher binds
        them, a sync handler run now, ``sys.exit()`` contained. Returns the result as JSON data, or,
        for an async handler (or a sync one that returned an awaitable), an awaitable of it, awaited
        under the tool's timeout. Raises a ``ToolError``: the handler's own, or
        ``ToolExecutionError`` describing any other exception."""
        from reyn_core.dispatch.runner import handler_exit, within
        from reyn_core.jsondata import to_jsonable

        try:
            tool, shape = self._shape(name)
            _check_available(tool, ctx)
            _, kwargs = shape.bind(args, ctx)
            if shape.is_async:
                return _finished(within(shape.fn(**kwargs), tool), name)
            try:
                result = shape.fn(**kwargs)
            except SystemExit as exc:
                raise handler_exit(exc) from None
            if inspect.isawaitable(result):
                return _finished(within(result, tool), name)
            return to_jsonable(result)
        except ToolError:
            raise
        except Exception as exc:
            raise _execution_error(exc, name) from None

    def _shape(self, name: str) -> tuple[ToolDefinition, CallShape]:
        from reyn_core.registry.handlers import resolve_handler

        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise ToolRuntimeMissing(f"plugin {self.plugin_id!r} registers no tool {name!r}", tool=str(name))
        shape = self._shapes.get(name)
        if shape is None:
            shape = self._shapes[name] = resolve_handler(tool)
        return tool, shape


def plugin_from_record(
    record: Mapping[str, Any], settings: Mapping[str, Any] | None = None, *, source: str = "the profile"
) -> WorkerPlugin:
    """The plugin a verified provenance record describes (as data: ``dataclasses.asdict`` of the
    record, as a host sends it to a worker), imported only from its digested files, with
    ``settings`` (read from ``source``) validated: for reyn-isolation's worker. Nothing is imported
    from a record whose digest does not cover the entry point's module (``RI009``, as in process),
    whose files differ from their RECORD (``RP002``) or whose digest may be incomplete (``RP005``).
    ``PluginLoadError`` with the loader's code."""
    from reyn_core.loading.step3_provenance.record import ProvenanceRecord, unverified

    values = dict(record)
    for name in ("files", "module_locations"):
        values[name] = tuple(tuple(item) for item in values.get(name, ()))
    for name in ("record_mismatches", "problems"):
        values[name] = tuple(values.get(name, ()))
    rec = ProvenanceRecord(**values)
    for code, message in unverified(rec, entry_point=rec.entry_point)[:1]:
        raise PluginLoadError(code, message)  # what would be imported is not only the hashed bytes
    return WorkerPlugin(rec.plugin_id, import_verified(rec), repr(rec.entry_point), settings, source)


def plugin_from_module(
    module: Any,
    plugin_id: str,
    settings: Mapping[str, Any] | None = None,
    *,
    source: str = "the settings given",
) -> PluginModule:
    """A plugin module that is not installed (no entry point, no provenance), its hooks registered
    and checked and ``settings`` validated as the loader does. ``PluginLoadError`` with its code."""
    return PluginModule(plugin_id, module, repr(getattr(module, "__name__", module)), settings, source)


def worker_warnings(
    plugin_id: str,
    entry_point: str,
    facts: Any,
    setting_names: Any,
    settings: Mapping[str, Any] | None,
    source: str,
) -> list[Diagnostic]:
    """The loader's warnings about an isolated plugin, worded in the host from the facts its worker
    sent (``PluginModule.warning_facts``, ``setting_names``) with the loader's own templates, so
    message and hint are the in-process ones: ``[RI004|RI011, hook name]`` for a hook or retired hook
    name, ``["RC008", key]`` for a key of ``settings`` (the profile's, read from ``source``) the model
    does not take, each once. ``ValueError`` naming the first fact that is none of these."""
    names = _setting_names(setting_names)
    found: list[Diagnostic] = []
    seen: set[tuple[str, str]] = set()
    for fact in facts if isinstance(facts, list) else [facts]:
        if not (isinstance(fact, list) and len(fact) == 2 and all(isinstance(x, str) for x in fact)):
            raise ValueError(f"sent a warning that is not a [code, name] pair: {fact!r:.80}")
        code, subject = fact
        if (code, subject) in seen:
            raise ValueError(f"sent the warning {code} about {subject!r:.80} twice")
        seen.add((code, subject))
        if code != "RC008":
            found.append(hook_warning(code, subject, repr(entry_point), plugin_id))
        elif subject in (settings or {}) and subject not in names:
            found.append(ignored_setting(plugin_id, source, subject, names))
        else:
            raise ValueError(f"sent RC008 about {subject!r:.80}: no setting the profile gave, dropped")
    return found


def _setting_names(names: Any) -> list[str]:
    """A worker's ``setting_names``: the keys its plugin's model takes, each a printable name."""
    if names is None:
        return []
    if not (
        isinstance(names, list)
        and len(names) <= _MAX_SETTINGS
        and all(isinstance(n, str) and 0 < len(n) <= 200 and n.isprintable() for n in names)
    ):
        raise ValueError(f"sent setting names that are not a list of at most {_MAX_SETTINGS} printable names")
    return names


_MAX_SETTINGS = 1000


def _check_available(tool: ToolDefinition, ctx: ToolContext) -> None:
    """The tool's own ``available(ctx)``, asked as the dispatcher asks it (``own_check``). Its
    failure is not logged here (a worker's log is not the operator's): ``CheckFailed`` carries the
    text for the host to log, which words the refusal."""
    from reyn_core.own_check import CheckFailed, ask_available, failure_text

    answer = ask_available(tool, ctx)
    if answer.allowed:
        return
    if answer.failure is not None:
        raise CheckFailed(tool.name, failure_text(answer.failure))
    reason = (
        answer.reason if answer.reason is not None else f"tool {tool.name!r} is not available in this context"
    )
    raise ToolGateRefused(
        f"tool {tool.name!r} is refused on the {ctx.surface} surface (call gate): {reason}",
        tool=tool.name,
        layer="call",
        reason=reason,
    )


async def _finished(work: Any, name: str) -> Any:
    """``work`` awaited, its result as JSON data; failures as ``WorkerPlugin.run_decided_call``
    raises them."""
    from reyn_core.dispatch.runner import handler_exit
    from reyn_core.jsondata import to_jsonable

    try:
        return to_jsonable(await work)
    except ToolError:
        raise
    except SystemExit as exc:
        raise _execution_error(handler_exit(exc), name) from None
    except Exception as exc:
        raise _execution_error(exc, name) from None


def _execution_error(exc: BaseException, name: str) -> ToolExecutionError:
    from reyn_core.dispatch.runner import describe

    return ToolExecutionError(describe(exc), tool=name)


__all__ = ["PluginModule", "WorkerPlugin", "plugin_from_module", "plugin_from_record", "worker_warnings"]
