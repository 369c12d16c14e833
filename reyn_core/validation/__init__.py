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
  own pydantic-core validator); ``pydantic_problems`` words its refusals;
* ``screening`` — references, ``$id``/``$schema``, patterns and the meta-schema, as ``SchemaProblem``s;
* ``walk`` — the walks over a schema; ``patterns`` — RE2 patterns; ``messages`` — the problem wording;
* ``arguments`` — a call's arguments parsed and bounded in size and depth, strict-mode nulls,
  pydantic errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from ..jsondata import depth_within
    from .arguments import (
        MAX_ARGUMENT_CHARS,
        MAX_ARGUMENT_DEPTH,
        MAX_ARGUMENT_ITEMS,
        MAX_ARGUMENT_NODES,
        MAX_ARGUMENT_PROPERTIES,
        optional_non_nullable,
        parse_arguments,
        problems_from_pydantic,
        size_problems,
        without_null_optionals,
    )
    from .compiled import SchemaNotCompiled, SchemaValidator
    from .factory import SchemaRefused, compile_validator, json_schema_validator
    from .factory import _screened_validator as _screened_validator
    from .messages import Validator, json_type_of, show_value
    from .model_validator import ModelValidator
    from .patterns import MAX_PATTERN_LENGTH, UnusablePattern, compile_pattern
    from .screening import (
        JSON_TYPES,
        KNOWN_DIALECTS,
        MAX_SCHEMA_NESTING,
        SchemaProblem,
        did_you_mean,
        metaschema_problems,
        pattern_problems,
        reference_problems,
        schema_problems,
    )
    from .walk import subschemas

# Each name is imported from its module on first use: loading and rendering need only a few of them
# (a warm load checks no schema), so `import reyn_core.validation` stays light.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "..jsondata": ("depth_within",),
        ".arguments": (
            "MAX_ARGUMENT_CHARS",
            "MAX_ARGUMENT_DEPTH",
            "MAX_ARGUMENT_ITEMS",
            "MAX_ARGUMENT_NODES",
            "MAX_ARGUMENT_PROPERTIES",
            "optional_non_nullable",
            "parse_arguments",
            "problems_from_pydantic",
            "size_problems",
            "without_null_optionals",
        ),
        ".factory": ("SchemaRefused", "compile_validator", "json_schema_validator", "_screened_validator"),
        ".compiled": ("SchemaNotCompiled", "SchemaValidator"),
        ".messages": ("Validator", "json_type_of", "show_value"),
        ".model_validator": ("ModelValidator",),
        ".patterns": ("MAX_PATTERN_LENGTH", "UnusablePattern", "compile_pattern"),
        ".screening": (
            "JSON_TYPES",
            "KNOWN_DIALECTS",
            "MAX_SCHEMA_NESTING",
            "SchemaProblem",
            "did_you_mean",
            "metaschema_problems",
            "pattern_problems",
            "reference_problems",
            "schema_problems",
        ),
        ".walk": ("subschemas",),
    },
    globals(),
)

__all__ = [
    "JSON_TYPES",
    "KNOWN_DIALECTS",
    "MAX_ARGUMENT_CHARS",
    "MAX_ARGUMENT_DEPTH",
    "MAX_ARGUMENT_ITEMS",
    "MAX_ARGUMENT_NODES",
    "MAX_ARGUMENT_PROPERTIES",
    "MAX_PATTERN_LENGTH",
    "MAX_SCHEMA_NESTING",
    "ModelValidator",
    "SchemaNotCompiled",
    "SchemaValidator",
    "SchemaProblem",
    "SchemaRefused",
    "UnusablePattern",
    "Validator",
    "compile_pattern",
    "compile_validator",
    "depth_within",
    "did_you_mean",
    "json_schema_validator",
    "json_type_of",
    "metaschema_problems",
    "optional_non_nullable",
    "parse_arguments",
    "pattern_problems",
    "problems_from_pydantic",
    "reference_problems",
    "schema_problems",
    "show_value",
    "size_problems",
    "subschemas",
    "without_null_optionals",
]
