"""The single-validation path of the dispatcher (issue 15): a pydantic-model or typed-signature tool whose
registered schema is exactly its model's, with fields that keep JSON Schema's verdicts, is validated by
strict pydantic alone. Whatever it accepts, the full path (compiled schema validator, then pydantic
binding) accepts too and binds to the same values; whatever it refuses goes through the full path, so
invalid calls report the same problems. Ineligible tools never take it."""

from __future__ import annotations

import asyncio
import copy
import json
from dataclasses import replace
from types import MappingProxyType
from typing import Annotated, Any, Literal, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from reyn_core import InvalidToolArguments, ToolContext, ToolDefinition, tool
from reyn_core.dispatch import argument_hash
from reyn_core.dispatch.arguments import ArgumentCheck, own_arguments, single_validation_plan
from reyn_core.dispatch.handlers import resolve_handler
from reyn_core.host import (
    RegistryBuilder,
    ToolCall,
    ToolCallHooks,
    ToolCallOutcome,
    dispatch_tool,
    invoke_tool,
)
from reyn_core.jsondata import canonical_json
from reyn_core.validation import parse_arguments

CTX = ToolContext(surface="router", agent="test")

# ---------------------------------------------------------------------------- drawn models

NAMES = ["a", "b", "c", "d"]
FIELD_TYPES: dict[str, Any] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "lit": Literal["x", "y", "1"],
    "opt_int": Optional[int],  # both spellings are eligible
    "opt_str": str | None,
    "opt_float": float | None,
}
DEFAULTS: dict[str, Any] = {
    "str": "s",
    "int": 2,
    "float": 1.5,
    "bool": True,
    "lit": "x",
    "opt_int": None,
    "opt_str": None,
    "opt_float": None,
}


@st.composite
def field_specs(draw: st.DrawFn) -> dict[str, tuple[Any, Any]]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    fields: dict[str, tuple[Any, Any]] = {}
    for name in names:
        kind = draw(st.sampled_from(sorted(FIELD_TYPES)))
        ann = FIELD_TYPES[kind]
        constraint: dict[str, Any] = {}
        if kind in ("int", "float", "opt_int", "opt_float") and draw(st.booleans()):
            constraint = {draw(st.sampled_from(["ge", "gt", "le", "lt"])): draw(st.integers(-3, 3))}
        if kind in ("str", "opt_str") and draw(st.booleans()):
            constraint = {draw(st.sampled_from(["min_length", "max_length"])): draw(st.integers(0, 3))}
        required = draw(st.booleans())
        default = ... if required else DEFAULTS[kind]
        if constraint and default is not ... and default is not None:
            default = ...  # a default outside the bound would not be checked by JSON Schema either
        fields[name] = (ann, Field(default, **constraint))
    return fields


def build_tool(fields: dict[str, tuple[Any, Any]], *, model_param: bool, extra: str) -> ToolDefinition:
    model = create_model("Drawn", __config__=ConfigDict(extra=extra), **fields)  # type: ignore[call-overload,typeddict-item]
    if model_param:

        async def handler(args: Any) -> Any:
            return args

        handler.__annotations__ = {"args": model, "return": Any}
        return tool(name="drawn", description="d")(handler)
    # a keyword handler: @tool builds the signature model itself
    import inspect

    params = [
        inspect.Parameter(
            n,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=ann,
            default=inspect.Parameter.empty if info.default is ... else info.default,
        )
        for n, (ann, info) in fields.items()
        if not info.metadata  # keyword handlers: plain annotations only
    ]
    if not params:
        params = [inspect.Parameter("a", inspect.Parameter.KEYWORD_ONLY, annotation=int)]

    async def kw_handler(**kwargs: Any) -> Any:
        return kwargs

    kw_handler.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    kw_handler.__annotations__ = {p.name: p.annotation for p in params}
    return tool(name="drawn", description="d")(kw_handler)


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([3.0, -0.0, 2.5, 1e300]),
    st.text(max_size=4),
    st.sampled_from(["x", "y", "1", "3", "true", ""]),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=6,
)
PAYLOADS = st.dictionaries(
    st.sampled_from([*NAMES, "e", "zz"]) | st.text(max_size=3), JSON_VALUES, max_size=5
)


def full_path(check: ArgumentCheck, td: ToolDefinition, payload: Any) -> dict[str, Any] | None:
    parsed, problems = parse_arguments(payload)
    try:
        validated = check.validate(td, parsed, problems)
        return check.bind(resolve_handler(td), td, validated, CTX)
    except InvalidToolArguments:
        return None


def typed(kwargs: dict[str, Any]) -> list[tuple[str, type, Any]]:
    flat: dict[str, Any] = {}
    for k, v in kwargs.items():
        flat.update(v.__dict__ if isinstance(v, BaseModel) else {k: v})
    return sorted((k, type(v), v) for k, v in flat.items())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fields=field_specs(),
    model_param=st.booleans(),
    extra=st.sampled_from(["forbid", "ignore"]),
    payloads=st.lists(PAYLOADS, min_size=1, max_size=6),
)
def test_single_validation_agrees_with_the_full_path(
    fields: dict[str, tuple[Any, Any]], model_param: bool, extra: str, payloads: list[dict[str, Any]]
) -> None:
    td = build_tool(fields, model_param=model_param, extra=extra)
    shape = resolve_handler(td)
    assert single_validation_plan(shape.model, td.parameters) is not None  # the path is exercised
    check = ArgumentCheck(td.parameters)
    # every payload, plus a copy as JSON text, plus a valid call made of the defaults
    valid = {n: DEFAULTS[k] for n, (ann, _) in fields.items() for k, t in FIELD_TYPES.items() if t == ann}
    for payload in [*payloads, valid]:
        single = check.single(shape, payload, CTX)
        full = full_path(check, td, payload)
        if single is not None:
            assert full is not None, f"single path accepted {payload!r}, the schema refuses it"
            assert typed(single) == typed(full)
        # the dispatcher's verdict is the full path's, and invalid calls carry its problems
        registry = RegistryBuilder()
        registry.register(td)
        envelope = asyncio.run(dispatch_tool(registry.freeze(), "drawn", payload, CTX))
        assert (envelope["status"] == "ok") == (full is not None), (payload, envelope)


# ---------------------------------------------------------------------------- targeted cases


class Limits(BaseModel):
    path: str = Field(description="File")
    limit: int = Field(20, ge=1, le=1000)
    ratio: float = 0.5


@tool(name="limits")
async def limits_tool(args: Limits) -> dict[str, Any]:
    """Echo the arguments."""
    return {"path": args.path, "limit": args.limit, "ratio": args.ratio}


def call(td: ToolDefinition, payload: Any) -> dict[str, Any]:
    builder = RegistryBuilder()
    builder.register(td)
    return asyncio.run(dispatch_tool(builder.freeze(), td.name, payload, CTX))


def test_eligible_model_tool_has_a_plan() -> None:
    assert single_validation_plan(Limits, limits_tool.parameters) is not None


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            {"path": "p", "limit": 3.0},
            {"path": "p", "limit": 3, "ratio": 0.5},
        ),  # integral float: schema allows
        ({"path": "p", "ratio": 2}, {"path": "p", "limit": 20, "ratio": 2.0}),
        ({"path": "p", "limit": None}, {"path": "p", "limit": 20, "ratio": 0.5}),  # strict mode's "not given"
        ('{"path": "p", "limit": 7}', {"path": "p", "limit": 7, "ratio": 0.5}),
    ],
)
def test_accepted_like_the_full_path(payload: Any, expected: dict[str, Any]) -> None:
    envelope = call(limits_tool, payload)
    assert envelope == {"status": "ok", "data": expected}


@pytest.mark.parametrize(
    ("payload", "pointer", "message"),
    [
        ({"path": "p", "limit": "3"}, "/limit", "expected integer, got string"),  # lax pydantic would take it
        ({"path": "p", "limit": True}, "/limit", "expected integer, got boolean"),
        ({"path": "p", "limit": 0}, "/limit", "must be >= 1, got 0"),
        ({"path": "p", "ratio": "0.5"}, "/ratio", "expected number, got string"),
        ({"path": "p", "other": 1}, "/other", "unexpected property (allowed: limit, path, ratio)"),
        ({"limit": 2}, "/path", "is a required property and is missing"),
        ('{"path": "p", "ratio": Infinity}', "/ratio", "must be a finite number"),
        ('{"path": "p", "ratio": NaN}', "/ratio", "must be a finite number"),
    ],
)
def test_refused_with_the_full_paths_problems(payload: Any, pointer: str, message: str) -> None:
    envelope = call(limits_tool, payload)
    assert envelope["status"] == "error"
    assert envelope["error"]["kind"] == "invalid_arguments"
    assert {"path": pointer, "message": message} in envelope["error"]["errors"]


class BeforeValidator(BaseModel):
    n: int

    @field_validator("n", mode="before")
    @classmethod
    def from_text(cls, v: Any) -> Any:
        return int(v) if isinstance(v, str) else v


class Patterned(BaseModel):
    code: str = Field(pattern="^[a-z]+$")


class Aliased(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    name: str = Field(alias="Name")


class Nested(BaseModel):
    tags: list[str]


class Extra(BaseModel):
    model_config = ConfigDict(extra="allow")
    n: int


class Stripping(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)
    s: str = Field(max_length=1)


class Lax(BaseModel):
    n: Annotated[int, Field(strict=False)]


class IntLiteral(BaseModel):
    v: Literal[1, 2]


@pytest.mark.parametrize(
    "model", [BeforeValidator, Patterned, Aliased, Nested, Extra, Stripping, Lax, IntLiteral]
)
def test_ineligible_models_take_the_full_path(model: type[BaseModel]) -> None:
    async def handler(args: Any) -> Any:
        return args

    handler.__annotations__ = {"args": model, "return": Any}
    td = tool(name="ineligible", description="d")(handler)
    assert single_validation_plan(model, td.parameters) is None
    check = ArgumentCheck(td.parameters)
    assert check.single(resolve_handler(td), {}, CTX) is None


def test_a_before_validator_does_not_widen_what_the_schema_accepts() -> None:
    async def handler(args: BeforeValidator) -> int:
        return args.n

    envelope = call(
        tool(name="bv", description="d")(handler), {"n": "3"}
    )  # the validator would turn "3" into 3
    assert envelope["error"]["errors"] == [{"path": "/n", "message": "expected integer, got string"}]


def test_whitespace_stripping_does_not_widen_max_length() -> None:
    async def handler(args: Stripping) -> str:
        return args.s

    envelope = call(
        tool(name="strip", description="d")(handler), {"s": " a"}
    )  # schema: 2 characters > maxLength 1
    assert envelope["status"] == "error"


def test_a_schema_that_differs_from_the_model_takes_the_full_path() -> None:
    """A hand-written (or edited) registered schema is what the dispatcher enforces."""
    narrower = json.loads(json.dumps(limits_tool.parameters))
    narrower["properties"]["path"]["maxLength"] = 2
    td = ToolDefinition(name="narrow", description="d", parameters=narrower, handler=limits_tool.handler)
    assert single_validation_plan(Limits, td.parameters) is None
    envelope = call(td, {"path": "long"})
    assert envelope["error"]["errors"] == [
        {"path": "/path", "message": "must be at most 2 characters, got 4"}
    ]


def test_a_raw_schema_tool_is_unchanged() -> None:
    async def raw(**kwargs: Any) -> Any:
        return kwargs

    td = ToolDefinition(
        name="raw",
        description="d",
        parameters={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "additionalProperties": False,
        },
        handler=raw,
    )
    assert resolve_handler(td).model is None
    assert call(td, {"n": 3}) == {"status": "ok", "data": {"n": 3}}
    assert call(td, {"n": "3"})["status"] == "error"


def test_an_unresolvable_handler_still_reports_invalid_arguments_first() -> None:
    td = ToolDefinition(
        name="lazy_missing",
        description="d",
        parameters=limits_tool.parameters,
        handler="no_such_module_for_reyn_tests:handler",
    )
    assert call(td, {"limit": "x"})["error"]["kind"] == "invalid_arguments"
    assert call(td, {"path": "p"})["error"]["kind"] == "runtime_missing"


def test_a_keyword_handler_gets_its_annotated_types() -> None:
    @tool(name="kw")
    async def kw(n: int, x: float = 1.0, ctx: ToolContext | None = None) -> list[Any]:
        """Echo."""
        assert ctx is not None
        return [n, x, type(x).__name__]

    builder = RegistryBuilder()
    builder.register(kw)
    registry = builder.freeze()
    assert asyncio.run(invoke_tool(registry, "kw", {"n": 2, "x": 3}, CTX)) == [2, 3.0, "float"]
    assert asyncio.run(invoke_tool(registry, "kw", {"n": 2.0}, CTX)) == [2, 1.0, "float"]


class Deferred(BaseModel):
    model_config = ConfigDict(defer_build=True)
    path: str
    limit: int = Field(20, ge=1)


@tool(name="deferred")
async def deferred(args: Deferred) -> list[Any]:
    """Echo."""
    return [args.path, args.limit]


def test_a_model_whose_build_is_deferred_takes_the_single_path() -> None:
    assert single_validation_plan(Deferred, deferred.parameters) is not None
    assert call(deferred, {"path": "p"}) == {"status": "ok", "data": ["p", 20]}
    assert call(deferred, {"path": "p", "limit": 0})["error"]["kind"] == "invalid_arguments"


# ---------------------------------------------------------------------------- parsing a dict of scalars


class Sneaky(str):
    """A string subclass: not exactly a scalar type, so the dispatcher leaves it to ``parse_arguments``."""


ARGUMENT_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.text(max_size=3)
    | st.builds(Sneaky, st.text(max_size=2)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=8,
)


def _containers(value: Any) -> set[int]:
    """The ids of every dict and list in ``value`` (``value`` itself included)."""
    found: set[int] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict | list) and id(node) not in found:
            found.add(id(node))
            stack.extend(node.values() if isinstance(node, dict) else node)
    return found


@settings(max_examples=400, deadline=None)
@given(args=st.dictionaries(st.text(max_size=3), ARGUMENT_VALUES, max_size=4))
def test_the_calls_own_arguments_are_parse_arguments_sharing_no_container(args: dict[str, Any]) -> None:
    """The dispatcher parses the caller's dict as ``parse_arguments`` does, into its own copy: no dict
    or list of the caller's is what it validates and binds."""
    own, problems = own_arguments(args)
    assert (own, problems) == parse_arguments(args)
    assert not _containers(own) & _containers(args)


def test_a_mapping_that_is_not_a_dict_is_copied_to_the_bottom() -> None:
    inner = {"tags": ["a"], "meta": {"k": "v"}}
    own, problems = own_arguments(MappingProxyType(inner))
    assert (own, problems) == (inner, [])
    assert type(own) is dict and not _containers(own) & _containers(inner)


def test_a_dict_nested_past_the_bound_is_still_refused() -> None:
    deep: dict[str, Any] = {"a": 1}
    for _ in range(70):
        deep = {"a": deep}
    assert own_arguments(deep) == parse_arguments(deep) == (None, parse_arguments(deep)[1])
    assert parse_arguments(deep)[1]


def _nested(levels: int, leaf: Any, *, as_list: bool = False) -> Any:
    value = leaf
    for _ in range(levels):
        value = [value] if as_list else {"a": value}
    return value


@pytest.mark.parametrize(
    "args",
    [
        {"a": _nested(62, 1)},  # 63 levels: within the bound
        {"a": _nested(63, 1)},  # 64: the bound
        {"a": _nested(64, 1)},  # 65: refused
        {"a": _nested(63, 1, as_list=True)},
        {"a": _nested(64, 1, as_list=True)},
        {"a": MappingProxyType({"b": [1]})},  # a mapping that is not a dict, nested: kept, counted
        {"a": _nested(62, MappingProxyType({"b": 1}))},
        {"a": _nested(63, MappingProxyType({"b": 1}))},
        {"a": (1, [2])},  # a tuple: JSON Schema does not look into it, kept as it is
    ],
)
def test_the_calls_own_arguments_decide_depth_as_parse_arguments_does(args: dict[str, Any]) -> None:
    assert own_arguments(args) == parse_arguments(args)


def test_a_cyclic_dict_is_refused_as_too_deep() -> None:
    cyclic: dict[str, Any] = {"a": []}
    cyclic["a"].append(cyclic)
    own, problems = own_arguments(cyclic)
    assert own is None and "nest too deeply" in problems[0].message


# ---------------------------------------------------------------------------- with policy hooks

HOOK_BEHAVIOURS = ["observe", "deny", "rewrite", "rewrite_nested", "caller_mutates"]


def _scramble(value: Any) -> None:
    """What a caller could do to its arguments while the call awaits: every container changed."""
    if isinstance(value, dict):
        for item in value.values():
            _scramble(item)
        for key in list(value):
            value[key] = "scrambled"
        value["zz"] = [1.5, "x"]
    elif isinstance(value, list):
        for item in value:
            _scramble(item)
        value.append("scrambled")


async def _call_with_hooks(td: ToolDefinition, payload: Any, behaviour: str) -> tuple[Any, list[Any]]:
    """The envelope of one call, and everything the hooks saw, in order."""
    events: list[Any] = []
    asked, answer = asyncio.Event(), asyncio.Event()

    async def before(call: ToolCall) -> str | None:
        events.append(("before", canonical_json(call.arguments)))
        if behaviour == "deny":
            return "no"
        if behaviour == "rewrite":
            call.arguments["a"] = "rewritten"
        if behaviour == "rewrite_nested":
            for value in call.arguments.values():
                if isinstance(value, list):
                    value.append("rewritten")
                if isinstance(value, dict):
                    value["rewritten"] = 1
        if behaviour == "caller_mutates":
            asked.set()
            await answer.wait()
            events.append(("before, after its await", canonical_json(call.arguments)))
        return None

    def after(call: ToolCall, outcome: ToolCallOutcome) -> None:
        events.append(("after", outcome.kind, argument_hash(call.arguments)))

    builder = RegistryBuilder(hooks=ToolCallHooks(before=(before,), after=(after,)))
    builder.register(td)
    task = asyncio.ensure_future(dispatch_tool(builder.freeze(), td.name, payload, CTX))
    if behaviour == "caller_mutates":
        waiting = asyncio.ensure_future(asked.wait())
        await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if isinstance(payload, dict):  # JSON text: the caller's str cannot change
            _scramble(payload)  # after validation, while the before hook awaits
        answer.set()
    return await task, events


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fields=field_specs(),
    model_param=st.booleans(),
    extra=st.sampled_from(["forbid", "ignore"]),
    payloads=st.lists(PAYLOADS, min_size=1, max_size=4),
    behaviour=st.sampled_from(HOOK_BEHAVIOURS),
    as_text=st.booleans(),
)
def test_with_hooks_both_paths_give_the_same_envelopes_hook_calls_and_audit_records(
    fields: dict[str, tuple[Any, Any]],
    model_param: bool,
    extra: str,
    payloads: list[dict[str, Any]],
    behaviour: str,
    as_text: bool,
) -> None:
    """The same tool on the single-validation path and (its registered schema edited, so it is not its
    model's) on the full path: the same envelope, the same hook calls seeing the same arguments, the
    same audit records — whether the hooks observe, deny, try to rewrite the arguments (they cannot:
    the hook breaks and the call is denied), or the caller changes its dict while a hook awaits (which
    changes nothing: the call is what it was without the change)."""
    single = build_tool(fields, model_param=model_param, extra=extra)
    full = replace(single, parameters={**single.parameters, "description": "edited"})
    assert single_validation_plan(resolve_handler(single).model, single.parameters) is not None
    assert single_validation_plan(resolve_handler(full).model, full.parameters) is None
    valid = {n: DEFAULTS[k] for n, (ann, _) in fields.items() for k, t in FIELD_TYPES.items() if t == ann}

    async def run() -> None:
        for payload in [*payloads, valid]:
            sent = json.dumps(payload) if as_text else payload
            on_single = await _call_with_hooks(single, copy.deepcopy(sent), behaviour)
            on_full = await _call_with_hooks(full, copy.deepcopy(sent), behaviour)
            assert on_single == on_full, (payload, behaviour)
            envelope, events = on_single
            if behaviour == "caller_mutates":
                untouched, seen = await _call_with_hooks(single, copy.deepcopy(sent), "observe")
                assert envelope == untouched
                assert [e for e in events if e[0] != "before, after its await"] == seen
                assert len({e[1] for e in events if e[0].startswith("before")}) <= 1
            if behaviour.startswith("rewrite") and events and events[0][0] == "before":
                touched = behaviour == "rewrite" or any(isinstance(v, list | dict) for v in payload.values())
                if touched:
                    assert envelope["error"]["kind"] == "denied", envelope

    asyncio.run(run())
