"""A skill's input schema goes through the core's validator factory: a reference that would be fetched
is an RK007 diagnostic naming it (a real HTTP server on 127.0.0.1 records that nothing was requested);
local $defs still work; patterns run on RE2 in bounded time; one RE2 cannot run is RK007."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hostile_schemas import hostile_references, obj
from reyn_tools_catalog import CatalogBridge
from reyn_tools_catalog.catalog import load_catalog

from reyn_core import HostBridge


@pytest.fixture
def recorder(counting_server: Any) -> Any:
    """The shared recording HTTP server on 127.0.0.1 (tests/conftest.py)."""
    return counting_server


def skill(name: str, schema: dict[str, Any]) -> str:
    return f"---\nname: {name}\ndescription: A skill.\ninput_schema: {json.dumps(schema)}\n---\nDo it.\n"


def hostile(url: str) -> dict[str, tuple[dict[str, Any], str]]:
    """The shared corpus of retrievable references (a skill name from each case's), and two patterns
    RE2 cannot run."""
    cases = {
        re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-"): case
        for name, case in hostile_references(url).items()
    }
    return {
        **cases,
        "lookahead": (obj({"a": {"type": "string", "pattern": "^(?=.*[0-9])"}}), "lookahead"),
        "backref": (obj({"a": {"type": "string", "pattern": "(x)\\1"}}), "backreference"),
    }


def test_skills_whose_schema_needs_retrieval_or_unsupported_regex_are_rk007(ws, recorder) -> None:
    cases = hostile(recorder.url)
    for name, (schema, _) in cases.items():
        ws.skill(name, skill(name, schema))
    ws.skill(
        "good", skill("good", {**obj({"a": {"$ref": "#/$defs/n"}}), "$defs": {"n": {"type": "integer"}}})
    )
    catalog = load_catalog(ws.settings, ws.root)
    assert list(catalog.skills) == ["good"]
    found = {d.path.parent.name: d for d in catalog.diagnostics}
    assert sorted(found) == sorted(cases)
    for name, (_, named) in cases.items():
        assert found[name].code == "RK007" and named in found[name].message, found[name].message
    assert recorder.requests == []


def test_invoke_skill_runs_patterns_on_re2_and_local_refs(ws, recorder) -> None:
    ws.skill(
        "evil",
        skill(
            "evil",
            {
                **obj({"a": {"type": "string", "pattern": "^(a+)+$"}, "n": {"$ref": "#/$defs/n"}}),
                "$id": f"{recorder.url}/s.json",
                "$defs": {"n": {"type": "integer"}},
                "patternProperties": {"^(b+)+$": {}},
                "additionalProperties": False,
            },
        ),
    )
    calls: list[Any] = []
    service = CatalogBridge(run_skill=lambda *, skill, input, ctx: calls.append(input) or "ran")
    bridge = HostBridge(services={CatalogBridge: service})
    env = ws.call("invoke_skill", {"skill": "evil", "input": {"a": "a" * 40 + "!"}}, bridge=bridge)
    assert env["error"]["kind"] == "invalid_arguments"
    assert [e["path"] for e in env["error"]["errors"]] == ["/input/a"]
    env = ws.call("invoke_skill", {"skill": "evil", "input": {"b" * 40 + "!": 1, "n": "x"}}, bridge=bridge)
    assert sorted(e["path"] for e in env["error"]["errors"]) == ["/input", "/input/n"]
    env = ws.call("invoke_skill", {"skill": "evil", "input": {"a": "aa", "bbb": 1, "n": 2}}, bridge=bridge)
    assert env == {"status": "ok", "data": "ran"} and calls == [{"a": "aa", "bbb": 1, "n": 2}]
    assert recorder.requests == []


def test_a_host_record_with_a_remote_ref_is_rk008_unfetched(ws, recorder) -> None:
    from reyn_tools_catalog.catalog import coerce_host_catalog

    schema = obj({"a": {"$ref": f"{recorder.url}/int.json"}})
    catalog = coerce_host_catalog(
        {"skills": [{"name": "h", "description": "Host skill.", "input_schema": schema}]}
    )
    assert list(catalog.skills) == []
    [diag] = catalog.diagnostics
    assert diag.code == "RK008" and f"{recorder.url}/int.json" in diag.message
    assert recorder.requests == []
