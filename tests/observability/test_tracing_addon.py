"""A profile that turns tracing on reaches the tracing add-on only through its ``reyn.tracing`` entry
point (issue 24): with reyn-otel importable its spans are on; with it broken the load says so once
(``RC012``) and everything else loads and runs. (Not installed at all: tests/author/test_fresh_venv.py,
in a venv with reyn-core alone.)"""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import asyncio, json, sys
{setup}
import reyn_core.observation as observation
from reyn_core import ToolContext, ToolDefinition
from reyn_core.host import Profile, RegistryBuilder, dispatch_tool, load

result = load(Profile.from_toml_text("[plugins]\nenable = []\n\n[observability]\ntracing = true\n"))
async def echo(text: str) -> str:
    return text

b = RegistryBuilder()
b.register(ToolDefinition(name="echo", description="Echo.", parameters={{"type": "object",
    "properties": {{"text": {{"type": "string"}}}}, "required": ["text"]}}, handler=echo))
env = asyncio.run(dispatch_tool(b.freeze(), "echo", {{"text": "hi"}}, ToolContext(surface="router")))
print(json.dumps({{
    "diagnostics": [[d.code, d.message] for d in result.report.diagnostics],
    "observer": type(observation.active).__name__,
    "status": env["status"],
}}))
"""


def run(setup: str, tmp_path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(setup=setup)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=tmp_path,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_profile_with_tracing_on_installs_the_add_ons_observer(tmp_path) -> None:
    result = run("", tmp_path)
    assert result == {"diagnostics": [], "observer": "SpanObserver", "status": "ok"}


def test_a_broken_add_on_is_one_clear_diagnostic_and_the_rest_runs(tmp_path) -> None:
    result = run("sys.modules['reyn_otel'] = None", tmp_path)  # what Python does for a missing package
    assert result["observer"] == "NoneType" and result["status"] == "ok"
    ((code, message),) = result["diagnostics"]
    assert code == "RC012"
    assert "the tracing add-on cannot be used" in message and "reyn_otel" in message
    assert "no spans are made" in message


BROKEN_ADD_ON = """
import reyn_otel  # the installed add-on (its files are the digested ones), its configure_tracing broken
def configure_tracing(enabled, **options):
    {body}
reyn_otel.configure_tracing = configure_tracing
"""


def test_an_add_on_that_raises_is_one_diagnostic_naming_why_and_the_rest_runs(tmp_path) -> None:
    result = run(BROKEN_ADD_ON.format(body='raise RuntimeError("exporter misconfigured")'), tmp_path)
    assert result["observer"] == "NoneType" and result["status"] == "ok"
    ((code, message),) = result["diagnostics"]
    assert code == "RC012" and "RuntimeError: exporter misconfigured" in message
    assert "no spans are made" in message


def test_an_add_on_that_answers_no_bool_is_one_diagnostic(tmp_path) -> None:
    result = run(BROKEN_ADD_ON.format(body='return "yes"'), tmp_path)
    assert result["observer"] == "NoneType" and result["status"] == "ok"
    ((code, message),) = result["diagnostics"]
    assert code == "RC012" and "answered str" in message


def test_without_opentelemetry_api_the_load_says_so(tmp_path) -> None:
    """reyn-otel installed, its dependency missing: before, spans stayed off with no word of it."""
    result = run("sys.modules['opentelemetry'] = None", tmp_path)
    assert result["observer"] == "NoneType" and result["status"] == "ok"
    ((code, message),) = result["diagnostics"]
    assert code == "RC012" and "opentelemetry-api" in message and "cannot be imported" in message
