"""The shell pack's sandbox grant keys: defaults that fail closed, the renamed and removed keys of
earlier versions as clear profile errors, and ``sandbox = "off"`` reported on every load."""

from __future__ import annotations

import sys

import pytest
import reyn_tools_shell.plugin as shell_plugin
from pydantic import ValidationError
from reyn_tools_shell.settings import ShellSettings

from reyn_sandbox import LIMIT_KEYS

ECHO = {"name": "echo", "any_args": True}


def test_defaults_are_the_workspace_read_only_nothing_writable_no_network() -> None:
    s = ShellSettings()
    assert (s.read_roots, s.write_roots, s.network, s.hide, s.sandbox) == ((".",), (), False, (), "required")
    assert all(getattr(s, key) is None for key in LIMIT_KEYS)  # the launcher's own limits apply


def test_writable_dirs_fails_naming_write_roots() -> None:
    with pytest.raises(
        ValidationError, match=r"writable_dirs was renamed write_roots .* write_roots = \['out'\]"
    ):
        ShellSettings.model_validate({"writable_dirs": ["out"]})


def test_reads_cwd_config_fails_saying_it_was_removed() -> None:
    with pytest.raises(ValidationError, match="reads_cwd_config was removed"):
        ShellSettings.model_validate({"programs": [{**ECHO, "reads_cwd_config": False}]})


@pytest.mark.parametrize("root", ["../up", "a/../b", "/proc/self", "/sys", ""])
def test_roots_that_escape_or_name_kernel_state_are_refused(root: str) -> None:
    with pytest.raises(ValidationError):
        ShellSettings.model_validate({"write_roots": [root]})


def test_unknown_opt_out_values_are_refused() -> None:
    with pytest.raises(ValidationError):
        ShellSettings.model_validate({"sandbox": "disabled"})


def test_sandbox_off_is_a_warning_on_every_load() -> None:
    settings = ShellSettings.model_validate({"programs": [ECHO], "sandbox": "off"})
    found = shell_plugin.reyn_diagnostics(settings)
    assert [(d["code"], d["severity"]) for d in found] == [("RX003", "warning")]
    assert "UNCONFINED" in found[0]["message"]


def test_doctor_shows_the_landlock_abi_and_what_is_enforced() -> None:
    from reyn_tools_shell.sandbox import unavailable_reason

    from reyn_sandbox import status as sandbox_status

    if unavailable_reason() is not None:
        pytest.skip("the kernel sandbox is unavailable here")
    settings = ShellSettings.model_validate({"programs": [ECHO], "write_roots": ["out"]})
    (found,) = shell_plugin.reyn_diagnostics(settings)
    assert found["code"] == "RX001" and found["severity"] == "info"
    status = sandbox_status()
    assert f"Landlock ABI {status.landlock_abi}" in found["message"]
    assert all(item in found["message"] for item in status.enforced)
    assert "write_roots=['out']" in found["message"]


def test_without_programs_there_is_nothing_to_report() -> None:
    assert shell_plugin.reyn_diagnostics(ShellSettings()) == []


async def test_without_a_kernel_sandbox_the_tool_refuses_and_doctor_says_why(make_shell, monkeypatch):
    monkeypatch.setenv("REYN_SANDBOX_PRETEND_MISSING", "landlock")  # the launcher's own switch
    shell = make_shell(programs=[ECHO])
    envelope = await shell.envelope({"argv": ["echo", "hi"]})
    assert envelope["status"] == "error", envelope
    assert "kernel sandbox, which is unavailable" in envelope["error"]["message"]
    assert 'sandbox = "off"' in envelope["error"]["message"]
    settings = ShellSettings.model_validate({"programs": [ECHO]})
    (found,) = shell_plugin.reyn_diagnostics(settings)
    assert (found["code"], found["severity"]) == ("RX002", "error") and "Landlock" in found["message"]


async def test_the_explicit_opt_out_runs_unconfined_and_is_reported(make_shell, monkeypatch):
    monkeypatch.setenv("REYN_SANDBOX_PRETEND_MISSING", "landlock")
    shell = make_shell(programs=[ECHO], sandbox="off")
    assert (await shell.run(argv=["echo", "hi"]))["stdout"] == "hi\n"
    settings = ShellSettings.model_validate({"programs": [ECHO], "sandbox": "off"})
    assert [d["code"] for d in shell_plugin.reyn_diagnostics(settings)] == ["RX003"]


async def test_a_limit_that_ends_the_command_is_an_execution_error_naming_the_key(make_shell):
    from reyn_tools_shell.sandbox import unavailable_reason

    from reyn_core import ToolExecutionError

    if unavailable_reason() is not None:
        pytest.skip("the kernel sandbox is unavailable here")
    busy = {"name": "python", "path": sys.executable, "any_args": True}
    shell = make_shell(programs=[busy], cpu_seconds=1)
    with pytest.raises(ToolExecutionError, match=r"limit exceeded: .*cpu_seconds"):
        await shell.run(argv=["python", "-c", "while True: pass"], timeout_s=60)
