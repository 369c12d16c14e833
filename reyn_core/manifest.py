"""Tool manifests: a pack's tool definitions as a generated JSON data file, like a lock file.

A plugin whose handlers need heavy imports (pydantic argument models, SQLite, subprocesses) keeps
ONE source of truth — its ``@tool`` functions — and ships a generated ``tools.json``::

    python -m reyn_core.manifest mypack.tools:TOOLS > mypack/tools.json          # regenerate
    python -m reyn_core.manifest mypack.tools:TOOLS --check mypack/tools.json    # exit 1 if stale

Its plugin then registers ``lazy_definitions(read_manifest("mypack"))``: the same names,
descriptions, schemas and gates, with lazy ``"module:attr"`` handlers, so that loading and rendering
the tools never import the handler module. A test comparing ``tool_manifest(TOOLS)`` with
``read_manifest("mypack")`` keeps the file honest.

This module imports only ``json`` (and ``importlib.resources`` when reading a manifest).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .errors import NotJsonNumber, describe_exception
from .jsondata import parse_json, to_jsonable
from .tool import ToolDefinition, ToolGates

if TYPE_CHECKING:
    from .context import ToolContext

MANIFEST_VERSION = 1
TOOL_KEYS = (
    "name",
    "description",
    "parameters",
    "gates",
    "cluster",
    "purity",
    "dispatch_kind",
    "timeout_s",
    "handler",
)
# Written only for a tool whose result has a schema (``ToolDefinition.returns``); optional on reading.
OPTIONAL_TOOL_KEYS = ("returns",)
_GATE_KEYS = ("router", "phase")
_OPTIONAL_GATE_KEYS = ("plan_mode",)

Available = Callable[["ToolContext"], bool]
Enricher = Callable[[dict[str, Any], "ToolContext"], dict[str, Any]]


def _handler_reference(definition: ToolDefinition) -> str:
    handler = definition.handler
    if isinstance(handler, str):
        if not _is_reference(handler):
            raise ValueError(
                f"tool {definition.name!r}: handler {handler!r} is not a 'module:attr' reference"
            )
        return handler
    if handler is None:
        raise ValueError(f"tool {definition.name!r} has no handler; a manifest needs an importable one")
    module = getattr(handler, "__module__", None)
    qualname = getattr(handler, "__qualname__", None)
    if not module or not qualname or "." in qualname or "<" in qualname:
        raise ValueError(
            f"tool {definition.name!r}: its handler {qualname or handler!r} is not a module-level function, "
            "so no 'module:attr' reference can import it"
        )
    target = getattr(sys.modules.get(module), qualname, None)
    if target is not handler and not (isinstance(target, ToolDefinition) and target.handler is handler):
        raise ValueError(
            f"tool {definition.name!r}: {module}:{qualname} does not name its handler "
            "(is the function shadowed or renamed in its module?)"
        )
    return f"{module}:{qualname}"


def _is_reference(ref: object) -> bool:
    if not isinstance(ref, str):
        return False
    module, sep, attr = ref.partition(":")
    return bool(sep and module and attr)


def tool_manifest(definitions: Sequence[ToolDefinition]) -> dict[str, Any]:
    """The JSON-safe manifest of ``definitions``, in their order.

    Each entry holds the name, description, parameters (key order kept: it is what a model is sent),
    gates, cluster, purity, dispatch kind, timeout and the handler as ``"module:attr"`` (the handler
    function's ``__module__`` and ``__qualname__``; a lazy string handler is kept as it is), and the
    result schema (``returns``) when the tool has one.

    ``available`` and ``schema_enricher`` are code, not data: they are NOT serialised — pass them
    again to ``lazy_definitions``. ``origin`` is the loader's business and is left out too.
    Raises ValueError for a handler that is missing or not a module-level function.
    """
    tools = []
    for d in definitions:
        if not isinstance(d, ToolDefinition):
            raise ValueError(f"expected ToolDefinitions, got {type(d).__name__}: {d!r:.80}")
        entry: dict[str, Any] = {
            "name": d.name,
            "description": d.description,
            "parameters": to_jsonable(d.parameters),
            "gates": _gates_entry(d.gates),
            "cluster": d.cluster,
            "purity": d.purity,
            "dispatch_kind": d.dispatch_kind,
            "timeout_s": d.timeout_s,
            "handler": _handler_reference(d),
        }
        if d.returns is not None:
            entry["returns"] = to_jsonable(d.returns)
        tools.append(entry)
    return {"reyn_manifest": MANIFEST_VERSION, "tools": tools}


def _gates_entry(gates: ToolGates) -> dict[str, str]:
    # ``plan_mode`` only when it is not the default, so a manifest written before it existed is
    # still exactly what this function writes.
    entry: dict[str, str] = {"router": gates.router, "phase": gates.phase}
    if gates.plan_mode != "allow":
        entry["plan_mode"] = gates.plan_mode
    return entry


def _check_keys(
    what: str, entry: object, keys: Sequence[str], optional: Sequence[str] = ()
) -> Mapping[str, Any]:
    if not isinstance(entry, Mapping):
        raise ValueError(f"{what} must be an object, got {type(entry).__name__}")
    missing = [k for k in keys if k not in entry]
    extra = sorted(str(k) for k in entry if k not in keys and k not in optional)
    if missing or extra:
        problems = ([f"missing {', '.join(missing)}"] if missing else []) + (
            [f"unknown {', '.join(extra)}"] if extra else []
        )
        raise ValueError(f"{what}: {'; '.join(problems)}")
    return entry


def lazy_definitions(
    manifest: Mapping[str, Any],
    *,
    available: Mapping[str, Available] | None = None,
    schema_enrichers: Mapping[str, Enricher] | None = None,
) -> tuple[ToolDefinition, ...]:
    """``ToolDefinition``s with lazy ``"module:attr"`` handlers, built from a manifest.

    ``available`` and ``schema_enrichers`` map tool names to the callables a manifest cannot hold
    (they must live in a light module, since loading imports them). Raises ValueError for an unknown
    manifest version, a missing or unknown key, a bad handler reference, a duplicate tool name, or
    a name in ``available`` / ``schema_enrichers`` that the manifest does not list.
    """
    _check_keys("the manifest", manifest, ("reyn_manifest", "tools"))
    version = manifest["reyn_manifest"]
    if version != MANIFEST_VERSION:
        raise ValueError(
            f"unknown manifest version {version!r}; this reyn_core reads version {MANIFEST_VERSION}"
        )
    entries = manifest["tools"]
    if not isinstance(entries, list):
        raise ValueError(f"the manifest's tools must be a list, got {type(entries).__name__}")
    available = dict(available or {})
    enrichers = dict(schema_enrichers or {})
    out: list[ToolDefinition] = []
    seen: set[str] = set()
    for i, raw in enumerate(entries):
        name = raw.get("name") if isinstance(raw, Mapping) else None
        what = f"manifest tool {name!r}" if isinstance(name, str) else f"manifest tool #{i}"
        entry = _check_keys(what, raw, TOOL_KEYS, OPTIONAL_TOOL_KEYS)
        gates = _check_keys(f"{what} gates", entry["gates"], _GATE_KEYS, _OPTIONAL_GATE_KEYS)
        if not isinstance(name, str):
            raise ValueError(f"{what}: name must be a string")
        if name in seen:
            raise ValueError(f"{what} is listed twice")
        seen.add(name)
        if not _is_reference(entry["handler"]):
            raise ValueError(f"{what}: handler {entry['handler']!r} is not a 'module:attr' reference")
        if not isinstance(entry["parameters"], Mapping):
            raise ValueError(f"{what}: parameters must be an object")
        out.append(
            ToolDefinition(
                name=name,
                description=entry["description"],
                parameters=entry["parameters"],
                handler=entry["handler"],
                gates=ToolGates(
                    router=gates["router"], phase=gates["phase"], plan_mode=gates.get("plan_mode", "allow")
                ),
                cluster=entry["cluster"],
                purity=entry["purity"],
                dispatch_kind=entry["dispatch_kind"],
                schema_enricher=enrichers.get(name),
                available=available.get(name),
                timeout_s=entry["timeout_s"],
                returns=entry.get("returns"),
            )
        )
    for label, mapping in (("available", available), ("schema_enrichers", enrichers)):
        unknown = sorted(set(mapping) - seen)
        if unknown:
            raise ValueError(f"{label} names tools the manifest does not list: {', '.join(unknown)}")
    return tuple(out)


def read_manifest(package: str, resource: str = "tools.json") -> dict[str, Any]:
    """The manifest shipped as ``resource`` inside ``package`` (e.g. ``read_manifest(__package__)``)."""
    from importlib.resources import files

    data: dict[str, Any] = parse_json(files(package).joinpath(resource).read_text(encoding="utf-8"))
    return data


def dumps(manifest: Mapping[str, Any]) -> str:
    """The manifest's file text: indented, non-ASCII kept, schema key order kept, final newline."""
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"


def _load_reference(ref: str) -> Sequence[ToolDefinition]:
    import importlib

    if not _is_reference(ref):
        raise ValueError(f"{ref!r} is not a 'module:attr' reference")
    module, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if isinstance(obj, ToolDefinition):
        return (obj,)
    if not isinstance(obj, (list, tuple)):
        raise ValueError(f"{ref} is a {type(obj).__name__}, not a tuple of ToolDefinitions")
    return obj


def _difference(old: object, new: Mapping[str, Any]) -> str:
    """A one-line summary of how a stale manifest differs from the generated one."""
    if not isinstance(old, Mapping) or not isinstance(old.get("tools"), list):
        return "not a manifest"
    if old.get("reyn_manifest") != new["reyn_manifest"]:
        return f"version {old.get('reyn_manifest')!r}, expected {new['reyn_manifest']}"
    before = {t.get("name"): t for t in old["tools"] if isinstance(t, Mapping)}
    after = {t["name"]: t for t in new["tools"]}
    parts = [f"+{n}" for n in after if n not in before] + [f"-{n}" for n in before if n not in after]
    for n, t in after.items():
        if n in before and before[n] != t:
            keys = [k for k in (*TOOL_KEYS, *OPTIONAL_TOOL_KEYS) if before[n].get(k) != t.get(k)]
            keys = keys or ["key order or extra keys"]
            parts.append(f"{n} ({', '.join(keys)})")
    if not parts and [*before] != [*after]:
        parts.append("tool order")
    return ", ".join(parts) or "formatting"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reyn_core.manifest pkg.module:ATTR [--check FILE]``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m reyn_core.manifest",
        description="Print the tool manifest of a tuple of ToolDefinitions, or check a manifest file.",
    )
    parser.add_argument("reference", help="pkg.module:ATTR naming a tuple of ToolDefinitions")
    parser.add_argument(
        "--check", metavar="FILE", help="exit 1 when FILE differs from the generated manifest"
    )
    args = parser.parse_args(argv)
    try:
        manifest = tool_manifest(_load_reference(args.reference))
    except (ImportError, AttributeError, ValueError) as exc:
        print(f"error: {args.reference}: {describe_exception(exc)}", file=sys.stderr)
        return 2
    text = dumps(manifest)
    if args.check is None:
        sys.stdout.write(text)
        return 0
    regenerate = f"python -m reyn_core.manifest {args.reference} > {args.check}"
    try:
        with open(args.check, encoding="utf-8") as f:
            current = f.read()
    except OSError as exc:
        print(f"{args.check}: cannot read ({exc.strerror}); regenerate with: {regenerate}", file=sys.stderr)
        return 1
    if current == text:
        return 0
    try:
        summary = _difference(parse_json(current), manifest)
    except json.JSONDecodeError as exc:
        summary = f"invalid JSON ({exc.msg}, line {exc.lineno})"
    except NotJsonNumber as exc:
        summary = f"invalid JSON ({exc})"
    print(f"{args.check} is out of date: {summary}; regenerate with: {regenerate}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
