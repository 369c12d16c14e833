"""Phase renderer: the op catalogue, the output-contract JSON Schema, and a prompt catalogue."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reyn_core.context import PhaseCallerState, ToolContext, as_names
from reyn_core.errors import ArgumentProblem
from reyn_core.render.parameters import effective_parameters
from reyn_core.tool import summary_line

if TYPE_CHECKING:
    from reyn_core.registry import ToolRegistry
    from reyn_core.render.phase_contract import PhaseOpCall
    from reyn_core.validation import Validator


@dataclass(frozen=True, slots=True)
class PhaseOpSpec:
    """One op a phase may emit: the tool's name as ``kind``, its description, its argument schema."""

    kind: str
    description: str
    args_schema: dict[str, Any]
    purity: str
    dispatch_kind: str = "inline"


def _rewrite_ref(ref: str, prefix: str) -> tuple[str, bool]:
    """``ref`` relative to the output schema's root; True when it points into the tool's own root."""
    for base in ("#/$defs/", "#/definitions/"):
        if ref.startswith(base):
            return f"#/$defs/{prefix}{ref[len(base) :]}", False
    if ref == "#" or ref.startswith("#/"):  # e.g. "#/properties/a": the tool's root is hoisted
        return f"#/$defs/{prefix}args{ref[1:]}", True
    return ref, False


def _rewrite_refs(node: Any, prefix: str, into_root: list[bool]) -> Any:
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out[k], hit = _rewrite_ref(v, prefix)
                if hit:
                    into_root.append(True)
            else:
                out[k] = _rewrite_refs(v, prefix, into_root)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v, prefix, into_root) for v in node]
    return node


def _op_schema(op: PhaseOpSpec, defs: dict[str, Any]) -> dict[str, Any]:
    """The flat op schema: ``kind`` const plus the tool's own properties, its ``$defs`` hoisted.

    References stay valid in the combined output schema: ``#/$defs/X`` becomes
    ``#/$defs/<kind>__X``, and a reference into the tool's own root (``#/properties/a``, ``#``)
    points at a copy of the tool's schema hoisted as ``#/$defs/<kind>__args``.
    """
    into_root: list[bool] = []
    args = _rewrite_refs(copy.deepcopy(op.args_schema), f"{op.kind}__", into_root)
    for key in ("$defs", "definitions"):
        for name, sub in (args.pop(key, None) or {}).items():
            defs[f"{op.kind}__{name}"] = sub
    if into_root:
        defs[f"{op.kind}__args"] = args
    props = {"kind": {"const": op.kind, "description": summary_line(op.description)}}
    props.update(args.get("properties", {}))
    schema: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "required": ["kind", *[r for r in args.get("required", []) if r != "kind"]],
    }
    extra = args.get("additionalProperties", True)
    schema["additionalProperties"] = extra
    return schema


_CONTROL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"enum": ["transition", "finish", "abort"]},
        "decision": {"enum": ["continue", "finish", "abort"]},
        "next_phase": {"type": ["string", "null"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "object"},
    },
    "required": ["type", "decision"],
    "additionalProperties": False,
}
_ARTIFACT_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "properties": {"type": {"type": "string"}, "data": {"type": "object"}},
    "required": ["type", "data"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class PhaseCatalog:
    """What a phase may do: ``ops`` (sorted by kind), ``output_schema`` (JSON Schema of the whole
    output contract; ``control_ir`` items are a ``oneOf`` over the ops, discriminated by ``kind``)
    and ``prompt_text()`` for the system prompt. ``allowed_ops`` is what it was rendered with."""

    ops: tuple[PhaseOpSpec, ...]
    output_schema: dict[str, Any]
    allowed_ops: tuple[str, ...]
    _validators: dict[str, Validator] = field(default_factory=dict, repr=False, compare=False)

    def op(self, kind: str) -> PhaseOpSpec | None:
        """The op called ``kind``, if this phase may use it."""
        return next((o for o in self.ops if o.kind == kind), None)

    def check_op(self, item: Any, ptr: str) -> tuple[PhaseOpCall | None, list[ArgumentProblem]]:
        """Validate one ``control_ir`` item; return the op call or the problems (pointers under ``ptr``)."""
        if not isinstance(item, Mapping):
            return None, [
                ArgumentProblem(ptr, f"an op must be an object with a 'kind', got {type(item).__name__}")
            ]
        kind = item.get("kind")
        if not isinstance(kind, str):
            return None, [ArgumentProblem(f"{ptr}/kind", "is required and must be a string naming an op")]
        spec = self.op(kind)
        if spec is None:
            allowed = ", ".join(o.kind for o in self.ops) or "none"
            return None, [
                ArgumentProblem(f"{ptr}/kind", f"{kind!r} is not an allowed op (allowed: {allowed})")
            ]
        args = {k: v for k, v in item.items() if k != "kind"}
        validator = self._validators.get(kind)
        if validator is None:
            from reyn_core.validation import compile_validator

            validator = self._validators[kind] = compile_validator(spec.args_schema)
        problems = [ArgumentProblem(f"{ptr}{p.pointer}", p.message) for p in validator(args)]
        if problems:
            return None, problems
        from reyn_core.render.phase_contract import (
            PhaseOpCall,  # pydantic models: built on first use, not at import
        )

        return PhaseOpCall(kind=kind, args=args), []

    def prompt_text(self) -> str:
        """A compact op catalogue for the system prompt."""
        if not self.ops:
            return "No ops are allowed in this phase: control_ir must be an empty list."
        lines = ['Ops you may put in control_ir, each as {"kind": "<op>", ...arguments}:']
        for op in self.ops:
            props = op.args_schema.get("properties", {})
            required = set(op.args_schema.get("required", []))
            sig = ", ".join(f"{n}{'' if n in required else '?'}: {_type_label(s)}" for n, s in props.items())
            first = summary_line(op.description)
            tag = op.purity + (", deferred" if op.dispatch_kind == "deferred" else "")
            lines.append(f"- {op.kind}({sig}) [{tag}] — {first}")
        return "\n".join(lines)


def _type_label(schema: Any) -> str:
    if not isinstance(schema, Mapping):
        return "any"
    if "enum" in schema:
        return "|".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return "|".join(dict.fromkeys(_type_label(s) for s in schema[key]))
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return ref.rsplit("/", 1)[-1]
    typ = schema.get("type")
    if isinstance(typ, list):
        return "|".join(typ)
    if typ == "array":
        return f"{_type_label(schema.get('items', {}))}[]"
    return str(typ) if typ else "any"


def render_phase(
    registry: ToolRegistry,
    ctx: ToolContext,
    allowed_ops: Iterable[str] | None = None,
    *,
    exclude: Iterable[str] = (),
) -> PhaseCatalog:
    """The phase surface: every tool the gates admit for this phase's ``allowed_ops``.

    ``allowed_ops`` None means ``ctx.phase_state.allowed_ops``, else the registry's operator default
    (``[surfaces.phase] default_allowed_ops`` of a loaded profile; none for a host-built registry).
    ``exclude`` hides tools for this call. Pass the same values to the dispatcher (or use
    ``phase_context``), so what the model sees and what it may run agree.
    """
    ctx = ctx if ctx.surface == "phase" else ctx.with_surface("phase")
    ops_list: tuple[str, ...]
    if allowed_ops is not None:
        ops_list = as_names(allowed_ops, "allowed_ops")
    elif ctx.phase_state is not None and ctx.phase_state.allowed_ops is not None:
        ops_list = ctx.phase_state.allowed_ops
    else:
        ops_list = registry.operator.default_allowed_ops
    specs = tuple(
        PhaseOpSpec(
            kind=t.name,
            description=t.description,
            args_schema=effective_parameters(t, registry.context_for(t, ctx)),
            purity=t.purity,
            dispatch_kind=t.dispatch_kind,
        )
        for t in registry.visible("phase", ctx, exclude=exclude, allowed_ops=ops_list)
    )
    defs: dict[str, Any] = {}
    op_schemas = [_op_schema(op, defs) for op in specs]
    items: dict[str, Any] = {"oneOf": op_schemas} if op_schemas else {"not": {}}
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "PhaseOutput",
        "type": "object",
        "properties": {
            "control": _CONTROL_SCHEMA,
            "artifact": _ARTIFACT_SCHEMA,
            "control_ir": {"type": "array", "items": items},
        },
        "required": ["control"],
        "additionalProperties": False,
    }
    if defs:
        schema["$defs"] = dict(sorted(defs.items()))
    return PhaseCatalog(ops=specs, output_schema=schema, allowed_ops=ops_list)


def phase_context(ctx: ToolContext, allowed_ops: Iterable[str]) -> ToolContext:
    """``ctx`` for the phase surface carrying ``allowed_ops``, so the dispatcher gates the same ops."""
    from dataclasses import replace

    state = replace(ctx.phase_state or PhaseCallerState(), allowed_ops=as_names(allowed_ops, "allowed_ops"))
    return replace(ctx, surface="phase", phase_state=state)
