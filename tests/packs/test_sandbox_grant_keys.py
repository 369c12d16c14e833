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
