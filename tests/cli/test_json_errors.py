"""Under ``--json`` every error is one JSON object on stderr, with the exit code of the text form."""

from __future__ import annotations

import json

import pytest

CASES = {
    # argparse: an unknown option, a missing required option, a bad choice
    "unknown-option": (["tools", "list", "--bogus"], 2, "usage"),
    "missing-option": (["tools", "render"], 2, "usage"),
    "bad-choice": (["tools", "render", "--surface", "mcp"], 2, "usage"),
    # a command's own usage check
    "command-usage": (["tools", "render", "--surface", "router", "--allowed-ops", "x"], 2, "usage"),
    # a ReynError with a stable code (the profile file does not exist)
    "profile-error": (["--profile-file", "missing.toml", "tools", "list"], 2, "RC003"),
    # an unknown command (the plugin-command path)
    "unknown-command": (["frobnicate"], 2, "usage"),
    # a check that failed (exit 1)
    "failed-check": (["plugins", "lock"], 1, "failed"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_every_error_under_json_is_one_object_with_the_same_exit_code(tmp_path, case, reyn_cli):
    argv, exit_code, code = CASES[case]
    text = reyn_cli(*argv, cwd=tmp_path)
    assert text.returncode == exit_code, text.stderr
    assert "error" in text.stderr and not text.stderr.lstrip().startswith("{")  # positive control

    for placed in ([*argv, "--json"], ["--json", *argv]):
        proc = reyn_cli(*placed, cwd=tmp_path)
        assert proc.returncode == exit_code, proc.stderr
        assert proc.stdout == ""
        (line,) = proc.stderr.splitlines()
        error = json.loads(line)["error"]
        assert error["code"] == code and error["exit_code"] == exit_code
        assert error["message"]


def test_a_usage_error_keeps_the_commands_usage_in_json(tmp_path, reyn_cli):
    proc = reyn_cli("tools", "render", "--json", cwd=tmp_path)
    error = json.loads(proc.stderr)["error"]
    assert "the following arguments are required: --surface" in error["message"]
    assert error["usage"].startswith("usage: reyn tools render")
