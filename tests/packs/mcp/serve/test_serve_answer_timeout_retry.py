"""``--answer-timeout`` is the one deadline of the user's answer on the 2026-07-28 retry path too,
against a real ``reyn mcp serve --http`` subprocess and the real SDK client: a ``requestState``
(a deferred tool's result, an approval question) answered after it is refused and runs nothing —
before, a ``requestState`` lived a fixed 600 s whatever the setting, and an approval's had no time
limit of its own. The control: the same answer given at once goes through."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .conftest import ServeWorld, call_over_http

APPROVALS = """{base}
[approvals]
settings.file = "approvals.sqlite"

[[approvals.rules]]
tools = ["probe_wait"]
"""


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _call_answering_after(
    world: ServeWorld, late: bool, tool: str, arguments: dict, content: dict
) -> Any:
    """``tool`` called by a 2026-07-28 client whose user answers with ``content``: at once, or
    (``late``) once the server's one-second ``--answer-timeout`` has passed."""
    import mcp_types as types

    async def answer(ctx: Any, params: Any) -> types.ElicitResult:
        if late:
            await asyncio.sleep(2.5)  # past the server's --answer-timeout (1 s)
        return types.ElicitResult(action="accept", content=content)

    with world.http("--answer-timeout", "1") as server:
        return await call_over_http(server.url, tool, arguments, answer)


@pytest.mark.parametrize("late", [True, False])
async def test_a_deferred_answer_after_the_answer_timeout_is_refused(
    serve_world: ServeWorld, late: bool
) -> None:
    result = await _call_answering_after(
        serve_world, late, "probe_deferred", {"question": "ship it?"}, {"result": "done by a person"}
    )
    if late:
        assert result.is_error and "unknown or expired requestState" in _text(result)
    else:  # the control
        assert not result.is_error and result.structured_content == {"result": "done by a person"}


@pytest.mark.parametrize("late", [True, False])
async def test_an_approval_answered_after_the_answer_timeout_runs_nothing(
    serve_world: ServeWorld, late: bool
) -> None:
    serve_world.write_profile(APPROVALS.format(base=serve_world.root.joinpath("reyn.toml").read_text()))
    (serve_world.markers / "t0.go").touch()  # once started, it finishes at once
    result = await _call_answering_after(serve_world, late, "probe_wait", {"tag": "t0"}, {"approve": True})
    if late:
        assert result.is_error and "no answer within 1 s" in _text(result)
        assert not (serve_world.markers / "t0.started").exists()
    else:  # the control
        assert not result.is_error and (serve_world.markers / "t0.started").exists()
