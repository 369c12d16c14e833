"""The sandbox grant keys are one concept with one spelling: the shell pack's settings, an MCP stdio
server's settings and the launcher's ``Grants`` name the same grants."""

from __future__ import annotations

import dataclasses

import pytest

SHARED = {"read_roots", "write_roots", "network", "hide", "read_only"}


def test_shell_and_mcp_grant_keys_are_the_same() -> None:
    from reyn_tools_mcp.sandbox import ServerGrants
    from reyn_tools_shell.grants import GrantSettings

    assert set(GrantSettings.model_fields) == set(ServerGrants.model_fields)


def test_grant_keys_are_the_launchers_fields() -> None:
    reyn_sandbox = pytest.importorskip("reyn_sandbox")
    from reyn_tools_shell.grants import LIMIT_KEYS, GrantSettings

    launcher = {f.name for f in dataclasses.fields(reyn_sandbox.Grants)}
    # uid/gid: who the command runs as under root, the launcher's choice, not a grant of reach
    assert SHARED | set(LIMIT_KEYS) == launcher - {"uid", "gid"}
    assert set(GrantSettings.model_fields) == SHARED | set(LIMIT_KEYS) | {"sandbox"}


def test_the_file_packs_roots_have_the_same_names() -> None:
    from reyn_tools_file.settings import FileSettings

    assert {"read_roots", "write_roots"} <= set(FileSettings.model_fields)


def test_the_packs_key_lists_are_the_launchers() -> None:
    from reyn_tools_mcp import sandbox as mcp_sandbox
    from reyn_tools_shell import grants as shell_grants

    import reyn_sandbox

    assert shell_grants.LIMIT_KEYS == mcp_sandbox.LIMIT_KEYS == reyn_sandbox.LIMIT_KEYS
    assert mcp_sandbox.GRANT_KEYS == reyn_sandbox.GRANT_KEYS and mcp_sandbox.OPT_OUT == reyn_sandbox.OPT_OUT


@pytest.mark.parametrize(
    ("entry", "words"),
    [("../up", "without '..'"), ("", "without '..'"), ("/proc/self", "pseudo-filesystem")],
)
def test_both_packs_refuse_a_bad_root_with_the_one_validators_words(entry: str, words: str) -> None:
    from pydantic import ValidationError
    from reyn_tools_mcp.sandbox import ServerGrants
    from reyn_tools_shell.grants import GrantSettings

    for model, base in ((GrantSettings, "the workspace"), (ServerGrants, "the server's cwd")):
        assert model(read_roots=("out",)).read_roots == ("out",)  # control: a plain root is fine
        with pytest.raises(ValidationError) as info:
            model(read_roots=(entry,))
        assert words in str(info.value)
        if "'..'" in words:
            assert base in str(info.value)


def test_both_packs_refuse_a_limit_below_its_minimum() -> None:
    from pydantic import ValidationError
    from reyn_tools_mcp.sandbox import ServerGrants
    from reyn_tools_shell.grants import GrantSettings

    for model in (GrantSettings, ServerGrants):
        assert model(open_files=16).open_files == 16
        with pytest.raises(ValidationError, match="open_files must be a whole number of at least 16"):
            model(open_files=15)
