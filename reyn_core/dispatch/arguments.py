"""A call's arguments: parsed, checked against the tool's schema, bound to its handler's parameters.

Two paths give the same verdicts and the same bound arguments:

* the **full path** (every tool): the compiled JSON-Schema validator of the registered schema, then
  pydantic binding the keyword arguments (or the model argument) to the handler's annotated types;
* the **single-validation path** (a pydantic-model or typed-signature tool whose registered schema is
  exactly what its model generates, and whose fields keep JSON Schema's verdicts — see
  ``single_validation_plan``): only pydantic, in strict mode. Strict pydantic accepts a subset of what
  the schema accepts for those fields, and binds what it accepts to the same values as the full path;
  whenever it refuses (``3.0`` for an ``int``, a wrong type, a bound crossed, an unknown key), the call
  takes the full path, so an invalid call reports exactly the problems the full path reports.

Both paths work on the call's own arguments (``own_arguments``): nothing the caller holds is validated
or bound, so what was validated is what the handler gets, whatever the caller does to its dict while
the call awaits. Policy hooks see a read-only snapshot of them (``read_only``), never the bound objects.
"""

from __future__ import annotations

import copy
import math
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel, Strict, ValidationError

from ..context import ToolContext
from ..errors import ArgumentProblem, InvalidToolArguments
from ..jsondata import JSON_SCALAR_TYPES, canonical_json
from ..tool import ToolDefinition, schema_from_model
from ..validation import (
    MAX_ARGUMENT_DEPTH,
    Validator,
    compile_validator,
    optional_non_nullable,
    parse_arguments,
    problems_from_pydantic,
    without_null_optionals,
)
from ..validation.fast import SCALAR_KEYWORDS
from .handlers import CallShape


def invalid(tool: ToolDefinition, problems: Sequence[ArgumentProblem]) -> InvalidToolArguments:
    """The ``InvalidToolArguments`` listing ``problems`` (the first eight in the message)."""
    listed = "; ".join(p.render() for p in problems[:8])
    more = f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""
    return InvalidToolArguments(
        f"invalid arguments for {tool.name!r}: {listed}{more}", tool=tool.name, problems=problems
    )


# --------------------------------------------------------------------------- the call's own arguments

# Argument values that nest nothing (JSON's scalars): a dict of only these is within any depth bound,
# and copying the dict copies everything in it that could change.
_FLAT_VALUES = JSON_SCALAR_TYPES


def own_arguments(args: Any) -> tuple[Any, list[ArgumentProblem]]:
    """``parse_arguments(args)``, as data no one but this call holds.

    JSON text is parsed afresh. Of a mapping, every ``dict`` and ``list`` in it — the containers JSON
    Schema looks into — is copied (as a plain ``dict`` / ``list``), so the caller mutating its own
    containers while the call awaits (a hook, a handler, another task) changes nothing that was
    validated, bound or shown to the hooks. Other values are kept: scalars cannot change, and an
    object JSON Schema does not look into (a tuple, a host's own class) is only ever accepted by a
    schema that does not constrain it.

    Copying stops one level past the depth bound, so a cyclic structure is not followed for ever;
    ``parse_arguments`` then refuses the copy as too deep. Within the bound, the copy is its answer."""
    if type(args) is dict:
        for value in args.values():
            if type(value) not in _FLAT_VALUES:
                break
        else:  # the common call: a flat object of scalars
            return dict(args), []
    if isinstance(args, Mapping):
        unsure: list[Any] = []
        args = {key: _copied(value, 2, unsure) for key, value in args.items()}
        if not unsure:  # every container copied, within the bound: parse_arguments accepts it as it is
            return args, []
    return parse_arguments(args)


def _copied(value: Any, depth: int, unsure: list[Any]) -> Any:
    """``value`` (at nesting ``depth``, the outermost object being 1) with its dicts and lists copied.
    A container past the bound, or a mapping that is not a dict (kept as it is, and counted in depth by
    ``parse_arguments``), goes into ``unsure``: then ``parse_arguments`` decides about the depth."""
    if type(value) in _FLAT_VALUES:
        return value
    if isinstance(value, dict | list):
        if depth > MAX_ARGUMENT_DEPTH:
            unsure.append(value)
            return value
        if isinstance(value, dict):
            return {key: _copied(item, depth + 1, unsure) for key, item in value.items()}
        return [_copied(item, depth + 1, unsure) for item in value]
    if isinstance(value, Mapping):
        unsure.append(value)
    return value


class _ReadOnly:
    """Refuses every method that would change a hook's view of a call's arguments. (Code that goes
    around the refusals — ``dict.__setitem__(view, ...)`` — changes only that view: the handler's
    arguments were bound from the dispatcher's own copy before any hook ran.)"""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "a tool call's arguments are read-only: a policy hook may allow or deny the call, not change it"
        )


class ReadOnlyDict(_ReadOnly, dict[Any, Any]):
    """A JSON object as policy hooks see it: a ``dict`` (``json.dumps``, ``==`` and ``isinstance``
    work as for any dict) whose changing methods raise ``TypeError``. A copy is a plain, mutable dict."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _ReadOnly._refuse
    clear = pop = popitem = setdefault = update = _ReadOnly._refuse

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {key: copy.deepcopy(item, memo) for key, item in self.items()}

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))


class ReadOnlyList(_ReadOnly, list[Any]):
    """A JSON array as policy hooks see it: a ``list`` whose changing methods raise ``TypeError``."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _ReadOnly._refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _ReadOnly._refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(item, memo) for item in self]

    def __reduce__(self) -> Any:
        return (list, (list(self),))


_NO_ARGUMENTS: Mapping[str, Any] = ReadOnlyDict({})


def read_only(parsed: Any) -> Mapping[str, Any]:
    """The arguments as policy hooks see them: a read-only snapshot of ``parsed`` (the call's own,
    within the depth bound), each dict a new ``ReadOnlyDict`` and each list a new ``ReadOnlyList`` —
    never an object the handler is given. A hook that tries to change them raises ``TypeError``, and
    a ``before`` hook that raises denies the call. ``{}`` when ``parsed`` is not an object."""
    if type(parsed) is not dict:
        return _NO_ARGUMENTS
    for value in parsed.values():
        if type(value) not in _FLAT_VALUES:
            return _frozen(parsed)
    return ReadOnlyDict(parsed)


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return ReadOnlyDict({key: _frozen(item) for key, item in value.items()})
    if isinstance(value, list):
        return ReadOnlyList([_frozen(item) for item in value])
    return value


# --------------------------------------------------------------------------- single-validation plan

# Scalar types whose strict pydantic verdict on JSON data is contained in JSON Schema's verdict for
# the type pydantic generates (str → string, int → integer, float → number, bool → boolean).
_SCALARS: tuple[type, ...] = (str, int, float, bool)
# Field metadata whose pydantic check equals the JSON Schema keyword it generates (same comparison,
# same length in code points). ``pattern`` (another regex engine), ``multiple_of`` (float
# arithmetic) and every validator or transformation are not here: such a model takes the full path.
_CONSTRAINTS: tuple[type, ...] = (
    annotated_types.Ge,
    annotated_types.Gt,
    annotated_types.Le,
    annotated_types.Lt,
    annotated_types.MinLen,
    annotated_types.MaxLen,
)
# Keywords a property of an eligible model may carry in its generated schema.
_PROPERTY_KEYWORDS = SCALAR_KEYWORDS | {"anyOf"}
_ROOT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "description", "title"})
# Model settings that cannot make strict pydantic accept what the schema refuses, nor change a value
# differently from the full path (which binds with the same model).
_CONFIG_KEYS = frozenset(
    {
        "extra",
        "title",
        "json_schema_extra",
        "frozen",
        "use_attribute_docstrings",
        "protected_namespaces",
        "defer_build",
        "strict",
        "validate_default",
        "revalidate_instances",
        "arbitrary_types_allowed",
        "from_attributes",
        "ser_json_timedelta",
        "ser_json_bytes",
        "ser_json_inf_nan",
        "json_schema_mode_override",
        "plugin_settings",
    }
)


def _eligible_annotation(annotation: Any) -> bool:
    if annotation in _SCALARS:
        return True
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:  # string literals only: pydantic and JSON equality agree on str
        return bool(args) and all(type(a) is str for a in args)
    if origin is typing.Union or origin is types.UnionType:  # Optional[X] only
        rest = [a for a in args if a is not type(None)]
        return len(rest) == 1 and len(args) == 2 and _eligible_annotation(rest[0])
    return False


def _property_keywords_ok(sub: Any) -> bool:
    if not isinstance(sub, Mapping) or not set(sub) <= _PROPERTY_KEYWORDS:
        return False
    branches = sub.get("anyOf")
    return branches is None or all(_property_keywords_ok(b) for b in branches)


@dataclass(frozen=True, slots=True)
class SinglePlan:
    """How to validate one tool's arguments with pydantic alone (see the module docstring)."""

    model: type[BaseModel]
    fields: frozenset[str]
    float_fields: tuple[str, ...]
    null_optionals: frozenset[str]


def single_validation_plan(model: type[BaseModel] | None, parameters: Mapping[str, Any]) -> SinglePlan | None:
    """A ``SinglePlan`` when validating with ``model`` alone keeps the registered schema's verdicts:

    * the registered ``parameters`` are exactly the schema ``model`` generates (``schema_from_model``),
      an object of scalar properties refusing unknown keys;
    * the model has no validator of its own, no setting that widens or rewrites input, no aliases;
    * every field is ``str``, ``int``, ``float``, ``bool``, a ``Literal`` of strings, or an
      ``Optional`` of one of those, with only ``ge``/``gt``/``le``/``lt``/``min_length``/``max_length``
      constraints.

    Otherwise None: the tool keeps the full path (a raw schema, an MCP import, a hand-written or
    enriched schema that differs from the model, a ``pattern``, nested models, lists, ...).
    """
    if model is None:
        return None
    try:
        generated = schema_from_model(model)
        if canonical_json(generated) != canonical_json(parameters):
            return None
    except Exception:  # a schema pydantic cannot generate, or non-JSON data: full path
        return None
    if not set(generated) <= _ROOT_KEYWORDS or generated.get("additionalProperties") is not False:
        return None
    if not set(model.model_config) <= _CONFIG_KEYS or model.model_config.get("extra") == "allow":
        return None
    decorators = model.__pydantic_decorators__
    if any(
        (
            decorators.validators,
            decorators.field_validators,
            decorators.root_validators,
            decorators.model_validators,
        )
    ):
        return None
    own = [c for c in model.__mro__ if c not in BaseModel.__mro__]
    hooks = ("__get_pydantic_core_schema__", "model_post_init", "__pydantic_on_complete__")
    if model.__private_attributes__ or any(h in c.__dict__ for c in own for h in hooks):
        return None
    props = generated.get("properties", {})
    floats = []
    for name, info in model.model_fields.items():
        if info.alias is not None or info.validation_alias is not None or name not in props:
            return None
        if not _eligible_annotation(info.annotation):
            return None
        for m in info.metadata:  # a field's own ``strict=False`` would override the strict call
            if not (isinstance(m, _CONSTRAINTS) or (isinstance(m, Strict) and m.strict)):
                return None
        if not _property_keywords_ok(props[name]):
            return None
        if float in (info.annotation, *typing.get_args(info.annotation)):
            floats.append(name)
    if set(props) != set(model.model_fields):
        return None
    return SinglePlan(
        model=model,
        fields=frozenset(props),
        float_fields=tuple(floats),
        null_optionals=optional_non_nullable(parameters),
    )


_UNDECIDED: Any = object()


class ArgumentCheck:
    """One tool's argument checking, prepared once per registry snapshot: the compiled validator of
    its registered schema, the optional properties whose ``null`` means "not given", and whether the
    single-validation path applies (decided at the first call whose handler resolves)."""

    __slots__ = ("_null_optionals", "_parameters", "_plan", "_validator")

    def __init__(self, parameters: Mapping[str, Any]) -> None:
        self._parameters = parameters
        self._validator: Validator | None = None
        self._null_optionals: frozenset[str] | None = None
        self._plan: SinglePlan | None = _UNDECIDED

    @property
    def single_undecided_or_eligible(self) -> bool:
        """Whether resolving the handler could let a call take the single-validation path."""
        return self._plan is not None

    def single(self, shape: CallShape, parsed: Any, ctx: ToolContext) -> dict[str, Any] | None:
        """The handler's keyword arguments validated by pydantic alone, or None when this call must
        take the full path (the tool is not eligible, or strict pydantic refused the arguments)."""
        plan = self._plan
        if plan is _UNDECIDED:
            plan = self._plan = single_validation_plan(shape.model, self._parameters)
        if plan is None or type(parsed) is not dict or not parsed.keys() <= plan.fields:
            return None
        for name in plan.float_fields:  # JSON Schema refuses NaN and infinities; pydantic allows them
            value = parsed.get(name)
            if type(value) is float and not math.isfinite(value):
                return None
        if plan.null_optionals and None in parsed.values():
            parsed = without_null_optionals(parsed, plan.null_optionals)
        try:
            # ``model_validate(parsed, strict=True)`` without its wrapper's own frame
            validated = plan.model.__pydantic_validator__.validate_python(parsed, strict=True)
        except ValidationError:
            return None
        kwargs: dict[str, Any]
        if shape.model_param is not None:
            kwargs = {shape.model_param: validated}
        else:
            kwargs = dict(validated.__dict__)  # the fields, as ``CallShape.bind`` reads them
        if shape.ctx_param is not None:
            kwargs[shape.ctx_param] = ctx
        return kwargs

    def validate(self, tool: ToolDefinition, parsed: Any, problems: list[ArgumentProblem]) -> Any:
        """The arguments to call with, or ``InvalidToolArguments`` naming every problem."""
        if not problems:
            if self._null_optionals is None:
                self._null_optionals = optional_non_nullable(self._parameters)
            if self._validator is None:
                self._validator = compile_validator(self._parameters)
            parsed = without_null_optionals(parsed, self._null_optionals)
            problems = self._validator(parsed)
        if problems:
            raise invalid(tool, problems)
        return parsed

    def bind(
        self, shape: CallShape, tool: ToolDefinition, args: Mapping[str, Any], ctx: ToolContext
    ) -> dict[str, Any]:
        """Keyword arguments for the handler (pydantic converts them to its annotated types)."""
        try:
            _, kwargs = shape.bind(args, ctx)
        except ValidationError as exc:
            raise invalid(tool, problems_from_pydantic(exc)) from None
        return kwargs
