"""parse_phase_output: a model's phase reply is checked against the rendered surface, and every
problem comes back with a precise JSON pointer the model can act on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reyn_core import ToolContext
from reyn_core.host import PhaseOpCall, PhaseOutput, PhaseOutputError, parse_phase_output, render_phase
from reyn_core.render import PhaseCatalog

FINISH = {"type": "finish", "decision": "finish"}


@pytest.fixture
def surface(catalogue: list[Any], build_registry: Any) -> PhaseCatalog:
    ctx = ToolContext(surface="phase", extras={"skills": ["summarise"]})
    return render_phase(build_registry(catalogue), ctx, ["file", "invoke_skill"])


@pytest.fixture
def empty_surface(build_registry: Any) -> PhaseCatalog:
    """The phase surface of a registry with no tools."""
    return render_phase(build_registry([]), ToolContext(surface="phase"), [])


def problems(raw: Any, surface: PhaseCatalog) -> list[tuple[str, str]]:
    with pytest.raises(PhaseOutputError) as info:
        parse_phase_output(raw, surface)
    return [(p.pointer, p.message) for p in info.value.problems]


def test_valid_reply_parses_into_typed_ops(surface: PhaseCatalog) -> None:
    reply = json.dumps(
        {
            "control": {"type": "transition", "decision": "continue", "next_phase": "review"},
            "artifact": {"type": "draft", "data": {"n": 1}},
            "control_ir": [
                {"kind": "read_file", "path": "a.md"},
                {"kind": "invoke_skill", "skill": "summarise"},
            ],
        }
    )
    output = parse_phase_output(reply, surface)
    assert isinstance(output, PhaseOutput)
    assert output.control.next_phase == "review" and output.artifact is not None
    assert output.control_ir == [
        PhaseOpCall(kind="read_file", args={"path": "a.md"}),
        PhaseOpCall(kind="invoke_skill", args={"skill": "summarise"}),
    ]
    assert output.control_ir[0].to_wire() == {"kind": "read_file", "path": "a.md"}


def test_a_single_json_code_fence_is_accepted(surface: PhaseCatalog) -> None:
    reply = "```json\n" + json.dumps({"control": FINISH}) + "\n```"
    assert parse_phase_output(reply, surface).control.type == "finish"


def test_bytes_and_mappings_are_accepted(surface: PhaseCatalog) -> None:
    assert parse_phase_output(json.dumps({"control": FINISH}).encode(), surface).control_ir == []
    assert parse_phase_output({"control": FINISH}, surface).artifact is None


def test_text_that_is_not_json_says_where_it_broke(surface: PhaseCatalog) -> None:
    with pytest.raises(PhaseOutputError) as info:
        parse_phase_output('Sure! {"control": ', surface)
    assert "not valid JSON" in info.value.message and "line 1 column 1" in info.value.message


def test_json_that_is_not_an_object_is_refused(surface: PhaseCatalog) -> None:
    with pytest.raises(PhaseOutputError, match="must be a JSON object, got list"):
        parse_phase_output("[]", surface)


def test_missing_control_is_reported_at_its_pointer(surface: PhaseCatalog) -> None:
    assert problems({"control_ir": []}, surface) == [("/control", "is required")]


def test_unknown_top_level_key_is_reported(surface: PhaseCatalog) -> None:
    assert problems({"control": FINISH, "thoughts": "..."}, surface) == [
        ("/thoughts", "unexpected key (allowed: control, artifact, control_ir)")
    ]


def test_control_type_and_decision_must_agree(surface: PhaseCatalog) -> None:
    [(pointer, message)] = problems({"control": {"type": "finish", "decision": "continue"}}, surface)
    assert pointer == "/control" and "goes with decision 'finish'" in message


def test_transition_needs_a_next_phase(surface: PhaseCatalog) -> None:
    [(pointer, message)] = problems({"control": {"type": "transition", "decision": "continue"}}, surface)
    assert pointer == "/control" and "needs next_phase" in message


def test_confidence_out_of_range_is_reported_at_its_field(surface: PhaseCatalog) -> None:
    [(pointer, _)] = problems({"control": {**FINISH, "confidence": 2}}, surface)
    assert pointer == "/control/confidence"


def test_op_that_is_not_allowed_names_the_allowed_ops(surface: PhaseCatalog) -> None:
    assert problems({"control": FINISH, "control_ir": [{"kind": "web_fetch", "url": "x"}]}, surface) == [
        (
            "/control_ir/0/kind",
            "'web_fetch' is not an allowed op (allowed: invoke_skill, read_file, write_file)",
        )
    ]


def test_op_without_a_kind_is_reported(surface: PhaseCatalog) -> None:
    assert problems({"control": FINISH, "control_ir": [{"path": "a"}]}, surface) == [
        ("/control_ir/0/kind", "is required and must be a string naming an op")
    ]


def test_op_that_is_not_an_object_is_reported(surface: PhaseCatalog) -> None:
    [(pointer, message)] = problems({"control": FINISH, "control_ir": ["read_file"]}, surface)
    assert pointer == "/control_ir/0" and "must be an object" in message


def test_op_argument_problems_point_into_the_op(surface: PhaseCatalog) -> None:
    reply = {
        "control": FINISH,
        "control_ir": [{"kind": "read_file", "path": "ok"}, {"kind": "read_file", "path": 3, "mode": "x"}],
    }
    assert problems(reply, surface) == [
        ("/control_ir/1/path", "expected string, got integer"),
        ("/control_ir/1/mode", "unexpected property (allowed: max_bytes, path)"),
    ]


def test_enriched_enum_is_enforced_on_ops(surface: PhaseCatalog) -> None:
    [(pointer, message)] = problems(
        {"control": FINISH, "control_ir": [{"kind": "invoke_skill", "skill": "x"}]}, surface
    )
    assert pointer == "/control_ir/0/skill" and "summarise" in message


def test_control_ir_must_be_a_list(surface: PhaseCatalog) -> None:
    assert problems({"control": FINISH, "control_ir": {"kind": "read_file"}}, surface) == [
        ("/control_ir", "must be a list of ops")
    ]


def test_every_problem_is_reported_at_once(surface: PhaseCatalog) -> None:
    reply = {
        "extra": 1,
        "control": {"type": "nope", "decision": "finish"},
        "artifact": {"data": {}},
        "control_ir": [{"kind": "delete_everything"}],
    }
    pointers = [p for p, _ in problems(reply, surface)]
    assert pointers == ["/extra", "/control/type", "/artifact/type", "/control_ir/0/kind"]


def test_feedback_lists_each_problem_on_its_own_line(surface: PhaseCatalog) -> None:
    with pytest.raises(PhaseOutputError) as info:
        parse_phase_output({"control_ir": [{"kind": "nope"}]}, surface)
    lines = info.value.feedback().splitlines()
    assert lines[0].startswith("the reply breaks the phase output contract (2 problem(s))")
    assert lines[1:] == [
        "- /control: is required",
        "- /control_ir/0/kind: 'nope' is not an allowed op (allowed: invoke_skill, read_file, write_file)",
    ]


def test_a_reply_nested_too_deeply_is_a_phase_output_error_not_a_crash(empty_surface: PhaseCatalog) -> None:
    deep = (
        '{"control": {"type": "finish", "decision": "finish"}, "artifact": {"type": "x", "data": {"d": '
        + "[" * 100_000
        + "]" * 100_000
        + "}}}"
    )
    with pytest.raises(PhaseOutputError, match="nests too deeply"):
        parse_phase_output(deep, empty_surface)
    with pytest.raises(PhaseOutputError, match="must be a JSON object"):
        parse_phase_output("null", empty_surface)


def test_a_reply_with_an_integer_too_long_to_parse_is_a_phase_output_error(
    empty_surface: PhaseCatalog,
) -> None:
    reply = '{"control": {"type": "finish", "decision": "finish", "confidence": ' + "1" * 5000 + "}}"
    with pytest.raises(PhaseOutputError, match="cannot be read"):
        parse_phase_output(reply, empty_surface)
