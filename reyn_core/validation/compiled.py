"""The one validator of a JSON Schema: ``jsonschema_rs`` (compiled Rust) for Draft 2020-12, with no
retrieval and patterns on its linear-time regex engine, bounded in size when the schema is compiled.

``SchemaValidator(schema)`` decides; ``messages.problems_of`` words a failure from the same
validator's own errors (``iter_errors`` of the same compiled schema, run only when ``is_valid`` said
no), so the decision and the words cannot disagree: if the errors were ever empty, the call is still
refused, with one generic problem. Before any schema work the value's size is bounded
(``arguments.size_problems``), so the cost of a call is linear in a bounded size."""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping
from typing import Any

from ..errors import ArgumentProblem

# ``.arguments`` (the size bound) and ``.messages`` (the wording) are imported where used: a load
# makes every raw-schema tool's validator (not compiled) and must not import what only a call needs.

# What one schema pattern may compile to (bytes of the compiled program, and of the lazy DFA's
# cache): a pattern past it is refused when the tool is registered, never slow on a call.
PATTERN_SIZE_LIMIT = 1 << 20
PATTERN_DFA_SIZE_LIMIT = 1 << 21


class SchemaNotCompiled(ValueError):
    """The validator library refused to compile a (screened) schema; the message says why."""


def _refuse_retrieval(uri: str) -> Any:
    raise LookupError(f"refused to retrieve {uri!r}: only local '#/...' references are allowed")


def schema_body(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` as Reyn validates it: Draft 2020-12 whatever ``$schema`` says (the key is dropped)."""
    return {k: v for k, v in schema.items() if k != "$schema"}


@functools.cache
def _pattern_options() -> Any:
    """The library's regex bounds (one options object, made at the first compile: it holds only the
    two constants above, and every compile reads the same)."""
    import jsonschema_rs

    return jsonschema_rs.RegexOptions(size_limit=PATTERN_SIZE_LIMIT, dfa_size_limit=PATTERN_DFA_SIZE_LIMIT)


def _compile(body: dict[str, Any]) -> Any:
    """The library's compiled validator of ``body``: the one place a ``jsonschema_rs`` validator is built."""
    import jsonschema_rs

    try:
        return jsonschema_rs.Draft202012Validator(
            body, validate_formats=False, retriever=_refuse_retrieval, pattern_options=_pattern_options()
        )
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as exc:
        first = str(exc).split("\n", 1)[0]
        raise SchemaNotCompiled(f"the schema cannot be compiled: {first}") from None


class SchemaValidator:
    """``validate(value) -> list[ArgumentProblem]`` (empty when valid) for one schema, compiled once.

    Draft 2020-12; ``format`` is an annotation (not asserted); a reference that would need
    retrieving fails the compile (``SchemaNotCompiled``) instead of making a request; ``pattern`` and
    ``patternProperties`` run on a linear-time engine whose compiled size is bounded."""

    __slots__ = ("_compiled", "_lock", "_schema", "source")
    binds = False  # what ``check`` returns is the value itself, for the handler's own binding

    def __init__(self, schema: Mapping[str, Any], *, deferred: bool = False) -> None:
        self.source = schema  # the schema object this validator was made for (the registry's copy)
        self._schema = schema_body(schema)
        self._compiled: Any = None
        self._lock = threading.Lock()
        if not deferred:
            self.compile()

    @property
    def compiled(self) -> bool:
        """Whether the library has compiled this schema yet (``deferred`` validators compile once,
        at their first ``compile()`` or validation)."""
        return self._compiled is not None

    def compile(self) -> SchemaValidator:
        """Compile the schema, once for this object's life (``SchemaNotCompiled`` if the library
        refuses it; asked again, it tries again). The registration's check calls this on the very
        object the registry snapshot then validates with, so a schema is compiled once."""
        if self._compiled is None:
            with self._lock:
                if self._compiled is None:
                    self._compiled = _compile(self._schema)
        return self

    def __call__(self, value: Any) -> list[ArgumentProblem]:
        from .arguments import size_problems

        problems = size_problems(value)
        if problems:
            return problems
        return self.within_bounds(value)

    def check(self, value: Any, *, bounded: bool = False) -> tuple[Any, list[ArgumentProblem]]:
        """``(value, problems)``: the one interface of a tool's validator (``ModelValidator.check``)."""
        return value, self.within_bounds(value) if bounded else self(value)

    def within_bounds(self, value: Any) -> list[ArgumentProblem]:
        """The validation of a value already known to be within the size bound (``size_problems``
        found nothing, or the caller checked a stricter bound): the dispatcher's small calls."""
        compiled = self._compiled
        if compiled is None:
            compiled = self.compile()._compiled
        try:
            if compiled.is_valid(value):
                return []
            from .messages import problems_of

            problems = problems_of(compiled.iter_errors(value), self._schema, value)
        except (ValueError, TypeError, OverflowError) as exc:  # a value the library cannot read as JSON
            return [ArgumentProblem("", f"the arguments are not JSON data ({exc})")]
        return problems or [ArgumentProblem("", "the arguments do not match the tool's schema")]
