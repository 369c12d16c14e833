"""One value bound (``reyn_core.jsondata``: ``json_values``, ``values_within``, ``JsonValueCount``) for
every JSON text from a peer, counted before it is parsed (issue 24, invariant 6): parsing costs per
value, not per byte. The count skips strings (a comma, a bracket or an escaped quote inside one counts
nothing), equals a reference built on ``json.loads`` for any JSON text however it is cut into chunks,
and stays one pass on pathological text (no timing here: ``benchmarks/bench_json_values.py``)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from reyn_core.host import JsonValueCount, json_values, values_within

ALPHABET = ["a", ",", ":", "[", "{", "]", "}", '"', "\\", "\n", "\r", "é", "\x00", " ", "\ud800"]


def reference(value: Any) -> int:
    """Every scalar, container and key one value; an empty container two."""
    if isinstance(value, dict):
        return 1 + (not value) + sum(1 + reference(v) for v in value.values())
    if isinstance(value, list):
        return 1 + (not value) + sum(reference(v) for v in value)
    return 1


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randint(0, 6 if depth < 4 else 3)
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 6)))
    if kind == 0:
        return rng.randint(-5, 10**9)
    if kind == 1:
        return text
    if kind == 2:
        return rng.choice([None, True, False, 2.5])
    if kind == 3:
        return text[::-1]
    if kind == 4:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {text + str(i): random_value(rng, depth + 1) for i in range(rng.randint(0, 4))}


def chunked(data: bytes, rng: random.Random) -> int:
    count, total, pos = JsonValueCount(), 1, 0
    while pos < len(data):
        step = rng.randint(1, 7)
        total, pos = count.add(data[pos : pos + step]), pos + step
    return total


def test_the_count_is_the_reference_for_random_json_whole_and_in_any_chunks() -> None:
    rng = random.Random(24)
    for _ in range(2000):
        value = random_value(rng)
        for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=rng.choice([None, 1]))):
            expected = reference(value)
            data = text.encode("utf-8", "surrogatepass")
            assert json_values(text) == json_values(data) == expected, text
            assert chunked(data, rng) == expected, text
            assert values_within(text, expected) and not values_within(text, expected - 1), text


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ('"a,b:c[d{e"', 1),
        ('["a\\",", "b\\\\", ","]', 4),
        ('{"k,:": "v[{", "x": [1, 2]}', 7),
        ('"\\\\\\""', 1),
        ("[]", 2),
        ("", 1),
    ],
)
def test_marks_inside_strings_count_nothing(text: str, values: int) -> None:
    assert json_values(text) == values


@pytest.mark.parametrize(
    "data",
    [
        b'"' * (4 << 20),  # 2 Mi empty strings
        b"\\" * (4 << 20),
        b'"' + b"a," * (2 << 20),  # an unterminated string
        b'"' + b'\\"' * (2 << 20),  # one unterminated string of escaped quotes
        b'"' + b"\\," * (2 << 20),  # escapes and commas, all inside one string
        b'","' * (1 << 20),  # adjacent strings (not JSON): each a value
    ],
    ids=["quotes", "backslashes", "unterminated", "escaped-quotes", "escaped-commas", "adjacent"],
)
def test_pathological_text_is_counted_in_one_pass(data: bytes) -> None:
    """The string pattern never fails and never backtracks, so a quote never rescans what follows:
    each of these 4 MiB texts finishes (a quadratic count would run for hours), whole and chunked."""
    whole = json_values(data)
    count = JsonValueCount()
    for start in range(0, len(data), 65536):
        last = count.add(data[start : start + 65536])
    assert last == whole


def test_a_line_end_closes_a_string() -> None:
    """A JSON string holds no raw line end, so a quote left open on one line hides nothing of the next
    (an event stream's ``id:`` line)."""
    assert json_values(b'id: "\ndata: [1,2,3]') == json_values(b"id: x\ndata: [1,2,3]") == 6
    assert json_values(b'"a\\\n[1,2]') == json_values(b"[1,2]") == 3  # a backslash before it too


def test_the_bound_is_checked_without_counting_strings_when_it_can_be() -> None:
    """Within the limit even counted inside strings: within at once; over it: the count skips
    strings, and a text of more strings than the limit is over it (JSON within it has fewer)."""
    assert values_within("[" + ",".join(["1"] * 999) + "]", 1000)
    assert not values_within("[" + ",".join(["1"] * 1000) + "]", 1000)
    assert values_within('["' + "," * 100_000 + '"]', 1000)
    assert not values_within('",,"' * 1001, 1000)  # adjacent strings, each a value
