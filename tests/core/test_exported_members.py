"""The public surface, pinned: the plugin author's API (``reyn_core``), the host API
(``reyn_core.host``), the test kit (``reyn_testing``) and the LLM runtime (``reyn_loops``), these two
each its own distribution. Adding or removing a name is a decision — change the lists here with it
(the author API's list is its page, ``docs/author-api.md``: a name is added there, where authors read
it). Every name the docs import is public."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import reyn_core
import reyn_core.host

ROOT = Path(__file__).resolve().parents[2]

AUTHOR_API_PAGE = ROOT / "docs" / "author-api.md"


def documented_author_api() -> tuple[list[str], set[str]]:
    """The names ``docs/author-api.md`` lists: the first column of "The ten names most plugins need"
    and, in "The rest, by what it is for", each backticked name outside the parentheses that
    explain it. The page is where a name is added or removed (a decision); this test holds the code
    to it. Returns the ten (in the page's order) and every documented name."""
    text = AUTHOR_API_PAGE.read_text(encoding="utf-8")
    ten = text.split("## The ten names most plugins need", 1)[1].split("\n## ", 1)[0]
    rest = text.split("## The rest, by what it is for", 1)[1].split("\n\n", 2)[1]
    first = re.findall(r"^\| `(\w+)` \|", ten, re.M)
    names = set(first)
    for row in re.findall(r"^\| [^|]+ \| (.+) \|$", rest, re.M):
        while (bare := re.sub(r"\([^()]*\)", "", row)) != row:  # nested parentheses, innermost first
            row = bare
        names |= set(re.findall(r"`(\w+)`", row))
    return first, names


HOST_API = {
    # approvals and purity-ordered batches (issue 26)
    "ApprovalDecisionError",
    "ApprovalGate",
    "ApprovalPolicy",
    "ApprovalRecord",
    "ApprovalRefused",
    "ApprovalRule",
    "ApprovalStatements",
    "ApprovalStore",
    "ApprovalStoreFactory",
    "BatchCall",
    "ProcessConnection",
    "ToolApprovalRequired",
    "ToolNotRun",
    "decide_pending_on_terminal",
    "dispatch_batch",
    # issue 28: render targets, result schemas (outputSchema) and the workspace a host serves in
    "TARGETS",
    "adapt_parameters",
    "choose_workspace",
    "output_schema",
    "target_for_model",
    # progress and logs from a running tool, one delivery mechanism for hosts (issue 28)
    "LOG_LEVELS",
    "Progress",
    "QueuedReporter",
    "Reporter",
    "ToolLog",
    "ToolReport",
    # issue 24: the isolation extension point; one plugin run through the loader's own steps outside
    # load() (an isolated plugin's worker, reyn-testing's registry_from_plugin); what a worker's wire needs
    "PluginIsolation",
    "IsolationRequest",
    "IsolatedPlugin",
    "DeclaredPermissions",
    "PluginLoadError",
    "PluginModule",
    "plugin_from_module",
    "plugin_from_record",
    # issue 24 (review): the worker's plugin, the one that runs a handler (for a call the host's
    # dispatcher decided), and the host's wording of the warnings its worker sends as facts
    "WorkerPlugin",
    "worker_warnings",
    "served_fields",
    "ask_available",
    "CheckFailed",
    "failure_text",
    "SURFACES",
    "depth_within",
    # issue 24 (invariant 6): the value bound a peer's JSON text is checked against before parsing
    "values_within",
    "json_values",
    "JsonValueCount",
    # issue 24 (task E): bytes are counted only as UTF-8 JSON (a parser of bytes detects UTF-16/32)
    "check_utf8_head",
    "NotUtf8Json",
    # issue 24 (task F): NaN / Infinity are not JSON, refused as a peer's text is parsed
    "parse_json",
    "NotJsonNumber",
    # issue 24 (task I): json.loads is banned outside jsondata (ruff TID251); packs and reyn_loops
    # read a peer's text with its value bound, and text Reyn wrote itself, through these
    "read_json",
    "TooManyJsonValues",
    "parse_own_json",
    # issue 24 (secrets review): the one predicate of the secret-file mark, for the worker's wire
    "is_secret",
    # issue 24: the one writer of a file Reyn replaces (keeps a link and the file's mode)
    "atomic_write_bytes",
    # issue 24 (task W): where the host's code comes from, for reyn-isolation's check of write grants
    "host_code",
    # issue 24 (task C): where JSON data holds a lone surrogate, for a pack's own input checks
    "lone_surrogate_at",
    "escape_lone_surrogates",
    # issue 24 (task D): its answer in words, for a pack's own refusals
    "describe_lone_surrogate",
    "DIAGNOSTIC_CODES",
    "CodeTable",
    "DIGEST_VERSION",
    "Decision",
    "DeferralPolicy",
    "Diagnostic",
    "JsonlAuditLog",
    "LoadResult",
    "LockFile",
    "LockedPlugin",
    "OperatorPolicy",
    "PhaseCatalog",
    "PhaseOpCall",
    "PhaseOutput",
    "PhaseOutputError",
    "PluginPolicy",
    "Profile",
    "ProfileError",
    "RegistryBuilder",
    "StrictRenderError",
    "StrictSchemaError",
    "ToolCall",
    "ToolCallHooks",
    "ToolCallOutcome",
    "ToolDeferral",
    "ToolRegistry",
    "TurnTools",
    "active_tracer",
    # the one observation seam, through which reyn-otel makes its spans (issue 24)
    "ObservedCall",
    "Observer",
    "observe_with",
    "active_observer",
    "redact",
    "audit",
    "compare_tools",
    "definition_digest",
    "describe_exception",
    "dispatch_tool",
    "HandlerThreads",  # a host counting a call until its handler thread ends (mcp serve)
    "estimate_tokens",
    "explain_unavailable_tool",
    "found_tool_names",
    "gates",
    "installation_key",
    "invoke_tool",
    "load",
    "load_profile",
    "lock_from_load",
    "op_matches",
    "parse_phase_output",
    "phase_context",
    "provenance_for",
    "read_lock",
    "render_phase",
    "render_router",
    "render_router_json",
    "tool_call_id",
    "tree_digest",
    "write_lock",
}

PUBLIC_MODULES = (
    "reyn_core",
    "reyn_core.host",
    "reyn_core.cli",
    "reyn_testing",
    "reyn_loops",
    "reyn_loops.testing.scripted_server",
)


def test_the_plugin_author_api_is_exactly_the_names_its_page_documents():
    ten, documented = documented_author_api()
    assert len(ten) == 10 and len(documented) > len(ten)  # both tables were read
    assert set(reyn_core.__all__) == documented


def test_the_host_api_is_exactly_these_names():
    # Pinned as the plugin author's API is: a name added to ``reyn_core.host`` is a decision.
    assert set(reyn_core.host.__all__) == HOST_API
    assert sorted(reyn_core.host.__all__) == list(reyn_core.host.__all__)


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_exported_name_resolves(module):
    mod = importlib.import_module(module)
    exported = getattr(mod, "__all__", None)
    assert exported, f"{module} declares no __all__"
    for name in exported:
        assert getattr(mod, name) is not None, f"{module}.{name}"


def test_the_two_apis_do_not_overlap():
    assert not set(reyn_core.__all__) & set(reyn_core.host.__all__)


def test_public_names_are_documented_with_a_docstring():
    missing = [
        f"{m}.{n}"
        for m in ("reyn_core", "reyn_core.host")
        for n in importlib.import_module(m).__all__
        if callable(obj := getattr(importlib.import_module(m), n)) and not (obj.__doc__ or "").strip()
    ]
    assert missing == []


def _doc_imports() -> list[tuple[str, str, str]]:
    """(page, module, name) for every ``from reyn_core… / reyn_loops… import name`` in the docs' python
    blocks."""
    found = []
    for page in [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]:
        text = page.read_text(encoding="utf-8")
        for block in re.findall(r"```python\n(.*?)```", text, re.S):
            try:
                tree = ast.parse(block)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    ("reyn_core", "reyn_loops")
                ):
                    found += [(page.name, node.module or "", a.name) for a in node.names]
    return found


def test_every_name_the_docs_import_is_public():
    public = {m: set(importlib.import_module(m).__all__) for m in PUBLIC_MODULES}
    private = [
        f"{page}: from {module} import {name}"
        for page, module, name in _doc_imports()
        if module not in public or name not in public[module]
    ]
    assert private == []


def test_the_author_api_page_names_every_exported_name():
    page = (ROOT / "docs" / "author-api.md").read_text(encoding="utf-8")
    assert [n for n in sorted(reyn_core.__all__) if f"`{n}`" not in page] == []
