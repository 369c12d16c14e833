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

from reyn_core import API_VERSION, ReynError, ToolOrigin
from reyn_core.host import (
    RETIRED_HOOKS,
    OperatorPolicy,
    PluginPolicy,
    RegistryBuilder,
    ToolRegistry,
    plugin_call_hooks,
    plugin_manager,
)


class PluginModuleError(ReynError):
    """The module is not a usable Reyn plugin (wrong API version, bad settings, failing hook)."""


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

    ``settings`` is validated against the plugin's ``reyn_settings_model`` (``PluginModuleError``
    on failure, with pydantic's message). Registration problems raise ``ToolRegistrationError``
    with its diagnostic code (``RT…``, ``RS…``). Tools are stamped with a plugin origin of id
    ``plugin_id`` and no source, so the operator gates of a profile apply to them as to installed ones.
    """
    if isinstance(module, str):
        module = importlib.import_module(module)
    api = getattr(module, "REYN_API", None)
    if type(api) is not int or api != API_VERSION:
        raise PluginModuleError(
            f"plugin module {module.__name__!r} declares REYN_API = {api!r}; this reyn-core supports "
            f"REYN_API = {API_VERSION} (add `REYN_API = {API_VERSION}` to the module)"
        )
    manager = plugin_manager()
    try:
        manager.register(module, name=plugin_id)
        manager.check_pending()
    except Exception as exc:  # pluggy: unknown hook names, wrong hook arguments
        raise PluginModuleError(f"invalid hook implementation in {module.__name__!r}: {exc}") from None
    for name, why in RETIRED_HOOKS.items():
        if callable(getattr(module, name, None)):  # the loader's RI011, as a warning a test can see
            warnings.warn(
                f"{module.__name__!r} defines {name}(), a retired hook that is no longer called ({why})",
                DeprecationWarning,
                stacklevel=2,
            )

    validated = _validate_settings(manager, module, plugin_id, settings)
    plugin_surfaces = frozenset(surfaces) if surfaces is not None else None
    policies = {plugin_id: PluginPolicy(surfaces=plugin_surfaces)}
    operator = (
        OperatorPolicy(plugins=policies, default_allowed_ops=tuple(default_allowed_ops))
        if default_allowed_ops is not None
        else OperatorPolicy(plugins=policies)
    )
    hooks = plugin_call_hooks(plugin_id, manager)
    builder = RegistryBuilder(operator=operator, hooks=hooks if hooks.before or hooks.after else None)
    for host_tool in host_tools:
        builder.register(host_tool)
    origin = ToolOrigin(kind="plugin", plugin_id=plugin_id, entry_point=module.__name__, api_version=api)
    manager.hook.reyn_register_tools(
        register=lambda t: builder.register(t, origin=origin), settings=validated
    )
    if validated is not None:
        builder.set_settings(plugin_id, validated)
    return builder.freeze()


def _validate_settings(
    manager: Any, module: ModuleType, plugin_id: str, settings: Mapping[str, Any] | None
) -> Any:
    model = manager.hook.reyn_settings_model()
    if model is None:
        if settings:
            raise PluginModuleError(f"plugin {plugin_id!r} has no settings model but settings were given")
        return None
    from pydantic import ValidationError

    try:
        return model.model_validate(dict(settings or {}))
    except ValidationError as exc:
        raise PluginModuleError(f"invalid settings for plugin {plugin_id!r}: {exc}") from None
