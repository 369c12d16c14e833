"""``reyn tools call NAME key=value …``: arguments one by one, each value read per the tool's schema."""

from __future__ import annotations

import json

import pytest

from reyn_core.cli.call_arguments import pairs_to_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "limit": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "mode": {"enum": ["fast", "slow"]},
        "either": {"type": ["integer", "string"]},
    },
}


def test_string_parameters_take_the_text_as_it_is():
    got = pairs_to_arguments(["path=5", "mode=fast", "path2=x=y"], SCHEMA)
    assert got == {"path": "5", "mode": "fast", "path2": "x=y"}


def test_other_parameters_are_read_as_json():
    got = pairs_to_arguments(
        ["limit=5", "ratio=0.5", "flag=true", 'tags=["a","b"]', "maybe=null", "either=7"], SCHEMA
    )
    assert got == {"limit": 5, "ratio": 0.5, "flag": True, "tags": ["a", "b"], "maybe": None, "either": 7}


def test_a_number_json_cannot_carry_is_not_read_as_a_float():
    # NaN and Infinity are not JSON (issue 24): a number parameter refuses them, a string one keeps the text
    with pytest.raises(ValueError, match=r"ratio=.*expected number written as JSON"):
        pairs_to_arguments(["ratio=NaN"], SCHEMA)
    assert pairs_to_arguments(["either=Infinity", "unknown=NaN"], SCHEMA) == {
        "either": "Infinity",
        "unknown": "NaN",
    }


@pytest.mark.parametrize("text", ["2024", "true", "null", "[1]", '{"a": 1}', "1.5"])
def test_a_parameter_admitting_a_string_keeps_the_text_when_json_reads_a_type_it_does_not_admit(text):
    schema = {"properties": {"glob": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}
    expected = None if text == "null" else text  # null is admitted: read as JSON
    assert pairs_to_arguments([f"glob={text}"], schema) == {"glob": expected}
    # Control: where the schema admits what JSON reads, JSON it is.
    assert pairs_to_arguments(["either=7", "maybe=3"], SCHEMA) == {"either": 7, "maybe": 3}


def test_a_value_that_admits_a_string_falls_back_to_the_text():
    assert pairs_to_arguments(["either=seven", "unknown=plain"], SCHEMA) == {
        "either": "seven",
        "unknown": "plain",
    }


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        (["limit=five"], "argument limit='five': expected integer written as JSON"),
        (["flag=yes"], "argument flag='yes': expected boolean written as JSON"),
        (["novalue"], "argument 'novalue' is not KEY=VALUE"),
        (["=5"], "argument '=5' is not KEY=VALUE"),
        (["limit=1", "limit=2"], "argument 'limit' is given twice"),
    ],
)
def test_bad_pairs_name_the_key_and_what_is_allowed(pairs, message):
    with pytest.raises(ValueError) as info:
        pairs_to_arguments(pairs, SCHEMA)
    assert message in str(info.value)


def test_the_command_calls_the_tool_with_the_pairs(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["example"]\n')
    proc = reyn_cli("tools", "call", "convert_units", "value=2", "from_unit=km", "to_unit=m", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["data"] == {"value": 2000.0, "unit": "m", "dimension": "length"}


def test_a_bad_pair_is_a_usage_error_and_nothing_is_called(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["example"]\n')
    proc = reyn_cli("tools", "call", "convert_units", "value=two", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "argument value='two': expected number written as JSON" in proc.stderr


def test_pairs_and_args_together_are_refused(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["example"]\n')
    proc = reyn_cli("tools", "call", "convert_units", "value=2", "--args", "{}", cwd=tmp_path)
    assert proc.returncode == 2
    assert "either as --args JSON or as KEY=VALUE pairs, not both" in proc.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["--surface", "router", "value=2", "from_unit=km", "to_unit=m"],
        ["value=2", "--surface", "router", "from_unit=km", "to_unit=m"],
        ["value=2", "from_unit=km", "to_unit=m", "--surface", "router"],
        ["--surface", "phase", "--allowed-ops", "example", "value=2", "from_unit=km", "to_unit=m"],
    ],
    ids=["options-first", "options-between", "options-last", "after-allowed-ops"],
)
def test_options_and_pairs_may_come_in_any_order(tmp_path, argv, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["example"]\n')
    proc = reyn_cli("tools", "call", "convert_units", *argv, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["data"] == {"value": 2000.0, "unit": "m", "dimension": "length"}


def test_an_unknown_option_among_pairs_is_named_with_the_commands_usage(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["example"]\n')
    proc = reyn_cli("tools", "call", "convert_units", "value=2", "--bogus", "to_unit=m", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "usage: reyn tools call" in proc.stderr
    assert "unrecognized arguments: --bogus\n" in proc.stderr


def test_a_json_object_positional_is_the_arguments(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["example"]\n')
    body = json.dumps({"value": 2, "from_unit": "km", "to_unit": "m"})
    proc = reyn_cli("tools", "call", "convert_units", body, "--surface", "router", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["data"]["value"] == 2000.0


def test_a_word_that_is_not_a_pair_points_to_the_json_forms(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["example"]\n')
    proc = reyn_cli("tools", "call", "convert_units", "value", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "is not KEY=VALUE" in proc.stderr and "--args" in proc.stderr
