"""Cold registration of real-world tool definitions, against a JSON round trip of the same definitions.

Data: the BFCL function corpus (``bfcl-eval``, pinned and cached by ``bench_tool_search.py``, whose
loader this reuses), types normalised to JSON Schema as there: ~1,800 third-party definitions.

Reported, per tool (medians of interleaved rounds, so every ratio comes from one run):
- ``json.loads(json.dumps(definition))`` of ``{name, description, parameters}`` — the floor: any
  registry must at least read what it is given;
- cold registration: a fresh ``RegistryBuilder`` registering every definition (every load-time check:
  names, size, depth, references, the Draft 2020-12 meta-schema, RE2 patterns, provider lints) and
  ``freeze()`` — no schema-check cache (a host's first start, or a changed plugin);
- ``check_tool_schema`` alone, and the library's meta-schema check alone (``jsonschema_rs.meta``);
- cold registration in a fresh process (the imports the checks need included), the median of five
  fresh processes, in wall and in CPU time;
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


_FRESH = """
import json, sys, time
from reyn_core import ToolDefinition
from reyn_core.errors import ToolRegistrationError
from reyn_core.host import RegistryBuilder
docs = json.load(open(sys.argv[1]))
start, cpu = time.perf_counter(), time.process_time()
for doc in docs:
    json.loads(json.dumps(doc))
floor, floor_cpu = time.perf_counter() - start, time.process_time() - cpu
start, cpu = time.perf_counter(), time.process_time()
builder = RegistryBuilder()
for doc in docs:
    try:
        builder.register(ToolDefinition(handler=len, **doc))
    except ToolRegistrationError:
        pass
builder.freeze()
cold, cold_cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"floor": floor, "cold": cold, "floor_cpu": floor_cpu, "cold_cpu": cold_cpu}))
"""
FRESH_RUNS = 5


def fresh_process_ratio(docs: list[dict[str, Any]]) -> tuple[float, float]:
    """Cold registration in a new interpreter (``reyn_core`` imported, as a host has it; the checks'
    own first-use imports included, nothing warmed), over
    the JSON round trip of the same definitions in that process: what a host's first start pays.
    The median over ``FRESH_RUNS`` fresh processes of the wall-time ratio, and of the CPU-time ratio
    (the steadier figure on a shared machine)."""
    import os
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(docs, handle)
    wall, cpu = [], []
    try:
        for _ in range(FRESH_RUNS):
            done = subprocess.run(
                [sys.executable, "-c", _FRESH, handle.name],
                capture_output=True,
                text=True,
                timeout=600,
                check=True,
            )
            out = json.loads(done.stdout.strip().splitlines()[-1])
            wall.append(out["cold"] / out["floor"])
            cpu.append(out["cold_cpu"] / out["floor_cpu"])
    finally:
        os.unlink(handle.name)
    return statistics.median(wall), statistics.median(cpu)


def main() -> bool | None:
    defs = definitions()
    if defs is None:
        return None
    from reyn_core import ToolDefinition
    from reyn_core.errors import ToolRegistrationError
    from reyn_core.host import RegistryBuilder
    from reyn_core.schema import check_tool_schema
    from reyn_core.validation import SchemaRefused, json_schema_validator, metaschema_problems

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

    def library_meta() -> None:
        for _, _, schema in defs:
            metaschema_problems(schema)

    def mcp_import() -> None:
        from reyn_core import validation

        validation._screened_validator.cache_clear()
        for _, _, schema in defs:
            try:
                json_schema_validator(schema)
            except SchemaRefused:
                pass

    fresh, fresh_cpu = fresh_process_ratio(docs)
    library_meta()  # import the library once, outside the timing
    cases = {
        "json.loads(json.dumps(definition))": round_trip,
        "cold registration (register + freeze)": register,
        "  check_tool_schema alone": checks,
        "  jsonschema_rs meta-schema check alone": library_meta,
        "json_schema_validator (screen + compile)": mcp_import,
    }
    samples: dict[str, list[float]] = {label: [] for label in cases}
    for _ in range(ROUNDS):
        for label, fn in cases.items():
            samples[label].append(per_item(fn, n))
    medians = {label: statistics.median(s) for label, s in samples.items()}
    floor = medians["json.loads(json.dumps(definition))"]
    print(
        f"BFCL corpus: {n} definitions ({refused[-1]} refused at registration: names equal under the "
        f"collision rule); medians of {ROUNDS} interleaved rounds\n"
    )
    print(f"  {'per tool':<46} {'µs':>9} {'x round trip':>13}")
    for label, value in medians.items():
        print(f"  {label:<46} {value * 1e6:>9.1f} {value / floor:>12.1f}x")
    print(
        f"\n  fresh process: cold registration (imports included) {fresh:.1f}x the JSON round trip "
        f"(CPU time {fresh_cpu:.1f}x; medians of {FRESH_RUNS} fresh processes)"
    )
    ratio = max(medians["cold registration (register + freeze)"] / floor, fresh)
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
