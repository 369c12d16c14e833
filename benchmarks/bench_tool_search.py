"""Tool search on large registries: retrieval quality and tools-array size, on public data.

Data: the Berkeley Function Calling Leaderboard (BFCL), as shipped in the PyPI package ``bfcl-eval``
(pinned version and wheel hash below), downloaded with ``pip download`` into a cache directory
(``$REYN_BENCH_CACHE``, default ``~/.cache/reyn/bench``; never committed). Its function documents —
third-party tool definitions collected by the BFCL authors — become a Reyn registry; its
single-call questions (``simple_python``, ``simple_java``, ``simple_javascript``, ``live_simple``,
``multiple``) with their possible answers are the requests, each with the one right tool.

Only the files of those question sets are read (``load_bfcl(other_files=False)``): held-out
evaluations use BFCL's other categories, so they are never opened here. Reported:
- recall@1 / @5 / @50 on the report part of the held-out split (``tool_search_split``: the method was
  chosen on the other part by ``tune_tool_search.py``), plain FTS5 ``bm25()`` beside each figure;
- tokens of the tools array per turn (tiktoken ``o200k_base`` and ``cl100k_base``, which litellm ships
  for offline use) for a registry of every tool of those sets, without deferral and with
  ``[surfaces.router.defer] max_tokens = 2000``: turn 1 and turn 2 (after the search, 5 results added);
- the median time of ``search_tools`` on 2,000 tools, the visible set and index warm.
Targets: held-out recall@5 ≥ 0.9 and ≥ plain bm25 + 0.05, turn-2 tokens ≤ 10% of the full render,
search median ≤ 2 ms. When the download is impossible (no network), the module prints one line and skips.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

BFCL_VERSION = "2026.3.23"
BFCL_WHEEL = f"bfcl_eval-{BFCL_VERSION}-py3-none-any.whl"
BFCL_SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
QUESTION_SETS = ("simple_python", "simple_java", "simple_javascript", "live_simple", "multiple")
BUDGET_TOKENS = 2000
TARGET_RECALL5, TARGET_GAIN, TARGET_SHARE, TARGET_SEARCH_MS = 0.9, 0.05, 0.10, 2.0
SEARCH_TOOLS = 2000

_TYPES = {
    "dict": "object",
    "object": "object",
    "hashmap": "object",
    "float": "number",
    "double": "number",
    "number": "number",
    "integer": "integer",
    "int": "integer",
    "long": "integer",
    "string": "string",
    "char": "string",
    "boolean": "boolean",
    "array": "array",
    "arraylist": "array",
    "tuple": "array",
    "list": "array",
}


def cache_dir() -> Path:
    root = os.environ.get("REYN_BENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "reyn", "bench"
    )
    return Path(root)


def fetch_wheel() -> Path | None:
    """The pinned bfcl-eval wheel (downloaded once, hash-checked), or None when it cannot be had."""
    target = cache_dir() / BFCL_WHEEL
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
            cmd += ["-d", tmp, f"bfcl-eval=={BFCL_VERSION}", "-q"]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            got = Path(tmp) / BFCL_WHEEL
            if proc.returncode != 0 or not got.is_file():
                print(f"skipped: cannot download bfcl-eval=={BFCL_VERSION} ({proc.stderr.strip()[-200:]})")
                return None
            got.replace(target)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    if digest != BFCL_SHA256:
        print(f"skipped: {target} has sha256 {digest}, expected {BFCL_SHA256}; delete it to re-download")
        return None
    return target


def jsonl(zf: zipfile.ZipFile, name: str) -> Iterator[dict[str, Any]]:
    for line in zf.read(name).decode("utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def tool_name(name: str) -> str:
    import re

    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64]


def to_schema(node: Any) -> Any:
    """A BFCL parameter document as JSON Schema (its ``dict``/``float``/``tuple``/Java types mapped,
    ``any`` left untyped); names listed as required but not defined are dropped."""
    if not isinstance(node, dict):
        return {}
    out: dict[str, Any] = {}
    kind = _TYPES.get(str(node.get("type", "")).lower())
    if kind:
        out["type"] = kind
    for key in ("description", "enum"):
        if key in node:
            out[key] = node[key]
    if isinstance(node.get("properties"), dict):
        out["properties"] = {str(k): to_schema(v) for k, v in node["properties"].items()}
        required = [r for r in node.get("required", []) if r in out["properties"]]
        if required:
            out["required"] = required
    if "items" in node:
        out["items"] = to_schema(node["items"])
    return out


class Request(NamedTuple):
    """A single-call question: its text, the name of its right tool, and whether the registry's
    document of that name is the very one the question was written against."""

    text: str
    tool: str
    own_document: bool
    part: str = ""


def load_bfcl(wheel: Path, *, other_files: bool = True) -> tuple[dict[str, dict[str, Any]], list[Request]]:
    """(tool name → BFCL function document, the single-call requests).

    BFCL ships a function document with each question, and many names come with several different
    documents (``get_current_weather`` has 62, ``requests_get`` 47: each question describes the
    function its own way). A registry holds one tool per name, so each name gets the document most
    questions were written against (ties: the first met, question sets in order, then every other
    data file); a request whose own document differs is marked ``own_document=False``: its right
    tool, as its question describes it, is not in the registry.

    ``other_files=False`` reads only the files of ``QUESTION_SETS`` (questions, answers and their
    function documents): the recall figures use that, so no other category of BFCL's data — where
    held-out evaluations come from — is ever opened. ``bench_registration`` reads every file.
    """
    first_seen: dict[str, dict[str, Any]] = {}
    asked: list[tuple[str, str, dict[str, Any] | None, str]] = []
    votes: dict[str, Counter[str]] = {}
    with zipfile.ZipFile(wheel) as zf:
        for part in QUESTION_SETS:
            answers = {
                a["id"]: a["ground_truth"]
                for a in jsonl(zf, f"bfcl_eval/data/possible_answer/BFCL_v4_{part}.json")
            }
            for entry in jsonl(zf, f"bfcl_eval/data/BFCL_v4_{part}.json"):
                for fn in entry.get("function") or ():
                    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                        first_seen.setdefault(tool_name(fn["name"]), fn)
                truth = answers.get(entry["id"])
                turns = entry.get("question") or []
                if not truth or len(truth) != 1 or not turns:
                    continue
                text = " ".join(m["content"] for m in turns[-1] if m.get("role") == "user")
                name = tool_name(next(iter(truth[0])))
                own = next(
                    (f for f in entry.get("function") or () if tool_name(str(f.get("name"))) == name), None
                )
                asked.append((text, name, own, part))
                if own is not None:
                    votes.setdefault(name, Counter())[json.dumps(own, sort_keys=True)] += 1
        others = (
            sorted(n for n in zf.namelist() if n.startswith("bfcl_eval/data/BFCL_v4_")) if other_files else []
        )
        for name in others:
            try:
                for entry in jsonl(zf, name):
                    for fn in entry.get("function") or ():
                        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                            first_seen.setdefault(tool_name(fn["name"]), fn)
            except ValueError:
                continue  # a file that is not JSON lines (format_sensitivity)
    functions = dict(first_seen)
    for name, counts in votes.items():
        best = max(counts.values())
        # Counter keeps insertion order, so the first document with the most votes wins ties.
        functions[name] = json.loads(next(doc for doc, n in counts.items() if n == best))
    requests = [Request(text, name, own == functions.get(name), part) for text, name, own, part in asked]
    return functions, requests


def build_registry(
    functions: dict[str, dict[str, Any]], names: list[str], *, search: bool = False
) -> tuple[Any, int]:
    """A registry of the named functions; with ``search``, the search pack's ``find_tools`` too (what
    deferral offers)."""
    from reyn_core import ToolDefinition, ToolOrigin
    from reyn_core.errors import ToolRegistrationError
    from reyn_core.host import RegistryBuilder

    builder = RegistryBuilder()
    if search:
        from reyn_tools_search.tools import find_tools

        builder.register(find_tools, origin=ToolOrigin(kind="plugin", plugin_id="search"))
    refused = 0
    for name in names:
        fn = functions[name]
        schema = to_schema(fn.get("parameters") or {})
        schema["type"] = "object"
        schema.setdefault("properties", {})
        try:
            builder.register(
                ToolDefinition(
                    name=name,
                    description=str(fn.get("description") or name),
                    parameters=schema,
                    handler=lambda **kw: kw,
                )
            )
        except ToolRegistrationError:
            refused += 1
    return builder.freeze(), refused


def encodings() -> dict[str, Any]:
    # litellm points tiktoken at the encodings it bundles, so this works without network; its model
    # cost map is read from the local copy too.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm.litellm_core_utils.default_encoding  # noqa: F401
    import tiktoken

    return {name: tiktoken.get_encoding(name) for name in ("o200k_base", "cl100k_base")}


def heldout(wheel: Path) -> bool:
    """recall@1/5/50 on the report part of the split (``tool_search_split``), Reyn's search beside
    plain BM25; True when the targets are met on it."""
    import tool_search_split as sp

    s = sp.split(wheel)
    model = semantic_extra()
    print(f"\nheld-out (chosen on: {sp.describe(s.tune)}; never on what follows)")
    print(f"  {'part':<56} {'':<10} {'r@1':>6} {'r@5':>6} {'r@50':>6}")
    ok = True
    for part in (s.report, s.report_large):
        tools = sp.registry_tools(s.functions, part.pool)
        ours = sp.recall(part.requests, sp.method_search(tools))
        plain = sp.recall(part.requests, sp.plain_search(tools))
        rows = [("reyn", ours), ("plain bm25", plain)]
        if model is not None:  # the option as the pack runs it (semantic = true), chosen by cv_tool_search.py
            fused = sp.recall(part.requests, sp.method_search(tools, semantic=True))
            rows.append(("semantic", fused))
        for label, r in rows:
            print(f"  {sp.describe(part):<56} {label:<10} {r[1]:>6.3f} {r[5]:>6.3f} {r[50]:>6.3f}")
        if part is s.report:
            ok = ours[5] >= TARGET_RECALL5 and ours[5] - plain[5] >= TARGET_GAIN
    print(f"  target on the report part: recall@5 ≥ {TARGET_RECALL5} and ≥ plain bm25 + {TARGET_GAIN}")
    return ok


def semantic_extra() -> Any | None:
    """The optional semantic candidate (WordLlama, weights inside its wheel), measured: its installed
    size and the time to import it and load the model in a fresh process. None when not installed."""
    import tool_search_split as sp

    model = sp.wordllama()
    if model is None:
        print("\nsemantic candidate: wordllama not installed, skipped")
        return None
    import importlib.metadata as md

    dist = md.distribution("wordllama")
    size = sum((f.size or 0) for f in dist.files or ())
    code = "import time; t = time.perf_counter(); import tool_search_split as sp; sp.wordllama(); "
    code += "print(time.perf_counter() - t)"
    here = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONPATH": here}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    took = float(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else float("nan")
    print(
        f"\nsemantic candidate: wordllama {dist.version}, {size / 1e6:.1f} MB installed (numpy, tokenizers, "
        f"safetensors, pydantic, requests, toml besides), import + load {took:.2f} s in a fresh process; "
        "the search pack's semantic option (score fusion, weight 2, chosen by cv_tool_search.py)"
    )
    return model


def timing(functions: dict[str, dict[str, Any]]) -> bool:
    """Median ``search_tools`` time on a 2,000-tool registry (the named sets' documents, repeated
    under suffixed names to reach the size), the visible set and index warm as in a conversation."""
    import statistics
    import time

    import tool_search_split as sp
    from reyn_tools_search.index import ToolIndex, search_tools

    from reyn_core import ToolContext

    base = sorted(functions)
    docs = {
        f"{n[:58]}_{i // len(base)}" if i >= len(base) else n: functions[n]
        for i, n in enumerate(base * (SEARCH_TOOLS // len(base) + 1))
    }
    names = list(docs)[:SEARCH_TOOLS]
    registry, _ = build_registry(docs, names)
    ctx = ToolContext(surface="router", agent="bench")
    s = sp.split(fetch_wheel() or Path())
    queries = [r.text for r in s.tune.requests]  # any requests do: only the time is read here
    start, cpu = time.perf_counter(), time.process_time()
    search_tools(registry, queries[0], ctx)
    first, first_cpu = time.perf_counter() - start, time.process_time() - cpu
    samples = []
    gc.disable()  # paused while measuring, as timeit does
    try:
        for q in queries:
            start = time.perf_counter()
            search_tools(registry, q, ctx)
            samples.append(time.perf_counter() - start)
    finally:
        gc.enable()
    median = statistics.median(samples)
    builds: dict[str, list[tuple[float, float]]] = {"reyn": [], "fts5": []}
    tools = list(registry.tools())
    for _ in range(3):  # a cold build of each, in turn: the same load on both
        for label, build in (("reyn", ToolIndex), ("fts5", sp.PlainBM25)):
            start, cpu = time.perf_counter(), time.process_time()
            build(tools)
            builds[label].append((time.perf_counter() - start, time.process_time() - cpu))
    wall = {k: min(w for w, _ in v) * 1000 for k, v in builds.items()}
    cpus = {k: min(c for _, c in v) * 1000 for k, v in builds.items()}
    print(
        f"\nindex build on {len(tools)} tools from their definitions (best of 3, wall / CPU): Reyn "
        f"{wall['reyn']:.0f} / {cpus['reyn']:.0f} ms, SQLite FTS5 {wall['fts5']:.0f} / {cpus['fts5']:.0f} ms"
    )
    print(
        f"\nsearch_tools on {len(registry)} tools: first call {first * 1000:.0f} ms "
        f"({first_cpu * 1000:.0f} ms CPU; gates and index), "
        f"then median {median * 1000:.2f} ms, p90 {sorted(samples)[len(samples) * 9 // 10] * 1000:.2f} ms "
        f"over {len(samples)} requests (target median ≤ {TARGET_SEARCH_MS} ms)"
    )
    if sp.wordllama() is not None:
        semantic_timing(registry, queries, ctx)
    return median * 1000 <= TARGET_SEARCH_MS


def semantic_timing(registry: Any, queries: list[str], ctx: Any) -> None:
    """The semantic option on the same registry: the first call (every tool embedded) and the median
    of the rest, warm."""
    import statistics
    import time

    from reyn_tools_search.index import search_tools

    start = time.perf_counter()
    search_tools(registry, queries[0], ctx, semantic=True)
    first = time.perf_counter() - start
    samples = []
    gc.disable()
    try:
        for q in queries:
            start = time.perf_counter()
            search_tools(registry, q, ctx, semantic=True)
            samples.append(time.perf_counter() - start)
    finally:
        gc.enable()
    print(
        f"search_tools(semantic=True) on {len(registry)} tools: first call {first * 1000:.0f} ms (every tool "
        f"embedded), then median {statistics.median(samples) * 1000:.2f} ms, "
        f"p90 {sorted(samples)[len(samples) * 9 // 10] * 1000:.2f} ms"
    )


def main() -> bool | None:
    wheel = fetch_wheel()
    if wheel is None:
        return None
    from reyn_tools_search.index import search_tools

    from reyn_core import ToolContext
    from reyn_core.host import DeferralPolicy, ToolDeferral, estimate_tokens, render_router
    from reyn_core.jsondata import canonical_json

    functions, all_requests = load_bfcl(wheel, other_files=False)
    encs = encodings()
    ctx = ToolContext(surface="router")
    print(
        f"bfcl-eval {BFCL_VERSION}, question sets {', '.join(QUESTION_SETS)} only: "
        f"{len(functions)} distinct tool names, {len(all_requests)} requests"
    )
    ok = heldout(wheel)

    registry, refused = build_registry(functions, sorted(functions), search=True)
    requests = [r for r in all_requests if r.tool in registry and r.own_document]

    def tokens(tools: list[dict[str, Any]]) -> dict[str, int]:
        text = canonical_json(tools)
        counts = {name: len(enc.encode(text)) for name, enc in encs.items()}
        counts["estimate"] = sum(estimate_tokens(t) for t in tools)
        return counts

    full = tokens(render_router(registry, ctx))
    deferral = ToolDeferral(registry, DeferralPolicy(max_tokens=BUDGET_TOKENS))
    turn1 = tokens(deferral.split(ctx).tools)
    sample = requests[:: max(1, len(requests) // 50)]
    found = {r.text: [m.name for m in search_tools(registry, r.text, ctx, limit=5)] for r in sample}
    turn2_all = [tokens(deferral.split(ctx, found[r.text]).tools) for r in sample]
    turn2 = {k: max(t[k] for t in turn2_all) for k in full}
    share = turn2["o200k_base"] / full["o200k_base"]
    print(
        f"\ntools array per turn, registry of {len(registry)} tools "
        f"({refused} refused by registration checks)"
    )
    print(f"  {'':<44} {'o200k':>9} {'cl100k':>9} {'estimate':>9}")
    rows = [
        ("no deferral (every tool)", full),
        (f"deferral max_tokens={BUDGET_TOKENS}: turn 1", turn1),
        ("deferral: turn 2, +5 found (max of sample)", turn2),
    ]
    for label, t in rows:
        print(f"  {label:<44} {t['o200k_base']:>9,} {t['cl100k_base']:>9,} {t['estimate']:>9,}")
    print(f"  turn 2 / full render: {share:.2%} (target ≤ {TARGET_SHARE:.0%})")
    fast = timing(functions)
    return ok and share <= TARGET_SHARE and fast


if __name__ == "__main__":
    sys.exit(0 if main() is not False else 1)
