"""The read-only catalog tools, enum enrichment, skill input validation and the host catalogue."""

from __future__ import annotations

import copy

import pytest
from reyn_tools_catalog import Catalog, CatalogBridge, Skill

from reyn_core import HostBridge
from reyn_core.host import render_phase, render_router


@pytest.fixture
def filled(ws, skill_text):
    ws.skill("sum", skill_text("summarize", "Summarize a text. " * 30, extra="category: writing\n"))
    ws.skill("tr", skill_text("translate", "Translate a text.", extra="category: writing\n"))
    ws.skill(
        "calc",
        skill_text(
            "add",
            "Add numbers.",
            extra=(
                'category: math\ninput_schema: {"type": "object", "properties": {"a": {"type": "integer"}, '
                '"b": {"type": "integer"}}, "required": ["a", "b"], "additionalProperties": false}\n'
            ),
        ),
    )
    ws.agent(
        "reviewer", "---\nname: reviewer\ndescription: Reviews code.\ntools: [read_file]\n---\nReview.\n"
    )
    return ws


def enum_of(registry, ctx, tool, prop):
    tools = {t["function"]["name"]: t["function"] for t in render_router(registry, ctx)}
    return tools[tool]["parameters"]["properties"][prop].get("enum")


def test_list_skills_groups_by_category_and_shortens_descriptions(filled):
    data = filled.call("list_skills", {})["data"]
    assert [g["category"] for g in data["categories"]] == ["math", "writing"]
    writing = data["categories"][1]["skills"]
    assert [s["name"] for s in writing] == ["summarize", "translate"]
    assert len(writing[0]["description"]) == 200 and writing[0]["description"].endswith("\u2026")
    assert data["count"] == 3


def test_list_skills_filters_by_category_and_names_the_categories_when_empty(filled):
    assert filled.call("list_skills", {"category": "math"})["data"]["count"] == 1
    data = filled.call("list_skills", {"category": "cooking"})["data"]
    assert data["count"] == 0 and "categories: math, writing" in data["note"]


def test_describe_skill_returns_the_full_record(filled):
    data = filled.call("describe_skill", {"name": "summarize"})["data"]
    assert data["description"] == ("Summarize a text. " * 30).strip()
    assert data["instructions"] == "Do it.\n" and data["category"] == "writing"
    assert "path" not in data


def test_describe_an_unknown_skill_lists_the_known_ones(filled):
    env = filled.call("describe_skill", {"name": "sumarize"})
    assert env["error"]["kind"] == "invalid_arguments"
    assert env["error"]["errors"] == [
        {"path": "/name", "message": "unknown skill 'sumarize'; known skills: add, summarize, translate"}
    ]


def test_list_and_describe_agents(filled):
    assert filled.call("list_agents", {})["data"] == {
        "agents": [{"name": "reviewer", "description": "Reviews code."}],
        "count": 1,
    }
    data = filled.call("describe_agent", {"name": "reviewer"})["data"]
    assert data == {
        "name": "reviewer",
        "description": "Reviews code.",
        "tools": ["read_file"],
        "model": None,
        "instructions": "Review.\n",
    }
    env = filled.call("describe_agent", {"name": "ghost"})
    assert "unknown agent 'ghost'; known agents: reviewer" in env["error"]["message"]


def test_an_empty_catalogue_says_so(ws):
    assert ws.call("list_skills", {})["data"] == {"categories": [], "count": 0}
    env = ws.call("describe_skill", {"name": "x"})
    assert "no skills are available in this session" in env["error"]["message"]


# --------------------------------------------------------------------------- enrichment


def test_invoke_skill_and_delegate_enums_hold_the_current_names(filled):
    ctx = filled.ctx()
    assert enum_of(filled.registry, ctx, "invoke_skill", "skill") == ["add", "summarize", "translate"]
    assert enum_of(filled.registry, ctx, "delegate_to_agent", "agent") == ["reviewer"]
    filled.skill("new", "---\nname: brand-new\ndescription: New.\n---\n")
    assert "brand-new" in enum_of(filled.registry, ctx, "invoke_skill", "skill")


def test_enrichment_never_mutates_the_registry(filled):
    before = {t.name: copy.deepcopy(dict(t.parameters)) for t in filled.registry.tools()}
    render_router(filled.registry, filled.ctx())
    render_phase(filled.registry, filled.ctx("phase"), ["catalog"])
    after = {t.name: dict(t.parameters) for t in filled.registry.tools()}
    assert after == before
    assert "enum" not in filled.registry.get("invoke_skill").parameters["properties"]["skill"]


def test_the_enum_is_removed_when_there_are_no_names(ws):
    assert enum_of(ws.registry, ws.ctx(), "invoke_skill", "skill") is None
    assert enum_of(ws.registry, ws.ctx(), "delegate_to_agent", "agent") is None


def test_the_enum_is_computed_per_call_context(filled, tmp_path_factory, skill_text):
    other = tmp_path_factory.mktemp("other")
    (other / "skills" / "x").mkdir(parents=True)
    (other / "skills" / "x" / "SKILL.md").write_text(skill_text("elsewhere"))
    from reyn_core import ToolContext

    ctx_other = ToolContext(surface="router", workspace=other)
    assert enum_of(filled.registry, ctx_other, "invoke_skill", "skill") == ["elsewhere"]
    assert enum_of(filled.registry, filled.ctx(), "invoke_skill", "skill") == [
        "add",
        "summarize",
        "translate",
    ]


def test_phase_render_enriches_invoke_skill_too(filled):
    surface = render_phase(filled.registry, filled.ctx("phase"), ["catalog"])
    op = next(o for o in surface.ops if o.kind == "invoke_skill")
    assert op.args_schema["properties"]["skill"]["enum"] == ["add", "summarize", "translate"]


# --------------------------------------------------------------------------- invoke_skill


def runner(calls):
    def run_skill(*, skill, input, ctx):
        calls.append((skill.name, input, ctx.surface))
        return {"ran": skill.name, "input": input}

    return HostBridge(services={CatalogBridge: CatalogBridge(run_skill=run_skill)})


def test_invoke_skill_validates_input_against_the_skill_schema(filled):
    calls = []
    env = filled.call(
        "invoke_skill", {"skill": "add", "input": {"a": 1, "b": "two", "c": 3}}, bridge=runner(calls)
    )
    assert env["error"]["kind"] == "invalid_arguments"
    paths = [e["path"] for e in env["error"]["errors"]]
    # the core's validator factory points at the unexpected property itself (/input/c)
    assert paths == ["/input/b", "/input/c"]
    assert "input schema of skill 'add'" in env["error"]["message"]
    assert calls == []


def test_invoke_skill_with_valid_input_calls_run_skill(filled):
    calls = []
    env = filled.call("invoke_skill", {"skill": "add", "input": {"a": 1, "b": 2}}, bridge=runner(calls))
    assert env == {"status": "ok", "data": {"ran": "add", "input": {"a": 1, "b": 2}}}
    assert calls == [("add", {"a": 1, "b": 2}, "router")]


def test_invoke_skill_without_a_schema_passes_any_object(filled):
    calls = []
    assert (
        filled.call("invoke_skill", {"skill": "summarize", "input": {"anything": [1]}}, bridge=runner(calls))[
            "status"
        ]
        == "ok"
    )
    assert filled.call("invoke_skill", {"skill": "summarize"}, bridge=runner(calls))["status"] == "ok"


def test_invoke_an_unknown_skill_is_refused_even_though_the_dispatcher_schema_has_no_enum(filled):
    env = filled.call("invoke_skill", {"skill": "rm-rf", "input": {}}, bridge=runner([]))
    assert env["error"]["errors"][0]["path"] == "/skill"
    assert "unknown skill 'rm-rf'" in env["error"]["message"]


# --------------------------------------------------------------------------- host catalogue


def hosting(catalog):
    """A host bridge carrying ``catalog`` as the host's own catalogue (the catalog pack's service)."""
    return HostBridge(services={CatalogBridge: CatalogBridge(catalog=catalog)})


def test_a_host_catalogue_replaces_the_folders(filled):
    host = {
        "skills": [{"name": "host-skill", "description": "From the host.", "category": "host"}],
        "agents": {"a": {"name": "host-agent", "description": "Host agent."}},
    }
    bridge = hosting(host)
    assert filled.call("list_skills", {}, bridge=bridge)["data"]["categories"] == [
        {"category": "host", "skills": [{"name": "host-skill", "description": "From the host."}]}
    ]
    assert filled.call("list_agents", {}, bridge=bridge)["data"]["count"] == 1
    assert enum_of(filled.registry, filled.ctx(bridge=bridge), "invoke_skill", "skill") == ["host-skill"]


def test_a_host_catalogue_may_be_a_catalog_object_or_callables(filled):
    cat = Catalog(skills={"s": Skill("s", "A skill.")})
    assert filled.call("list_skills", {}, bridge=hosting(cat))["data"]["count"] == 1

    class Host:
        def skills(self):
            return [Skill("t", "T.")]

        agents = None

    assert filled.call("describe_skill", {"name": "t"}, bridge=hosting(Host()))["status"] == "ok"


def test_invalid_host_records_are_skipped_not_fatal(filled):
    from reyn_tools_catalog import coerce_host_catalog

    host = {
        "skills": [
            {"name": "ok", "description": "Fine."},
            {"name": "../bad", "description": "x"},
            42,
            {"name": "s2", "description": "d", "input_schema": {"type": "string"}},
        ]
    }
    cat = coerce_host_catalog(host)
    assert list(cat.skills) == ["ok"]
    assert [d.code for d in cat.diagnostics] == ["RK008", "RK008", "RK008"]
    assert filled.call("list_skills", {}, bridge=hosting(host))["data"]["count"] == 1


def test_a_broken_host_catalogue_leaves_rendering_working(filled):
    class Broken:
        @property
        def skills(self):
            raise RuntimeError("catalogue service down")

    tools = render_router(filled.registry, filled.ctx(bridge=hosting(Broken())))
    assert "invoke_skill" in [t["function"]["name"] for t in tools]
    env = filled.call("list_skills", {}, bridge=hosting(Broken()))
    assert env["error"]["kind"] == "execution_error" and "catalogue service down" in env["error"]["message"]
