"""Cold registration of real-world tool definitions, against a JSON round trip of the same definitions.

Data: the BFCL function corpus (``bfcl-eval``, pinned and cached by ``bench_tool_search.py``, whose
loader this reuses), types normalised to JSON Schema as there: ~1,800 third-party definitions.

Reported, per tool (medians of interleaved rounds, so every ratio comes from one run):
- ``json.loads(json.dumps(definition))`` of ``{name, description, parameters}`` — the floor: any
  registry must at least read what it is given;
- cold registration: a fresh ``RegistryBuilder`` registering every definition (every load-time check:
  names, size, depth, references, the Draft 2020-12 meta-schema, RE2 patterns, provider lints) and
  ``freeze()`` — no schema-check cache (a host's first start, or a changed plugin);
- ``check_tool_schema`` alone, and jsonschema's own meta-schema validation alone (what the
  structural meta-schema check in ``reyn_core.metaschema`` replaces for valid schemas);
- ``json_schema_validator`` on each parameters schema with its cache cleared (what an MCP import of
  that many tools pays: screening plus compiling the argument validator).
Target: cold registration ≤ 10x the JSON round trip. Without network the module prints one line and
skips.
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

TARGET_RATIO = 10.0
ROUNDS = 7


def definitions() -> list[tuple[str, str, dict[str, Any]]] | None:
    import bench_tool_search as bfcl

    wheel = bfcl.fetch_wheel()
    if wheel is None:
        return None
    functions, _ = bfcl.load_bfcl(wheel)
    out = []
    for name, fn in functions.items():
        schema = bfcl.to_schema(fn.get("parameters") or {})
        schema["type"] = "object"
        schema.setdefault("properties", {})
        out.append((name, str(fn.get("description") or name), schema))
    return out


def per_item(fn: Callable[[], Any], count: int) -> float:
    """Seconds per item of one call of ``fn`` over ``count`` items, GC paused as timeit does."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) / count
    finally:
        if enabled:
            gc.enable()


def main() -> bool | None:
    defs = definitions()
    if defs is None:
        return None
    from reyn_core import ToolDefinition
    from reyn_core.errors import ToolRegistrationError
    from reyn_core.host import RegistryBuilder
    from reyn_core.schema import check_tool_schema
    from reyn_core.validation import SchemaRefused, json_schema_validator, jsonschema_metaschema_problems

    n = len(defs)
    docs = [{"name": name, "description": text, "parameters": schema} for name, text, schema in defs]
    handler = lambda **kw: kw  # noqa: E731
    tools = [
        ToolDefinition(name=name, description=text, parameters=schema, handler=handler)
        for name, text, schema in defs
    ]
    refused: list[int] = []

    def round_trip() -> None:
        for doc in docs:
            json.loads(json.dumps(doc))

    def register() -> None:
        builder = RegistryBuilder()
        bad = 0
        for definition in tools:
            try:
                builder.register(definition)
            except ToolRegistrationError:
                bad += 1
        builder.freeze()
        refused.append(bad)

    def checks() -> None:
        for _, _, schema in defs:
            check_tool_schema(schema, phase_usable=True)

    def jsonschema_meta() -> None:
        for _, _, schema in defs:
            jsonschema_metaschema_problems(schema)

    def mcp_import() -> None:
        from reyn_core import validation

        validation._screened_validator.cache_clear()
        for _, _, schema in defs:
            try:
                json_schema_validator(schema)
            except SchemaRefused:
                pass

    jsonschema_meta()  # import jsonschema and build its meta-schema validator once, outside the timing
    cases = {
        "json.loads(json.dumps(definition))": round_trip,
        "cold registration (register + freeze)": register,
        "  check_tool_schema alone": checks,
        "  jsonschema meta-schema validation alone": jsonschema_meta,
        "json_schema_validator (screen + compile)": mcp_import,
    }
    samples: dict[str, list[float]] = {label: [] for label in cases}
    for r in range(ROUNDS):
        for label, fn in cases.items():
            if "jsonschema" in label and r >= 3:
                continue  # slow and only for reference: three rounds
            samples[label].append(per_item(fn, n))
    medians = {label: statistics.median(s) for label, s in samples.items()}
    floor = medians["json.loads(json.dumps(definition))"]
    print(
        f"BFCL corpus: {n} definitions ({refused[-1]} refused at registration: names equal under the "
        f"collision rule); medians of {ROUNDS} interleaved rounds (jsonschema rows: 3)\n"
    )
    print(f"  {'per tool':<46} {'µs':>9} {'x round trip':>13}")
    for label, value in medians.items():
        print(f"  {label:<46} {value * 1e6:>9.1f} {value / floor:>12.1f}x")
    ratio = medians["cold registration (register + freeze)"] / floor
    ok = ratio <= TARGET_RATIO
    print(
        f"\ntarget: cold registration ≤ {TARGET_RATIO:g}x the JSON round trip -> "
        f"{ratio:.1f}x {'MET' if ok else 'MISSED'}"
    )
    return ok


if __name__ == "__main__":
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    raise SystemExit(0 if main() is not False else 1)
