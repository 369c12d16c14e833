"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, node >= 22) against
``reyn mcp serve --http``, serving the ``conformance_probe`` plugin's tools through the dispatcher.

``make mcp-conformance`` (a prerequisite of ``make test``) npm-installs the suite and a node 22
binary into ``.venv/conformance``. The whole active server suite runs in one process; the scenarios
of features Reyn does not offer are listed, each with its reason, in ``conformance-baseline.yml``
— the suite fails the run when one of them fails *or* passes (a stale entry), and when any other
scenario fails. Without the suite installed the test skips (under ``CI=true`` it fails).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from site_plugin import install_site_plugin

from .conftest import ServeWorld

SUITE = Path(sys.executable).parent.parent / "conformance" / "node_modules" / ".bin"
BASELINE = Path(__file__).parent / "conformance-baseline.yml"
PLUGIN = Path(__file__).parent / "conformance_plugin.py"
PROFILE = """\
[plugins]
enable = ["conformance_probe", "mcp"]
"""


@pytest.fixture
def conformance_world(serve_world: ServeWorld) -> ServeWorld:
    install_site_plugin(serve_world.site, "conformance_probe", PLUGIN.read_text())
    serve_world.write_profile(PROFILE)
    return serve_world


def _suite() -> Path:
    runner = SUITE / "conformance"
    if not (runner.exists() and (SUITE / "node").exists()):
        why = (
            f"the MCP conformance suite is not installed in {SUITE.parent.parent} (run: make mcp-conformance)"
        )
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    return runner


def _checks(results: Path) -> dict[str, list[str]]:
    """Scenario → the statuses of its checks, from the suite's ``checks.json`` files."""
    out: dict[str, list[str]] = {}
    for path in sorted(results.rglob("checks.json")):
        scenario = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", path.parent.name.removeprefix("server-"))
        out.setdefault(scenario, []).extend(c["status"] for c in json.loads(path.read_text()))
    return out


def test_the_conformance_suite_passes_every_scenario_of_what_reyn_offers(
    conformance_world: ServeWorld, tmp_path: Path
) -> None:
    runner = _suite()
    env = {**os.environ, "PATH": f"{SUITE}{os.pathsep}{os.environ.get('PATH', '')}"}  # node 22 first
    with conformance_world.http() as server:
        args = ["server", "--url", server.url, "--suite", "all", "--expected-failures", str(BASELINE)]
        proc = subprocess.run(
            [str(runner), *args, "--output-dir", str(tmp_path / "results")],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    report = proc.stdout[-6000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, report
    checks = _checks(tmp_path / "results")
    offered = (
        "tools-call-with-progress",
        "tools-call-with-logging",
        "logging-set-level",
        "json-schema-2020-12",
    )
    for scenario in offered:
        assert checks.get(scenario) and set(checks[scenario]) == {"SUCCESS"}, (scenario, report)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({"answer": "yes"}, "User response: {'answer': 'yes'}"),
        (
            {"username": "testuser", "email": "test@example.com"},
            "lacks 'answer' (the form asked for it; the answer had: email, username)",
        ),
    ],
)
async def test_an_elicited_answer_without_the_forms_field_is_a_clear_error(
    conformance_world: ServeWorld, content: dict[str, str], expected: str
) -> None:
    # What the suite's tools-call-elicitation client does (it fills its own form) — and the control.
    import mcp_types as types
    from mcp import Client

    async def answer(ctx: object, params: object) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content=content)

    async with Client(conformance_world.stdio(), elicitation_callback=answer, mode="legacy") as client:
        result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert expected in text and result.is_error is ("lacks" in expected)
