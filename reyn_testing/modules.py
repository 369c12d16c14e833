"""A registry from a plugin module that is not installed: no entry point, no provenance.

Useful in a plugin's first minutes (before ``pip install -e .``) and for plugins defined inside a
test. It runs the plugin's own hooks exactly as the loader does — settings model, settings
validation, ``reyn_register_tools``, policy hooks — but skips discovery and provenance, which only
exist for installed distributions. Use the ``reyn_plugin_result`` fixture for the full pipeline.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from reyn_core import API_VERSION, ReynError, ToolOrigin, ToolRegistrationError
from reyn_core.host import (
    OperatorPolicy,
    PluginLoadError,
    PluginPolicy,
    RegistryBuilder,
    ToolRegistry,
    plugin_from_module,
)


class PluginModuleError(ReynError):
    """The module is not a usable Reyn plugin (wrong API version, bad settings, failing hook); ``code``
    is the diagnostic the loader would report for it (``RI002``, ``RC001``, …)."""

    def __init__(self, message: str, *, code: str = "") -> None:
        super().__init__(message)
        self.code = code


def registry_from_plugin(
    module: ModuleType | str,
    *,
    plugin_id: str = "plugin",
    settings: Mapping[str, Any] | None = None,
    host_tools: Iterable[Any] = (),
    surfaces: Iterable[str] | None = None,
    default_allowed_ops: Iterable[str] | None = None,
) -> ToolRegistry:
    """Build a frozen registry from ``module`` (a module object or its dotted name).

    The module's hooks run through the loader's own steps (``reyn_core.host.plugin_from_module``):
    a failure is a ``PluginModuleError`` with the loader's code and words (``settings`` validated
    against the plugin's ``reyn_settings_model``, pydantic's problems named), and what the loader
    would warn about is a warning a test can see (``DeprecationWarning`` for a retired hook).
    Registration problems raise ``ToolRegistrationError`` with its diagnostic code (``RT…``,
    ``RS…``). Tools are stamped with a plugin origin of id ``plugin_id`` and no source, so the
    operator gates of a profile apply to them as to installed ones.
    """
    if isinstance(module, str):
        module = importlib.import_module(module)
    try:
        plugin = plugin_from_module(module, plugin_id, settings, source="registry_from_plugin(settings=...)")
        registered = plugin.register_tools()
    except PluginLoadError as exc:
        hint = f" ({exc.hint})" if exc.hint else ""
        raise PluginModuleError(f"{exc.code}: {exc.message}{hint}", code=exc.code) from None
    for warning in plugin.warnings:
        category = DeprecationWarning if warning.code == "RI011" else UserWarning
        warnings.warn(f"{warning.code}: {warning.message}", category, stacklevel=2)

    plugin_surfaces = frozenset(surfaces) if surfaces is not None else None
    policies = {plugin_id: PluginPolicy(surfaces=plugin_surfaces)}
    operator = (
        OperatorPolicy(plugins=policies, default_allowed_ops=tuple(default_allowed_ops))
        if default_allowed_ops is not None
        else OperatorPolicy(plugins=policies)
    )
    hooks = plugin.call_hooks()
    builder = RegistryBuilder(operator=operator, hooks=hooks if hooks.before or hooks.after else None)
    for host_tool in host_tools:
        builder.register(host_tool)
    origin = ToolOrigin(
        kind="plugin", plugin_id=plugin_id, entry_point=module.__name__, api_version=API_VERSION
    )
    for item in registered:
        if isinstance(item, str):
            raise ToolRegistrationError("RT001", item)  # the hint: RT001's own
        builder.register(item, origin=origin)
    if plugin.settings is not None:
        builder.set_settings(plugin_id, plugin.settings)
    return builder.freeze()
