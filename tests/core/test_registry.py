"""RegistryBuilder and ToolRegistry: name rule, collisions naming both origins, deterministic order,
read-only snapshots."""

from __future__ import annotations

import threading

import pytest

from reyn_core import ToolContext, ToolDefinition, ToolNotFound, ToolOrigin, ToolRegistrationError, tool
from reyn_core.errors import RegistryFrozen
from reyn_core.host import RegistryBuilder, ToolRegistry
from reyn_core.registry import RegisteredTool

SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


def definition(name: str, **kw: object) -> ToolDefinition:
    base: dict[str, object] = {
        "description": f"The {name} tool.",
        "parameters": SCHEMA,
        "handler": lambda: name,
    }
    base.update(kw)
    return ToolDefinition(name=name, **base)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", "a b", "a.b", "é", "x" * 65, "semi;colon", "slash/x"])
def test_invalid_name_is_rt002(name: str) -> None:
    with pytest.raises(ToolRegistrationError) as info:
        RegistryBuilder().register(definition(name))
    assert info.value.code == "RT002"
    assert "^[a-zA-Z0-9_-]{1,64}$" in info.value.message


def test_missing_description_is_rt003() -> None:
    with pytest.raises(ToolRegistrationError) as info:
        RegistryBuilder().register(definition("quiet", description="  "))
    assert info.value.code == "RT003"


def test_collision_is_rt004_naming_both_origins_and_the_fix() -> None:
    builder = RegistryBuilder()
    builder.register(
        definition("read_file"),
        origin=ToolOrigin(kind="plugin", plugin_id="file", distribution="reyn-tools-file", version="1.0"),
    )
    with pytest.raises(ToolRegistrationError) as info:
        builder.register(definition("read_file"), origin=ToolOrigin(kind="plugin", plugin_id="other"))
    assert info.value.code == "RT004"
    assert "plugin 'file' from reyn-tools-file 1.0" in info.value.message
    assert "plugin 'other'" in info.value.message
    assert "prefix" in info.value.hint and "tools.exclude" in info.value.hint


def test_collision_keeps_the_first_tool_and_the_registry_usable() -> None:
    builder = RegistryBuilder()
    first = builder.register(definition("t"))
    with pytest.raises(ToolRegistrationError):
        builder.register(definition("t"))
    builder.register(definition("u"))
    assert builder.freeze().get("t") is first and len(builder) == 2


def test_origin_is_stamped_by_the_registrant_not_trusted_from_the_definition() -> None:
    forged = definition("t", origin=ToolOrigin(kind="host"))
    registered = RegistryBuilder().register(forged, origin=ToolOrigin(kind="plugin", plugin_id="p"))
    assert registered.origin == ToolOrigin(kind="plugin", plugin_id="p")


def test_definition_without_origin_is_a_host_tool() -> None:
    assert RegistryBuilder().register(definition("t")).origin == ToolOrigin(kind="host")


def test_iteration_is_sorted_by_name_whatever_the_registration_order() -> None:
    names = ["b", "a", "C", "a-1", "_z"]
    builder = RegistryBuilder()
    for n in names:
        builder.register(definition(n))
    assert [t.name for t in builder.freeze()] == sorted(names)


def test_unknown_name_is_not_found_with_near_names() -> None:
    builder = RegistryBuilder()
    builder.register(definition("read_file"))
    with pytest.raises(ToolNotFound, match="did you mean 'read_file'"):
        builder.freeze().get("read_fil")


def test_non_string_name_is_not_found() -> None:
    with pytest.raises(ToolNotFound):
        ToolRegistry().get(None)  # type: ignore[arg-type]


def test_a_snapshot_has_no_way_to_add_tools_or_settings() -> None:
    snapshot = RegistryBuilder().freeze()
    assert not hasattr(snapshot, "register") and not hasattr(snapshot, "set_settings")
    with pytest.raises(RegistryFrozen):
        snapshot.anything = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        snapshot.plugin_settings["p"] = object()  # type: ignore[index]
    with pytest.raises(TypeError):
        snapshot.original_names["x"] = "y"  # type: ignore[index]


def test_a_snapshot_built_by_hand_takes_only_registered_entries_under_their_own_names() -> None:
    entry = RegisteredTool(definition("a"))
    assert ToolRegistry({"a": entry}).get("a") is entry.definition
    with pytest.raises(TypeError, match="RegisteredTool of that name"):
        ToolRegistry({"b": entry})
    with pytest.raises(TypeError, match="RegisteredTool of that name"):
        ToolRegistry({"a": definition("a")})  # type: ignore[dict-item]


def test_snapshot_does_not_see_later_registrations_on_the_builder() -> None:
    builder = RegistryBuilder()
    builder.register(definition("a"))
    snapshot = builder.freeze()
    builder.register(definition("b"))
    assert [t.name for t in snapshot] == ["a"] and [t.name for t in builder.freeze()] == ["a", "b"]


def test_settings_reach_only_the_owning_plugins_tools() -> None:
    builder = RegistryBuilder()
    mine = builder.register(definition("mine"), origin=ToolOrigin(kind="plugin", plugin_id="p"))
    host = builder.register(definition("host"))
    builder.set_settings("p", {"root": "."})
    snapshot = builder.freeze()
    ctx = ToolContext(surface="router")
    assert snapshot.context_for(mine, ctx).settings == {"root": "."}
    assert snapshot.context_for(host, ctx).settings is None


def test_prefixed_tool_remembers_its_original_name() -> None:
    builder = RegistryBuilder()
    builder.register(definition("x_read").renamed("x_read"), original_name="read")
    assert builder.freeze().original_name("x_read") == "read"


def test_snapshot_is_safe_to_read_from_many_threads() -> None:
    builder = RegistryBuilder()
    for i in range(200):
        builder.register(definition(f"t{i:03d}"))
    snapshot = builder.freeze()
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            for _ in range(50):
                names = [t.name for t in snapshot]
                snapshot.get("t100")
                snapshot.visible("router", ToolContext())
                results.append(names)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(r == results[0] for r in results) and len(results) == 400


def test_a_frozen_registry_refuses_a_new_operator_policy_or_hooks() -> None:
    from reyn_core.host import OperatorPolicy, ToolCallHooks

    snapshot = RegistryBuilder(operator=OperatorPolicy(plugins_enabled=False)).freeze()
    with pytest.raises(RegistryFrozen, match="'operator' cannot be changed"):
        snapshot.operator = OperatorPolicy()  # would switch plugin tools back on (layer 2)
    with pytest.raises(RegistryFrozen, match="'hooks' cannot be changed"):
        snapshot.hooks = ToolCallHooks()  # would drop the audit log and policy hooks
    assert snapshot.operator.plugins_enabled is False


def test_a_frozen_registry_tool_table_cannot_be_mutated_in_place() -> None:
    @tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    builder = RegistryBuilder()
    builder.register(ping)
    snapshot = builder.freeze()
    with pytest.raises(TypeError):
        snapshot.entries()["evil"] = snapshot.entries()["ping"]  # type: ignore[index]
    assert [t.name for t in snapshot] == ["ping"]
    builder.register(tool(name="pong")(ping.handler))  # the builder stays usable...
    assert "pong" not in snapshot  # ...and the snapshot does not see it


def test_a_subclassed_name_is_refused() -> None:
    class SlipperyName(str):
        def __hash__(self) -> int:  # would dodge collision and tools.exclude checks
            return id(self)

    handler = lambda: 1  # noqa: E731
    with pytest.raises(ToolRegistrationError) as name_error:
        RegistryBuilder().register(
            ToolDefinition(name=SlipperyName("t"), description="x", parameters=SCHEMA, handler=handler)
        )
    assert name_error.value.code == "RT002"
    assert (
        RegistryBuilder()
        .register(ToolDefinition(name="t", description="x", parameters=SCHEMA, handler=handler))
        .name
        == "t"
    )  # the positive control: a plain str name registers


def test_an_operator_policy_cannot_be_loosened_after_it_is_built() -> None:
    from reyn_core.host import OperatorPolicy, PluginPolicy

    plugins = {"file": PluginPolicy(exclude=frozenset({"delete_file"}))}
    policy = OperatorPolicy(plugins=plugins)
    plugins.clear()  # the caller's dict is copied...
    assert "file" in policy.plugins
    with pytest.raises(TypeError):
        policy.plugins["file"] = PluginPolicy()  # type: ignore[index]  # ...and the policy's own is read-only
    assert not hasattr(policy.plugins, "clear")
