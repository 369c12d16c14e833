"""A call's arguments: parsed, checked against the tool's schema, bound to its handler's parameters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from ..context import ToolContext
from ..errors import ArgumentProblem, InvalidToolArguments
from ..tool import ToolDefinition
from ..validation import (
    Validator,
    compile_validator,
    optional_non_nullable,
    problems_from_pydantic,
    without_null_optionals,
)
from .handlers import CallShape


def invalid(tool: ToolDefinition, problems: Sequence[ArgumentProblem]) -> InvalidToolArguments:
    """The ``InvalidToolArguments`` listing ``problems`` (the first eight in the message)."""
    listed = "; ".join(p.render() for p in problems[:8])
    more = f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""
    return InvalidToolArguments(
        f"invalid arguments for {tool.name!r}: {listed}{more}", tool=tool.name, problems=problems
    )


class ArgumentCheck:
    """One tool's argument checking, prepared once per registry snapshot: the compiled validator of
    its registered schema and the optional properties whose ``null`` means "not given"."""

    __slots__ = ("_null_optionals", "_parameters", "_validator")

    def __init__(self, parameters: Mapping[str, Any]) -> None:
        self._parameters = parameters
        self._validator: Validator | None = None
        self._null_optionals: frozenset[str] | None = None

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
