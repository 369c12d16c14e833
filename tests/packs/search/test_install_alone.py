"""The search pack installs alone from its wheel into a fresh venv, without the semantic extra: its
plain path needs nothing beyond reyn-core and pydantic; enabled, ``reyn tools search`` calls its tool;
``semantic = true`` without the extra is ``RQ001`` at load and a clear refusal per search."""

from __future__ import annotations

import json

# the pack the shared `pack` fixture (tests/packs/conftest.py) installs
PACK = "search"

PROFILE = '[plugins]\nenable = ["search"]\n'


def test_only_core_and_the_search_pack_are_installed_and_no_model(pack):
    assert pack.reyn_distributions() == ["reyn-core", "reyn-tools-search"]
    proc = pack.venv.run("python", "-c", "import wordllama")
    assert proc.returncode != 0 and "ModuleNotFoundError" in proc.stderr


def test_discovered_but_not_enabled_it_offers_nothing(pack, tmp_path):
    pack.assert_discovered_but_silent(tmp_path, "search")


def test_enabled_find_tools_renders_on_the_router_and_answers_the_cli(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    assert pack.router(tmp_path) == ["find_tools"]
    assert pack.phase(tmp_path, "search", "find_tools") == []
    # a search never returns a search tool: the only tool loaded is this one
    assert pack.json("tools", "search", "search", "for", "tools", "--json", cwd=tmp_path) == []


def test_semantic_without_the_extra_is_rq001_and_each_search_refuses(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE + "[plugins.search.settings]\nsemantic = true\n")
    entry = pack.plugins(tmp_path)["search"]
    assert entry["status"] == "loaded" and [d["code"] for d in entry["diagnostics"]] == ["RQ001"]
    proc = pack.venv.run("reyn", "tools", "search", "read a file", cwd=tmp_path)
    assert proc.returncode != 0 and "reyn-tools-search[semantic]" in proc.stderr
    args = ('{"query": "x"}', "--surface", "router")
    call = pack.venv.run("reyn", "tools", "call", "find_tools", "--args", *args, cwd=tmp_path)
    assert json.loads(call.stdout)["error"]["kind"] == "runtime_missing"


def test_a_settings_typo_fails_the_plugin(pack, tmp_path):
    pack.assert_settings_typo_fails(tmp_path, "search", "semantics = true")
