"""The one JSON-Schema validator factory: ``json_schema_validator`` (public) screens a schema and raises
``SchemaRefused`` naming what is wrong, else returns its validator, cached by schema content;
``compile_validator`` (internal, for schemas the registry already screened) compiles one."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..errors import exception_message as exc_text
from ..jsondata import parse_own_json

if TYPE_CHECKING:
    from .compiled import SchemaValidator
    from .screening import SchemaProblem

# The screening and the library are imported on first use: a pack that imports the factory at
# start-up (to build validators on its first call) costs nothing more at load.


class SchemaRefused(ValueError):
    """``json_schema_validator`` will not build a validator for this schema; ``problems`` say why."""

    def __init__(self, problems: list[SchemaProblem]) -> None:
        listed = "; ".join(p.render() for p in problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(f"schema refused: {listed}{more}")
        self.problems = problems


def compile_validator(schema: Mapping[str, Any]) -> SchemaValidator:
    """The validator of an already screened ``schema`` (``SchemaNotCompiled`` if the library refuses
    it). Patterns run in linear time and no reference is ever retrieved. Packs use
    ``json_schema_validator``."""
    from .compiled import SchemaValidator

    return SchemaValidator(schema)


def json_schema_validator(schema: Mapping[str, Any]) -> SchemaValidator:
    """The validator factory for any JSON Schema from outside the registry (an MCP server's input
    schema, a skill's input schema): screen ``schema`` and raise ``SchemaRefused`` naming every
    reference it would need to retrieve, every pattern RE2 cannot run and every meta-schema violation;
    otherwise return ``validate(value) -> list[ArgumentProblem]`` (empty when valid). Draft 2020-12;
    nothing is ever fetched; patterns run in linear time; a value's size is bounded before any schema
    work. Validators are cached by schema content."""
    try:
        key = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as exc:
        from .screening import SchemaProblem

        raise SchemaRefused(
            [SchemaProblem("metaschema", f"the schema is not JSON data: {exc_text(exc)}")]
        ) from None
    return _screened_validator(key)


@lru_cache(maxsize=256)
def _screened_validator(key: str) -> SchemaValidator:
    from .screening import screened

    validator, problems = screened(parse_own_json(key))  # the key is json.dumps of a schema
    if validator is None:
        raise SchemaRefused(problems)
    return validator
