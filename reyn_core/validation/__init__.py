"""The one JSON-Schema validator factory of Reyn: no retrieval, patterns on RE2, problems as pointers.

Every JSON-Schema validator in the project is built in this package, and only here (a test scans the
source of the core, the packs and the example plugin for any other construction):

* ``json_schema_validator(schema)`` (public) screens a schema first (``schema_problems``: only local
  ``#/...`` references, no ``$dynamicRef``/``$recursiveRef``, no embedded ``$id``, a ``$schema`` that is
  a JSON Schema dialect URI, patterns RE2 can run, a valid Draft 2020-12 schema) and raises
  ``SchemaRefused`` naming what is wrong, else returns a validator.
* ``compile_validator(schema)`` (internal, for schemas the registry already screened) builds it.

The validator decides with ``jsonschema_rs`` (compiled, Draft 2020-12, no retrieval, linear-time
patterns bounded in compiled size) after bounding the value's size; a failure is worded from that
same validator's errors. There is no second implementation of JSON Schema here.

One concept per module:

* ``factory`` — ``json_schema_validator``, ``SchemaRefused``, ``compile_validator`` and the cache;
* ``compiled`` — ``SchemaValidator``, the one validator of a raw-schema tool (the only module that
  builds a ``jsonschema_rs`` validator; ``screening`` asks ``jsonschema_rs.meta`` about the meta-schema);
* ``model_validator`` — ``ModelValidator``, the one validator of a pydantic-model tool (its model's
  own pydantic-core validator); ``pydantic_problems`` words its refusals (``problems_from_pydantic``);
* ``screening`` — references, ``$id``/``$schema``, patterns and the meta-schema, as ``SchemaProblem``s;
* ``walk`` — the walks over a schema; ``patterns`` — RE2 patterns; ``messages`` — the problem wording;
* ``arguments`` — a call's arguments parsed, bounded in size and depth and JSON data, strict-mode nulls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .arguments import (
        MAX_ARGUMENT_CHARS,
        MAX_ARGUMENT_DEPTH,
        MAX_ARGUMENT_ITEMS,
        MAX_ARGUMENT_PROPERTIES,
        optional_non_nullable,
        parse_arguments,
        size_problems,
        unsendable_problems,
        without_null_optionals,
    )
    from .compiled import SchemaNotCompiled, SchemaValidator
    from .factory import SchemaRefused, compile_validator, json_schema_validator
    from .factory import _screened_validator as _screened_validator
    from .messages import Validator
    from .model_validator import ModelValidator
    from .patterns import MAX_PATTERN_LENGTH, UnusablePattern, compile_pattern
    from .pydantic_problems import problems_from_pydantic
    from .screening import MAX_SCHEMA_NESTING, metaschema_problems, schema_problems

# Each name is imported from its module on first use: loading and rendering need only a few of them
# (a load's checks import the screening), so `import reyn_core.validation` stays light.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".arguments": (
            "MAX_ARGUMENT_CHARS",
            "MAX_ARGUMENT_DEPTH",
            "MAX_ARGUMENT_ITEMS",
            "MAX_ARGUMENT_PROPERTIES",
            "optional_non_nullable",
            "parse_arguments",
            "size_problems",
            "unsendable_problems",
            "without_null_optionals",
        ),
        ".factory": ("SchemaRefused", "compile_validator", "json_schema_validator", "_screened_validator"),
        ".compiled": ("SchemaNotCompiled", "SchemaValidator"),
        ".messages": ("Validator",),
        ".model_validator": ("ModelValidator",),
        ".patterns": ("MAX_PATTERN_LENGTH", "UnusablePattern", "compile_pattern"),
        ".pydantic_problems": ("problems_from_pydantic",),
        ".screening": ("MAX_SCHEMA_NESTING", "metaschema_problems", "schema_problems"),
    },
    globals(),
)

__all__ = [
    "MAX_ARGUMENT_CHARS",
    "MAX_ARGUMENT_DEPTH",
    "MAX_ARGUMENT_ITEMS",
    "MAX_ARGUMENT_PROPERTIES",
    "MAX_PATTERN_LENGTH",
    "MAX_SCHEMA_NESTING",
    "ModelValidator",
    "SchemaNotCompiled",
    "SchemaValidator",
    "SchemaRefused",
    "UnusablePattern",
    "Validator",
    "compile_pattern",
    "compile_validator",
    "json_schema_validator",
    "metaschema_problems",
    "optional_non_nullable",
    "parse_arguments",
    "problems_from_pydantic",
    "schema_problems",
    "size_problems",
    "unsendable_problems",
    "without_null_optionals",
]
