"""The registry snapshot decides the gate layers it fixes and holds each tool's validator once (issue
23): that is sound only because nothing it reads can compute another answer later. The classes it
reads are final — subclassing any of them raises ``TypeError`` at class creation — so there is no
subclass to defend against at call time."""

from __future__ import annotations

from typing import Any

import pytest

from reyn_core import ToolDefinition, ToolGates, ToolOrigin
from reyn_core.host import OperatorPolicy, PluginPolicy, RegistryBuilder, ToolRegistry
from reyn_core.registry.prepared import PreparedTool

FINAL = [ToolDefinition, ToolGates, ToolOrigin, OperatorPolicy, PluginPolicy, ToolRegistry, PreparedTool]


@pytest.mark.parametrize("cls", FINAL, ids=lambda c: c.__name__)
def test_subclassing_a_final_class_is_refused(cls: type) -> None:
    with pytest.raises(TypeError, match=f"{cls.__name__} is final"):
        type("Sub", (cls,), {"__slots__": ()})


def test_the_final_classes_themselves_work() -> None:
    # positive control: the same classes, used as they are, build a registry that gates and validates
    tool = ToolDefinition(
        name="note",
        description="Take a note.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        handler=lambda text: text,
        gates=ToolGates(router="allow", phase="deny"),
        origin=ToolOrigin(kind="host"),
    )
    builder = RegistryBuilder(operator=OperatorPolicy(plugins={"p": PluginPolicy()}))
    builder.register(tool)
    registry = builder.freeze()
    prepared = registry.prepared("note")
    assert prepared is registry.prepared("note")  # one prepared entry per tool of the snapshot
    assert prepared.validator is prepared.validator  # and one validator in it
    assert prepared.validator({"text": "hi"}) == []
    assert prepared.validator({"text": 1})
    assert registry.fixed_layers(prepared.definition, "router") is None
    refused: Any = registry.fixed_layers(prepared.definition, "phase")
    assert refused is not None and refused.layer == "role"


def test_the_master_switch_is_read_once_as_a_bool() -> None:
    class Flaky:
        calls = 0

        def __bool__(self) -> bool:
            Flaky.calls += 1
            return Flaky.calls == 1

    policy = OperatorPolicy(plugins_enabled=Flaky())  # type: ignore[arg-type]
    assert policy.plugins_enabled is True and Flaky.calls == 1
