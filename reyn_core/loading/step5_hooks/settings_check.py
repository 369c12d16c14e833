"""Load step 5: ``[plugins.<id>.settings]`` validated against the model the plugin's hook returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reyn_core.errors import PluginLoadError, describe_exception
from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.loading.plugin_state import LoadSession, PluginState

if TYPE_CHECKING:
    import pluggy


def validate_settings(session: LoadSession, p: PluginState) -> None:
    """``p.settings`` from ``[plugins.<id>.settings]`` (``validated_settings``)."""
    assert p.pm is not None
    profile = session.profile
    source = profile.describe_source()
    try:
        p.settings, ignored, names = validated_settings(
            p.pm, p.plugin_id, profile.plugin(p.plugin_id).settings, source
        )
    except PluginLoadError as exc:
        p.fail("failed", exc.code, exc.message)
        return
    p.diagnostics.extend(ignored_setting(p.plugin_id, source, key, names) for key in ignored)


def validated_settings(
    pm: pluggy.PluginManager, plugin_id: str, given: Mapping[str, Any] | None, source: str
) -> tuple[Any, list[str], list[str]]:
    """The plugin's settings: ``given`` (from ``source``, e.g. the profile's file) validated against
    the model its ``reyn_settings_model`` hook returns (None when it has none); the top-level keys a
    model that ignores extras dropped (``ignored_setting`` words the ``RC008`` warning of each); and
    the keys the model takes. ``PluginLoadError``: ``RI005`` (the hook raised), ``RI006`` (not a
    model), ``RC002`` (settings for a plugin without any), ``RC001`` (invalid, or the model raised)."""
    from pydantic import BaseModel, ValidationError

    try:
        model = pm.hook.reyn_settings_model()
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("RI005", f"hook reyn_settings_model raised {describe_exception(exc)}") from None
    if model is None:
        if given:
            raise PluginLoadError(
                "RC002",
                f"[plugins.{plugin_id}.settings] is set in {source} but plugin {plugin_id!r} takes no "
                "settings",
            )
        return None, [], []
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise PluginLoadError(
            "RI006", f"reyn_settings_model returned {model!r:.80}, not a pydantic model class"
        )
    try:
        settings = model.model_validate(dict(given or {}))
        # the model's own config and fields are asked here too: what they raise is the same RC001
        names = _setting_names(model)
        return settings, _ignored(model, names, dict(given or {})), names
    except ValidationError as exc:
        raise PluginLoadError("RC001", _settings_message(plugin_id, exc, source, model)) from None
    except (Exception, SystemExit) as exc:
        raise PluginLoadError(
            "RC001", f"plugins.{plugin_id}.settings: validation raised {describe_exception(exc)}"
        ) from None


def ignored_setting(plugin_id: str, source: str, key: str, names: Sequence[str]) -> Diagnostic:
    """``RC008``: top-level setting ``key`` (from ``source``) that a model taking ``names`` dropped."""
    return Diagnostic.make(
        "RC008",
        f"{source}: plugins.{plugin_id}.settings.{key}: unknown setting, "
        f"ignored{_suggestion(key, names, ())}",
        plugin=plugin_id,
        severity="warning",
    )


def _settings_message(plugin_id: str, exc: Any, source: str, model: Any) -> str:
    errors = exc.errors(include_url=False)
    parts = []
    for err in errors[:3]:
        path = tuple(err.get("loc", ()))
        loc = ".".join(str(x) for x in path)
        key = f"plugins.{plugin_id}.settings" + (f".{loc}" if loc else "")
        if err.get("type") == "extra_forbidden":
            parts.append(
                f"{key}: unknown setting" + _suggest(str(path[-1]) if path else "", model, path[:-1])
            )
        else:
            parts.append(f"{key}: {err.get('msg', 'invalid')}")
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"{source}: " + "; ".join(parts) + more


def _ignored(model: Any, names: list[str], given: dict[str, Any]) -> list[str]:
    """The top-level keys a settings model that neither forbids nor keeps extras (pydantic's default
    ``extra="ignore"``) silently dropped — a typo there would otherwise change nothing."""
    if model.model_config.get("extra") in ("forbid", "allow"):
        return []
    return sorted(k for k in given if k not in names and k not in model.model_fields)


def _suggest(name: str, model: Any, parent: tuple[Any, ...]) -> str:
    """``_suggestion`` for an unknown key ``name`` of the model reached through ``parent`` (nested
    settings models and their aliases included)."""
    return _suggestion(name, _setting_names(_model_at(model, parent)), parent)


def _suggestion(name: str, valid: Sequence[str], parent: tuple[Any, ...]) -> str:
    """``; did you mean 'x'? (valid settings: a, b)`` for an unknown key ``name`` among ``valid``
    (the keys under ``parent``), or "" when there are none."""
    import difflib  # only to word an error

    if not valid:
        return ""
    near = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
    where = "valid settings" if not parent else f"valid keys of {'.'.join(map(str, parent))}"
    return (f"; did you mean {near[0]!r}?" if near else "") + f" ({where}: {', '.join(valid)})"


def _model_at(model: Any, path: tuple[Any, ...]) -> Any:
    """The pydantic model class a settings key path leads to (None when it leads elsewhere)."""
    from pydantic import BaseModel

    for step in path:
        fields = getattr(model, "model_fields", None) or {}
        field = fields.get(step) or next(
            (f for f in fields.values() if step in (f.alias, f.validation_alias)), None
        )
        if field is None:
            return None
        model = _unwrap_model(field.annotation)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _unwrap_model(annotation: Any) -> Any:
    """``Inner`` from ``Inner``, ``Inner | None`` or ``Optional[Inner]`` (else the annotation)."""
    from typing import get_args

    from pydantic import BaseModel

    for arg in get_args(annotation):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return annotation


def _setting_names(model: Any) -> list[str]:
    """The keys a settings table may hold: each field's alias when it has one, else its name."""
    if model is None:
        return []
    names = []
    for name, field in model.model_fields.items():
        alias = field.alias if isinstance(field.alias, str) else None
        names.append(alias or name)
        if alias and model.model_config.get("populate_by_name"):
            names.append(name)
    return sorted(set(names))


__all__ = ["ignored_setting", "validate_settings", "validated_settings"]
