"""The demo's scripted model: what it "says" at each turn, computed from what it is sent.

It stands in for a real LLM so the demo runs offline. It calls the tools the request offers (so the
demo adapts to the packs that are installed and enabled) — plus, on purpose, ``shell`` on the
router, which is never offered there, to show the role gate refusing it — and it writes its answers
from the real tool results it receives: every number in the transcript came from a tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reyn_core.host import parse_json
from reyn_loops.testing.scripted_server import ScriptedReply, tool_names

ROUTER_PROMPT = (
    "Get me ready for the release: check my todo notes, ticket REYN-7 in the tracker and the "
    "release page on the docs server, then remember what matters."
)
PHASE_TASK = "Summarise the notes folder into out/summary.md: one line per open item."
METADATA_URL = "http://169.254.169.254/latest/meta-data/"


# --------------------------------------------------------------------------- reading results


def results_by_tool(messages: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """Tool name → envelopes received for it, from an OpenAI conversation."""
    names: dict[str, str] = {}
    out: dict[str, list[Any]] = {}
    for m in messages:
        for call in m.get("tool_calls") or []:
            names[call.get("id", "")] = (call.get("function") or {}).get("name", "")
        if m.get("role") == "tool":
            try:
                envelope = parse_json(m.get("content") or "null")
            except ValueError:
                envelope = m.get("content")
            out.setdefault(names.get(m.get("tool_call_id", ""), "?"), []).append(envelope)
    return out


def find(value: Any, key: str) -> Any:
    """The first value stored under ``key`` anywhere inside ``value`` (depth first)."""
    if isinstance(value, Mapping):
        if key in value:
            return value[key]
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = find(item, key)
            if found is not None:
                return found
    return None


def ok_data(envelopes: Iterable[Any] | None) -> Any:
    """The data of the first successful envelope, or None."""
    for env in envelopes or ():
        if isinstance(env, Mapping) and env.get("status") == "ok":
            return env.get("data")
    return None


def text_of(data: Any) -> str:
    """The text in a tool result: a string, or its ``content`` / ``text`` field."""
    if isinstance(data, str):
        return data
    found = find(data, "content")
    if isinstance(found, str):
        return found
    found = find(data, "text")
    return found if isinstance(found, str) else ""


def open_items(markdown: str) -> list[str]:
    """The ``- item`` lines of a Markdown note."""
    return [line[2:].strip() for line in markdown.splitlines() if line.startswith("- ")]


# --------------------------------------------------------------------------- the router conversation


class RouterScript:
    """Three turns: look around (parallel calls), act (with two refusals shown), answer."""

    def __init__(self, docs_url: str) -> None:
        self.docs_url = docs_url

    def __call__(self, body: dict[str, Any]) -> ScriptedReply:
        offered = set(tool_names(body))
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if turn == 0:
            return self.look(offered)
        if turn == 1:
            return self.act(offered, results_by_tool(body["messages"]))
        return self.answer(results_by_tool(body["messages"]))

    def look(self, offered: set[str]) -> ScriptedReply:
        wanted: list[tuple[str, Mapping[str, Any]]] = [
            ("read_file", {"path": "notes/todo.md"}),
            (
                "call_mcp_tool",
                {"server": "tracker", "tool": "ticket_status", "arguments": {"ticket": "REYN-7"}},
            ),
            ("web_fetch", {"url": self.docs_url}),
            ("list_skills", {}),
            ("reyn_src_read", {"distribution": "reyn-core", "path": "reyn_core/__init__.py"}),
        ]
        calls = [c for c in wanted if c[0] in offered]
        if not calls:
            return ScriptedReply.text("No tools are enabled in this profile, so I can only chat.")
        return ScriptedReply.calls(
            *calls, content="Looking at the notes, the tracker and the release page at once."
        )

    def act(self, offered: set[str], results: dict[str, list[Any]]) -> ScriptedReply:
        # The legitimate calls first: the refused side-effecting call at the end stops only what
        # would come after it (dispatch_batch runs writes as ordered barriers, docs/approvals.md).
        calls: list[tuple[str, Mapping[str, Any]]] = []
        if "web_fetch" in offered:
            calls.append(("web_fetch", {"url": METADATA_URL}))  # refused by the SSRF guard
        page = text_of(ok_data(results.get("web_fetch")))
        size = re.search(r"(?<![\d.])(\d+(?:\.\d+)?)\s*MiB", page)  # starts only at a run of digits: linear
        if "convert_units" in offered:
            calls.append(
                (
                    "convert_units",
                    {"value": float(size.group(1)) if size else 48.0, "from_unit": "MiB", "to_unit": "MB"},
                )
            )
        ticket = ok_data(results.get("call_mcp_tool"))
        state = find(ticket, "state") or "unknown"
        if "remember_shared" in offered:
            calls.append(
                (
                    "remember_shared",
                    {
                        "slug": "release-reyn-7",
                        "name": "REYN-7 release status",
                        "type": "project",
                        "description": "state of the surfaces ticket before the release",
                        "body": (
                            f"REYN-7 (LLM surfaces and the demo) is {state}; "
                            f"owner {find(ticket, 'owner') or '?'}."
                        ),
                    },
                )
            )
        calls.append(("shell", {"argv": ["rm", "-rf", "notes"]}))  # never offered here: refused
        return ScriptedReply.calls(
            *calls, content="Cleaning up old notes, checking the cloud metadata, and saving notes."
        )

    def answer(self, results: dict[str, list[Any]]) -> ScriptedReply:
        lines = ["Here is where the release stands:"]
        todo = open_items(text_of(ok_data(results.get("read_file"))))
        if todo:
            lines.append(f"- notes/todo.md has {len(todo)} open items; first: {todo[0]}.")
        ticket = ok_data(results.get("call_mcp_tool"))
        if ticket is not None:
            lines.append(
                f"- REYN-7 is {find(ticket, 'state')} (owner {find(ticket, 'owner')}), "
                "from the tracker over MCP."
            )
        page = text_of(ok_data(results.get("web_fetch")))
        version = re.search(r"Reyn (\d+\.\d+\.\d+)", page)
        if version:
            lines.append(f"- The docs server announces Reyn {version.group(1)}.")
        converted = ok_data(results.get("convert_units"))
        if isinstance(converted, Mapping):
            lines.append(f"- The download is {converted.get('value')} {converted.get('unit')}.")
        skills = find(ok_data(results.get("list_skills")), "skills")
        if isinstance(skills, list) and skills:
            names = [s.get("name") if isinstance(s, Mapping) else str(s) for s in skills]
            lines.append(f"- Skills available: {', '.join(map(str, names))}.")
        source = ok_data(results.get("reyn_src_read"))
        if isinstance(source, Mapping) and source.get("served"):
            lines.append(
                f"- Reyn's own {source.get('path')} ({source.get('lines')}) matched its recorded sha256 "
                f"{str(source.get('sha256'))[:12]}."
            )
        if ok_data(results.get("remember_shared")) is not None:
            lines.append("- I saved the ticket status to shared memory as 'release-reyn-7'.")
        refused = [
            name
            for name, envs in results.items()
            if any(isinstance(e, Mapping) and e.get("status") == "error" for e in envs)
        ]
        if refused:
            lines.append(
                f"- Refused, as they should be: {', '.join(sorted(refused))} (see the errors above)."
            )
        return ScriptedReply.text("\n".join(lines))


# --------------------------------------------------------------------------- the phase


def phase_reply(control: str, ops: Sequence[Mapping[str, Any]] = (), artifact: Any = None) -> ScriptedReply:
    decision = {"finish": "finish", "abort": "abort", "transition": "continue"}[control]
    body: dict[str, Any] = {
        "control": {"type": control, "decision": decision, "confidence": 0.9},
        "control_ir": list(ops),
    }
    if artifact is not None:
        body["artifact"] = artifact
    return ScriptedReply.text(json.dumps(body, ensure_ascii=False))


def op_results(messages: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """Op kind → envelopes, from the runner's "Results of your ops" messages."""
    out: dict[str, list[Any]] = {}
    for m in messages:
        content = m.get("content") or ""
        if m.get("role") == "user" and content.startswith("Results of your ops"):
            for item in parse_json(content.split("\n", 1)[1]):
                out.setdefault(item.get("kind"), []).append(item.get("result"))
    return out


class PhaseScript:
    """Five replies: a forbidden op (sent back), reads, a question, writes, finish."""

    def __init__(self, ops: set[str]) -> None:
        self.ops = ops

    def __call__(self, body: dict[str, Any]) -> ScriptedReply:
        messages = body.get("messages", [])
        step = sum(1 for m in messages if m.get("role") == "assistant")
        results = op_results(messages)
        if step == 0:  # web_fetch is not in this phase's allowed_ops: the runner sends the error back
            return phase_reply("finish", [{"kind": "web_fetch", "url": "https://example.org/notes"}])
        if step == 1:
            reads = [
                {"kind": "list_directory", "path": "notes"},
                {"kind": "read_file", "path": "notes/todo.md"},
                {"kind": "read_file", "path": "notes/meeting.md"},
                {"kind": "list_memory", "layer": "shared"},
            ]
            return phase_reply("finish", [op for op in reads if op["kind"] in self.ops])
        if step == 2 and "ask_user" in self.ops:
            return phase_reply(
                "finish", [{"kind": "ask_user", "question": "Plain list or table for the summary?"}]
            )
        if "write_file" in self.ops and "write_file" not in results:
            return phase_reply("finish", self._writes(results))
        return self._finish(results)

    def _summary(self, results: dict[str, list[Any]]) -> tuple[str, list[str]]:
        texts = [
            text_of(env.get("data")) for env in results.get("read_file", []) if env.get("status") == "ok"
        ]
        items = [item for text in texts for item in open_items(text)]
        questions = [
            line.split(":", 1)[1].strip()
            for text in texts
            for line in text.splitlines()
            if line.lower().startswith("open question:")
        ]
        answer = find(ok_data(results.get("ask_user")), "answer") or "plain list"
        memory = find(ok_data(results.get("list_memory")), "entries") or []
        if str(answer).lower().startswith("table"):
            body = ["| open item |", "|---|", *[f"| {i} |" for i in items]]
        else:
            body = [f"- {i}" for i in items]
        lines = ["# Release summary", "", *body]
        if questions:
            lines += ["", "Open questions:", *[f"- {q}" for q in questions]]
        if memory:
            lines += [
                "",
                f"Remembered: {', '.join(str(e.get('slug')) for e in memory if isinstance(e, Mapping))}",
            ]
        return "\n".join(lines) + "\n", items

    def _writes(self, results: dict[str, list[Any]]) -> list[dict[str, Any]]:
        content, _ = self._summary(results)
        ops: list[dict[str, Any]] = [{"kind": "write_file", "path": "out/summary.md", "content": content}]
        if "shell" in self.ops:
            ops.append({"kind": "shell", "argv": ["wc", "-l", "out/summary.md"]})
        return ops

    def _finish(self, results: dict[str, list[Any]]) -> ScriptedReply:
        _, items = self._summary(results)
        data: dict[str, Any] = {"open_items": len(items)}
        if "write_file" in results:
            data["path"] = "out/summary.md"
        shell = ok_data(results.get("shell"))
        if shell is not None:
            count = re.match(
                r"\s*(\d+)", str(find(shell, "stdout") or "")
            )  # `wc -l` prints "11 out/summary.md"
            if count:
                data["line_count"] = int(count.group(1))
        answer = find(ok_data(results.get("ask_user")), "answer")
        if answer:
            data["format"] = answer
        return phase_reply("finish", artifact={"type": "release_summary", "data": data})


class DemoModel:
    """The one scripted model: phase requests (they carry the phase system prompt) go to the phase
    script, everything else to the router script."""

    def __init__(self, router: RouterScript, phase: PhaseScript) -> None:
        self.router = router
        self.phase = phase

    def __call__(self, body: dict[str, Any]) -> ScriptedReply:
        messages = body.get("messages") or [{}]
        system = messages[0].get("content") if messages[0].get("role") == "system" else ""
        if isinstance(system, str) and system.startswith("You are running the phase"):
            return self.phase(body)
        return self.router(body)
