"""How the ``reyn`` command picks its span exporters from ``OTEL_*`` (issue 27); the end-to-end tests
show the set-up exporting for real."""

from __future__ import annotations

import pytest

from reyn_core.cli.loading import export_spans as command_exports_spans
from reyn_core.loading.step1_profile.profile import Profile
from reyn_otel import export_spans, exporter_names


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({}, ["otlp_proto_http"]),
        ({"OTEL_TRACES_EXPORTER": "otlp,console"}, ["otlp_proto_http", "console"]),
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ["otlp_proto_grpc"]),
        (
            {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"},
            ["otlp_proto_http"],
        ),
        ({"OTEL_TRACES_EXPORTER": "none"}, []),
    ],
)
def test_exporters_follow_the_standard_variables(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], names: list[str]
) -> None:
    for var in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert exporter_names() == names


def test_a_provider_already_set_is_left_alone(capsys: pytest.CaptureFixture[str]) -> None:
    from opentelemetry import trace

    before = trace.get_tracer_provider()  # the test suite's own SDK provider (conftest)
    assert export_spans() is False
    profile = Profile.model_validate({"observability": {"tracing": True}})
    assert command_exports_spans(profile) is False  # the command's glue reaches it through the add-on
    assert trace.get_tracer_provider() is before
    assert capsys.readouterr().err == ""


def test_nothing_is_set_up_unless_the_profile_turns_tracing_on() -> None:
    assert command_exports_spans(Profile.model_validate({"observability": {"tracing": False}})) is False
    assert command_exports_spans(Profile.model_validate({})) is False
