"""The load pipeline on real plugin distributions installed into one fresh venv.

Every broken plugin gets its own diagnostic code, and in the same load the good plugins still
load, register their tools and answer calls.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from plugin_distkit import PROBE, PluginDist, tool_plugin, venv_with_plugins

GOOD_ALPHA = tool_plugin(
    ["alpha_echo"],
    cluster="alpha",
    extra='''
    from pydantic import BaseModel, ConfigDict

    class Settings(BaseModel):
        model_config = ConfigDict(extra="forbid")
        greeting: str = "hello"

    @hookimpl
    def reyn_settings_model():
        return Settings

    @tool(cluster="alpha", purity="read_only")
    def alpha_greet(name: str, ctx) -> str:
        """Greet someone with the configured greeting."""
        return f"{ctx.settings.greeting}, {name}"
''',
    also=["alpha_greet"],
)

GOOD_BETA = tool_plugin(
    ["beta_echo"],
    cluster="beta",
    extra="""
    @hookimpl
    def reyn_before_tool_call(call):
        if "forbidden" in str(call.arguments.get("text", "")):
            return "beta's policy refuses the word 'forbidden'"
        return None
""",
)


def hand_built(
    plugin_id: str, name: str, description: str, properties: dict[str, Any], handler: str
) -> PluginDist:
    """Plugin ``plugin_id`` registering its echo tool ``<plugin_id>_ok`` and then a ``ToolDefinition``
    it builds by hand (``handler`` is source: a lambda, or a quoted ``"module:attr"``)."""
    parameters = {"type": "object", "properties": properties}
    extra = (
        "from reyn_core import ToolDefinition\n\n"
        f"BUILT = ToolDefinition(name={name!r}, description={description!r}, parameters={parameters!r},\n"
        f"                       handler={handler})\n"
    )
    return PluginDist(
        f"rtp-{plugin_id}", plugin_id, tool_plugin([f"{plugin_id}_ok"], also=["BUILT"], extra=extra)
    )


# plugin id, then the name, description, properties and handler of the tool it builds by hand
HAND_BUILT = [
    ("badname", "bad name!", "Spaces are not allowed.", {}, "lambda: 1"),
    (
        "badschema",
        "badschema_tool",
        "Its schema is not JSON Schema.",
        {"x": {"type": "nonsense"}},
        "lambda x: x",
    ),
    ("lazy", "lazy_missing", "Its handler module is not installed.", {}, '"rtp_lazy.not_installed:run"'),
]

DISTS = [
    PluginDist("rtp-alpha", "alpha", GOOD_ALPHA),
    PluginDist("rtp-beta", "beta", GOOD_BETA),
    PluginDist(
        "rtp-dormant",
        "dormant",
        "raise RuntimeError('dormant must never be imported')\n",
    ),
    PluginDist("rtp-broken", "broken", "import rtp_no_such_module_anywhere\nREYN_API = 1\n"),
    PluginDist(
        "rtp-future",
        "future",
        tool_plugin(["future_tool"]).replace("REYN_API = 1", "REYN_API = 2"),
    ),
    PluginDist("rtp-noapi", "noapi", tool_plugin(["noapi_tool"]).replace("REYN_API = 1", "")),
    PluginDist(
        "rtp-raiser",
        "raiser",
        """
        from reyn_core import hookimpl
        REYN_API = 1

        @hookimpl
        def reyn_register_tools(register, settings):
            raise ValueError("raiser cannot find its data file")
        """,
    ),
    PluginDist("rtp-junk", "junk", tool_plugin(["junk_ok"], also=["42"])),
    PluginDist(
        "rtp-strict",
        "strict",
        tool_plugin(
            ["strict_tool"],
            extra="""
        from pydantic import BaseModel, ConfigDict

        class Settings(BaseModel):
            model_config = ConfigDict(extra="forbid")
            limit: int = 3

        @hookimpl
        def reyn_settings_model():
            return Settings
        """,
        ),
    ),
    PluginDist("rtp-nosettings", "nosettings", tool_plugin(["nosettings_tool"])),
    *(hand_built(*row) for row in HAND_BUILT),
    PluginDist("rtp-dupa", "dupa", tool_plugin(["shared_tool", "dupa_own", "host_clash"])),
    PluginDist("rtp-dupb", "dupb", tool_plugin(["shared_tool", "dupb_own"])),
    PluginDist("rtp-twin-one", "twin", tool_plugin(["twin_one_tool"])),
    PluginDist("rtp-twin-two", "twin", tool_plugin(["twin_two_tool"])),
    PluginDist(
        "rtp-typo",
        "typohook",
        """
        from reyn_core import hookimpl
        REYN_API = 1

        @hookimpl
        def reyn_register_tool(register, settings):
            pass
        """,
    ),
    PluginDist("rtp-gated", "gated", tool_plugin(["gated_read", "gated_write"])),
    PluginDist("rtp-phaseonly", "phaseonly", tool_plugin(["phaseonly_tool"])),
    PluginDist("rtp-exitter", "exitter", "import sys\nsys.exit(3)\n"),
    PluginDist(
        "rtp-diag",
        "diag",
        tool_plugin(
            ["diag_tool"],
            extra="""
        @hookimpl
        def reyn_diagnostics(settings):
            return [
                {"code": "RZ001", "severity": "warning", "message": "cache folder is missing",
                 "hint": "create it", "tool": "diag_tool", "path": "/srv/cache"},
                {"code": "RS001", "severity": "error", "message": "steals a core code"},
                {"code": "RZ002", "severity": "fatal", "message": "unknown severity"},
                "not a mapping",
            ]
        """,
        ),
    ),
    PluginDist(
        "rtp-diagraise",
        "diagraise",
        tool_plugin(
            ["diagraise_tool"],
            extra="""
        @hookimpl
        def reyn_diagnostics(settings):
            raise OSError("cannot stat the cache folder")
        """,
        ),
    ),
    PluginDist("rtp-hijack", "hijack", tool_plugin(["hijack_tool"], cluster="alpha")),
    PluginDist(
        "rtp-asyncreg",
        "asyncreg",
        """
        from reyn_core import hookimpl
        REYN_API = 1

        @hookimpl
        async def reyn_register_tools(register, settings):
            pass
        """,
    ),
]

BROKEN = [
    "broken",
    "future",
    "noapi",
    "raiser",
    "strict",
    "nosettings",
    "twin",
    "ghost",
    "typohook",
    "exitter",
    "asyncreg",
]
ALL_ENABLED = [
    "alpha",
    "beta",
    "junk",
    "badname",
    "badschema",
    "dupa",
    "dupb",
    "diag",
    "diagraise",
    "lazy",
    "hijack",
    *BROKEN,
]

MAIN_PROFILE = f"""
[plugins]
enable = {json.dumps(ALL_ENABLED)}

[plugins.alpha.settings]
greeting = "ahoy"

[plugins.strict.settings]
limit = "many"

[plugins.nosettings.settings]
anything = 1
"""


@pytest.fixture(scope="module")
def venv(make_module_venv, tmp_path_factory):
    return venv_with_plugins(make_module_venv, "pipeline", tmp_path_factory.mktemp("dists"), DISTS)


@pytest.fixture(scope="module")
def probe_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("probe") / "probe.py"
    path.write_text(PROBE)
    return path


@pytest.fixture(scope="module")
def run_probe(venv, probe_file, tmp_path_factory):
    work = tmp_path_factory.mktemp("work")
    cache = tmp_path_factory.mktemp("cache")

    def run(profile: str, *calls: str) -> dict[str, Any]:
        path = work / "reyn.toml"
        path.write_text(textwrap.dedent(profile))
        proc = venv.run("python", probe_file, path, *calls, cwd=work, env={"REYN_CACHE_DIR": str(cache)})
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    return run


def enabling(plugin_ids: list[str], **tables: str) -> str:
    """The text of a profile enabling ``plugin_ids``, each keyword the body (TOML) of the table
    ``[plugins.<keyword>]``."""
    bodies = "".join(f"[plugins.{plugin_id}]\n{body}\n" for plugin_id, body in tables.items())
    return f"[plugins]\nenable = {json.dumps(plugin_ids)}\n{bodies}"


@pytest.fixture(scope="module")
def main_load(run_probe) -> dict[str, Any]:
    return run_probe(
        MAIN_PROFILE,
        'alpha_greet={"name": "Ann"}',
        'beta_echo={"text": "forbidden"}',
        'beta_echo={"text": "fine"}',
        "lazy_missing={}",
    )


def plugin(result: dict[str, Any], plugin_id: str) -> dict[str, Any]:
    entries = [p for p in result["plugins"] if p["id"] == plugin_id]
    assert entries, f"{plugin_id} not reported"
    return next((p for p in entries if p["enabled"]), entries[0])


def codes(result: dict[str, Any], plugin_id: str) -> list[str]:
    return [d["code"] for d in plugin(result, plugin_id)["diagnostics"]]


def assert_good_plugins_loaded(result: dict[str, Any]) -> None:
    assert plugin(result, "alpha")["status"] == "loaded"
    assert plugin(result, "beta")["status"] == "loaded"
    assert {"alpha_echo", "alpha_greet", "beta_echo"} <= set(result["router"])
    assert codes(result, "alpha") == [] and codes(result, "beta") == []


# --------------------------------------------------------------------------- selection


def test_installed_but_not_enabled_is_discovered_and_never_imported(main_load):
    dormant = plugin(main_load, "dormant")
    assert dormant["status"] == "discovered" and not dormant["enabled"]
    assert dormant["distribution"] == "rtp-dormant" and dormant["tools"] == []
    assert "rtp_dormant.plugin" not in main_load["modules"]  # its import would raise
    assert not [d for d in main_load["diagnostics"] if d["plugin"] == "dormant"]
    assert_good_plugins_loaded(main_load)


def test_plugin_id_from_two_distributions_is_refused_with_RD002(main_load):
    twin = plugin(main_load, "twin")
    assert twin["status"] == "refused" and codes(main_load, "twin") == ["RD002"]
    message = twin["diagnostics"][0]["message"]
    assert "rtp-twin-one" in message and "rtp-twin-two" in message
    assert 'distribution = "rtp-twin-one"' in twin["diagnostics"][0]["hint"]
    assert not {"twin_one_tool", "twin_two_tool"} & set(main_load["tools"])
    assert not {"rtp_twin_one.plugin", "rtp_twin_two.plugin"} & set(main_load["modules"])
    assert_good_plugins_loaded(main_load)


def test_naming_the_distribution_picks_one_twin(run_probe):
    result = run_probe(enabling(["twin", "alpha"], twin='distribution = "rtp-twin-two"'))
    twin = plugin(result, "twin")
    assert twin["status"] == "loaded" and twin["distribution"] == "rtp-twin-two"
    assert "twin_two_tool" in result["tools"] and "twin_one_tool" not in result["tools"]
    assert "rtp_twin_one.plugin" not in result["modules"]


def test_naming_a_distribution_that_does_not_provide_the_plugin_is_RD003(run_probe):
    result = run_probe(enabling(["alpha"], alpha='distribution = "rtp-beta"'))
    assert plugin(result, "alpha")["status"] == "refused" and codes(result, "alpha") == ["RD003"]
    assert "rtp_alpha.plugin" not in result["modules"]


def test_configuring_a_plugin_that_is_not_enabled_warns_RC004(run_probe):
    result = run_probe(enabling(["alpha"], dormant='prefix = "d_"'))
    diags = [d for d in result["diagnostics"] if d["code"] == "RC004"]
    assert diags and diags[0]["plugin"] == "dormant" and diags[0]["severity"] == "warning"
    assert "rtp_dormant.plugin" not in result["modules"]


# --------------------------------------------------------------------------- one code per broken plugin

# plugin id (the test's id), its status, its one diagnostic code, what that diagnostic's message names,
# and a tool of the plugin that must not load. ghost is enabled but not installed; exitter calls
# sys.exit on import (the host survives); hijack's tool claims alpha's cluster (allowed_ops ["alpha"]
# must admit alpha's tools only)
ONE_CODE = [
    ("ghost", "missing", "RD001", (), None),
    ("broken", "failed", "RI001", ("rtp_no_such_module_anywhere",), None),
    ("exitter", "failed", "RI001", ("SystemExit",), None),
    ("noapi", "failed", "RI002", (), "noapi_tool"),
    ("future", "failed", "RI003", ("REYN_API = 2",), "future_tool"),
    ("typohook", "failed", "RI004", ("reyn_register_tool",), None),
    ("asyncreg", "failed", "RI004", ("async",), None),
    ("raiser", "failed", "RI005", ("ValueError: raiser cannot find its data file",), None),
    ("strict", "failed", "RC001", ("plugins.strict.settings.limit", "reyn.toml"), "strict_tool"),
    ("nosettings", "failed", "RC002", (), None),
    ("hijack", "loaded", "RT009", ("belongs to 'alpha'",), "hijack_tool"),
]


@pytest.mark.parametrize(
    ("plugin_id", "status", "code", "names", "unloaded"), ONE_CODE, ids=[row[0] for row in ONE_CODE]
)
def test_a_broken_plugin_gets_its_own_code_and_the_good_plugins_still_load(
    main_load, plugin_id: str, status: str, code: str, names: tuple[str, ...], unloaded: str | None
):
    entry = plugin(main_load, plugin_id)
    assert entry["status"] == status and codes(main_load, plugin_id) == [code]
    for name in names:
        assert name in entry["diagnostics"][0]["message"]
    assert unloaded is None or unloaded not in main_load["tools"]
    assert_good_plugins_loaded(main_load)


# --------------------------------------------------------------------------- settings


def test_validated_settings_reach_the_handler(main_load):
    assert main_load["calls"][0] == {"status": "ok", "data": "ahoy, Ann"}


# --------------------------------------------------------------------------- register


def test_registering_a_non_tool_is_RT001_and_the_plugins_real_tools_load(main_load):
    junk = plugin(main_load, "junk")
    assert junk["status"] == "loaded" and codes(main_load, "junk") == ["RT001"]
    assert junk["tools"] == ["junk_ok"]
    assert_good_plugins_loaded(main_load)


def test_invalid_tool_name_is_RT002_and_only_that_tool_is_dropped(main_load):
    badname = plugin(main_load, "badname")
    assert badname["status"] == "loaded" and codes(main_load, "badname") == ["RT002"]
    assert badname["tools"] == ["badname_ok"]


def test_invalid_schema_is_RS005_and_only_that_tool_is_dropped(main_load):
    bad = plugin(main_load, "badschema")
    assert codes(main_load, "badschema") == ["RS005"]
    assert bad["diagnostics"][0]["tool"] == "badschema_tool"
    assert bad["tools"] == ["badschema_ok"]


def test_tool_claimed_by_two_plugins_registers_neither_with_RT004(main_load):
    for pid in ("dupa", "dupb"):
        diags = [d for d in plugin(main_load, pid)["diagnostics"] if d["tool"] == "shared_tool"]
        assert [d["code"] for d in diags] == ["RT004"]
        assert "plugin 'dupa'" in diags[0]["message"] and "plugin 'dupb'" in diags[0]["message"]
        assert "prefix" in diags[0]["hint"] and "tools.exclude" in diags[0]["hint"]
    assert "shared_tool" not in main_load["tools"]
    assert {"dupa_own", "dupb_own"} <= set(main_load["router"])
    assert_good_plugins_loaded(main_load)


def test_plugin_tool_colliding_with_a_host_tool_registers_neither(main_load):
    diags = [d for d in plugin(main_load, "dupa")["diagnostics"] if d["tool"] == "host_clash"]
    assert [d["code"] for d in diags] == ["RT004"]
    assert "the host application" in diags[0]["message"]
    assert "host_clash" not in main_load["tools"]
    assert "host_only" in main_load["router"]


def test_tools_are_stamped_with_their_plugin_origin(main_load):
    assert main_load["tools"]["alpha_echo"]["plugin"] == "alpha"
    assert main_load["tools"]["alpha_echo"]["source_kind"] == "wheel"
    assert main_load["tools"]["host_only"]["plugin"] is None


def test_before_tool_call_hook_of_a_plugin_is_wired_into_dispatch(main_load):
    denied, allowed = main_load["calls"][1:3]
    assert denied["status"] == "error" and denied["error"]["kind"] == "denied"
    assert (
        "beta's policy refuses" in denied["error"]["message"]
        and "plugin 'beta'" in denied["error"]["message"]
    )
    assert allowed == {"status": "ok", "data": "fine"}


# --------------------------------------------------------------------------- operator narrowing


def test_features_plugins_false_hides_every_plugin_tool_from_both_surfaces(run_probe):
    result = run_probe(
        "[features]\nplugins = false\n" + enabling(["alpha", "gated"]),
        'alpha_echo={"text": "x"}',
    )
    assert {"alpha_echo", "gated_read"} <= set(result["tools"])  # loaded and inspectable
    assert result["router"] == ["host_clash", "host_only"]
    assert result["phase"] == ["host_clash", "host_only"]
    assert result["calls"][0]["error"]["kind"] == "gate_refused"


def test_surfaces_phase_hides_a_plugin_from_the_router_only(run_probe):
    result = run_probe(enabling(["phaseonly", "alpha"], phaseonly='surfaces = ["phase"]'))
    assert "phaseonly_tool" not in result["router"] and "phaseonly_tool" in result["phase"]
    assert "alpha_echo" in result["router"]


def test_tools_exclude_removes_the_tool(run_probe):
    result = run_probe(enabling(["gated"], gated='tools.exclude = ["gated_write"]'))
    assert "gated_write" not in result["tools"] and "gated_read" in result["router"]


def test_tools_include_keeps_only_the_named_tools_and_warns_on_unknown_names(run_probe):
    result = run_probe(enabling(["gated"], gated='tools.include = ["gated_read", "gated_reed"]'))
    assert [t for t in result["tools"] if t.startswith("gated")] == ["gated_read"]
    assert codes(result, "gated") == ["RC005"]
    assert plugin(result, "gated")["diagnostics"][0]["tool"] == "gated_reed"


def test_prefix_renames_the_tools_and_resolves_a_collision(run_probe):
    result = run_probe(
        enabling(["dupa", "dupb"], dupb='prefix = "b_"'),
        'b_shared_tool={"text": "hi"}',
    )
    assert {"shared_tool", "b_shared_tool", "b_dupb_own"} <= set(result["router"])
    assert result["tools"]["b_shared_tool"]["original"] == "shared_tool"
    assert result["calls"][0] == {"status": "ok", "data": "hi"}


# --------------------------------------------------------------------------- plugin diagnostics hook


def test_plugin_diagnostics_reach_the_report_with_plugin_tool_and_path(main_load):
    diag = plugin(main_load, "diag")
    assert diag["status"] == "loaded" and "diag_tool" in main_load["router"]
    [finding] = [d for d in diag["diagnostics"] if d["code"] == "RZ001"]
    assert finding["severity"] == "warning" and finding["tool"] == "diag_tool"
    assert finding["message"] == "cache folder is missing (/srv/cache)" and finding["hint"] == "create it"
    assert_good_plugins_loaded(main_load)


def test_malformed_plugin_diagnostics_are_RI008_and_never_borrow_core_codes(main_load):
    diag = plugin(main_load, "diag")
    assert codes(main_load, "diag").count("RI008") == 3  # core code, bad severity, not a mapping
    messages = " ".join(d["message"] for d in diag["diagnostics"] if d["code"] == "RI008")
    assert "'RS001'" in messages and "'fatal'" in messages and "not a mapping" in messages
    assert "RS001" not in codes(main_load, "diag")


def test_a_raising_diagnostics_hook_warns_and_the_plugin_still_loads(main_load):
    raiser = plugin(main_load, "diagraise")
    assert raiser["status"] == "loaded" and "diagraise_tool" in main_load["router"]
    [finding] = raiser["diagnostics"]
    assert finding["code"] == "RI008" and "OSError: cannot stat the cache folder" in finding["message"]
    assert finding["severity"] == "warning"


def test_a_lazy_handler_whose_module_is_missing_is_hidden_with_RT008(main_load):
    lazy = plugin(main_load, "lazy")
    assert lazy["status"] == "loaded" and codes(main_load, "lazy") == ["RT008"]
    assert "lazy_missing" in main_load["tools"]  # still inspectable
    assert "lazy_missing" not in main_load["router"] and "lazy_missing" not in main_load["phase"]
    assert "lazy_ok" in main_load["router"]
    assert main_load["calls"][3]["error"]["kind"] == "runtime_missing"
    assert "rtp_lazy.not_installed" not in main_load["modules"]
    assert_good_plugins_loaded(main_load)
