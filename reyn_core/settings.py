"""The one way a plugin reads its settings: ``settings_as(ctx_or_value, Model)``.

The loader validates ``[plugins.<id>.settings]`` against the plugin's ``reyn_settings_model()`` and the
dispatcher hands every call that object as ``ctx.settings``. A handler, an availability check, a
``reyn doctor`` diagnostic or a plugin command may still meet the other shapes a host can pass — a
plain mapping (a host that registered the plugin's tools by hand), ``None`` (no settings table, a
bare ``ToolContext`` in a test) — so every plugin converts the same way, here:

- an instance of ``Model`` is returned as it is;
- ``None`` (or a context without settings, or no context at all) gives ``Model()``, the defaults;
- a mapping is validated with ``Model.model_validate``;
- anything else, or a mapping that does not validate, raises ``ToolRuntimeMissing`` naming the model
  and what was wrong (``runtime_missing`` in a call's envelope: the call did not get the settings it
  needs). The pydantic ``ValidationError`` is chained as ``__cause__``.

Importing this module imports no pydantic: it only calls the model class it is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from reyn_core.context import ToolContext
from reyn_core.errors import ToolRuntimeMissing

if TYPE_CHECKING:
    from pydantic import BaseModel

    M = TypeVar("M", bound=BaseModel)
else:
    M = TypeVar("M")

_MAX_PROBLEMS = 5


def settings_as(source: ToolContext | Mapping[str, Any] | Any, model: type[M]) -> M:
    """``source``'s settings as a ``model`` instance.

    ``source`` is a ``ToolContext`` (its ``settings`` are read), a ``model`` instance, a mapping
    (validated), or ``None`` (the defaults). See the module docstring for the one error.
    """
    value = source.settings if isinstance(source, ToolContext) else source
    if isinstance(value, model):
        return value
    if value is None:
        return _validate(model, {})
    if isinstance(value, Mapping):
        return _validate(model, dict(value))
    raise ToolRuntimeMissing(
        f"settings must be a {model.__name__}, a mapping or None; got {type(value).__name__}"
    )


def _validate(model: type[M], data: dict[str, Any]) -> M:
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = exc.errors()
        shown = "; ".join(
            f"{'.'.join(str(p) for p in err.get('loc', ())) or '(root)'}: {err.get('msg', '')}"
            for err in problems[:_MAX_PROBLEMS]
        )
        more = f" (and {len(problems) - _MAX_PROBLEMS} more)" if len(problems) > _MAX_PROBLEMS else ""
        raise ToolRuntimeMissing(f"invalid {model.__name__} settings: {shown}{more}") from exc
