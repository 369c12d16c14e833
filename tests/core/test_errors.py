"""Every error Reyn raises carries ``message``: what went wrong, the same text as ``str(error)``."""

from __future__ import annotations

import pytest

from reyn_core import ReynError, ToolDenied, ToolRegistrationError
from reyn_core.errors import ProfileError, RegistryFrozen, StrictSchemaError, describe_exception
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


def test_an_exception_is_described_in_one_line_that_never_raises():
    # the one wording of an exception in a message (RT007, a plugin command, the CLI's internal error)
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    assert describe_exception(Unprintable()) == "Unprintable"
    assert describe_exception(ValueError("")) == "ValueError"
    assert describe_exception(ValueError("first line\nsecond line")) == "ValueError: first line"
    assert describe_exception(ValueError("x" * 900)) == "ValueError: " + "x" * 500
