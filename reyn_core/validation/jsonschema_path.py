"""The jsonschema path, and the only module that touches ``jsonschema`` or ``referencing`` (a test scans
the tree for any other construction): Draft 2020-12 extended so that ``pattern`` and
``patternProperties`` (also where ``additionalProperties``/``unevaluatedProperties`` consult them) run on
RE2, with a reference registry that refuses every retrieval. Both libraries are imported on first use."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from ..errors import ArgumentProblem
from .arguments import MAX_ARGUMENT_DEPTH
from .messages import MISSING_MESSAGE, Validator, jsonschema_problems, pattern_message, unexpected_message
from .patterns import UnusablePattern, compile_pattern


def _no_retrieve(uri: str) -> Any:
    raise RemoteRefRefused(uri)


class RemoteRefRefused(Exception):
    """Raised inside the validator when a schema asks for a non-local ``$ref``."""

    def __init__(self, uri: str) -> None:
        super().__init__(f"refused to retrieve non-local $ref {uri!r}: only '#/...' references are allowed")
        self.uri = uri


@lru_cache(maxsize=1)
def _registry() -> Any:
    """A reference registry that never retrieves (jsonschema adds its bundled meta-schemas to it)."""
    from referencing import Registry

    return Registry(retrieve=_no_retrieve)  # type: ignore[call-arg]


def _re2_search(pattern: str, text: str) -> bool:
    return compile_pattern(pattern).search(text) is not None


def _pattern_keyword(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _re2_search(pattern, instance):
        yield ValidationError(pattern_message(pattern, instance))


def _required_keyword(validator: Any, required: Any, instance: Any, schema: Any) -> Iterator[Any]:
    # At the missing property's own pointer, as the fast path reports it (jsonschema: at the object).
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    for prop in required:
        if prop not in instance:
            yield ValidationError(MISSING_MESSAGE, path=[prop])


def _pattern_properties_keyword(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _re2_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_keys(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key for key in instance if key not in properties and not any(_re2_search(p, key) for p in patterns)
    ]


def _additional_properties_keyword(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
    # jsonschema's own implementation matches patternProperties with ``re``: the same logic on RE2.
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    extras = _additional_keys(instance, schema)
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:  # at each unexpected property, naming the allowed ones (as the fast path does)
            properties = schema.get("properties", {})
            allowed = [str(k) for k in properties] if isinstance(properties, Mapping) else []
            for key in extras:
                yield ValidationError(unexpected_message(allowed), path=[key])


def _valid(errors: Iterator[Any]) -> bool:
    return next(errors, None) is None


def _evaluated_keys(validator: Any, instance: Mapping[str, Any], schema: Any) -> list[str]:
    # jsonschema's ``find_evaluated_property_keys_by_schema`` with patternProperties matched on RE2.
    # ``$dynamicRef`` is never followed: screened schemas have none.
    if validator.is_type(schema, "boolean"):
        return []
    keys: list[str] = []
    ref = schema.get("$ref")
    if ref is not None:
        resolved = validator._resolver.lookup(ref)
        keys += _evaluated_keys(
            validator.evolve(schema=resolved.contents, _resolver=resolved.resolver),
            instance,
            resolved.contents,
        )
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys += properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        sub = schema.get(keyword)
        if sub is not None:
            keys += [k for k, v in instance.items() if _valid(validator.descend(v, sub))]
    for pattern in schema.get("patternProperties", {}):
        keys += [k for k in instance if _re2_search(pattern, k)]
    for key, sub in schema.get("dependentSchemas", {}).items():
        if key in instance:
            keys += _evaluated_keys(validator, instance, sub)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(keyword, []):
            if _valid(validator.descend(instance, sub)):
                keys += _evaluated_keys(validator, instance, sub)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys += _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                keys += _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            keys += _evaluated_keys(validator, instance, schema["else"])
    return keys


def _unevaluated_properties_keyword(validator: Any, uneval: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    evaluated = set(_evaluated_keys(validator, instance, schema))
    bad = [
        key
        for key in instance
        if key not in evaluated
        and not _valid(validator.descend(instance[key], uneval, path=key, schema_path=key))
    ]
    if bad:
        verb = "was" if len(bad) == 1 else "were"
        if uneval is False:
            listed = ", ".join(repr(k) for k in sorted(bad, key=str))
            yield ValidationError(f"Unevaluated properties are not allowed ({listed} {verb} unexpected)")
        else:
            listed = ", ".join(repr(k) for k in bad)
            yield ValidationError(
                f"Unevaluated properties are not valid under the given schema ({listed} {verb} "
                "unevaluated and invalid)"
            )


@lru_cache(maxsize=1)
def _validator_class() -> Any:
    """Draft 2020-12 with every regex keyword on RE2. Not registered for any ``$schema`` URI."""
    from jsonschema import Draft202012Validator, validators

    return validators.extend(
        Draft202012Validator,
        validators={
            "pattern": _pattern_keyword,
            "required": _required_keyword,
            "patternProperties": _pattern_properties_keyword,
            "additionalProperties": _additional_properties_keyword,
            "unevaluatedProperties": _unevaluated_properties_keyword,
        },
    )


def compile_jsonschema(schema: Mapping[str, Any]) -> Validator:
    # ``$schema`` is dropped: jsonschema would switch to its stock class for a known dialect URI (and
    # lose the RE2 keywords) when it descends into the root; Reyn validates as 2020-12 anyway.
    body = {k: v for k, v in schema.items() if k != "$schema"}
    validator = _validator_class()(body, registry=_registry(), format_checker=None)

    def validate(args: Any) -> list[ArgumentProblem]:
        try:
            errors = sorted(validator.iter_errors(args), key=lambda e: list(map(str, e.absolute_path)))
        except RecursionError:
            return [
                ArgumentProblem("", f"arguments nest too deeply (the limit is {MAX_ARGUMENT_DEPTH} levels)")
            ]
        except UnusablePattern as exc:
            return [ArgumentProblem("", f"the tool's schema is unusable: {exc}")]
        except Exception as exc:
            # jsonschema wraps referencing's Unresolvable, which wraps Unretrievable, which wraps
            # RemoteRefRefused: walk the chain. Any unresolvable reference fails closed.
            refused = _find_cause(exc, RemoteRefRefused)
            if refused is not None:
                return [ArgumentProblem("", f"the tool's schema is unusable: {refused}")]
            unresolvable = _find_cause(exc, _referencing_errors())
            if unresolvable is not None:
                return [
                    ArgumentProblem(
                        "", f"the tool's schema has a $ref that cannot be resolved: {unresolvable}"
                    )
                ]
            raise
        return jsonschema_problems(errors)

    return validate


def metaschema_errors(schema: Mapping[str, Any]) -> list[Any] | None:
    """jsonschema's errors validating ``schema`` against the 2020-12 meta-schema, sorted by path; None
    when the schema nests too deeply to check."""
    cls = _validator_class()
    validator = cls(cls.META_SCHEMA, registry=_registry(), format_checker=None)
    try:
        return sorted(validator.iter_errors(dict(schema)), key=lambda e: list(map(str, e.absolute_path)))
    except RecursionError:
        return None


def _find_cause(
    exc: BaseException, kind: type[BaseException] | tuple[type[BaseException], ...]
) -> BaseException | None:
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        if isinstance(node, kind):
            return node
        seen.add(id(node))
        node = node.__cause__ or node.__context__
    return None


def _referencing_errors() -> tuple[type[BaseException], ...]:
    from referencing.exceptions import NoSuchAnchor, PointerToNowhere, Unresolvable

    return (Unresolvable, PointerToNowhere, NoSuchAnchor)
