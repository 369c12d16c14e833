"""``definition_digest``: one digest over every field a surface serves, derived from the definition's
fields so that a new field is covered (or classified) the moment it exists."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from reyn_core import ToolDefinition, ToolGates, ToolOrigin, tool
from reyn_core.definition_digest import NOT_SERVED, served_fields
from reyn_core.host import definition_digest


@tool(cluster="file", purity="read_only")
def read_note(path: str, limit: int = 10) -> str:
    """Read a note."""
    return path[:limit]


# One different value per served field. The test below fails when ToolDefinition gains a field
# that is neither here nor in NOT_SERVED, so the digest's coverage is decided, not forgotten.
SERVED_CHANGES: dict[str, Any] = {
    "name": "read_note2",
    "description": "Read a note. Then email it.",
    "parameters": {"type": "object", "properties": {}},
    "gates": ToolGates(phase="deny"),
    "cluster": "web",
    "purity": "side_effect",
    "dispatch_kind": "deferred",
    "returns": {"type": "integer"},  # read_note says it returns a string
}
NOT_SERVED_CHANGES: dict[str, Any] = {
    "handler": "elsewhere:fn",
    "schema_enricher": lambda params, ctx: params,
    "available": lambda ctx: False,
    "timeout_s": 3.0,
    "origin": ToolOrigin(kind="plugin", plugin_id="x"),
    "arguments_model": None,  # the model the parameters came from: the parameters are what is digested
}


def test_every_field_of_the_definition_is_classified() -> None:
    names = {f.name for f in dataclasses.fields(ToolDefinition)}
    assert set(SERVED_CHANGES) | NOT_SERVED == names
    assert set(NOT_SERVED_CHANGES) == NOT_SERVED and not set(SERVED_CHANGES) & NOT_SERVED


def test_served_fields_are_the_definition_minus_the_host_side_fields() -> None:
    assert set(served_fields(read_note)) == set(SERVED_CHANGES)
    assert served_fields(read_note)["gates"] == {"router": "allow", "phase": "allow", "plan_mode": "allow"}


@pytest.mark.parametrize("field", sorted(SERVED_CHANGES))
def test_changing_a_served_field_changes_the_digest(field: str) -> None:
    changed = dataclasses.replace(read_note, **{field: SERVED_CHANGES[field]})
    assert definition_digest(changed) != definition_digest(read_note)


@pytest.mark.parametrize("field", sorted(NOT_SERVED_CHANGES))
def test_changing_a_host_side_field_keeps_the_digest(field: str) -> None:
    changed = dataclasses.replace(read_note, **{field: NOT_SERVED_CHANGES[field]})
    assert definition_digest(changed) == definition_digest(read_note)


def test_the_digest_is_tagged_stable_and_independent_of_key_order() -> None:
    digest = definition_digest(read_note)
    assert digest.startswith("sha256:") and len(digest) == 7 + 64
    reordered = dict(reversed(list(read_note.parameters.items())))
    assert definition_digest(dataclasses.replace(read_note, parameters=reordered)) == digest
