"""``read_json``: a peer's JSON text bounded in values before it is parsed, then read with JSON's
numbers only; ``parse_own_json``: text Reyn wrote itself, read back exactly (issue 24)."""

from __future__ import annotations

import math

import pytest

from reyn_core.host import (
    NotJsonNumber,
    NotUtf8Json,
    TooManyJsonValues,
    found_tool_names,
    parse_own_json,
    read_json,
)


@pytest.mark.parametrize("text", ["[1,2,3]", b"[1,2,3]"], ids=["str", "bytes"])
def test_text_within_the_bound_is_parsed(text: str | bytes) -> None:
    assert read_json(text, 4) == [1, 2, 3]


@pytest.mark.parametrize("text", ["[1,2,3,4]", b"[1,2,3,4]"], ids=["str", "bytes"])
def test_text_over_the_bound_is_refused_unparsed_naming_the_bound(text: str | bytes) -> None:
    with pytest.raises(TooManyJsonValues, match="more than 4 JSON values") as caught:
        read_json(text, 4)
    assert caught.value.limit == 4 and isinstance(caught.value, ValueError)


def test_a_number_json_cannot_carry_is_refused() -> None:
    with pytest.raises(NotJsonNumber):
        read_json('{"x": NaN}', 100)
    with pytest.raises(NotJsonNumber):
        read_json(b'{"x": 1e400}', 100)


def test_bytes_are_read_as_utf8_only() -> None:
    assert read_json('{"é": "\U0001f600"}'.encode(), 10) == {"é": "\U0001f600"}
    with pytest.raises(NotUtf8Json):
        read_json('{"a": 1}'.encode("utf-16-le"), 10)


def test_text_reyn_wrote_is_read_back_exactly() -> None:
    value = parse_own_json('{"x": NaN, "y": Infinity}')
    assert math.isnan(value["x"]) and value["y"] == math.inf


def _conversation(result_content: str) -> list[dict[str, object]]:
    call = {"id": "c1", "type": "function", "function": {"name": "find_tools", "arguments": "{}"}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": result_content},
    ]


def test_a_search_result_names_its_tools() -> None:
    content = '{"status": "ok", "data": {"tools": [{"name": "read_file"}], "score": 0.5}}'
    assert found_tool_names(_conversation(content)) == ("read_file",)


@pytest.mark.parametrize(
    "content",
    [
        '{"status": "ok", "data": {"tools": [{"name": "read_file"}], "score": NaN}}',
        '{"status": "ok", "data": {"tools": [{"name": "read_file"}], "pad": [' + "0," * 100_000 + "0]}}",
        "[" * 5_000,
    ],
    ids=["NaN", "over the value bound", "nested past the parser"],
)
def test_a_search_result_that_is_not_bounded_json_names_nothing(content: str) -> None:
    assert found_tool_names(_conversation(content)) == ()
