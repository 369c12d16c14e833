"""Load step 5: ``[plugins.<id>.settings]`` validated against the model the plugin's hook returns."""

from __future__ import annotations

from typing import Any

from reyn_core.errors import describe_exception
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.profile import Profile


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
    p.has_settings_model = True
    try:
        p.settings = model.model_validate(dict(given or {}))
    except ValidationError as exc:
        p.fail("failed", "RC001", _settings_message(p.plugin_id, exc, session.profile))
    except (Exception, SystemExit) as exc:
        p.fail(
            "failed",
            "RC001",
            f"plugins.{p.plugin_id}.settings: validation raised {describe_exception(exc)}",
        )


def _settings_message(plugin_id: str, exc: Any, profile: Profile) -> str:
    errors = exc.errors(include_url=False)
    parts = []
    for err in errors[:3]:
        loc = ".".join(str(x) for x in err.get("loc", ()))
        key = f"plugins.{plugin_id}.settings" + (f".{loc}" if loc else "")
        if err.get("type") == "extra_forbidden":
            parts.append(f"{key}: unknown setting")
        else:
            parts.append(f"{key}: {err.get('msg', 'invalid')}")
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"{profile.describe_source()}: " + "; ".join(parts) + more


__all__ = ["validate_settings"]
