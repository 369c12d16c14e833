"""Front matter parses in linear time, and its sizes are bounded with clear errors.

A 120 KB multi-line JSON value took 78 s before (the growing text was re-parsed after every line),
and a long run of blanks in one line was quadratic in two regexes. Each parse here runs in a daemon
thread joined with a generous bound: it proves "finishes, not hangs"; the assertions are on the
values and errors.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from reyn_tools_catalog import FrontMatterError, parse_front_matter
from reyn_tools_catalog.frontmatter import MAX_FRONT_MATTER_CHARS, MAX_JSON_DEPTH, MAX_KEYS

BOUND_S = 20.0


@pytest.fixture
def parse_bounded(within_bound: Callable[..., Any]) -> Callable[[str], Any]:
    """``parse_front_matter(text)``, or the ``FrontMatterError`` it raised; fails if it hangs."""
    return lambda text: within_bound(parse_front_matter, text, seconds=BOUND_S)


def fm(*lines: str) -> str:
    return "\n".join(["---", *lines, "---"]) + "\nbody\n"


def big_schema(properties: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "x" * 8} for i in range(properties)},
    }


def test_a_long_multi_line_json_value_parses_once(parse_bounded):
    schema = {"type": "array", "items": {"enum": list(range(40_000))}}
    text = json.dumps(schema, indent=0)  # about 230 KB over ~40,000 short lines
    assert len(text) > 120_000
    lines = text.split("\n")
    parsed = parse_bounded(fm("input_schema: " + lines[0], *lines[1:], "name: after"))
    assert parsed.values == {"input_schema": schema, "name": "after"}
    assert parsed.lines["name"] == len(lines) + 2


def test_a_json_value_near_the_size_limit_parses(parse_bounded):
    schema = big_schema(15_000)
    lines = json.dumps(schema, indent=1).split("\n")
    assert 800_000 < sum(map(len, lines)) + len(lines) < MAX_FRONT_MATTER_CHARS
    parsed = parse_bounded(fm("input_schema: " + lines[0], *lines[1:]))
    assert parsed.values["input_schema"] == schema


def test_an_unclosed_multi_line_json_value_is_an_error_at_its_key(parse_bounded):
    lines = ['input_schema: {"enum": ['] + ["  1,"] * 40_000
    error = parse_bounded(fm(*lines))
    assert isinstance(error, FrontMatterError)
    assert error.line == 2 and "JSON value of 'input_schema' is malformed or not closed" in error.message


def test_a_closing_bracket_with_trailing_text_is_an_error(parse_bounded):
    error = parse_bounded(fm('input_schema: {"a": 1,', '  "b": 2} trailing', "name: x"))
    assert isinstance(error, FrontMatterError)
    assert error.line == 2 and "malformed or not closed" in error.message


def test_an_over_large_block_is_refused_with_the_limit(parse_bounded):
    error = parse_bounded(fm(*(f"k{i}: " + "v" * 1000 for i in range(1100))))
    assert isinstance(error, FrontMatterError)
    assert error.line == 1
    assert f"the limit is {MAX_FRONT_MATTER_CHARS}" in error.message and "body" in error.message


def test_many_keys_parse_up_to_the_limit(parse_bounded):
    parsed = parse_bounded(fm(*(f"k{i}: v{i}" for i in range(MAX_KEYS))))
    assert len(parsed.values) == MAX_KEYS and parsed.values["k999"] == "v999"
    error = parse_bounded(fm(*(f"k{i}: v" for i in range(MAX_KEYS + 1))))
    assert isinstance(error, FrontMatterError)
    assert error.line == MAX_KEYS + 2 and f"the limit is {MAX_KEYS}" in error.message


@pytest.mark.parametrize(
    "lines",
    [
        ['schema: {"a": ' * 70 + "1" + "}" * 70],  # one line
        ['schema: {"a":', *(['{"a":'] * 70), "1", *(["}"] * 71)],  # over many lines
        ["tools: " + "[" * 70 + "]" * 70],  # a flow list
        ["tools:", "  - " + "[" * 70 + "]" * 70],  # a block list item
        ["schema: " + '{"a": ' + "[" * 200_000],  # far past Python's recursion limit
        ["tools: " + "[" * 200_000],
        ["tools:", "  - " + "{" * 200_000],
    ],
)
def test_deep_nesting_is_refused_with_the_limit(lines, parse_bounded):
    error = parse_bounded(fm(*lines))
    assert isinstance(error, FrontMatterError)
    assert error.line == 2 or (error.line == 3 and lines[0] == "tools:")
    assert f"nests more than {MAX_JSON_DEPTH} levels deep" in error.message


def test_nesting_at_the_limit_is_accepted(parse_bounded):
    value = 1
    for _ in range(MAX_JSON_DEPTH):
        value = {"a": value}
    assert parse_bounded(fm("schema: " + json.dumps(value))).values["schema"] == value


def test_long_blank_runs_in_one_line_are_linear(parse_bounded):
    blanks = " \t" * 60_000
    parsed = parse_bounded(
        fm("name: a" + blanks + "b", "plain: x" + blanks + "# note", "trail: y" + blanks, "q: 'z'" + blanks)
    )
    assert parsed.values == {"name": "a" + blanks + "b", "plain": "x", "trail": "y", "q": "z"}
    error = parse_bounded(fm("k" + blanks + "x: v"))
    assert isinstance(error, FrontMatterError) and "expected 'key: value'" in error.message


def test_huge_single_lines_and_many_hashes(parse_bounded):
    hashes = "#" * 300_000
    parsed = parse_bounded(fm("name: a" + hashes, "other: b " + hashes, 'title: "' + "x" * 300_000 + '"'))
    assert parsed.values == {"name": "a" + hashes, "other": "b", "title": "x" * 300_000}


def test_huge_numbers_are_an_error_not_a_crash(parse_bounded):
    error = parse_bounded(fm('schema: {"max": ' + "9" * 5000 + "}"))
    assert isinstance(error, FrontMatterError)
    assert error.line == 2 and "cannot be read" in error.message
    error = parse_bounded(fm("tools:", "  - [" + "9" * 5000 + "]"))
    assert isinstance(error, FrontMatterError) and error.line == 3
