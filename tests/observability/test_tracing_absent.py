"""Without ``opentelemetry`` (a broken install of reyn-otel), or with tracing off, nothing of it is imported;
asked to turn spans on without it, ``configure_tracing`` raises ``ImportError`` saying so.

Each case runs in a fresh interpreter: one where ``opentelemetry`` is made unimportable
(``sys.modules['opentelemetry'] = None``, what Python does for a package that is not there), one with
the package installed and tracing left off; both dispatch a call and list the modules loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import asyncio, json, sys
{setup}
from reyn_core import ToolContext, ToolDefinition
from reyn_core.host import RegistryBuilder, dispatch_tool
from reyn_otel import configure_tracing

async def echo(text: str) -> str:
    return text

b = RegistryBuilder()
b.register(ToolDefinition(name="echo", description="Echo.", parameters={{"type": "object",
    "properties": {{"text": {{"type": "string"}}}}, "required": ["text"]}}, handler=echo))
reg = b.freeze()
try:
    on = configure_tracing({enable})
except ImportError as exc:
    on = str(exc)
env = asyncio.run(dispatch_tool(reg, "echo", {{"text": "hi"}}, ToolContext(surface="router")))
loaded = sorted(m for m, v in sys.modules.items() if m.split(".")[0] == "opentelemetry" and v is not None)
print(json.dumps({{"status": env["status"], "on": on, "loaded": loaded}}))
"""


def run(setup: str, enable: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(setup=setup, enable=enable)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_without_the_api_package_nothing_is_imported_and_tracing_stays_off_and_says_why() -> None:
    result = run("sys.modules['opentelemetry'] = None", "True")
    assert result["status"] == "ok" and result["loaded"] == []  # calls run, without spans
    assert "reyn-otel needs opentelemetry-api, which cannot be imported" in result["on"]


def test_with_the_api_installed_and_tracing_off_nothing_is_imported() -> None:
    result = run("", "False")
    assert result == {"status": "ok", "on": False, "loaded": []}


def test_positive_control_turning_tracing_on_imports_the_api() -> None:
    result = run("", "True")
    assert result["on"] is True and "opentelemetry.trace" in result["loaded"]
