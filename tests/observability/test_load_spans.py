"""Load spans: ``reyn.load`` with a child per phase, diagnostics as span events (issue 27).

A real load of the example plugin (installed by ``make venv``) with a profile that also configures a
plugin it does not enable (``RC004``): the load span has discovery, each step of the plugin's path
(provenance, import, …) and registration as children, and the diagnostic is an event.
"""

from __future__ import annotations

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from reyn_core.host import Profile, load

PROFILE = '[plugins]\nenable = ["example"]\n\n[plugins.forgotten]\nprefix = "f"\n'


def test_a_load_has_a_span_per_phase_with_diagnostics_as_events(spans: InMemorySpanExporter) -> None:
    result = load(Profile.from_toml_text(PROFILE))
    assert result.registry.tools()  # positive control: the example plugin loaded
    finished = {s.name: s for s in spans.get_finished_spans()}
    root = finished["reyn.load"]
    for name in (
        "reyn.load.discovery",
        "reyn.load.check_provenance",
        "reyn.load.import_plugin",
        "reyn.load.collect_tools",
        "reyn.load.registration",
    ):
        child = finished[name]
        assert child.parent is not None and child.parent.span_id == root.context.span_id, name
    assert finished["reyn.load.import_plugin"].attributes["reyn.plugin.id"] == "example"
    events = [e for e in root.events if e.name == "reyn.diagnostic"]
    assert [e.attributes["reyn.diagnostic.code"] for e in events] == ["RC004"]
    assert events[0].attributes["reyn.plugin.id"] == "forgotten"


def test_a_profile_turns_tracing_on_for_its_own_load(spans: InMemorySpanExporter) -> None:
    from reyn_otel import configure_tracing

    configure_tracing(False)
    load(Profile.from_toml_text("[plugins]\nenable = []\n\n[observability]\ntracing = false\n"))
    assert not spans.get_finished_spans()  # positive control below: the same load with tracing = true
    load(Profile.from_toml_text("[plugins]\nenable = []\n\n[observability]\ntracing = true\n"))
    assert "reyn.load" in {s.name for s in spans.get_finished_spans()}
