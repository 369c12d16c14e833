"""A model's JSON text is bounded in values before it is parsed (issue 24, invariant 6): a call's
arguments sent as a string and a phase reply. Parsing costs per value, not per byte, so a text of
tiny values under the character bound is refused unparsed, naming the bound; a text as long made of
one string of commas (one value) is read (the positive control)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reyn_core import ToolContext
from reyn_core.host import PhaseOutputError, parse_phase_output, render_phase
from reyn_core.render import PhaseCatalog
from reyn_core.render.phase_contract import MAX_OUTPUT_VALUES
from reyn_core.validation import parse_arguments
from reyn_core.validation.arguments import MAX_ARGUMENT_CHARS, MAX_ARGUMENT_NODES, MAX_ARGUMENT_VALUES

# {"rows": [[0,0,...], ...]}: arrays within the items bound, values over the pre-parse bound
ROWS = (
    '{"rows": [' + ",".join(["[" + ",".join(["0"] * 1000) + "]"] * (MAX_ARGUMENT_VALUES // 1000 + 1)) + "]}"
)


@pytest.fixture
def surface(catalogue: list[Any], build_registry: Any) -> PhaseCatalog:
    return render_phase(build_registry(catalogue), ToolContext(surface="phase"), ["file"])


def test_arguments_of_too_many_values_are_refused_before_parsing() -> None:
    assert len(ROWS) < MAX_ARGUMENT_CHARS
    value, problems = parse_arguments(ROWS)
    assert value is None
    assert [p.message for p in problems] == [
        f"the arguments hold more than {MAX_ARGUMENT_NODES} values; send less at once"
    ]


def test_arguments_of_a_long_string_of_commas_are_read() -> None:
    text = json.dumps({"csv": "," * (MAX_ARGUMENT_VALUES + 1)})
    assert parse_arguments(text) == ({"csv": "," * (MAX_ARGUMENT_VALUES + 1)}, [])


def test_a_phase_reply_of_too_many_values_is_refused_before_parsing(surface: PhaseCatalog) -> None:
    with pytest.raises(PhaseOutputError, match=f"more than {MAX_OUTPUT_VALUES} JSON values"):
        parse_phase_output(ROWS, surface)
    # the positive control: a reply as long in one string is parsed
    reply = {
        "control": {"type": "finish", "decision": "finish"},
        "artifact": {"type": "draft", "data": {"csv": "," * len(ROWS)}},
        "control_ir": [],
    }
    output = parse_phase_output(json.dumps(reply), surface)
    assert output.artifact is not None
