"""Catalogues built from real folders: good files load, each broken file becomes a diagnostic."""

from __future__ import annotations

import os

import pytest
from reyn_tools_catalog import CODES, CatalogSettings, catalog_diagnostics, load_catalog


def codes(ws):
    return sorted(
        (d.code, d.path.name if d.path else None) for d in catalog_diagnostics(ws.settings, ws.root)
    )


def test_good_skills_and_agents_load_with_every_field(ws):
    ws.skill(
        "summarize",
        """
        ---
        name: summarize
        description: Summarize a text.
        category: writing
        input_schema: {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        ---
        Write three bullets.
        """,
    )
    ws.skill("nested/deeper/translate", "---\nname: translate\ndescription: Translate.\n---\nTranslate it.\n")
    ws.agent(
        "reviewer",
        """
        ---
        name: reviewer
        description: Reviews code.
        tools: [read_file, grep_files]
        model: gpt-4o-mini
        ---
        You review code.
        """,
    )
    cat = load_catalog(ws.settings, ws.root)
    assert list(cat.skills) == ["summarize", "translate"]
    s = cat.skills["summarize"]
    assert (s.category, s.input_schema["required"], s.instructions) == (
        "writing",
        ["text"],
        "Write three bullets.\n",
    )
    assert cat.skills["translate"].category == "general"
    a = cat.agents["reviewer"]
    assert (a.tools, a.model, a.instructions) == (
        ("read_file", "grep_files"),
        "gpt-4o-mini",
        "You review code.\n",
    )
    assert cat.diagnostics == ()


BROKEN_SKILLS = {
    "no front matter": ("# Just markdown\n", "RK001"),
    "unclosed block": ("---\nname: x\ndescription: y\n", "RK001"),
    "nested mapping": ("---\nname: x\ndescription: y\nmetadata:\n  a: b\n---\n", "RK001"),
    "missing name": ("---\ndescription: y\n---\n", "RK002"),
    "bad name": ("---\nname: ../etc\ndescription: y\n---\n", "RK002"),
    "missing description": ("---\nname: x\n---\n", "RK002"),
    "list as category": ("---\nname: x\ndescription: y\ncategory: [a, b]\n---\n", "RK002"),
    "schema not an object": (
        '---\nname: x\ndescription: y\ninput_schema: {"type": "string"}\n---\n',
        "RK007",
    ),
    "schema invalid": (
        '---\nname: x\ndescription: y\ninput_schema: {"type": "object", "required": "q"}\n---\n',
        "RK007",
    ),
    "schema remote ref": (
        '---\nname: x\ndescription: y\ninput_schema: {"$ref": "https://example.com/s.json"}\n---\n',
        "RK007",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN_SKILLS))
def test_a_broken_skill_file_is_a_diagnostic_and_the_rest_loads(ws, skill_text, case):
    text, code = BROKEN_SKILLS[case]
    ws.skill("good", skill_text("good"))
    bad = ws.skill("bad", text)
    cat = load_catalog(ws.settings, ws.root)
    assert list(cat.skills) == ["good"]
    [diag] = cat.diagnostics
    assert (diag.code, diag.path, diag.severity) == (code, bad, "error")
    assert diag.message.startswith("skill file skipped: ")
    assert diag.render().startswith(f"{code} error {bad}")


def test_diagnostics_carry_the_line_of_the_problem(ws):
    path = ws.skill("bad", "---\nname: x\ndescription: y\ntools: [a\n---\n")
    [diag] = catalog_diagnostics(ws.settings, ws.root)
    assert (diag.code, diag.line) == ("RK001", 4)
    assert f"{path}:4: " in diag.render()


def test_a_broken_agent_file_is_a_diagnostic_and_the_rest_loads(ws):
    ws.agent("good", "---\nname: good\ndescription: fine\n---\n")
    ws.agent("bad", "---\nname: bad\ndescription: x\ntools: [1, {]\n---\n")
    ws.agent("worse", "---\nname: worse\n---\n")
    cat = load_catalog(ws.settings, ws.root)
    assert list(cat.agents) == ["good"]
    assert codes(ws) == [("RK001", "bad.md"), ("RK002", "worse.md")]


def test_two_files_claiming_one_name_load_neither(ws, skill_text):
    ws.skill("a", skill_text("same"))
    ws.skill("b", skill_text("same"))
    ws.skill("c", skill_text("other"))
    cat = load_catalog(ws.settings, ws.root)
    assert list(cat.skills) == ["other"]
    [diag] = cat.diagnostics
    assert diag.code == "RK003" and "declared by 2 files" in diag.message and "rename" in diag.hint


def test_an_unknown_key_is_a_warning_and_the_skill_still_loads(ws, skill_text):
    ws.skill("a", skill_text("a", extra="licence: MIT\n"))
    cat = load_catalog(ws.settings, ws.root)
    assert list(cat.skills) == ["a"]
    [diag] = cat.diagnostics
    assert (diag.code, diag.severity, diag.line) == ("RK005", "warning", 4)
    assert "'licence'" in diag.message and "allowed keys" in diag.hint


def test_a_missing_folder_is_a_warning(tmp_path):
    settings = CatalogSettings(skill_dirs=["nope"])
    [diag] = catalog_diagnostics(settings, tmp_path)
    assert (diag.code, diag.severity) == ("RK004", "warning")
    assert "skill_dirs" in diag.hint


def test_an_oversized_file_is_refused(ws, skill_text):
    ws.skill("big", skill_text("big", body="x" * 2000))
    small = CatalogSettings(skill_dirs=["skills"], max_file_bytes=1024)
    [diag] = catalog_diagnostics(small, ws.root)
    assert diag.code == "RK006" and "over the limit of 1,024" in diag.message


def test_a_file_that_is_not_utf8_is_refused(ws):
    path = ws.root / "skills" / "bin" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(b"---\nname: x\ndescription: \xff\xfe\n---\n")
    [diag] = catalog_diagnostics(ws.settings, ws.root)
    assert diag.code == "RK006" and "not UTF-8" in diag.message


def test_hidden_folders_and_other_markdown_files_are_ignored(ws, skill_text):
    ws.skill(".git/x", skill_text("hidden"))
    (ws.root / "skills" / "README.md").write_text("not a skill")
    assert list(load_catalog(ws.settings, ws.root).skills) == []


def test_a_symlinked_folder_is_not_followed(ws, skill_text, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "s").mkdir()
    (outside / "s" / "SKILL.md").write_text(skill_text("escaped"))
    os.symlink(outside, ws.root / "skills" / "link")
    assert list(load_catalog(ws.settings, ws.root).skills) == []


def test_a_symlinked_skill_or_agent_file_is_not_followed(ws, skill_text, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "SKILL.md").write_text(skill_text("escaped", body="TOP-SECRET"))
    (outside / "agent.md").write_text(skill_text("escaped-agent", body="TOP-SECRET"))
    ws.skill("good", skill_text("good"))
    (ws.root / "skills" / "linked").mkdir()
    os.symlink(outside / "SKILL.md", ws.root / "skills" / "linked" / "SKILL.md")
    os.symlink(outside / "agent.md", ws.root / "agents" / "linked.md")
    ws.agent("helper", skill_text("helper"))
    catalog = load_catalog(ws.settings, ws.root)
    assert list(catalog.skills) == ["good"] and list(catalog.agents) == ["helper"]  # the rest still loads
    refused = [d for d in catalog.diagnostics if d.code == "RK006"]
    assert sorted(str(d.path) for d in refused) == sorted(
        [str(ws.root / "skills" / "linked" / "SKILL.md"), str(ws.root / "agents" / "linked.md")]
    )
    assert all("symbolic link" in d.message and d.severity == "error" for d in refused)
    assert "TOP-SECRET" not in repr(catalog)
    assert (outside / "SKILL.md").read_text() == skill_text("escaped", body="TOP-SECRET")


def test_a_changed_file_is_reread(ws, skill_text):
    path = ws.skill("a", skill_text("first"))
    assert list(load_catalog(ws.settings, ws.root).skills) == ["first"]
    path.write_text(skill_text("second", description="now longer than before"))
    assert list(load_catalog(ws.settings, ws.root).skills) == ["second"]
    path.unlink()
    assert list(load_catalog(ws.settings, ws.root).skills) == []


def test_broken_files_reach_the_load_report_through_the_diagnostics_hook(ws, monkeypatch, tmp_path):
    from reyn_core.host import Profile, load

    ws.skill("bad", "no front matter\n")
    monkeypatch.chdir(ws.root)
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    profile = Profile.from_toml_text(
        f"""
        [plugins]
        enable = ["catalog"]
        [plugins.catalog.settings]
        skill_dirs = [{str(ws.root / "skills")!r}]
        """.replace("\n        ", "\n")
    )
    result = load(profile)
    [info] = [p for p in result.report.plugins if p.plugin_id == "catalog"]
    assert info.status == "loaded"  # a broken skill file never stops the pack
    rk = [d for d in result.report.diagnostics if d.code == "RK001"]
    assert rk and rk[0].plugin == "catalog" and "bad" in rk[0].message
    assert "list_skills" in result.registry


def test_catalog_diagnostics_accepts_a_raw_settings_table(tmp_path):
    [diag] = catalog_diagnostics({"agent_dirs": ["missing"]}, tmp_path)
    assert diag.as_dict() == {
        "code": "RK004",
        "severity": "warning",
        "message": diag.message,
        "hint": diag.hint,
        "plugin": "catalog",
        "tool": None,
        "path": str(tmp_path / "missing"),
        "line": 0,
    }


def test_every_code_has_a_severity_and_title():
    assert all(sev in ("error", "warning") and title for sev, title in CODES.values())


def _clock_ahead(monkeypatch):
    """The catalogue's clock ten seconds ahead: every file is past the racy window, without a sleep."""
    import time as real_time

    import reyn_tools_catalog.catalog as catalog_module

    class Later:
        @staticmethod
        def time_ns() -> int:
            return real_time.time_ns() + 10_000_000_000

    monkeypatch.setattr(catalog_module, "time", Later)


@pytest.fixture
def later(monkeypatch):
    _clock_ahead(monkeypatch)


def _rewrite_same_size(path, text):
    """Replace the bytes (same length) and put the old mtime back; returns once the kernel's ctime
    moved (two changes can fall in one clock tick: the racy window covers that case in real use)."""
    before = path.stat()
    while True:
        path.write_text(text)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = path.stat()
        if after.st_ctime_ns != before.st_ctime_ns:
            assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
            return


def test_bytes_replaced_with_size_and_mtime_kept_are_reread(ws, skill_text, later):
    """The catalogue kept between calls is keyed by the kernel's ctime too, which ``os.utime``
    cannot set: a file rewritten with the same size and its old mtime put back is read again.
    Control: the untouched folder answers the kept catalogue (the same object)."""
    path = ws.skill("alpha", skill_text("alpha", description="first words"))
    first = load_catalog(ws.settings, ws.root)
    assert load_catalog(ws.settings, ws.root) is first  # control: kept while nothing changed
    _rewrite_same_size(path, skill_text("alpha", description="other words"))
    again = load_catalog(ws.settings, ws.root)
    assert again is not first and again.skills["alpha"].description == "other words"


def test_a_file_changed_in_the_racy_window_is_never_kept(ws, skill_text, monkeypatch):
    """A file changed less than two seconds ago may change again within one timestamp tick: its
    catalogue is read on every call until it is older. Control: later, it is kept."""
    ws.skill("beta", skill_text("beta"))
    assert load_catalog(ws.settings, ws.root) is not load_catalog(ws.settings, ws.root)
    _clock_ahead(monkeypatch)
    first = load_catalog(ws.settings, ws.root)
    assert load_catalog(ws.settings, ws.root) is first
