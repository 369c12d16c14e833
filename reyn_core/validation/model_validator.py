"""The one validator of a pydantic-model tool: the model's own pydantic-core validator.

A tool whose parameters schema is exactly the one derived from its handler's model
(``ArgumentsModel.derives``) is validated by that model, once: the model instance it builds is what
the handler is called with, so there is no second pass (a JSON-Schema validator, then pydantic).
The schema a model reads is derived from the same model; a refusal is worded from the model's own
errors (``pydantic_problems``). Before any of it, the value's size is bounded (``size_problems``),
as for every tool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import ArgumentProblem
from .arguments import optional_non_nullable, size_problems, without_null_optionals
from .messages import capped, not_an_object_message
from .pydantic_problems import problems_from_pydantic, unexpected_problems

# Imported only where a model tool is prepared: pydantic is loaded already (the model exists).

# pydantic-core schema node types whose strict Python validation accepts exactly what JSON data
# of the rendered schema holds (a dict for a model, an int for an integer, never ``True`` for one).
_JSON_NATIVE = frozenset(
    {
        *("model", "model-fields", "model-field", "typed-dict", "typed-dict-field", "definitions"),
        *("definition-ref", "default", "nullable", "union", "tagged-union", "literal", "any", "none"),
        *("str", "int", "float", "bool", "list", "dict", "function-after", "function-before"),
        *("function-wrap", "function-plain", "chain"),
    }
)
_NOT_SCHEMAS = frozenset({"metadata", "serialization", "ref", "model_name", "cls", "config"})


def json_native(core_schema: Any) -> bool:
    """Whether every node of a pydantic-core schema is one of ``_JSON_NATIVE`` (then strict mode
    is exactly JSON's types). One with an Enum, a datetime, a path, a tuple... is not: JSON carries
    those as strings or arrays, which only pydantic's lax mode converts."""
    stack = [core_schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            kind = node.get("type")
            if isinstance(kind, str) and kind not in _JSON_NATIVE:
                return False
            stack.extend(v for k, v in node.items() if k not in _NOT_SCHEMAS and isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, dict | list))
    return True


class ModelValidator:
    """``check(value) -> (model instance, [])`` or ``(None, problems)`` for one pydantic model;
    ``validator(value) -> problems`` like every validator. A model of JSON's own types only
    (``json_native``) is validated in strict mode, so it accepts exactly what its rendered schema
    says (``true`` is no integer, ``"5"`` no number); any other as ``Model.model_validate`` does,
    which converts JSON strings to its Enum, datetime, path... fields.

    ``arguments(value, ctx)`` is the same validation for a call, bound for the handler in the same
    pass: strict-mode ``null`` optionals dropped first (``optional_non_nullable`` of the schema), and
    the instance given as the handler's model argument ``model_param`` (else as its keyword
    arguments), with ``ctx`` as ``ctx_param`` when the handler asks for the context."""

    __slots__ = (
        "_closed",
        "_ctx_param",
        "_model_param",
        "_nulls",
        "_schema",
        "_strict",
        "_validate",
        "model",
    )
    binds = True  # ``arguments`` binds the handler's model instance itself

    def __init__(
        self,
        model: type[BaseModel],
        schema: Mapping[str, Any],
        *,
        model_param: str | None = None,
        ctx_param: str | None = None,
    ) -> None:
        self.model = model
        self._schema = schema
        self._validate = model.__pydantic_validator__.validate_python
        self._strict = True if json_native(model.__pydantic_core_schema__) else None
        # The rendered schema closes the root object (``schema_from_model``) where the model would
        # only ignore other keys: those keys are refused here, as the schema says.
        properties = schema.get("properties")
        closed = schema.get("additionalProperties") is False and model.model_config.get("extra") != "forbid"
        self._closed = frozenset(properties) if closed and isinstance(properties, Mapping) else None
        self._nulls = optional_non_nullable(schema)
        self._model_param = model_param
        self._ctx_param = ctx_param

    def __call__(self, value: Any) -> list[ArgumentProblem]:
        return self.check(value)[1]

    def within_bounds(self, value: Any) -> list[ArgumentProblem]:
        return self.check(value, bounded=True)[1]

    def check(self, value: Any, *, bounded: bool = False) -> tuple[Any, list[ArgumentProblem]]:
        """The model instance of ``value``, or the problems; ``bounded``: the caller already knows
        ``value`` is within the size bound (a stricter one: the dispatcher's ``own_small``), so it is
        not walked again."""
        return self.arguments(value, _UNBOUND, bounded)

    def arguments(self, value: Any, ctx: Any, bounded: bool = False) -> tuple[Any, list[ArgumentProblem]]:
        """The handler's keyword arguments from a call's own arguments ``value`` (``ctx``: the call's
        context), or ``(None, problems)``; one pass, on the dispatcher's every call."""
        if not bounded:
            too_large = size_problems(value)
            if too_large:
                return None, too_large
        if type(value) is not dict:
            return None, [ArgumentProblem("", not_an_object_message(value))]
        if ctx is not _UNBOUND:
            names = self._nulls
            if names and None in value.values():
                value = without_null_optionals(value, names)
        closed = self._closed
        unexpected = (
            () if closed is None or closed.issuperset(value) else [k for k in value if k not in closed]
        )
        try:
            instance = self._validate(value, strict=self._strict)
        except ValidationError as exc:
            return None, self._refusal(value, unexpected, exc)
        if unexpected:
            return None, self._refusal(value, unexpected, None)
        if ctx is _UNBOUND:
            return instance, []
        param = self._model_param
        kwargs = {param: instance} if param is not None else dict(instance.__dict__)
        if self._ctx_param is not None:
            kwargs[self._ctx_param] = ctx
        return kwargs, []

    def _refusal(
        self, value: dict[Any, Any], unexpected: Sequence[Any], error: ValidationError | None
    ) -> list[ArgumentProblem]:
        """The problems of a refused ``value``: the model's errors (``error``) and the keys the closed
        root schema does not list (``unexpected``), in the order of ``value``'s keys, capped."""
        problems = [] if error is None else problems_from_pydantic(error, value, self._schema, capped=False)
        if unexpected:
            problems.extend(unexpected_problems(unexpected, self._schema))
            order = {key: i for i, key in enumerate(value)}
            problems.sort(key=lambda p: order.get(_first_token(p.pointer), -1))
        return capped(problems) or [ArgumentProblem("", "the arguments do not match the tool's schema")]


# ``arguments``'s context for ``check``: the instance itself, unbound (and ``null`` kept as sent)
_UNBOUND: Any = object()


def _first_token(pointer: str) -> str:
    return pointer[1:].split("/", 1)[0].replace("~1", "/").replace("~0", "~")
