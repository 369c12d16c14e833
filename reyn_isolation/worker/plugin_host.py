"""Loading the plugin inside the worker: verified import, API check, settings, tools, diagnostics.

The same rules as an in-process load, run where the plugin's code may run: every module under the
plugin's import names comes from the digested bytes the host sent the hashes of; the plugin's
pydantic settings model validates the profile's settings; its tools are collected while
``reyn_register_tools`` runs. Anything that fails is a ``LoadFailure`` with the in-process code.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any

from reyn_core import API_VERSION, ToolDefinition
from reyn_core.host import (
    ProvenanceRecord,
    as_definition,
    describe_exception,
    plugin_manager,
    serve_from_digested_files,
    to_jsonable,
)


class LoadFailure(Exception):
    """The plugin could not be loaded in the worker: ``code`` is the in-process diagnostic's (one of
    ``isolation.wire.LOAD_FAILURE_CODES``: the host reports any other as ``RJ005``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class LoadedPlugin:
    """What the worker holds after loading: the plugin's tools by name and its settings."""

    tools: dict[str, ToolDefinition] = field(default_factory=dict)
    settings: Any = None
    hooks: list[str] = field(default_factory=list)
    diagnostics: Any = None
    registered: list[Any] = field(default_factory=list)


def record_from_data(data: dict[str, Any]) -> ProvenanceRecord:
    """The host's provenance record, as sent (lists back to tuples)."""
    values = dict(data)
    for name in ("files", "module_locations"):
        values[name] = tuple(tuple(item) for item in values.get(name, ()))
    for name in ("record_mismatches", "problems"):
        values[name] = tuple(values.get(name, ()))
    return ProvenanceRecord(**values)


def load_plugin(record: ProvenanceRecord, given_settings: dict[str, Any] | None) -> LoadedPlugin:
    """Import and set up the plugin; raises ``LoadFailure``."""
    serve_from_digested_files(record)
    module_name, _, attr = record.entry_point.partition(":")
    try:
        module: Any = importlib.import_module(module_name.strip())
        for part in filter(None, attr.strip().split(".")):
            module = getattr(module, part)
    except BaseException as exc:  # SystemExit from a plugin ends nothing but its load
        raise LoadFailure(
            "RI001", f"importing {record.entry_point!r} in the worker failed: {describe_exception(exc)}"
        ) from None
    api = getattr(module, "REYN_API", None)
    if type(api) is not int or api != API_VERSION:
        raise LoadFailure(
            "RI003" if api is not None else "RI002",
            f"{record.entry_point!r} declares REYN_API = {api!r}; this reyn-core supports API {API_VERSION}",
        )
    pm = plugin_manager()
    try:
        pm.register(module, name=record.plugin_id)
        pm.check_pending()
    except (Exception, SystemExit) as exc:
        raise LoadFailure("RI004", f"invalid hook implementation: {describe_exception(exc)}") from None
    # every hook the plugin implements, not a list of known ones: the host refuses isolation for a
    # hook its stand-in does not forward (``isolation_step``)
    implemented = [name for name, caller in vars(pm.hook).items() if caller.get_hookimpls()]
    loaded = LoadedPlugin(hooks=sorted(implemented))
    loaded.settings = _settings(pm, record.plugin_id, given_settings)
    collected: list[Any] = []

    def register(obj: Any) -> Any:
        collected.append(obj)
        return obj

    try:
        results = pm.hook.reyn_register_tools(register=register, settings=loaded.settings)
    except (Exception, SystemExit) as exc:
        raise LoadFailure("RI005", f"hook reyn_register_tools raised {describe_exception(exc)}") from None
    if any(inspect.isawaitable(r) for r in results):
        raise LoadFailure("RI004", "reyn_register_tools is async; it must be a plain function")
    for obj in collected:
        try:
            definition = as_definition(obj)
        except TypeError as exc:
            loaded.registered.append({"error": f"plugin registered something that is not a tool: {exc}"})
            continue
        loaded.tools.setdefault(definition.name, definition)
        loaded.registered.append(definition)
    if "reyn_diagnostics" in loaded.hooks:
        try:
            loaded.diagnostics = to_jsonable(pm.hook.reyn_diagnostics(settings=loaded.settings))
        except (Exception, SystemExit) as exc:
            loaded.diagnostics = {"raised": describe_exception(exc)}
    return loaded


def _settings(pm: Any, plugin_id: str, given: dict[str, Any] | None) -> Any:
    from pydantic import BaseModel, ValidationError

    try:
        model = pm.hook.reyn_settings_model()
    except (Exception, SystemExit) as exc:
        raise LoadFailure("RI005", f"hook reyn_settings_model raised {describe_exception(exc)}") from None
    if model is None:
        if given:
            raise LoadFailure(
                "RC002", f"[plugins.{plugin_id}.settings] is set but plugin {plugin_id!r} takes no settings"
            )
        return None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise LoadFailure("RI006", f"reyn_settings_model returned {model!r:.80}, not a pydantic model class")
    try:
        return model.model_validate(dict(given or {}))
    except ValidationError as exc:
        parts = []
        for err in exc.errors(include_url=False)[:3]:
            loc = ".".join(str(x) for x in err.get("loc", ()))
            parts.append(
                f"plugins.{plugin_id}.settings{'.' + loc if loc else ''}: {err.get('msg', 'invalid')}"
            )
        raise LoadFailure("RC001", "; ".join(parts)) from None
    except (Exception, SystemExit) as exc:
        raise LoadFailure(
            "RC001", f"plugins.{plugin_id}.settings: validation raised {describe_exception(exc)}"
        ) from None


__all__ = ["LoadFailure", "LoadedPlugin", "load_plugin", "record_from_data"]
