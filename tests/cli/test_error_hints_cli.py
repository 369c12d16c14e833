"""Issue 14 at the command line, on real plugin distributions in a fresh venv: where a plugin's
import failed (file:line, full traceback on request), an ignored setting, and which plugin a tool
that is not loaded belongs to (``reyn tools call``'s ``host_hint``)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from plugin_distkit import PluginDist, tool_plugin

CRASHY = "from rtp_crashy import helper\n\nREYN_API = 1\n"
HELPER = '''\
"""A helper module of the plugin that raises when imported."""

raise ValueError("crashy helper cannot start")
'''
# Registers flaky_echo, unless RTP_FLAKY_FAIL is set at import time.
FLAKY = tool_plugin(
    ["flaky_echo"],
    extra="""
    import os
    if os.environ.get("RTP_FLAKY_FAIL"):
        raise RuntimeError("flaky is down today")
    """,
)
LAX = tool_plugin(
    ["lax_echo"],
    extra="""
    from pydantic import BaseModel

    class Settings(BaseModel):
        limit: int = 3

    @hookimpl
    def reyn_settings_model():
        return Settings
    """,
)

DISTS = [
    PluginDist("rtp-crashy", "crashy", CRASHY, files={"helper.py": HELPER}),
    PluginDist("rtp-flaky", "flaky", FLAKY),
    PluginDist("rtp-lax", "lax", LAX),
]


@pytest.fixture
def clean_lock(cli):
    lock = cli.work / "reyn.lock"
    lock.unlink(missing_ok=True)
    yield lock
    lock.unlink(missing_ok=True)


def ri001(cli) -> dict[str, Any]:
    proc = cli("doctor", "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [diag] = [d for d in json.loads(proc.stdout)["diagnostics"] if d["code"] == "RI001"]
    return diag


def test_ri001_names_the_file_and_line_inside_the_plugin_that_raised(cli):
    cli.profile('[plugins]\nenable = ["crashy"]\n')
    diag = ri001(cli)
    helper = cli.venv.site_packages / "rtp_crashy" / "helper.py"
    assert diag["message"] == (  # its path inside the distribution; the host path is the operator's
        "importing 'rtp_crashy.plugin' from rtp-crashy failed at rtp_crashy/helper.py:3 (in <module>): "
        "ValueError: crashy helper cannot start"
    )
    assert str(cli.venv.site_packages) not in diag["message"]
    assert diag["traceback"].startswith(f"raised at {helper}:3 (in <module>)\n")


def test_the_full_traceback_is_shown_only_with_traceback_or_reyn_debug(cli):
    cli.profile('[plugins]\nenable = ["crashy"]\n')
    plain = cli("doctor")
    assert plain.returncode == 1 and "Traceback" not in plain.stdout + plain.stderr
    assert "helper.py:3 (in <module>)" in plain.stdout
    for proc in (cli("--traceback", "doctor"), cli("doctor", "--traceback"), cli("doctor", REYN_DEBUG="1")):
        assert proc.returncode == 1, proc.stderr
        assert "reyn: traceback of RI001 error [crashy]" in proc.stderr
        assert "Traceback (most recent call last)" in proc.stderr
        assert 'helper.py", line 3' in proc.stderr and "ValueError: crashy helper cannot start" in proc.stderr


def test_traceback_option_is_accepted_by_plugin_free_commands_and_changes_nothing(cli):
    cli.profile('[plugins]\nenable = ["lax"]\n')
    proc = cli("--traceback", "tools", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [row["name"] for row in json.loads(proc.stdout)] == ["lax_echo"]
    assert proc.stderr == ""


def test_a_setting_an_ignoring_model_drops_is_an_RC008_warning_with_a_suggestion(cli):
    cli.profile("""
        [plugins]
        enable = ["lax"]
        [plugins.lax.settings]
        limt = 5
        """)
    proc = cli("doctor", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [diag] = [d for d in json.loads(proc.stdout)["diagnostics"] if d["code"] == "RC008"]
    assert diag["severity"] == "warning" and diag["plugin"] == "lax"
    assert diag["message"] == (
        f"{cli.work / 'reyn.toml'}: plugins.lax.settings.limt: unknown setting, ignored; "
        "did you mean 'limit'? (valid settings: limit)"
    )


def call(cli, name: str, **env: str) -> tuple[int, dict[str, Any], str]:
    proc = cli("tools", "call", name, **env)
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def test_calling_a_tool_of_a_plugin_that_failed_names_it_from_the_lock(cli, clean_lock):
    cli.profile('[plugins]\nenable = ["flaky", "lax"]\n')
    locked = cli("plugins", "lock")
    assert locked.returncode == 0 and clean_lock.is_file(), locked.stdout + locked.stderr
    code, envelope, stderr = call(cli, "flaky_echo", RTP_FLAKY_FAIL="1")
    assert code == 1
    assert envelope["error"] == {
        "kind": "not_found",
        "message": "no tool named 'flaky_echo'; did you mean 'lax_echo'?",
    }
    hint = envelope["host_hint"]
    assert hint["known"] is True and hint["lock"] == str(clean_lock)
    [plugin] = hint["plugins"]
    assert plugin["plugin"] == "flaky" and plugin["status"] == "failed" and plugin["code"] == "RI001"
    assert "RuntimeError: flaky is down today" in plugin["message"]
    assert hint["message"].startswith(
        f"tool 'flaky_echo' is provided by a plugin that is not loaded (per {clean_lock}): "
        "plugin 'flaky' is failed (RI001: importing 'rtp_flaky.plugin' from rtp-flaky failed at "
    )
    assert hint["message"].endswith(" — run `reyn plugins show flaky` or `reyn doctor`")
    assert f"reyn: {hint['message']}" in stderr.splitlines()


def test_calling_a_tool_of_a_disabled_plugin_says_to_enable_it(cli, clean_lock):
    cli.profile('[plugins]\nenable = ["flaky", "lax"]\n')
    assert cli("plugins", "lock").returncode == 0
    cli.profile('[plugins]\nenable = ["lax"]\n')
    code, envelope, _ = call(cli, "flaky_echo")
    assert code == 1
    assert envelope["host_hint"]["plugins"] == [
        {"plugin": "flaky", "status": "disabled", "code": None, "message": "not in plugins.enable"}
    ]
    assert envelope["host_hint"]["message"].endswith("— add 'flaky' to plugins.enable")


def test_without_a_lock_an_unknown_name_lists_every_plugin_that_did_not_load(cli, clean_lock):
    cli.profile('[plugins]\nenable = ["crashy", "flaky", "lax", "ghost"]\n')
    code, envelope, _stderr = call(cli, "flaky_echo", RTP_FLAKY_FAIL="1")
    assert code == 1 and envelope["error"]["kind"] == "not_found"
    hint = envelope["host_hint"]
    assert hint["known"] is False and hint["lock"] is None
    assert [(p["plugin"], p["status"], p["code"]) for p in hint["plugins"]] == [
        ("crashy", "failed", "RI001"),
        ("flaky", "failed", "RI001"),
        ("ghost", "missing", "RD001"),
    ]
    assert hint["message"].startswith(
        "no loaded tool is called 'flaky_echo'; it may come from a plugin that did not load: "
    )


def test_an_unknown_name_with_every_plugin_loaded_has_no_hint(cli, clean_lock):
    cli.profile('[plugins]\nenable = ["flaky", "lax"]\n')
    code, envelope, _stderr = call(cli, "flaky_ech")
    assert code == 1 and "host_hint" not in envelope
    assert envelope["error"]["message"] == "no tool named 'flaky_ech'; did you mean 'flaky_echo', 'lax_echo'?"
    code, envelope, _ = call(cli, "flaky_echo")  # a loaded tool's other errors get no hint either
    assert code == 1 and envelope["error"]["kind"] == "invalid_arguments" and "host_hint" not in envelope


@pytest.mark.skipif(os.name != "posix", reason="paths in messages are POSIX here")
def test_the_model_facing_not_found_never_carries_the_host_hint(cli, clean_lock):
    # tools call --surface router gives the envelope the router loop would send; the loop's
    # tool_message drops host_hint even when a host adds it (tests/plugins/test_error_hints.py).
    cli.profile('[plugins]\nenable = ["flaky"]\n')
    code, envelope, _ = call(cli, "flaky_echo", RTP_FLAKY_FAIL="1")
    assert code == 1 and "flaky" not in envelope["error"]["message"].replace("'flaky_echo'", "")
