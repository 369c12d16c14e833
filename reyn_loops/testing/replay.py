"""pytest fixture and marker ``llm_replay``: LLM calls recorded once, replayed offline.

::

    @pytest.mark.llm_replay("fixtures/summarise.jsonl")   # relative to the test file's folder
    async def test_summary(llm_replay, registry):
        loop = RouterLoop(registry, model="openai/gpt-4o-mini", client=llm_replay)
        result = await loop.run("Summarise notes.md")

``llm_replay`` is a ``reyn_loops.ReplayClient``. Without the marker the fixture file is
``llm_fixtures/<module>__<test>.jsonl`` next to the test file. By default it replays and raises
``ReplayMissing`` (naming the missing key and the fixture file) for an unrecorded request; with
``REYN_LLM_RECORD=1`` in the environment (or ``record=True`` on the marker) unrecorded requests go
to the real model through litellm and are appended. Marker keywords ``api_base``, ``api_key`` and
``num_retries`` configure that real client.

This module is reyn-loops' pytest plugin (entry point ``pytest11: reyn_loops``), loaded in every test
suite where reyn-loops is installed; at import time it imports only pytest.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from reyn_loops.replay import ReplayClient

MARKER = "llm_replay"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "llm_replay(fixture=None, *, record=None, api_base=None, api_key=None, num_retries=2): "
        "replay LLM calls from a JSONL fixture (relative to the test file); REYN_LLM_RECORD=1 records",
    )


def default_fixture_path(test_file: Path, test_name: str) -> Path:
    """``<test dir>/llm_fixtures/<module>__<test>.jsonl`` (parametrize ids made file-safe)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name).strip("_")
    return test_file.parent / "llm_fixtures" / f"{test_file.stem}__{safe}.jsonl"


@pytest.fixture
def llm_replay(request: pytest.FixtureRequest) -> ReplayClient:
    """A ``ReplayClient`` bound to this test's fixture file (see the module docstring)."""
    from reyn_loops.llm import LiteLLMClient
    from reyn_loops.replay import ReplayClient

    test_file = Path(str(request.node.path))
    mark = request.node.get_closest_marker(MARKER)
    args = mark.args if mark is not None else ()
    kwargs = dict(mark.kwargs) if mark is not None else {}
    fixture = kwargs.pop("fixture", args[0] if args else None)
    path = test_file.parent / fixture if fixture else default_fixture_path(test_file, request.node.name)
    record = kwargs.pop("record", None)
    inner = LiteLLMClient(
        api_base=kwargs.pop("api_base", None),
        api_key=kwargs.pop("api_key", None),
        num_retries=int(kwargs.pop("num_retries", 2)),
    )
    if kwargs:
        raise pytest.UsageError(
            f"@pytest.mark.llm_replay got unknown keyword(s): {', '.join(sorted(kwargs))}"
        )
    return ReplayClient(path, inner=inner, record=record)
