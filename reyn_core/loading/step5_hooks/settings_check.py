"""Load step 5: ``[plugins.<id>.settings]`` validated against the model the plugin's hook returns."""

from __future__ import annotations

from typing import Any

from reyn_core.errors import describe_exception
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.step1_profile.profile import Profile


def validate_settings(session: LoadSession, p: PluginState) -> None:
    from pydantic import BaseModel, ValidationError

    assert p.pm is not None
    given = session.profile.plugin(p.plugin_id).settings
    try:
        model = p.pm.hook.reyn_settings_model()
    except (Exception, SystemExit) as exc:
        p.fail("failed", "RI005", f"hook reyn_settings_model raised {describe_exception(exc)}")
        return
    if model is None:
        if given:
            p.fail(
                "failed",
                "RC002",
                f"[plugins.{p.plugin_id}.settings] is set in {session.profile.describe_source()}"
                f" but plugin {p.plugin_id!r} takes no settings",
            )
        return
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        p.fail("failed", "RI006", f"reyn_settings_model returned {model!r:.80}, not a pydantic model class")
        return
    try:
        p.settings = model.model_validate(dict(given or {}))
        _warn_ignored(session, p, model, dict(given or {}))
    except ValidationError as exc:
        p.fail("failed", "RC001", _settings_message(p.plugin_id, exc, session.profile, model))
    except (Exception, SystemExit) as exc:
        p.fail(
            "failed",
            "RC001",
            f"plugins.{p.plugin_id}.settings: validation raised {describe_exception(exc)}",
        )


def _settings_message(plugin_id: str, exc: Any, profile: Profile, model: Any) -> str:
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
    return f"{profile.describe_source()}: " + "; ".join(parts) + more


def _warn_ignored(session: LoadSession, p: PluginState, model: Any, given: dict[str, Any]) -> None:
    """``RC008``: top-level keys a settings model that neither forbids nor keeps extras (pydantic's
    default ``extra="ignore"``) silently dropped — a typo there would otherwise change nothing."""
    if model.model_config.get("extra") in ("forbid", "allow"):
        return
    valid = _setting_names(model)
    for key in sorted(k for k in given if k not in valid and k not in model.model_fields):
        p.warn(
            "RC008",
            f"{session.profile.describe_source()}: plugins.{p.plugin_id}.settings.{key}: unknown setting, "
            f"ignored{_suggest(key, model, ())}",
        )


def _suggest(name: str, model: Any, parent: tuple[Any, ...]) -> str:
    """``; did you mean 'x'? (valid settings: a, b)`` for an unknown key ``name`` of the model reached
    through ``parent`` (nested settings models and their aliases included), or "" when unknown."""
    import difflib  # only to word an error

    valid = _setting_names(_model_at(model, parent))
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


__all__ = ["validate_settings"]
