"""``settings_as``: the one settings accessor every plugin uses."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reyn_core import ToolContext, ToolRuntimeMissing, settings_as


class Demo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(3, gt=0)
    names: list[str] = Field(default_factory=list)


def test_an_instance_is_returned_as_it_is():
    s = Demo(limit=7)
    assert settings_as(s, Demo) is s
    assert settings_as(ToolContext(settings=s), Demo) is s


@pytest.mark.parametrize("source", [None, ToolContext(), ToolContext(settings=None), {}])
def test_none_or_no_settings_give_the_defaults(source):
    assert settings_as(source, Demo) == Demo()


def test_a_mapping_is_validated():
    assert settings_as({"limit": 5, "names": ["a"]}, Demo) == Demo(limit=5, names=["a"])
    assert settings_as(ToolContext(settings={"limit": 9}), Demo).limit == 9


def test_an_invalid_mapping_raises_one_error_naming_the_model_and_the_field():
    with pytest.raises(
        ToolRuntimeMissing, match=r"invalid Demo settings: limit: Input should be greater than 0"
    ) as e:
        settings_as(ToolContext(settings={"limit": 0}), Demo)
    assert isinstance(e.value.__cause__, ValidationError)
    with pytest.raises(
        ToolRuntimeMissing, match=r"invalid Demo settings: extra: Extra inputs are not permitted"
    ):
        settings_as({"extra": 1}, Demo)


class Other(BaseModel):
    limit: int = 3


@pytest.mark.parametrize("value", [3, "limit=3", ["limit"], Other()])
def test_any_other_value_raises_naming_the_expected_model_and_the_type_given(value):
    with pytest.raises(
        ToolRuntimeMissing, match=rf"settings must be a Demo, a mapping or None; got {type(value).__name__}"
    ):
        settings_as(ToolContext(settings=value), Demo)


def test_in_a_call_the_error_is_runtime_missing(tmp_path):
    import asyncio

    from reyn_core import ToolDefinition
    from reyn_core.host import RegistryBuilder, dispatch_tool

    def handler(ctx: ToolContext) -> int:
        return settings_as(ctx, Demo).limit

    builder = RegistryBuilder()
    builder.register(
        ToolDefinition(name="lim", description="d", parameters={"type": "object"}, handler=handler)
    )
    reg = builder.freeze()
    ok = asyncio.run(dispatch_tool(reg, "lim", {}, ToolContext(settings={"limit": 4})))
    assert ok == {"status": "ok", "data": 4}
    bad = asyncio.run(dispatch_tool(reg, "lim", {}, ToolContext(settings=42)))
    assert bad["error"]["kind"] == "runtime_missing"
    assert "got int" in bad["error"]["message"]
