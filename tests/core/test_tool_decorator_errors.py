"""``@tool`` on a parameter it cannot describe says which tool, which parameter and what works —
never pydantic's internal advice (``arbitrary_types_allowed``), never a silent ``{}`` schema."""

from __future__ import annotations

import socket
import threading

import pytest

from reyn_core import tool


def test_an_unsupported_parameter_type_names_the_tool_the_parameter_and_what_works():
    with pytest.raises(TypeError) as info:

        @tool
        def send(sock: socket.socket, text: str) -> None:
            """Send text."""

    message = str(info.value)
    assert (
        "@tool test_an_unsupported_parameter_type_names_the_tool_the_parameter_and_what_works.<locals>.send"
        in message
    )
    assert "parameter 'sock' has type socket" in message
    assert "str, int, float, bool" in message
    assert "arbitrary_types_allowed" not in message


def test_an_unsupported_type_inside_a_container_is_found_too():
    with pytest.raises(TypeError, match=r"parameter 'locks' has type list\[_thread.lock\]|parameter 'locks'"):

        @tool
        def wait(locks: list[threading.Lock]) -> None:  # type: ignore[valid-type]
            """Wait."""


def test_an_unannotated_parameter_is_refused_instead_of_rendering_an_empty_schema():
    with pytest.raises(TypeError) as info:

        @tool
        def echo(text, times: int = 1) -> str:  # type: ignore[no-untyped-def]
            """Echo."""
            return text * times

    assert "parameter 'text' has no type annotation" in str(info.value)
    assert "annotate it (e.g. `text: str`)" in str(info.value)


def test_ctx_needs_no_annotation_and_typed_tools_still_build():
    @tool
    def greet(name: str, ctx) -> str:  # type: ignore[no-untyped-def]
        """Greet."""
        return name

    assert list(greet.parameters["properties"]) == ["name"]
