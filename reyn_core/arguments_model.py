"""``ArgumentsModel``: the pydantic model a tool's parameters schema was derived from, carried by the
definition ``@tool`` builds, so the registry can make that model's own validator the tool's one
validator without deriving its JSON Schema again (pydantic's schema generation costs milliseconds)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, final

if TYPE_CHECKING:
    from pydantic import BaseModel


@final
@dataclass(frozen=True, slots=True, eq=False)
class ArgumentsModel:
    """``model`` (the handler's model parameter, or the model ``@tool`` built from its typed
    signature) and ``schema``, a private copy of the parameters schema derived from it.

    A definition whose ``parameters`` equal ``schema`` is a model tool: the model's validator is its
    one validator. A definition changed afterwards (``dataclasses.replace(..., parameters=...)``) no
    longer equals it, so its registered schema is what validates: the check is by content, never by
    trusting the field. ``keywords``: the handler takes the fields as keyword arguments."""

    model: type[BaseModel]
    schema: Mapping[str, Any]
    keywords: bool

    def __init_subclass__(cls, **kwargs: Any) -> None:
        raise TypeError("ArgumentsModel is final and cannot be subclassed; compose it instead")

    def derives(self, parameters: Mapping[str, Any]) -> bool:
        """Whether ``parameters`` is exactly the schema derived from the model."""
        return parameters == self.schema


def _tidy(schema: dict[str, Any]) -> None:
    """Remove pydantic's generated ``title`` keywords from a schema and its properties (noise for a
    model), and a ``"default": null`` outside the property's own ``type``: an optional argument
    whose absence lets the tool decide (``x: int | SkipJsonSchema[None] = None``) is shown as
    optional with no default, never with a default its schema refuses (strict providers reject
    such a schema)."""
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
            kinds = prop.get("type")
            kinds = [kinds] if isinstance(kinds, str) else kinds
            if "default" in prop and prop["default"] is None and kinds and "null" not in kinds:
                del prop["default"]


def schema_from_model(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of a pydantic model, tidied for tool use: object root, no title noise,
    ``additionalProperties: false`` unless the model allows extra fields."""
    schema = model.model_json_schema()
    _tidy(schema)
    for sub in schema.get("$defs", {}).values():  # nested models: same tidying
        if isinstance(sub, dict):
            _tidy(sub)
    if model.model_config.get("extra") != "allow":
        schema.setdefault("additionalProperties", False)
    schema.setdefault("properties", {})
    return schema
