"""Parsing a phase reply is linear in its length, with the verdicts the fence regex gave.

The reply's optional markdown fence was stripped by a backtracking regex that took 8.5 s for a fence
line and 2,000 newlines (126 s for 5,000) on the event loop. Each 1 MB reply here is parsed in a
daemon thread joined with a generous bound: it proves "finishes, not hangs"; the assertions are on
the parsed output and the errors.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from reyn_core import ToolContext
from reyn_core.host import PhaseOutput, PhaseOutputError, parse_phase_output, render_phase
from reyn_core.render import PhaseCatalog
from reyn_core.render.phase_contract import MAX_OUTPUT_VALUES, unfence

BOUND_S = 20.0
MB = 1_000_000
FINISH = {"control": {"type": "finish", "decision": "finish"}}
# The rule as it was written before: the reference for the verdicts on ordinary (small) replies.
PREVIOUS_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)


@pytest.fixture
def surface(catalogue: list[Any], build_registry: Any) -> PhaseCatalog:
    return render_phase(build_registry(catalogue), ToolContext(surface="phase"), ["file"])


@pytest.fixture
def parse_bounded(within_bound: Callable[..., Any]) -> Callable[[str, PhaseCatalog], Any]:
    """``parse_phase_output(raw, surface)``, or the exception it raised; fails if it does not finish."""
    return lambda raw, surface: within_bound(parse_phase_output, raw, surface, seconds=BOUND_S)


def previous(text: str) -> str | None:
    found = PREVIOUS_FENCE.match(text)
    return found.group(1) if found else None


def test_unfence_gives_the_previous_verdicts_on_small_replies():
    rng = random.Random(7)
    tokens = ["`", "```", "\n", " ", "\t", "\r", "json", "JSON", "{", "}", "x", "\u2028", "\x1c", "\xa0"]
    for _ in range(100_000):
        text = "".join(rng.choice(tokens) for _ in range(rng.randint(0, 12)))
        assert unfence(text) == previous(text), repr(text)


@pytest.mark.parametrize(
    "text",
    [
        "```json\n{}\n```",
        '  ```\n{"a": "```"}\n```  \n',
        "```json\n\n\n```",
        "```\n```\n```",
        "```json \t\n\n  {}\n \n```\n\n",
        "```jsonx\n{}\n```",
        "```JSON\n{}\n```",
        "```json\n{}\n``` trailing",
        "```json {}```",
        "```",
        "",
    ],
)
def test_unfence_on_ordinary_replies(text):
    assert unfence(text) == previous(text)


def test_a_fenced_and_a_bare_reply_parse_alike(surface, parse_bounded):
    bare = json.dumps(FINISH)
    for raw in (bare, f"```json\n{bare}\n```", f"\n```\n{bare}\n```\n"):
        output = parse_bounded(raw, surface)
        assert isinstance(output, PhaseOutput) and output.control.type == "finish"


@pytest.mark.parametrize(
    "raw",
    [
        "```\n" + "\n" * MB,  # the reported case, at 1 MB
        "```json\n" + "\n" * MB + "```x",
        "`" * MB,
        "```\n" * (MB // 4),  # many fences
        "```json" + " \n" * (MB // 2),
        " " * MB + "```",
        "\t\n" * (MB // 2),
        "```json\n" + "{" * MB,
        '{"a": "' + "`" * MB,
    ],
)
def test_pathological_replies_are_refused_quickly(surface, raw, parse_bounded):
    error = parse_bounded(raw, surface)
    assert isinstance(error, PhaseOutputError)
    # (a reply of more than MAX_OUTPUT_VALUES brackets is refused by the value bound, before parsing)
    assert any(words in str(error) for words in ("not valid JSON", "nests too deeply", "JSON values"))


def test_deep_nesting_in_a_fence_is_refused_with_the_limit(surface, parse_bounded):
    deep = MAX_OUTPUT_VALUES // 3  # under the value bound: the nesting is what is refused
    error = parse_bounded("```json\n" + "[" * deep + "]" * deep + "\n```", surface)
    assert isinstance(error, PhaseOutputError) and "nests too deeply" in str(error)


def test_a_valid_reply_inside_a_megabyte_of_fence_whitespace_parses(surface, parse_bounded):
    body = json.dumps({**FINISH, "artifact": {"type": "note", "data": {"text": "```" * 1000}}})
    raw = (
        " \n" * (MB // 4)
        + "```json"
        + " \t\n" * (MB // 6)
        + body
        + "\n"
        + " \n" * (MB // 4)
        + "```"
        + " " * MB
    )
    output = parse_bounded(raw, surface)
    assert isinstance(output, PhaseOutput)
    assert output.artifact is not None and output.artifact.data["text"] == "```" * 1000


def test_many_fences_inside_the_content_keep_the_outermost(surface, parse_bounded):
    inner = "\n".join(["```"] * 10_000)
    assert unfence(f"```json\n{inner}\n```") == inner
    error = parse_bounded(f"```json\n{inner}\n```", surface)
    assert isinstance(error, PhaseOutputError) and "not valid JSON" in str(error)
