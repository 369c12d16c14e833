"""The sandbox grant keys are one concept with one spelling: the shell pack's settings, an MCP stdio
server's settings and the launcher's ``Grants`` name the same grants."""

from __future__ import annotations

import pytest

SHARED = {"read_roots", "write_roots", "network", "hide", "read_only"}


def test_shell_and_mcp_take_the_one_declaration_of_the_grant_keys() -> None:
    from reyn_tools_mcp.sandbox import ServerGrants
    from reyn_tools_shell.grants import GrantSettings

    import reyn_sandbox

    assert tuple(reyn_sandbox.GrantKeys.__annotations__) == reyn_sandbox.GRANT_KEYS
    for model in (GrantSettings, ServerGrants):
        assert issubclass(model, reyn_sandbox.GrantKeys)
        assert tuple(model.model_fields) == reyn_sandbox.GRANT_KEYS
        defaults = model()
        assert (defaults.read_roots, defaults.write_roots, defaults.network, defaults.sandbox) == (
            (".",),
            (),
            False,
            "required",
        )  # fail closed: the base directory read-only, nothing writable, no network
        assert all(getattr(defaults, k) is None for k in reyn_sandbox.LIMIT_KEYS)  # the launcher's


def test_grant_keys_are_the_launchers_fields() -> None:
    import reyn_sandbox

    launcher = set(reyn_sandbox.Grants.field_names())
    # uid/gid: who the command runs as under root, the launcher's choice, not a grant of reach;
    # identities: what the host found at each root when it checked it, never the operator's to write;
    # secrets: the host's secret files, which the host adds (resolve_grants), never the operator
    assert SHARED | set(reyn_sandbox.LIMIT_KEYS) == launcher - {"uid", "gid", "identities", "secrets"}
    assert set(reyn_sandbox.GRANT_KEYS) == SHARED | set(reyn_sandbox.LIMIT_KEYS) | {"sandbox"}


def test_the_file_packs_roots_have_the_same_names() -> None:
    from reyn_tools_file.settings import FileSettings

    assert {"read_roots", "write_roots"} <= set(FileSettings.model_fields)


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
