"""The whole of an MCP answer is cut to max_text_chars, whatever shape the server gives it: many text
blocks, huge structured content, embedded resources, images, a tools/list of thousands of tools.
Against a real SDK server (servers/big_results_server.py) over stdio, through the dispatcher."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reyn_core.host import dispatch_tool

BIG = Path(__file__).parent / "servers" / "big_results_server.py"
LIMIT = 20_000
SLACK = 2_000  # markers, names and field keys beyond the budget


def big(**env: str) -> dict:
    return {"command": sys.executable, "args": [str(BIG)], **({"env": env} if env else {})}


def ok(env: dict) -> dict:
    assert env["status"] == "ok", env
    return env["data"]


@pytest.fixture
def big_registry(mcp_registry, mcp_settings):
    def build(limit: int = LIMIT, **env: str):
        return mcp_registry(mcp_settings({"big": big(**env)}, max_text_chars=limit, call_timeout_s=60))

    return build


async def call(reg, ctx, tool: str, **arguments: object) -> dict:
    args = {"server": "big", "tool": tool, "arguments": arguments}
    return ok(await dispatch_tool(reg, "call_mcp_tool", args, ctx))


def size(data: dict) -> int:
    return len(json.dumps(data, ensure_ascii=False))


async def test_many_text_blocks_are_capped_in_total(big_registry, ctx) -> None:
    data = await call(big_registry(), ctx, "blocks", count=300, size=9_000)
    assert size(data) <= LIMIT + SLACK
    assert data["truncated"] is True and "max_text_chars=20000" in data["truncation"]
    assert (
        data["text"].startswith("b0:xxx")
        and "more characters cut: result limit max_text_chars=20000" in data["text"]
    )
    assert data["content"][-1]["type"] == "omitted" and data["content"][-1]["blocks"] > 250


async def test_huge_structured_content_becomes_a_marked_preview(big_registry, ctx) -> None:
    data = await call(big_registry(), ctx, "structured", size=3_000_000)
    assert size(data) <= LIMIT + SLACK
    assert data["structured_content"] is None
    preview = data["structured_content_preview"]
    assert preview.startswith('{"data": "yyy') and "more characters cut" in preview
    assert "structured_content (" in data["truncation"]
    assert data["text"] == "see structured content"


async def test_resources_links_and_images_are_capped_in_total(big_registry, ctx) -> None:
    data = await call(big_registry(), ctx, "resources", count=100, size=5_000)
    assert size(data) <= LIMIT + SLACK
    assert data["truncated"] is True
    image = next(b for b in data["content"] if b["type"] == "image")
    assert image["bytes"] == 5_000 and "not shown" in image["summary"] and "data" not in image
    assert data["content"][-1]["type"] == "omitted"


async def test_a_result_that_fits_is_passed_through_unmarked(big_registry, ctx) -> None:
    data = await call(big_registry(), ctx, "small_structured")
    assert data["structured_content"] == {"n": 1} and data["truncated"] is False
    assert "truncation" not in data and data["content"] == [{"type": "text", "text": '{"n": 1}'}]
    few = await call(big_registry(), ctx, "blocks", count=3, size=100)
    assert [b["text"][:3] for b in few["content"]] == ["b0:", "b1:", "b2:"] and few["truncated"] is False


async def test_huge_tool_listing_is_capped_and_counts_what_it_left_out(big_registry, ctx) -> None:
    reg = big_registry(TOOLS="1500", DESC="10000")
    data = ok(await dispatch_tool(reg, "list_mcp_tools", {"server": "big"}, ctx))
    assert size(data) <= LIMIT + SLACK
    assert data["total_tools"] == 1504 and len(data["tools"]) < 1504
    assert data["truncated"] is True and "more tools not listed" in data["truncation"]
    assert "can still be called by name" in data["truncation"]
    # a tool past the cut is still callable
    assert (await call(reg, ctx, "extra_01499", value="v"))["text"] == "extra 1499"


async def test_an_unknown_tool_error_lists_a_bounded_number_of_names(big_registry, ctx) -> None:
    reg = big_registry(TOOLS="1500", DESC="10")
    env = await dispatch_tool(reg, "call_mcp_tool", {"server": "big", "tool": "nope"}, ctx)
    assert env["error"]["kind"] == "invalid_arguments"
    assert "and 1454 more" in env["error"]["message"] and len(env["error"]["message"]) < 5_000
