"""``reyn-demo``: the main job, end to end, offline — every pack, the example plugin, both surfaces."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from string import Template

import pytest
from reyn_demo.runner import HERE, PLUGINS, prepare_workspace, run_demo

pytestmark = pytest.mark.filterwarnings("ignore:Item .* is using the `ReadOnly` qualifier:UserWarning")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path]:
    """One strict demo run, in process, in a kept work folder."""
    workdir = tmp_path_factory.mktemp("demo")
    out = io.StringIO()
    code = run_demo(out=out, workdir=workdir, strict=True)
    return code, out.getvalue(), workdir


def test_demo_exits_zero_in_strict_mode(demo_run):
    code, text, _ = demo_run
    assert code == 0, text
    assert text.rstrip().endswith("Done.")


def test_provenance_table_lists_every_pack_and_the_example_plugin_as_loaded(demo_run):
    _, text, _ = demo_run
    for plugin in PLUGINS:
        row = re.search(
            rf"^{plugin}\s+loaded\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([0-9a-f]{{12}})\s+(\d+)$",
            text,
            re.MULTILINE,
        )
        assert row, f"no loaded row for {plugin}:\n{text}"


def test_router_conversation_uses_real_tools_and_reports_refusals(demo_run):
    _, text, _ = demo_run
    assert "→ read_file(" in text and "→ call_mcp_tool(" in text and "→ web_fetch(" in text
    assert "REYN-7 is in review (owner ana), from the tracker over MCP." in text  # the stdio MCP server
    assert "The docs server announces Reyn 0.1.0." in text  # web_fetch of the local page
    assert "The download is 50.33 MB." in text  # the example plugin's convert_units
    shell_line = next(line for line in text.splitlines() if line.startswith("  ← shell: error gate_refused"))
    assert shell_line.count("(role gate)") == 1  # phase-only tool refused on the router; the layer said once
    assert "link-local" in text  # SSRF guard refused the metadata address
    assert "← remember_shared: ok:" in text
    assert "Reyn's own reyn_core/__init__.py" in text and "matched its recorded sha256" in text  # source pack


def test_phase_runs_ops_suspends_for_the_user_and_finishes(demo_run):
    _, text, workdir = demo_run
    assert "'web_fetch' is not an allowed op" in text  # contract violation sent back once
    assert "⏸ waiting for the user: Plain list or table for the summary?" in text
    assert "← shell: ok:" in text or "op ← shell: ok:" in text
    assert "■ phase ended: finish" in text
    summary = (workdir / "out" / "summary.md").read_text()
    assert "- Review REYN-7 (LLM surfaces and the demo)" in summary
    assert "Remembered: release-reyn-7" in summary  # the router's memory write, read back by the phase


def test_demo_keeps_going_when_a_plugin_fails_and_says_so(tmp_path):
    template = (HERE / "profile.toml").read_text()
    broken = template.replace("[plugins.shell.settings]\n", "[plugins.shell.settings]\nno_such_setting = 1\n")
    (tmp_path / "profile.toml").write_text(broken)
    out = io.StringIO()
    code = run_demo(out=out, workdir=tmp_path / "work", profile_template=tmp_path / "profile.toml")
    text = out.getvalue()
    assert code == 0, text
    assert re.search(r"^shell\s+failed", text, re.MULTILINE)
    assert "! shell: failed" in text and "no_such_setting" in text
    assert "■ phase ended: finish" in text  # everything else still ran
    out = io.StringIO()
    strict = run_demo(
        out=out, workdir=tmp_path / "work2", profile_template=tmp_path / "profile.toml", strict=True
    )
    assert strict == 1 and "demo problem: not loaded: shell" in out.getvalue()


def test_the_reyn_demo_command_runs_offline_and_cleans_up(tmp_path, reyn_cli):
    env: dict[str, str | None] = {k: None for k in os.environ if k.endswith("_API_KEY")}
    env["TMPDIR"] = str(tmp_path)
    demo = (str(Path(sys.executable).with_name("reyn-demo")),)
    proc = reyn_cli(cwd=tmp_path, env=env, timeout=600, command=demo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Done." in proc.stdout and "Traceback" not in proc.stderr
    assert not list(tmp_path.glob("reyn-demo-*"))  # the temporary workspace is removed


def test_phase_transcript_labels_replies_and_the_summary_reports_the_contract_violation(demo_run):
    _, text, _ = demo_run
    replies = [line for line in text.splitlines() if line.startswith("  model reply")]
    assert replies[0].startswith("  model reply> ")  # rejected: no label, the violation line follows
    assert all(r.startswith("  model reply [ops run; the phase continues]> ") for r in replies[1:-1])
    assert replies[-1].startswith("  model reply [the phase ends]> ")
    happened = text.split("What happened:", 1)[1]
    assert "broke its output contract and was sent back" in happened
    assert "/control_ir/0/kind: 'web_fetch' is not an allowed op" in happened


def test_artifact_line_count_is_a_number(demo_run):
    _, text, workdir = demo_run
    artifact = json.loads(text.split("  artifact: ", 1)[1].splitlines()[0])
    lines = (workdir / "out" / "summary.md").read_text().count("\n")
    assert artifact["data"]["line_count"] == lines and isinstance(artifact["data"]["line_count"], int)


def test_profile_template_placeholders_are_exactly_those_the_runner_fills(tmp_path):
    template = Template((HERE / "profile.toml").read_text())
    used = {
        m.group("named") or m.group("braced")
        for m in template.pattern.finditer(template.template)
        if m.group("named") or m.group("braced")
    }
    assert used == {"workspace", "memory_db", "skills", "agents", "python", "mcp_server"}
    profile = prepare_workspace(tmp_path)
    assert all("$" not in line for line in profile.read_text().splitlines() if not line.startswith("#"))


def test_the_core_ships_no_demo_and_names_no_pack():
    """The demo is its own distribution; the core package holds no demo file and no pack's name.
    ``moved.py`` is the one exception: its table of moved names exists to tell an old import which
    distribution to install now (issue 24: a clear ImportError naming the new distribution)."""
    import reyn_core

    core = Path(reyn_core.__file__).parent
    assert not (core / "surfaces" / "demo").exists()
    pack_names = ("reyn_tools_", "reyn-tools-", "reyn_demo", "reyn_example")
    offenders = [
        f"{path.relative_to(core)}: {name}"
        for path in core.rglob("*.py")
        if path != core / "moved.py"
        for name in pack_names
        if name in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


def test_one_definition_is_shown_for_router_phase_and_mcp(demo_run):
    _, text, workdir = demo_run
    step = text.split("one definition, three views", 1)[1].split("\n[", 1)[0]
    assert "convert_units: one ToolDefinition (plugin 'example'" in step
    assert "router (render_router, target openai)" in step and "… for gemini" in step
    assert '{"kind": "convert_units", …}' in step  # the phase op
    # a real `reyn mcp serve` answered tools/list over stdio: its entry, typed result and annotations
    assert "MCP (tools/list from `reyn mcp serve` over stdio" in step
    assert 'title                  "Convert units"' in step
    assert "inputSchema" in step and "outputSchema" in step and '"readOnlyHint":true' in step
    assert "The router's parameters and MCP's inputSchema are the same schema." in step
    assert "serving" in (workdir / ".reyn" / "mcp-serve.log").read_text()  # its log, not the transcript


def test_the_first_make_says_it_is_installing_and_how_long_it_takes():
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        ["make", "-n", "-B", "venv"], cwd=root, capture_output=True, text=True, timeout=60, check=True
    )
    assert "installing reyn-core, the sandbox, isolation, the loops" in proc.stdout
    assert "every pack, the example plugin and the demo" in proc.stdout
    assert "usually 3-5 minutes" in proc.stdout
    assert "> .venv/install.log 2>&1 || { cat .venv/install.log" in proc.stdout  # quiet unless it fails
