"""``PreparedTool``: one tool as a frozen registry snapshot prepared it for calls, owned by the snapshot.

Everything here is decided once, from final, frozen values (``ToolDefinition``, the policies, the
snapshot itself), so nothing a later call brings can change it: the layers of the gates the snapshot
fixes, per surface; whether the tool sees the caller's context as it is (``plain``: a host tool, no
host files); the handler's call shape; the tool's one validator; its definition digest; the optional
properties whose ``null`` means "not given". The call layer of the gates is still evaluated on every
call, by ``gates.check``.

The one validator is chosen in one place, ``choose_validator``, when the handler is resolved: at
``freeze()`` for a ``@tool`` definition (it carries its model), at the first call for a lazy
``"module:attr"`` handler (a load never imports a handler's module) or a hand-made definition. A
tool whose schema is the one derived from its handler's model is validated by that model
(``ModelValidator``: validated and bound in one pass); any other by its compiled schema
(``SchemaValidator``), then bound to the handler's types."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, final

from .. import gates
from ..tool import ToolDefinition, refuse_subclassing
from ..validation.compiled import SchemaValidator

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..validation import ModelValidator
    from .handlers import CallShape

    ToolValidator = ModelValidator | SchemaValidator


def schema_validator(parameters: Any) -> SchemaValidator | None:
    """The ``SchemaValidator`` of a tool's registered ``parameters`` (the registry's own copy), not
    compiled yet: the registration's check compiles this object, and the snapshot keeps it. The one
    place a tool's schema validator is made (None for a schema that is not an object: refused)."""
    if not isinstance(parameters, Mapping):
        return None
    return SchemaValidator(parameters, deferred=True)


def choose_validator(
    definition: ToolDefinition, shape: CallShape | None, schema: SchemaValidator | None = None
) -> ToolValidator:
    """The one validator of ``definition`` whose handler resolved to ``shape`` (None: no handler
    here): its model's, when ``parameters`` is exactly the schema derived from that model; else
    ``schema``, the registration's validator of ``parameters`` (compiled by its check). The only
    place a tool's validator is chosen."""
    known = shape.arguments if shape is not None else None
    if known is None and shape is not None and shape.model is not None:
        # a handler whose definition did not carry its model: derived once, here, and compared
        from ..arguments_model import ArgumentsModel, schema_from_model

        try:
            known = ArgumentsModel(shape.model, schema_from_model(shape.model), shape.model_param is None)
        except Exception:  # a model pydantic cannot describe: the registered schema validates
            known = None
    if known is not None and known.derives(definition.parameters):
        from ..validation.model_validator import ModelValidator

        assert shape is not None  # a model is known only from a handler's shape
        return ModelValidator(
            known.model, definition.parameters, model_param=shape.model_param, ctx_param=shape.ctx_param
        )
    if schema is None or schema.source is not definition.parameters:
        # a snapshot entry not made by ``RegistryBuilder`` (``RegisteredTool`` built by hand)
        schema = schema_validator(definition.parameters)
        if schema is None:
            raise TypeError(f"tool {definition.name!r}: parameters is not a JSON Schema object")
    return schema


@final
class PreparedTool:
    """One tool of one snapshot, prepared for the dispatcher (made when the snapshot is frozen)."""

    __slots__ = (
        "_digest",
        "_lock",
        "_null_optionals",
        "_schema",
        "_validator",
        "arguments",
        "definition",
        "plain",
        "refusals",
        "shape",
    )

    def __init__(
        self, definition: ToolDefinition, plain: bool, schema: SchemaValidator | None = None
    ) -> None:
        self.definition = definition
        self._schema = schema  # the registration's validator of the schema (``choose_validator``)
        # surface -> the refusal of the layers the snapshot fixes (None: they admit it), filled by
        # ``ToolRegistry.fixed_layers`` as each surface is first asked about
        self.refusals: dict[str, gates.Decision | None] = {}
        self.plain = plain
        self.shape: CallShape | None = None  # the handler's call shape, once it resolves
        self._validator: ToolValidator | None = None
        self._null_optionals: frozenset[str] | None = None
        self._digest: str | None = None
        self._lock = threading.Lock()
        # ``arguments(parsed, ctx, bounded=False)``: the handler's keyword arguments from a call's own
        # arguments, or ``(None, problems)`` — chosen with the validator when the handler resolves
        self.arguments: Callable[..., tuple[Any, list[Any]]] = self._unresolved
        known = definition.arguments_model
        if known is not None and callable(definition.handler) and known.derives(definition.parameters):
            # a @tool definition: its handler and model are here, so both are settled at freeze
            from .handlers import call_shape

            try:
                shape = call_shape(definition.handler, known)
            except Exception:  # resolved (and reported) at the call instead
                return
            self.shape = shape
            self._validator = choose_validator(definition, shape, schema)
            self.arguments = self._bound_by(self._validator)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        refuse_subclassing(cls)

    def resolved(self) -> CallShape:
        """The handler's call shape, resolving a lazy handler (``ToolRuntimeMissing`` when it cannot
        be: retried on the next call) and choosing the validator with it, once."""
        shape = self.shape
        if shape is None:
            from .handlers import resolve_handler

            shape = resolve_handler(self.definition)
            with self._lock:
                if self._validator is None:
                    self._validator = choose_validator(self.definition, shape, self._schema)
                self.arguments = self._bound_by(self._validator)
                self.shape = shape
        return shape

    def _bound_by(self, validator: ToolValidator) -> Callable[..., tuple[Any, list[Any]]]:
        """``arguments`` once the handler resolved: a model tool's validator validates and binds in
        one pass (``ModelValidator.arguments``); any other tool's validator checks, then pydantic
        binds (``_schema_arguments``)."""
        return validator.arguments if validator.binds else self._schema_arguments  # type: ignore[union-attr]

    def _unresolved(self, parsed: Any, ctx: ToolContext, bounded: bool = False) -> tuple[Any, list[Any]]:
        """``arguments`` before the handler resolved: resolve it, then bind."""
        self.resolved()
        return self.arguments(parsed, ctx, bounded)

    @property
    def validator(self) -> ToolValidator:
        """The one validator of this tool (``choose_validator``); asked before the handler resolved,
        it is chosen without it: the compiled schema."""
        validator = self._validator
        if validator is None:
            with self._lock:
                validator = self._validator
                if validator is None:
                    validator = self._validator = choose_validator(self.definition, None, self._schema)
        return validator

    def _schema_arguments(
        self, parsed: Any, ctx: ToolContext, bounded: bool = False
    ) -> tuple[Any, list[Any]]:
        """``arguments`` of a tool validated by its compiled schema: strict-mode ``null`` optionals
        dropped, the schema's check, then pydantic converts the validated arguments to the handler's
        annotated types (a model that refuses them: the call's problems). ``bounded``: the caller
        knows ``parsed`` is within a stricter bound than the size bound, which is then not walked."""
        names = self._null_optionals
        if names is None:
            names = self.null_optionals
        if names and type(parsed) is dict and None in parsed.values():
            from ..validation import without_null_optionals

            parsed = without_null_optionals(parsed, names)
        checked, problems = self.validator.check(parsed, bounded=bounded)
        if problems:
            return None, problems
        assert self.shape is not None  # resolved before ``arguments`` is this method
        return _bound(self.shape, checked, ctx)

    @property
    def digest(self) -> str:
        """``definition_digest`` of this definition, computed once (the audit log records it on every
        line; a canonical JSON of the whole definition is too much work to repeat per call)."""
        digest = self._digest
        if digest is None:
            from ..definition_digest import definition_digest

            digest = self._digest = definition_digest(self.definition)
        return digest

    @property
    def null_optionals(self) -> frozenset[str]:
        """Top-level properties that are optional and do not admit ``null`` (OpenAI strict mode)."""
        names = self._null_optionals
        if names is None:
            from ..validation import optional_non_nullable

            names = self._null_optionals = optional_non_nullable(self.definition.parameters)
        return names


def _bound(shape: CallShape, checked: Any, ctx: ToolContext) -> tuple[Any, list[Any]]:
    """``shape.bind`` of arguments a schema validator accepted: pydantic converts them to the
    handler's types; a refusal is ``(None, problems)``, worded from pydantic's errors."""
    from pydantic import ValidationError

    try:
        return shape.bind(checked, ctx)[1], []
    except ValidationError as exc:
        from ..validation import problems_from_pydantic

        return None, problems_from_pydantic(exc, value=checked)
