"""The checks a tool passes before it is registered (diagnostic codes RT002, RT003, RT005, RT006,
RT010, RT012 and the schema's own codes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ToolRegistrationError
from ..own_check import availability_problem
from ..schema import SchemaIssue, check_tool_schema, unsendable_words
from ..tool import NAME_PATTERN, PURITIES, ToolDefinition, ToolGates, is_valid_tool_name
from ..unicode_text import has_lone_surrogate, json_text_unsendable_at

# A description is sent to the model on every turn it is offered: bounded like a schema (RS002).
MAX_DESCRIPTION_CHARS = 16_384


def field_problem(d: ToolDefinition) -> str:
    """What is wrong with a definition's non-schema fields ('' when nothing): typos here would
    otherwise be silently accepted (a gate of "Allow" would quietly deny)."""
    # Exact types, not subclasses: a str or ToolGates subclass could change hashing, equality or
    # allows() after the checks ran (bypassing collisions, tools.exclude or the role gate).
    gates_ok = (
        type(d.gates) is ToolGates
        and type(d.gates.router) is str
        and type(d.gates.phase) is str
        and type(d.gates.plan_mode) is str
        and {d.gates.router, d.gates.phase, d.gates.plan_mode} <= {"allow", "deny"}
    )
    if not gates_ok:
        return (
            "gates must be ToolGates(router=..., phase=..., plan_mode=...) with values 'allow' or 'deny', "
            f"got {d.gates!r}"
        )
    if type(d.purity) is not str or d.purity not in PURITIES:
        return f"purity {d.purity!r} is not one of {list(PURITIES)}"
    if type(d.dispatch_kind) is not str or d.dispatch_kind not in ("inline", "deferred"):
        return f"dispatch_kind {d.dispatch_kind!r} is not 'inline' or 'deferred'"
    if type(d.cluster) is not str or not d.cluster:
        return f"cluster must be a non-empty string, got {d.cluster!r}"
    t = d.timeout_s
    if t is not None and (isinstance(t, bool) or not isinstance(t, int | float) or not 0 < t < float("inf")):
        return f"timeout_s must be a positive number of seconds or None, got {t!r}"
    if d.schema_enricher is not None and not callable(d.schema_enricher):
        return f"schema_enricher must be callable or None, got {type(d.schema_enricher).__name__}"
    problem = availability_problem(d.available)  # a plain function: the gates ask it synchronously
    if problem:
        return problem
    return ""


def returns_problem(returns: object) -> tuple[str, str]:
    """What is wrong with a definition's result schema: ``(RT006's words, "")``, or ``("", RT012's
    words)`` for what JSON in UTF-8 cannot carry, found from the same one encoding
    (``json_text_unsendable_at``); ``("", "")`` when nothing. It is shown to clients (MCP
    ``outputSchema``), which compile it: bounded like the parameters, JSON, and with only local
    references (nothing a client could be made to fetch)."""
    if returns is None:
        return "", ""
    if not isinstance(returns, Mapping):
        return f"returns must be a JSON Schema object or None, got {type(returns).__name__}", ""
    from ..jsondata import depth_within
    from ..schema import MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH

    if not depth_within(returns, MAX_SCHEMA_DEPTH + 1):
        return f"returns nests more than {MAX_SCHEMA_DEPTH} levels (or contains itself)", ""
    try:
        encoded, unsendable = json_text_unsendable_at(returns)
    except (TypeError, ValueError) as exc:
        return f"returns is not JSON: {exc}", ""
    if len(encoded) > MAX_SCHEMA_BYTES:
        return f"returns is {len(encoded)} bytes; the limit is {MAX_SCHEMA_BYTES}", ""
    if '"$' in encoded:
        from ..validation.screening import reference_problems

        problems = reference_problems(returns)
        if problems:
            return f"returns: {problems[0].message}", ""
    return "", unsendable_words(unsendable, "returns") if unsendable is not None else ""


def check_definition(d: ToolDefinition, validator: Any = None) -> list[SchemaIssue]:
    """Raise ``ToolRegistrationError`` for a definition that cannot be registered; else return the
    schema's warnings. ``validator`` (the registry's ``SchemaValidator`` for ``d.parameters``) is
    handed to the schema check (``check_tool_schema``, run every time), which compiles it."""
    if type(d.name) is not str or not is_valid_tool_name(d.name):
        raise ToolRegistrationError(
            "RT002",
            f"tool name {d.name!r} is invalid: it must match {NAME_PATTERN}",
            tool=str(d.name)[:80],
        )
    if type(d.description) is not str or not d.description.strip():
        raise ToolRegistrationError(
            "RT003",
            f"tool {d.name!r} has no description",
            tool=d.name,
        )
    if len(d.description) > MAX_DESCRIPTION_CHARS:
        raise ToolRegistrationError(
            "RT010",
            f"tool {d.name!r} has a description of {len(d.description)} characters; the limit is "
            f"{MAX_DESCRIPTION_CHARS}",
            tool=d.name,
        )
    handler = d.handler
    if not (handler is None or callable(handler) or (isinstance(handler, str) and ":" in handler)):
        raise ToolRegistrationError(
            "RT005",
            f"tool {d.name!r} handler must be callable, 'module:attr' or None",
            tool=d.name,
        )
    problem = field_problem(d)
    returns, returns_unsendable = ("", "") if problem else returns_problem(d.returns)
    if problem or returns:
        raise ToolRegistrationError(
            "RT006",
            f"tool {d.name!r} has an invalid field: {problem or returns}",
            tool=d.name,
        )
    # RT012 before the schema's compile, which fails on one without saying where. The schemas' are
    # found by the encoding their checks make anyway (returns_problem's, check_tool_schema's).
    problem = description_unsendable(d.description) or returns_unsendable
    if problem:
        raise ToolRegistrationError("RT012", f"tool {d.name!r} has {problem}", tool=d.name)
    issues = check_tool_schema(d.parameters, phase_usable=d.gates.phase == "allow", validator=validator)
    errors = [i for i in issues if i.severity == "error"]
    if errors:
        first = errors[0]
        if first.code == "RT012":
            raise ToolRegistrationError("RT012", f"tool {d.name!r} has {first.message}", tool=d.name)
        detail = "; ".join(f"{i.message}" + (f" (at {i.pointer})" if i.pointer else "") for i in errors)
        raise ToolRegistrationError(
            first.code,
            f"tool {d.name!r} has an invalid parameters schema: {detail}",
            tool=d.name,
        )
    return [i for i in issues if i.severity == "warning"]


def description_unsendable(text: str) -> str:
    """Where a description holds text UTF-8 cannot carry (``RT012``'s words; '' when nothing): every
    surface sends a definition as UTF-8 JSON, so one such tool would break the whole listing of an
    MCP server, or every model request, not only itself."""
    if not has_lone_surrogate(text):
        return ""
    first = next(i for i, ch in enumerate(text) if "\ud800" <= ch <= "\udfff")
    return f"text that UTF-8 cannot carry (a lone surrogate) in its description at character {first}"
