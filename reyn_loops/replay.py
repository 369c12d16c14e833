"""LLM replay: record model calls once, replay them offline and deterministically.

A fixture is a JSONL file, one line per call::

    {"key": "sha256:…", "request": {model, messages, tools, tool_choice, …}, "reply": {message, …}}

The key is a hash of model, messages, tools and tool_choice (``LLMRequest.key``), so a change in a
tool's rendered schema or in a prompt is a different key, never a silent stale answer. In replay mode
a missing key raises ``ReplayMissing`` naming the key, the fixture file and how to record it. Record
mode is on when ``REYN_LLM_RECORD=1`` (or ``record=True``): requests already in the fixture are still
replayed, new ones go to the inner client and each successful reply is appended (failed calls write
nothing). To re-record a fixture from scratch, delete the file and run in record mode.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reyn_core.host import NotJsonNumber, parse_json
from reyn_loops.errors import ReplayFixtureError, ReplayMissing
from reyn_loops.llm import DeltaCallback, LLMClient, LLMReply, LLMRequest, default_client

RECORD_ENV = "REYN_LLM_RECORD"


def record_mode_from_env() -> bool:
    """True when ``REYN_LLM_RECORD`` is set to 1/true/yes."""
    return os.environ.get(RECORD_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def read_fixture(path: Path) -> dict[str, dict[str, Any]]:
    """Key → record, from a JSONL fixture (missing file = empty). Later lines win for a repeated key."""
    records: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return records
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = parse_json(line)  # a recorded reply: JSON's numbers only
        except json.JSONDecodeError as exc:
            raise ReplayFixtureError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        except NotJsonNumber as exc:
            raise ReplayFixtureError(f"{path}:{lineno}: not valid JSON ({exc})") from None
        if (
            not isinstance(record, dict)
            or not isinstance(record.get("key"), str)
            or not isinstance(record.get("reply"), Mapping)
        ):
            raise ReplayFixtureError(f"{path}:{lineno}: a record needs a string 'key' and a 'reply' object")
        records[record["key"]] = record
    return records


class ReplayClient:
    """An ``LLMClient`` that answers from a fixture file, or records into it.

    ``inner`` is the real client used in record mode (default: ``LiteLLMClient()``). ``record``
    defaults to the ``REYN_LLM_RECORD`` environment variable. ``calls`` counts replies served.
    """

    def __init__(
        self, fixture: str | os.PathLike[str], *, inner: LLMClient | None = None, record: bool | None = None
    ) -> None:
        self.fixture = Path(fixture)
        self.record = record_mode_from_env() if record is None else record
        self._inner = inner
        self._records = read_fixture(self.fixture)
        self._lock = threading.Lock()
        self.calls = 0
        self.keys_used: list[str] = []

    @property
    def inner(self) -> LLMClient:
        """The client record mode calls."""
        self._inner = default_client(self._inner)
        return self._inner

    async def complete(self, request: LLMRequest, *, on_delta: DeltaCallback | None = None) -> LLMReply:
        """The recorded reply for ``request`` (text is also passed to ``on_delta`` in one piece)."""
        key = request.key()
        self.keys_used.append(key)
        record = self._records.get(key)
        if record is not None:
            reply = LLMReply.from_dict(record["reply"])
            if on_delta is not None and request.stream and reply.text:
                on_delta(reply.text)
            self.calls += 1
            return reply
        if not self.record:
            last = request.messages[-1] if request.messages else {}
            preview = str(last.get("content") or "")[:80].replace("\n", " ")
            raise ReplayMissing(
                f"no recorded reply for request key {key} in fixture {self.fixture} "
                f"(model {request.model!r}, {len(request.messages)} message(s), "
                f"last {last.get('role', '?')}: {preview!r}); re-record it with {RECORD_ENV}=1",
                key=key,
                fixture=self.fixture,
            )
        reply = await self.inner.complete(request, on_delta=on_delta)  # a failure records nothing
        self._append({"key": key, "request": request.to_dict(), "reply": reply.to_dict()})
        self.calls += 1
        return reply

    def _append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock:
            self.fixture.parent.mkdir(parents=True, exist_ok=True)
            with self.fixture.open("a", encoding="utf-8") as fh:
                fh.write(line)
            self._records[record["key"]] = record
