"""Every error Reyn raises carries ``message``: what went wrong, the same text as ``str(error)``."""

from __future__ import annotations

import pytest

from reyn_core import ReynError, ToolDenied, ToolRegistrationError
from reyn_core.errors import ProfileError, RegistryFrozen, StrictSchemaError
from reyn_core.loading.step3_provenance.lock import LockError


@pytest.mark.parametrize(
    "error",
    [
        ReynError("the profile names no plugin"),
        RegistryFrozen("the registry is frozen"),
        ToolDenied("outside the roots", tool="read_file"),
        ToolRegistrationError("RT001", "bad name", tool="x y"),
        ProfileError("unknown key", key="plugins.enabel"),
        StrictSchemaError("t", "additionalProperties must be false"),
        LockError("reyn.lock", "not valid TOML"),
    ],
)
def test_the_message_is_the_error_text(error):
    assert error.message == str(error) and error.message


def test_a_subclass_keeps_its_own_fields_beside_the_message():
    error = ToolRegistrationError("RT001", "bad name", tool="x y", hint="use snake_case")
    assert (error.code, error.message, error.tool, error.hint) == (
        "RT001",
        "bad name",
        "x y",
        "use snake_case",
    )
