"""The shell pack's sandbox grant keys: defaults that fail closed, the renamed and removed keys of
earlier versions as clear profile errors, and ``sandbox = "off"`` reported on every load."""

from __future__ import annotations

import pytest
import reyn_tools_shell.plugin as shell_plugin
from pydantic import ValidationError
from reyn_tools_shell.settings import ShellSettings

ECHO = {"name": "echo", "any_args": True}


def test_defaults_are_the_workspace_read_only_nothing_writable_no_network() -> None:
    s = ShellSettings()
    assert (s.read_roots, s.write_roots, s.network, s.hide, s.sandbox) == ((".",), (), False, (), "required")
    assert s.limit_overrides() == {}


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
    from reyn_tools_shell.sandbox import sandbox_status, unavailable_reason

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
