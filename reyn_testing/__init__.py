"""The Reyn testing kit for plugin authors.

``reyn_testing.pytest_plugin`` is registered with pytest (entry point ``pytest11: reyn``), so
its fixtures are available in every test suite once reyn-core is installed: ``reyn_load``,
``reyn_plugin_id``, ``reyn_plugin_settings``, ``reyn_plugin_profile``, ``reyn_plugin_result``,
``reyn_registry``, ``reyn_call`` and ``assert_diagnostic``. (LLM record/replay, ``llm_replay``, and
the scripted model server are reyn-loops' testing kit: ``reyn_loops.testing``.)

The same behaviour is available as plain functions for use outside pytest:

- ``load_with_profile(profile, host_tools=())`` — the real loader on a profile (TOML text, dict,
  ``Profile`` or path).
- ``plugin_profile(plugin_id, settings=None)`` — a profile enabling only that plugin.
- ``registry_from_plugin(module, plugin_id=..., settings=...)`` — a registry from a plugin module
  that is not installed (no entry point needed).
- ``ToolCaller(registry)`` — call a tool as the router or the phase would, through the real
  dispatcher, synchronously or with ``await``.
- ``assert_diagnostic(result, code)`` / ``assert_no_diagnostics(result)``.

Importing this package costs nothing beyond ``reyn_core`` itself: the helpers are imported on
first use.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "load_with_profile": "reyn_testing.profiles",
    "plugin_profile": "reyn_testing.profiles",
    "to_profile": "reyn_testing.profiles",
    "registry_from_plugin": "reyn_testing.modules",
    "PluginModuleError": "reyn_testing.modules",
    "ToolCaller": "reyn_testing.tool_caller",
    "Envelope": "reyn_testing.tool_caller",
    "assert_diagnostic": "reyn_testing.assert_diagnostics",
    "assert_no_diagnostics": "reyn_testing.assert_diagnostics",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'reyn_testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
