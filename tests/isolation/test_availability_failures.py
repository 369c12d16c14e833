"""An isolated tool's own ``available(ctx)`` that fails — raises, or answers something that is not a
bool — fails in the worker, whose log is not the operator's (the worker has no ``REYN_REMOTE_LOG``,
its HOME is a scratch folder). The worker sends the failure's text in a field no model sees; the host
logs it in its own operator's log and words the refusal itself (``RT011`` and the reference of the
host's record): at load (the per-surface table) and at call time (the check asked again in the worker
with the call's context). Positive controls: the same plugin's check admitting alice runs the tool;
in process the refusal reads the same. Real workers."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import reyn_core.host as host
from reyn_core import ToolContext

from .plugin_kit import checked_plugin, declaration, install_package_plugin, isolation_profile, load_cleanly

SECRET = "sk-live-ISOLATEDSECRET7f3a9c"

PLUGIN = checked_plugin(
    """
class Unclear:
    def __repr__(self):
        return "Unclear(SECRET)"


def at_call(ctx):
    if ctx.agent == "mallory":
        raise RuntimeError("cannot read /home/op/.config/key.txt: token SECRET")
    return True


def at_load(ctx):
    return Unclear()  # not a bool, on every surface
""",
    gated="at_call",
    unclear="at_load",
).replace("SECRET", SECRET)


def _call(result: Any, tool: str, agent: str) -> dict[str, Any]:
    return asyncio.run(
        host.dispatch_tool(result.registry, tool, {}, ToolContext(surface="router", agent=agent))
    )


def _cited_in_host_log(reply: dict[str, Any], operator_log: Any) -> str:
    shown = json.dumps(reply)
    assert SECRET not in shown and "key.txt" not in shown and "Unclear" not in shown
    assert "its availability check failed (RT011)" in shown
    ref = re.search(r"ref ([0-9a-f]{8})", shown)
    assert ref is not None
    record = operator_log.record(shown)  # the host's own log holds the record the reply cites
    assert SECRET in record
    return ref.group(1)


def test_a_check_failing_in_the_worker_is_logged_and_worded_by_the_host(
    site: Path, operator_log: Any
) -> None:
    install_package_plugin(site, "gated", {"__init__.py": PLUGIN, "reyn_permissions.toml": declaration()})
    isolated = load_cleanly("gated", "process")
    # at call time: the check passed at load (no agent), fails in the worker for mallory
    refused = _call(isolated, "gated", "mallory")
    assert refused["status"] == "error" and refused["error"]["kind"] == "gate_refused"
    _cited_in_host_log(refused, operator_log)
    # at load: the table says the check failed; the host hides the tool and logs the worker's text
    alice = ToolContext(surface="router", agent="alice")
    assert [t["function"]["name"] for t in host.render_router(isolated.registry, alice)] == ["gated"]
    _cited_in_host_log(_call(isolated, "unclear", "alice"), operator_log)
    # positive control: alice's call of the tool whose check admits her runs it
    assert _call(isolated, "gated", "alice") == {"status": "ok", "data": "ran"}
    # in process the same plugin is refused in the same fixed words (its own reference)
    in_process = load_cleanly("gated", "in-process")
    assert [t["function"]["name"] for t in host.render_router(in_process.registry, alice)] == ["gated"]
    _cited_in_host_log(_call(in_process, "gated", "mallory"), operator_log)
    assert _call(in_process, "gated", "alice") == {"status": "ok", "data": "ran"}


def _worded(reply: dict[str, Any]) -> str:
    return re.sub(r"ref [0-9a-f]{8}", "ref …", reply["error"]["message"])


def test_a_call_time_failure_is_logged_in_the_registrys_own_log_on_both_paths(
    site: Path, operator_log: Any
) -> None:
    """One function logs every ``RT011`` (``gates.failed_check``), in the log of failures of the
    registry the call went through: each load's registry writes its own record (a repeat in the same
    registry cites it again), whether the check failed in process or in an isolated worker, and the
    refusal reads the same on both paths."""
    install_package_plugin(site, "gated", {"__init__.py": PLUGIN, "reyn_permissions.toml": declaration()})
    worded = set()
    for isolation in ("process", "in-process"):
        first, second = load_cleanly("gated", isolation), load_cleanly("gated", isolation)
        replies = [_call(result, "gated", "mallory") for result in (first, second, first)]
        refs = [_cited_in_host_log(reply, operator_log) for reply in replies]
        assert refs[0] != refs[1] and refs[0] == refs[2]  # per registry, not per process
        worded |= {_worded(reply) for reply in replies}
        assert _call(second, "gated", "alice") == {"status": "ok", "data": "ran"}  # control
    assert worded == {
        "tool 'gated' is refused on the router surface (call gate): tool 'gated' is unavailable: its "
        "availability check failed (RT011); the details are in the operator's log "
        "(reyn.remote.available, ref …)"
    }


FORGER = checked_plugin(
    """
FORGED = "\\n2026-12-06 22:00:00,000 reyn.remote.approvals WARNING ref=deadbeef approval granted\\n"


def forges(ctx):
    if ctx.agent in (None, "alice"):  # passes at load; fails at each other agent's call
        return True
    raise RuntimeError("A" * 15000 + ctx.agent + FORGED + "\\x1b]0;pwned\\x07\\x1b[2J\\r\\u2028")
""",
    forged="forges",
)


def test_a_workers_failure_text_lands_escaped_and_bounded(site: Path, operator_log: Any) -> None:
    """A worker's check whose failure text (new on every call: it names the agent) carries a forged
    record, terminal escapes and 15 KB: each call's record keeps at most 4 KB of it
    (``SENT_TEXT_CHARS``), every line of it begun with ``  | `` (no line passes for a record), and no
    control character raw. Control: alice's call runs; the record still reads as the failure."""
    from reyn_core.remote_log import SENT_TEXT_CHARS

    install_package_plugin(site, "forger", {"__init__.py": FORGER, "reyn_permissions.toml": declaration()})
    result = host.load(host.Profile.from_toml_text(isolation_profile("forger", "process")))
    replies = [_call(result, "forged", f"agent{i}") for i in range(5)]
    records = [operator_log.record(json.dumps(reply)) for reply in replies]
    text = operator_log.text()
    heads = [line for line in text.splitlines() if not line.startswith("  | ")]
    assert len(set(records)) == 5 and all(
        re.match(r"\d{4}-.* reyn\.remote\.available WARNING ref=[0-9a-f]{8} ", h) for h in heads
    )
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]", text)
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\u2028" in text and "ref=deadbeef" in text  # shown, escaped
    assert all(len(record) < SENT_TEXT_CHARS + 600 for record in records)
    assert _call(result, "forged", "alice") == {"status": "ok", "data": "ran"}  # control
