"""Nothing stored answers for a schema check (issue 24): every load checks every tool's schema, so a
verdict planted in the user cache folder cannot let a bad schema through, whatever the folder holds.

The plant is exactly what the removed schema-check cache believed: a private
``schema-checks-v2.json`` stamped with the checker fingerprint that cache computed for this very
checker (the jsonschema-rs version and the checker's source files), saying "no issues" for a
schema whose pattern RE2 cannot run (``RS007``) and for one that is not a valid JSON Schema
(``RS005``). Both are refused, on every load; the good tool beside them registers and runs (the
control), the plant is left as it was and nothing else is written there.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

import reyn_core
from reyn_core import ToolContext, ToolDefinition
from reyn_core.host import Profile, dispatch_tool, load

pytestmark = pytest.mark.usefixtures("isolated_profile_env")

LOOKAHEAD = {"type": "object", "properties": {"a": {"type": "string", "pattern": "(?=a)a"}}}
NOT_A_SCHEMA = {"type": "object", "properties": {"a": {"type": "strin"}}}


def echo(a: str = "") -> str:
    """Echo."""
    return a


def raw(name: str, parameters: dict[str, Any]) -> ToolDefinition:
    return ToolDefinition(name=name, description="Echo.", parameters=parameters, handler=echo)


def _old_fingerprint() -> str:
    """The checker fingerprint the removed cache stamped its file with, for the checker installed
    now: a file with this stamp would have been believed."""
    core = Path(reyn_core.__file__).resolve().parent
    h = hashlib.sha256(f"jsonschema-rs {version('jsonschema-rs')}\0".encode())
    files = [core / n for n in ("schema.py", "provider_schemas.py", "jsondata.py", "errors.py")]
    for path in files + sorted((core / "validation").glob("*.py")):
        h.update(path.relative_to(core).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _no_issues_for(*schemas: dict[str, Any]) -> dict[str, list[Any]]:
    entries: dict[str, list[Any]] = {}
    for schema in schemas:
        canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"))
        for phase_usable in (0, 1):
            entries[hashlib.sha256(f"{phase_usable}\0{canonical}".encode()).hexdigest()] = []
    return entries


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """``$REYN_CACHE_DIR/schema-checks-v2.json`` (private) saying both bad schemas have no issues."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    path = cache / "schema-checks-v2.json"
    entries = _no_issues_for(LOOKAHEAD, NOT_A_SCHEMA)
    path.write_text(json.dumps({"checker": _old_fingerprint(), "entries": entries}))
    path.chmod(0o600)
    return path


def test_a_planted_no_issues_verdict_does_not_skip_the_check(planted: Path) -> None:
    before = planted.read_bytes()
    profile = Profile.from_toml_text('[plugins]\nenable = ["example"]\n')
    tools = [raw("lookahead", dict(LOOKAHEAD)), raw("not_a_schema", dict(NOT_A_SCHEMA)), reyn_core.tool(echo)]
    for _ in range(2):  # every load checks again
        result = load(profile, host_tools=tools)
        refused = {d.tool: d.code for d in result.report.diagnostics if d.is_error}
        assert refused == {"lookahead": "RS007", "not_a_schema": "RS005"}, refused
        registry = result.registry
        assert "lookahead" not in registry and "not_a_schema" not in registry
        # the control: the good host tool and the plugin's tools register, and a call runs
        assert {"echo", "convert_units", "text_stats"} <= {t.name for t in registry.tools()}
        outcome = asyncio.run(dispatch_tool(registry, "echo", {"a": "hi"}, ToolContext(surface="router")))
        assert outcome == {"status": "ok", "data": "hi"}
    assert planted.read_bytes() == before
    assert sorted(p.name for p in planted.parent.iterdir()) == ["schema-checks-v2.json"]
