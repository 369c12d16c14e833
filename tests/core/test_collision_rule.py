"""The collision rule is written once (``reyn_core.registry.collisions``): the builder, a load's
claims across plugins and host tools, and one plugin registering a name twice all word ``RT004``
with ``Collision.message`` and ``Collision.hint`` (issue 24)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reyn_core import ToolDefinition, ToolOrigin, ToolRegistrationError
from reyn_core.host import Profile, RegistryBuilder, load
from reyn_core.loading.step1_profile.profile import load_profile
from reyn_core.registry.collisions import Claim, Collision, find_collisions

SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}
FILE = ToolOrigin(kind="plugin", plugin_id="file", distribution="reyn-tools-file", version="1.0")
OTHER = ToolOrigin(kind="plugin", plugin_id="other")
HOST = ToolOrigin(kind="host")


def definition(name: str) -> ToolDefinition:
    return ToolDefinition(name=name, description="d", parameters=SCHEMA, handler=lambda: None)


@pytest.fixture(autouse=True)
def isolated(isolated_profile_env: None) -> None:
    """No profile, user config or cache of the machine's (the tests/conftest.py fixture)."""


def test_claims_collide_on_their_collision_key_only() -> None:
    claims = [Claim("read_file", FILE), Claim("Read-File", HOST), Claim("write_file", FILE)]
    found = find_collisions(claims)
    assert list(found) == ["read_file"]
    assert found["read_file"].names == ["read_file", "Read-File"]
    assert find_collisions([Claim("a", FILE), Claim("b", FILE)]) == {}


def test_the_message_names_every_spelling_and_origin_and_the_outcome() -> None:
    collision = Collision((Claim("read_file", FILE), Claim("Read-File", OTHER)))
    message = collision.message()
    assert "'read_file' by plugin 'file' from reyn-tools-file 1.0" in message
    assert "'Read-File' by plugin 'other'" in message
    assert message.endswith("none of them is registered")
    assert collision.message(kept_first=True).endswith("the later one is refused")


def test_the_hint_fits_who_claims() -> None:
    twice = Collision((Claim("t", FILE), Claim("t", FILE)))
    assert "(2 times)" in twice.message() and twice.hint() == "register each tool once, under one spelling"
    two_plugins = Collision((Claim("t", FILE), Claim("t", OTHER))).hint()
    assert "plugins.other.tools.exclude" in two_plugins and 'prefix = "other_"' in two_plugins
    with_host = Collision((Claim("t", HOST), Claim("t", FILE))).hint()
    assert "plugins.file.tools.exclude" in with_host


def test_the_builder_words_rt004_with_the_one_rule() -> None:
    builder = RegistryBuilder()
    builder.register(definition("read_file"), origin=FILE)
    with pytest.raises(ToolRegistrationError) as info:
        builder.register(definition("Read-File"), origin=OTHER)
    expected = Collision((Claim("read_file", FILE), Claim("Read-File", OTHER)))
    assert info.value.code == "RT004"
    assert info.value.message == expected.message(kept_first=True)
    assert info.value.hint == expected.hint()


def test_a_load_words_rt004_with_the_one_rule(tmp_path: Path) -> None:
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["file"]\n')
    control = load(load_profile(profile_file=tmp_path / "reyn.toml"))
    assert "read_file" in control.registry  # positive control: alone, the plugin's tool registers
    origin = control.registry.get("read_file").origin
    assert origin is not None

    result = load(load_profile(profile_file=tmp_path / "reyn.toml"), host_tools=[definition("Read-File")])
    (diag,) = [d for d in result.report.diagnostics if d.code == "RT004"]
    expected = Collision((Claim("Read-File", HOST), Claim("read_file", origin)))
    assert (diag.message, diag.hint, diag.plugin) == (expected.message(), expected.hint(), "file")


def test_host_tools_alone_collide_with_the_same_wording() -> None:
    result = load(Profile(), host_tools=[definition("ping"), definition("PING")])
    (diag,) = [d for d in result.report.diagnostics if d.code == "RT004"]
    expected = Collision((Claim("ping", HOST), Claim("PING", HOST)))
    assert (diag.message, diag.hint, diag.plugin) == (expected.message(), expected.hint(), None)
