"""The ``reyn`` command, run as a real console script in a fresh venv with real plugin wheels.

Each command is checked in human and ``--json`` form, with its exit code; errors are one line on
stderr and never a traceback.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from plugin_distkit import PluginDist, tool_plugin

GOOD = tool_plugin(
    ["good_echo"],
    cluster="good",
    also=["good_phase_note"],
    extra='''
    def _greet(argv, loaded):
        print("hello from good:", " ".join(argv))
        return 0

    def _fail(argv, loaded):
        raise RuntimeError("the command broke")

    def _where(argv, loaded):
        print("profile:", loaded.profile.source, "tools:", ",".join(t.name for t in loaded.registry.tools()))
        return 0

    def _old_style(argv):
        return 0

    @hookimpl
    def reyn_cli_commands():
        return {
            "greet": _greet, "breaks": _fail, "tools": _greet, "where": _where, "old": _old_style,
            "undeclared": _greet,
        }

    @tool(cluster="good", purity="side_effect", gates=ToolGates(router="deny"))
    def good_phase_note(note: str) -> str:
        """Record a note (phase only)."""
        return note
''',
)

LOOSE = tool_plugin(
    [],
    also=["LOOSE"],
    extra="""
    from reyn_core import ToolDefinition

    LOOSE = ToolDefinition(
        name="loose_map", description="Accept any string map (cannot be OpenAI strict).",
        parameters={"type": "object", "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "string"}}}},
        handler=lambda m: m)
""",
)

DISTS = [
    PluginDist(
        "rtp-cli-good",
        "good",
        GOOD,
        commands=("greet", "breaks", "tools", "where", "old"),
    ),
    PluginDist("rtp-cli-bad", "bad", "import rtp_cli_nothing_here\n", commands=("boom",)),
    PluginDist("rtp-cli-idle", "idle", tool_plugin(["idle_tool"])),
    PluginDist("rtp-cli-loose", "loose", LOOSE),
]


@pytest.fixture
def good_profile(cli):
    return cli.profile('[plugins]\nenable = ["good"]\n')


def assert_one_line_error(proc: Any, *fragments: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reyn: error:"), proc.stderr
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in lines[0]


# --------------------------------------------------------------------------- plugins


def test_plugins_list_shows_discovered_and_enabled(cli, good_profile):
    proc = cli("plugins", "list")
    assert proc.returncode == 0, proc.stderr
    header, *rows = proc.stdout.strip().splitlines()
    assert header.split() == [
        "ID",
        "STATUS",
        "ENABLED",
        "DISTRIBUTION",
        "VERSION",
        "SOURCE",
        "DIGEST",
        "TOOLS",
    ]
    good = next(r.split() for r in rows if r.startswith("good "))
    assert good[:6] == ["good", "loaded", "yes", "rtp-cli-good", "1.0.0", "wheel"] and good[7] == "2"
    assert len(good[6]) == 12
    idle = next(r.split() for r in rows if r.startswith("idle "))
    assert idle[:3] == ["idle", "discovered", "no"]


def test_plugins_list_json(cli, good_profile):
    data = cli.json("plugins", "list")
    assert data["profile"].endswith("reyn.toml")
    by_id = {p["id"]: p for p in data["plugins"]}
    assert by_id["good"]["status"] == "loaded" and by_id["good"]["tools"] == ["good_echo", "good_phase_note"]
    assert by_id["good"]["origin"]["tree_digest"].startswith("sha256:")
    assert by_id["idle"]["status"] == "discovered" and by_id["idle"]["tools"] == []
    assert by_id["idle"]["origin"]["tree_digest"].startswith("sha256:")  # digested, not imported


def test_digest_of_a_discovered_plugin_can_be_pinned_before_enabling_it(cli):
    cli.profile("[plugins]\nenable = []\n")
    idle = next(p for p in cli.json("plugins", "list")["plugins"] if p["id"] == "idle")
    cli.profile(f'[plugins]\nenable = ["idle"]\n[plugins.idle]\ndigest = "{idle["origin"]["tree_digest"]}"\n')
    shown = cli.json("plugins", "show", "idle")
    assert shown["status"] == "loaded" and shown["diagnostics"] == []


def test_plugins_show_prints_origin_tools_commands(cli, good_profile):
    proc = cli("plugins", "show", "good")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "plugin good  (loaded, enabled)" in out and "rtp-cli-good 1.0.0" in out
    assert "rtp_cli_good.plugin" in out and "digest        sha256:" in out and "installed" in out
    assert "good_echo [good, read_only]" in out and "commands: breaks, greet, where" in out


def test_plugins_show_json_has_tool_hashes_and_diagnostics(cli):
    cli.profile('[plugins]\nenable = ["good", "bad"]\n')
    good = cli.json("plugins", "show", "good")
    assert [t["name"] for t in good["tools"]] == ["good_echo", "good_phase_note"]
    assert good["tools"][0]["definition_sha256"].startswith("sha256:")
    assert any(d["code"] == "RI007" for d in cli.json("doctor", code=1)["diagnostics"])  # `tools` shadows
    bad = cli.json("plugins", "show", "bad")
    assert bad["status"] == "failed" and bad["diagnostics"][0]["code"] == "RI001"


def test_plugins_show_unknown_id_is_a_one_line_error(cli, good_profile):
    assert_one_line_error(cli("plugins", "show", "nosuch"), "'nosuch'", "good")


def test_plugins_lock_then_audit_is_clean(cli, good_profile):
    proc = cli("plugins", "lock")
    assert proc.returncode == 0 and "wrote" in proc.stdout and "1 plugin(s), 2 tool(s)" in proc.stdout
    assert (cli.work / "reyn.lock").is_file()
    audit = cli("plugins", "audit")
    assert audit.returncode == 0 and audit.stdout.startswith("ok:"), audit.stdout + audit.stderr
    data = cli.json("plugins", "audit")
    assert {k: data[k] for k in ("lock", "ok", "drift")} == {
        "lock": str(cli.work / "reyn.lock"),
        "ok": True,
        "drift": [],
    }
    assert all(e["kind"] == "bytecode" for e in data["never_executed"])  # pip's compiled .pyc, if any


def test_audit_reports_a_newly_enabled_plugin_as_drift(cli):
    cli.profile('[plugins]\nenable = ["good"]\n[lock]\npath = "drift.lock"\n')
    assert cli("plugins", "lock").returncode == 0
    cli.profile('[plugins]\nenable = ["good", "idle"]\n[lock]\npath = "drift.lock"\n')
    proc = cli("plugins", "audit")
    assert proc.returncode == 1 and "idle: plugin_added" in proc.stdout


def test_audit_without_a_lock_file_exits_2(cli):
    cli.profile('[plugins]\nenable = ["good"]\n[lock]\npath = "absent.lock"\n')
    proc = cli("plugins", "audit")
    assert proc.returncode == 2 and "no lock file" in proc.stderr


def test_lock_refuses_to_write_when_an_enabled_plugin_fails(cli):
    cli.profile('[plugins]\nenable = ["good", "bad"]\n[lock]\npath = "never.lock"\n')
    proc = cli("plugins", "lock")
    assert proc.returncode == 1 and "'bad' failed to load" in proc.stderr
    assert not (cli.work / "never.lock").exists()


def test_plugins_new_creates_a_project(cli, tmp_path):
    proc = cli("plugins", "new", "my_tools", "--dest", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "my_tools" / "pyproject.toml").is_file()
    again = cli("plugins", "new", "my_tools", "--dest", str(tmp_path))
    assert again.returncode == 2 and "Traceback" not in again.stderr


# --------------------------------------------------------------------------- tools


def test_tools_list_shows_visibility_per_surface(cli, good_profile):
    proc = cli("tools", "list")
    assert proc.returncode == 0
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[1:]}
    assert "good_echo" in rows and "no (role)" in rows["good_phase_note"]
    data = cli.json("tools", "list", "--surface", "router")
    assert [t["name"] for t in data] == ["good_echo"]
    assert data[0]["router"] == {"visible": True, "layer": None, "rule": None, "reason": None}


def test_tools_list_phase_uses_allowed_ops(cli, good_profile):
    names = [t["name"] for t in cli.json("tools", "list", "--surface", "phase", "--allowed-ops", "good")]
    assert names == ["good_echo", "good_phase_note"]
    assert cli.json("tools", "list", "--surface", "phase") == []  # default ops: file, ask_user


def test_tools_render_router_prints_the_openai_tools_array(cli, good_profile):
    proc = cli("tools", "render", "--surface", "router")
    assert proc.returncode == 0
    tools = json.loads(proc.stdout)
    assert [t["function"]["name"] for t in tools] == ["good_echo"]
    assert tools[0]["type"] == "function" and tools[0]["function"]["parameters"]["type"] == "object"
    assert cli("tools", "render", "--surface", "router").stdout == proc.stdout  # deterministic bytes


def test_tools_render_phase_human_and_json(cli, good_profile):
    proc = cli("tools", "render", "--surface", "phase", "--allowed-ops", "good_phase_note")
    assert proc.returncode == 0 and "- good_phase_note(note: string)" in proc.stdout
    data = cli.json("tools", "render", "--surface", "phase", "--allowed-ops", "good")
    assert [op["kind"] for op in data["ops"]] == ["good_echo", "good_phase_note"]
    assert data["output_schema"]["title"] == "PhaseOutput" and data["allowed_ops"] == ["good"]


def test_tools_render_strict_exits_1_naming_the_tool_that_cannot_be_strict(cli):
    cli.profile('[plugins]\nenable = ["good", "loose"]\n')
    assert cli("tools", "render", "--surface", "router", "--strict").returncode == 1
    proc = cli("tools", "render", "--surface", "router", "--strict")
    assert "loose_map" in proc.stderr and "Traceback" not in proc.stderr
    cli.profile('[plugins]\nenable = ["good"]\n')
    strict = json.loads(cli("tools", "render", "--surface", "router", "--strict").stdout)
    assert strict[0]["function"]["strict"] is True


def test_tools_call_prints_the_envelope(cli, good_profile):
    assert cli.json("tools", "call", "good_echo", "--args", '{"text": "hi"}') == {
        "status": "ok",
        "data": "hi",
    }


def test_tools_call_with_invalid_arguments_exits_1(cli, good_profile):
    data = cli.json("tools", "call", "good_echo", "--args", '{"text": 5}', code=1)
    assert data["error"]["kind"] == "invalid_arguments" and data["error"]["errors"][0]["path"] == "/text"


def test_tools_call_with_malformed_json_exits_1(cli, good_profile):
    data = cli.json("tools", "call", "good_echo", "--args", "{not json", code=1)
    assert data["error"]["kind"] == "invalid_arguments"


def test_tools_call_unknown_tool_exits_1(cli, good_profile):
    assert cli.json("tools", "call", "nosuch", code=1)["error"]["kind"] == "not_found"


def test_tools_call_respects_the_surface_gate(cli, good_profile):
    refused = cli.json("tools", "call", "good_phase_note", "--args", '{"note": "n"}', code=1)
    assert refused["error"]["kind"] == "gate_refused" and refused["error"]["layer"] == "role"
    ok = cli.json(
        "tools",
        "call",
        "good_phase_note",
        "--args",
        '{"note": "n"}',
        "--surface",
        "phase",
        "--allowed-ops",
        "good",
    )
    assert ok == {"status": "ok", "data": "n"}


def test_tools_render_checks_every_schema_and_imports_no_llm_library(cli, good_profile):
    cli("tools", "render", "--surface", "router")  # a second run: nothing stored answers for a check
    env = {"REYN_CACHE_DIR": str(cli.cache), "XDG_CONFIG_HOME": str(cli.work / "xdg")}
    proc = cli.venv.run(
        "python",
        "-X",
        "importtime",
        "-m",
        "reyn_core",
        "tools",
        "render",
        "--surface",
        "router",
        cwd=cli.work,
        env=env,
    )
    assert proc.returncode == 0
    imported = {line.rpartition("|")[2].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "jsonschema_rs" in imported  # every load checks every schema with the one validator library
    assert "litellm" not in proc.stderr and not {m for m in imported if m.split(".")[0] == "jsonschema"}


# --------------------------------------------------------------------------- doctor and errors


def test_doctor_with_only_warnings_exits_0(cli, good_profile):
    proc = cli("doctor")
    assert proc.returncode == 0, proc.stdout
    assert "RI007 warning [good]" in proc.stdout and "'tools' would shadow" in proc.stdout
    data = cli.json("doctor")
    assert data["ok"] is True and data["plugins"] == {"good": "loaded"} and data["tools"] == 2


def test_doctor_reports_every_error_and_exits_1(cli):
    cli.profile('[plugins]\nenable = ["good", "bad", "ghost"]\n')
    proc = cli("doctor")
    assert proc.returncode == 1
    assert (
        "RI001 error [bad]" in proc.stdout and "RD001 error [ghost]" in proc.stdout and "fix:" in proc.stdout
    )
    data = cli.json("doctor", code=1)
    assert data["ok"] is False and {d["code"] for d in data["diagnostics"]} >= {"RI001", "RD001"}


def test_profile_typo_is_one_line_naming_key_and_file(cli):
    cli.profile('[plugins]\nenabel = ["good"]\n')
    for command in (
        ["plugins", "list"],
        ["tools", "list"],
        ["doctor"],
        ["tools", "render", "--surface", "router"],
    ):
        assert_one_line_error(cli(*command), "plugins.enabel", "reyn.toml")


def test_common_options_work_before_and_after_the_subcommand(cli):
    path = cli.profile(
        '[plugins]\nenable = []\n[profiles.withgood.plugins]\nenable = ["good"]\n', "alt2.toml"
    )
    for argv in (["--json", "plugins", "list"], ["plugins", "--json", "list"]):
        proc = cli(*argv, "--profile-file", str(path), "--profile", "withgood")
        assert proc.returncode == 0, proc.stderr
        assert {p["id"]: p["status"] for p in json.loads(proc.stdout)["plugins"]}["good"] == "loaded"
    proc = cli("plugins", "--profile", "withgood", "list", "--json", "--profile-file", str(path))
    assert {p["id"]: p["status"] for p in json.loads(proc.stdout)["plugins"]}["good"] == "loaded"


def test_profile_file_and_named_profile_options(cli):
    path = cli.profile('[plugins]\nenable = []\n[profiles.withgood.plugins]\nenable = ["good"]\n', "alt.toml")
    cli.profile('[plugins]\nenable = ["bad"]\n')
    data = cli.json("plugins", "list", "--profile-file", str(path), "--profile", "withgood")
    assert {p["id"]: p["status"] for p in data["plugins"]}["good"] == "loaded"
    assert_one_line_error(cli("doctor", "--profile-file", str(path), "--profile", "nope"), "'nope'")
    assert_one_line_error(cli("doctor", "--profile-file", "missing.toml"), "does not exist")


# --------------------------------------------------------------------------- plugin commands


def test_enabled_plugin_contributes_a_command(cli, good_profile):
    proc = cli("greet", "Ann", "Bob")
    assert proc.returncode == 0 and proc.stdout.strip() == "hello from good: Ann Bob"


def test_plugin_command_uses_a_profile_option_given_after_it(cli):
    path = cli.profile('[plugins]\nenable = ["good"]\n', "cmd.toml")
    cli.profile("[plugins]\nenable = []\n")
    # Wherever the option stood, the command gets the same words: its own, then reyn's in one form.
    for argv in (("greet", "--profile-file", str(path), "x"), ("--profile-file", str(path), "greet", "x")):
        proc = cli(*argv)
        assert proc.returncode == 0 and proc.stdout.strip() == f"hello from good: x --profile-file={path}"


def test_plugin_command_is_handed_the_load_of_the_chosen_profile(cli):
    path = cli.profile('[plugins]\nenable = ["good"]\n', "cmd.toml")
    cli.profile("[plugins]\nenable = []\n")
    for argv in (("--profile-file", str(path), "where"), ("where", "--profile-file", str(path))):
        proc = cli(*argv)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == f"profile: {path.resolve()} tools: good_echo,good_phase_note"


def test_a_command_function_without_the_loaded_argument_is_RI007_and_not_offered(cli, good_profile):
    proc = cli("old")
    assert proc.returncode == 2 and "command 'old' is not available" in proc.stderr
    assert "RI007" in proc.stderr and "must take (argv, loaded)" in proc.stderr


def test_plugin_command_that_raises_is_one_line_and_exit_1(cli, good_profile):
    proc = cli("breaks")
    assert proc.returncode == 1 and "the command broke" in proc.stderr and "Traceback" not in proc.stderr


def test_plugin_cannot_shadow_a_builtin_command(cli, good_profile):
    proc = cli("tools", "list", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)  # the built-in ran, not the plugin's


def test_command_of_a_plugin_that_is_not_enabled_says_how_to_enable_it(cli):
    cli.profile("[plugins]\nenable = []\n")
    proc = cli("greet", "--help")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "command 'greet' comes from plugin 'good' (rtp-cli-good 1.0.0)" in proc.stderr
    assert "`reyn plugins enable good`" in proc.stderr and "Traceback" not in proc.stderr


def test_a_command_no_installed_distribution_declares_is_unknown(cli, good_profile):
    proc = cli("nosuchcommand")
    assert proc.returncode == 2 and "unknown command 'nosuchcommand'" in proc.stderr
    assert "from installed plugins: boom, breaks, greet, old, where" in proc.stderr


def test_a_command_the_hook_returns_but_the_metadata_does_not_declare_is_RI007(cli, good_profile):
    proc = cli("plugins", "show", "good")
    assert proc.returncode == 0, proc.stderr
    assert (
        "RI007" in proc.stdout
        and "'undeclared' is not declared in the metadata of rtp-cli-good" in proc.stdout
    )
    assert "undeclared" not in proc.stdout.split("commands:")[1].splitlines()[0]


@pytest.mark.parametrize("words", [(), ("tools",), ("tools", "list")])
def test_reyn_help_is_the_help_of_the_command_it_names(cli, words):
    # `help` is a name no plugin may take; it shows what `reyn WORDS --help` shows.
    cli.profile("[plugins]\nenable = []\n")
    asked, control = cli("help", *words), cli(*words, "--help")
    assert asked.returncode == control.returncode == 0, asked.stderr
    assert asked.stdout == control.stdout and asked.stdout.startswith("usage: reyn")


def test_reyn_help_of_an_unknown_command_says_it_is_unknown(cli):
    cli.profile("[plugins]\nenable = []\n")
    proc = cli("help", "nosuchcommand")
    assert proc.returncode == 2 and "unknown command 'nosuchcommand'" in proc.stderr


def test_help_lists_installed_plugins_commands_with_the_step_that_enables_them(cli):
    cli.profile("[plugins]\nenable = []\n")
    proc = cli("--help")
    assert proc.returncode == 0, proc.stderr
    help_text = proc.stdout
    assert "commands from installed plugins" in help_text
    greet = next(line for line in help_text.splitlines() if line.strip().startswith("greet "))
    assert "plugin 'good' (rtp-cli-good 1.0.0), not enabled: `reyn plugins enable good`" in greet
    assert not any(
        line.strip().startswith(("tools  plugin", "undeclared")) for line in help_text.splitlines()
    )
    good = cli.profile('[plugins]\nenable = ["good"]\n', "good.toml")
    greet_enabled = next(
        line
        for line in cli("--profile-file", str(good), "--help").stdout.splitlines()
        if line.strip().startswith("greet ")
    )
    assert greet_enabled.rstrip().endswith("enabled") and "not enabled" not in greet_enabled
