"""A tool's parameters schema adapted for one named render target.

Providers accept different subsets of JSON Schema. Rather than warn about every keyword a provider
lacks, the renderer adapts what can be adapted without changing what a valid call is, and reports
only what cannot be (``Adapted.problems``; at registration these are the ``RS101`` / ``RS102``
warnings). The registered schema is untouched: the dispatcher validates every call against it, so
an adaptation only changes what a model is shown, never what is accepted.

Targets:

- ``mcp`` — the schema as registered, ``$schema`` included (MCP clients read JSON Schema 2020-12).
- ``openai``, ``anthropic`` — the schema without the root ``$schema`` (the tools array is not a
  schema document); both take JSON Schema with local references.
- ``openai-strict`` — OpenAI strict mode (``to_strict``: closed objects, every property required,
  optional ones nullable); a schema that cannot be made strict (a free-form object, ``not``...) is
  a problem.
- ``gemini`` — Gemini's OpenAPI-style subset: local ``$ref`` inlined and ``$defs`` removed (a
  recursive reference cannot be inlined), ``type`` arrays and ``null`` members of ``anyOf`` /
  ``oneOf`` turned into ``nullable``, ``oneOf`` into ``anyOf``, a string ``const`` into a one-value
  ``enum``, ``allOf`` merged, ``additionalProperties: false`` / ``true`` dropped (the dispatcher
  still refuses unknown keys). Keywords with no Gemini equivalent (``not``, ``if``/``then``/``else``,
  ``patternProperties``, ``prefixItems``, a map's ``additionalProperties`` schema ...) are dropped
  and reported.

Each adaptation is linear in the size of its output, and inlining stops at ``MAX_INLINED_NODES``
(a problem, the reference kept), so a hostile schema of shared references cannot blow up a render.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .errors import StrictSchemaError
from .jsondata import JSON_SCALAR_TYPES, follow_pointer

Target = Literal["openai", "openai-strict", "anthropic", "gemini", "mcp"]
TARGETS: tuple[Target, ...] = ("openai", "openai-strict", "anthropic", "gemini", "mcp")
MAX_INLINED_NODES = 20_000

__all__ = [
    "MAX_INLINED_NODES",
    "TARGETS",
    "Adapted",
    "Target",
    "adapt_parameters",
    "copy_json",
    "target_for_model",
    "to_strict",
]


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data (mappings, lists, scalars), several times faster than
    ``copy.deepcopy`` — it matters when a thousand schemas are rendered per request. Other mappings
    become dicts, tuples and subclasses of list or tuple become lists (a plugin's list subclass is
    copied too, never shared); any other object is shared, not copied."""
    t = type(value)
    if t is dict or (t not in JSON_SCALAR_TYPES and isinstance(value, Mapping)):
        return {k: v if type(v) in JSON_SCALAR_TYPES else copy_json(v) for k, v in value.items()}
    if t is list or t is tuple or (t not in JSON_SCALAR_TYPES and isinstance(value, list | tuple)):
        return [v if type(v) in JSON_SCALAR_TYPES else copy_json(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class Adapted:
    """A schema adapted for a target, and what could not be adapted (one line each, with where)."""

    schema: dict[str, Any]
    problems: tuple[str, ...] = ()


def adapt_parameters(schema: Mapping[str, Any], target: str, *, owned: bool = False) -> Adapted:
    """``schema`` as ``target`` should be shown it (see the module); ``ValueError`` for a target
    that is not one of ``TARGETS``. The result shares nothing with ``schema`` unless ``owned``: the
    caller hands over a tree of its own (the renderer's fresh copy), which the result may reuse
    instead of copying it a second time."""
    if target == "mcp":
        return Adapted(dict(schema) if owned else copy_json(schema))
    body = {k: v for k, v in schema.items() if k != "$schema"}
    if target in ("openai", "anthropic"):
        return Adapted(body if owned else copy_json(body))
    if target == "openai-strict":
        try:
            return Adapted(to_strict(body, tool="(render)"))
        except StrictSchemaError as exc:
            return Adapted(copy_json(body), (f"cannot be used in OpenAI strict mode: {exc.reason}",))
    if target == "gemini":
        return _Gemini(body).adapt()
    raise ValueError(f"unknown render target {target!r}; one of: {', '.join(TARGETS)}")


def target_for_model(model: str, *, strict: bool = False) -> Target:
    """The render target for a litellm model name: ``gemini/...``, ``vertex_ai/gemini-...`` →
    ``gemini``; ``anthropic/...``, ``claude-...`` (also through Bedrock or Vertex) → ``anthropic``;
    anything else speaks the OpenAI format → ``openai`` (``openai-strict`` with ``strict``)."""
    name = model.lower()
    provider, _, rest = name.partition("/")
    base = rest.rsplit("/", 1)[-1] if rest else name
    if provider in ("gemini", "google") or base.startswith("gemini"):
        return "gemini"
    if provider == "anthropic" or base.startswith("claude") or ".claude" in base or "anthropic." in base:
        return "anthropic"
    return "openai-strict" if strict else "openai"


# --------------------------------------------------------------------------- gemini

# Dropped without a word: annotations a model does not need, and closed/open object markers the
# dispatcher enforces from the registered schema anyway.
_SILENT = frozenset({"$schema", "$id", "$comment", "$anchor", "$defs", "definitions"})
# No Gemini equivalent: dropped and reported.
_UNADAPTABLE = frozenset(
    {
        "not",
        "if",
        "then",
        "else",
        "patternProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "prefixItems",
        "dependentSchemas",
        "dependentRequired",
        "propertyNames",
        "contains",
        "$dynamicRef",
        "$dynamicAnchor",
    }
)
# Keywords whose values are schemas (mappings of them, lists of them, or one).
_SCHEMA_MAPS = ("properties",)
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf")
_SCHEMA_ONE = ("items", "additionalProperties")


class _Gemini:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.problems: list[str] = []
        self.nodes = 0

    def adapt(self) -> Adapted:
        schema = self.node(self.root, "", ())
        return Adapted(schema if isinstance(schema, dict) else {}, tuple(dict.fromkeys(self.problems)))

    def problem(self, ptr: str, message: str) -> None:
        self.problems.append(f"{message} (at {ptr or '/'})")

    def resolve(self, ref: str) -> Any:
        """The target of a local ``#/...`` pointer, or None."""
        if not ref.startswith("#"):
            return None
        _, node = follow_pointer(self.root, ref[1:])
        return node

    def node(self, schema: Any, ptr: str, refs: tuple[str, ...]) -> Any:
        self.nodes += 1
        if type(schema) is bool:  # a valid 2020-12 subschema Gemini's subset lacks: any value shown
            self.problem(
                ptr, f"Gemini's schema subset has no boolean schema ({str(schema).lower()}); shown as {{}}"
            )
            return {}
        if type(schema) is not dict and not isinstance(schema, Mapping):
            return schema
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = self.resolve(ref)
            if type(target) is bool and ref not in refs:
                return self.node(target, ptr, refs)
            if ref in refs or not isinstance(target, Mapping):
                why = "a recursive reference" if ref in refs else "an unresolvable reference"
                self.problem(ptr, f"Gemini takes no $ref, and {ref!r} is {why}: shown as an object")
                return {"type": "object"}
            if self.nodes > MAX_INLINED_NODES:
                self.problem(ptr, f"inlining {ref!r} would exceed {MAX_INLINED_NODES} schema nodes")
                return {"type": "object"}
            merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            return self.node(merged, ptr, (*refs, ref))
        out: dict[str, Any] = {}
        for key, value in schema.items():
            # most keys: kept as they are (not ``items: true``, a boolean subschema)
            if type(value) in JSON_SCALAR_TYPES and key not in _UNADAPTABLE and key != "items":
                if key not in _SILENT and key != "$ref":
                    out[key] = value
                continue
            if key in _SILENT or key == "$ref":
                continue
            here = f"{ptr}/{key}"  # the pointer, only where it is used
            if key in _UNADAPTABLE:
                self.problem(here, f"Gemini's schema subset has no {key!r}; dropped")
                continue
            if key in _SCHEMA_MAPS and _is_mapping(value):
                out[key] = {k: self.node(v, f"{here}/{k}", refs) for k, v in value.items()}
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [self.node(v, f"{here}/{i}", refs) for i, v in enumerate(value)]
            elif key in _SCHEMA_ONE and (_is_mapping(value) or (key == "items" and type(value) is bool)):
                out[key] = self.node(value, here, refs)
            else:
                out[key] = _plain(value)
        return self.simplify(out, ptr)

    def simplify(self, node: dict[str, Any], ptr: str) -> dict[str, Any]:
        """The per-node rewrites, on a node whose subschemas are already adapted."""
        extra = node.pop("additionalProperties", None)
        if extra is not None and _is_mapping(extra) and extra not in ({}, {"type": "object"}):
            self.problem(ptr, "Gemini cannot describe a map's value schema (additionalProperties); dropped")
        if "const" in node:
            const = node.pop("const")
            if isinstance(const, str):
                node["enum"] = [const]
                node.setdefault("type", "string")
            else:
                self.problem(ptr, f"Gemini's enum takes strings only; const {const!r} dropped")
        if "oneOf" in node:
            node["anyOf"] = [*node.get("anyOf", []), *node.pop("oneOf")]
        if "allOf" in node:
            node = self.merge_all_of(node, ptr)
        typ = node.get("type")
        if isinstance(typ, list):
            kinds = [t for t in typ if t != "null"]
            if len(kinds) < len(typ):
                node["nullable"] = True
            if len(kinds) == 1:
                node["type"] = kinds[0]
            else:
                del node["type"]
                if kinds:
                    node["anyOf"] = [{"type": t} for t in kinds]
        options = node.get("anyOf")
        if isinstance(options, list):
            kept = [o for o in options if o != {"type": "null"}]
            if len(kept) < len(options):
                node["nullable"] = True
            if len(kept) == 1 and isinstance(kept[0], dict) and not kept[0].keys() & node.keys() - {"anyOf"}:
                del node["anyOf"]
                node = {**kept[0], **node}
            elif kept:
                node["anyOf"] = kept
            else:
                del node["anyOf"]
        return node

    def merge_all_of(self, node: dict[str, Any], ptr: str) -> dict[str, Any]:
        parts = node.pop("allOf")
        for i, part in enumerate(parts):
            if not isinstance(part, dict):
                continue
            for key, value in part.items():
                if key == "properties" and isinstance(value, dict):
                    node["properties"] = {**node.get("properties", {}), **value}
                elif key == "required" and isinstance(value, list):
                    node["required"] = list(dict.fromkeys([*node.get("required", []), *value]))
                elif key not in node or node[key] == value:
                    node[key] = value
                else:
                    self.problem(f"{ptr}/allOf/{i}", f"allOf disagrees on {key!r}; the first value is kept")
        return node


def _is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, a dict answered without the ABC's check (this runs per node)."""
    return type(value) is dict or isinstance(value, Mapping)


def _plain(value: Any) -> Any:
    """A JSON value that is not a schema (an ``enum`` list, a ``default``), copied."""
    return copy_json(value)


# --------------------------------------------------------------------------- strict mode

_STRICT_UNSUPPORTED = (
    "patternProperties",
    "unevaluatedProperties",
    "if",
    "then",
    "else",
    "not",
    "dependentSchemas",
    "dependentRequired",
    "propertyNames",
    "contains",
    "prefixItems",
)


def to_strict(parameters: Mapping[str, Any], *, tool: str) -> dict[str, Any]:
    """Transform a schema to OpenAI strict mode, or raise ``StrictSchemaError`` saying why not.

    Strict mode needs every object closed (``additionalProperties: false``) with every property
    required; optional properties become required but nullable (``type: [T, "null"]``), which is
    how OpenAI documents optional fields. ``oneOf`` becomes ``anyOf``; ``default`` is dropped.

    The result shares nothing with ``parameters`` and is built in one walk of it: each member is
    copied once, either as the strict form of a subschema or, for the rest, as it is.
    """

    def fix(node: Any, ptr: str) -> Any:
        if isinstance(node, bool):  # a valid 2020-12 subschema (any value / none), with no type
            raise StrictSchemaError(
                tool,
                f"the boolean subschema {str(node).lower()} at {ptr or '/'} is not supported in "
                "strict mode: every value needs a type",
            )
        if not _is_mapping(node):
            return copy_json(node)
        if not node.keys().isdisjoint(_STRICT_UNSUPPORTED):  # one set test; the loop names the first
            for key in _STRICT_UNSUPPORTED:
                if key in node:
                    raise StrictSchemaError(tool, f"{key!r} at {ptr or '/'} is not supported in strict mode")
        objectish = node.get("type") == "object" or "properties" in node
        # The members a strict form replaces below are not copied here (the rest are, once).
        out = {
            key: value
            if type(value) in JSON_SCALAR_TYPES or _strict_replaces(key, value, objectish)
            else copy_json(value)
            for key, value in node.items()
            if key != "default"
        }
        if "oneOf" in out:
            out["anyOf"] = out.pop("oneOf")
        if objectish:
            extra = out.get("additionalProperties", False)
            if extra not in (False, None) and extra != {}:
                raise StrictSchemaError(
                    tool,
                    f"object at {ptr or '/'} allows additional properties; strict mode needs closed objects",
                )
            if ptr and not out.get("properties") and "additionalProperties" not in out:
                # Closing a free-form object would silently make it always empty.
                raise StrictSchemaError(
                    tool,
                    f"object at {ptr} declares no properties (a free-form object); "
                    "strict mode needs every property declared",
                )
            required = set(out.get("required", []))
            props: dict[str, Any] = {}
            for name, sub in out.get("properties", {}).items():
                sub = fix(sub, f"{ptr}/properties/{name}")
                props[name] = sub if name in required else _nullable(sub)
            out["properties"] = props
            out["additionalProperties"] = False
            out["required"] = list(props)
        for key in _STRICT_SUBSCHEMAS:
            value = out.get(key)
            if value is None or not _strict_replaces(key, value, objectish):
                continue
            here = f"{ptr}/{key}"
            if key == "items":
                out[key] = fix(value, here)
            elif key in ("anyOf", "allOf"):
                out[key] = [fix(s, f"{here}/{i}") for i, s in enumerate(value)]
            else:
                out[key] = {k: fix(v, f"{here}/{k}") for k, v in value.items()}
        return out

    return fix(parameters, "")


# The members holding subschemas ``to_strict`` walks into, in its order (after the properties).
_STRICT_SUBSCHEMAS = ("items", "anyOf", "allOf", "$defs", "definitions")


def _strict_replaces(key: str, value: Any, objectish: bool) -> bool:
    """Whether ``to_strict`` replaces this member of a schema node with a strict copy of its own
    (``objectish``: the node is an object schema, whose ``properties`` and ``required`` it rewrites);
    any other member is copied as it is."""
    if key == "properties" or key == "required":
        return objectish
    if key == "items":
        return isinstance(value, bool) or _is_mapping(value)
    if key == "anyOf" or key == "allOf" or key == "oneOf":
        return isinstance(value, list | tuple)
    if key == "$defs" or key == "definitions":
        return _is_mapping(value)
    return False


def _nullable(sub: dict[str, Any]) -> dict[str, Any]:
    typ = sub.get("type")
    if isinstance(typ, str):
        if typ != "null":
            sub["type"] = [typ, "null"]
        if "enum" in sub and None not in sub["enum"]:
            sub["enum"] = [*sub["enum"], None]
        return sub
    if isinstance(typ, list):
        if "null" not in typ:
            sub["type"] = [*typ, "null"]
        return sub
    if "anyOf" in sub:
        if not any(isinstance(s, dict) and s.get("type") == "null" for s in sub["anyOf"]):
            sub["anyOf"] = [*sub["anyOf"], {"type": "null"}]
        return sub
    return {"anyOf": [sub, {"type": "null"}]}
