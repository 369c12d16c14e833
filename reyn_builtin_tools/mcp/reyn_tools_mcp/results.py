"""What a model sees of an MCP answer: tool results and tool listings, bounded as a whole.

A server chooses how much it sends — one text block or three hundred, a 30 MB ``structuredContent``,
embedded resources, base64 images, a ``tools/list`` of thousands of tools — so a per-block cap is
not a cap. Every answer here is cut to one budget, ``max_text_chars`` characters of JSON text for
the whole result, spent in order of use to a model: the joined ``text``, then ``structured_content``,
then the ``content`` blocks (and for a listing, the tools in name order). What does not fit is
replaced by a marker a model can read (``[… N more characters cut: result limit max_text_chars=…]``,
a ``{"type": "omitted"}`` block, a ``structured_content_preview``) and ``truncated`` is true with a
``truncation`` sentence saying what was cut. Binary data (images, audio, blobs) is never included:
only its type and size. The markers add a few hundred characters at most beyond the budget.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types
from pydantic import ConfigDict

MAX_FIELD = 1_000  # names, URIs, MIME types, titles: short by nature, cut hard
MAX_NAMES_SHOWN = 50  # tool names listed in an error message


class ServedTool(mcp_types.Tool):
    """A listed tool that keeps every field the server sent — unknown ones included — so that what
    is pinned (``snapshot.served_sha256``) is the whole served object, not the SDK's known fields.
    (The SDK's own ``list_tools`` still runs when it validates a result against an output schema.)"""

    model_config = ConfigDict(extra="allow")


class ServedListing(mcp_types.ListToolsResult):
    """A ``tools/list`` page of ``ServedTool``."""

    tools: list[ServedTool]  # type: ignore[assignment]


class Budget:
    """Characters left for one result; ``take`` spends them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit
        self.cuts: list[str] = []

    def take(self, text: str, what: str) -> str:
        """``text`` whole if it fits, else its start and a marker (the cut is recorded)."""
        if len(text) <= self.left:
            self.left -= len(text)
            return text
        kept = max(self.left, 0)
        self.left = 0
        self.cuts.append(f"{what}: {len(text)} characters cut to {kept}")
        return (
            text[:kept]
            + f"\n[... {len(text) - kept} more characters cut: result limit max_text_chars={self.limit}]"
        )

    def fits(self, size: int) -> bool:
        return size <= self.left

    def spend(self, size: int) -> None:
        self.left = max(self.left - size, 0)


def short(value: Any, limit: int = MAX_FIELD) -> Any:
    """A server-chosen short field (name, URI, MIME type) cut to ``limit`` characters; None stays None."""
    if value is None:
        return None
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def b64_size(data: str) -> int:
    """The decoded size of base64 ``data``, without decoding it."""
    return max(len(data) * 3 // 4 - data[-2:].count("="), 0)


def names_preview(names: list[str]) -> str:
    """Up to ``MAX_NAMES_SHOWN`` names for a message, and how many more there are."""
    shown = [short(n, 100) for n in names[:MAX_NAMES_SHOWN]]
    more = len(names) - len(shown)
    return repr(shown) + (f" and {more} more" if more > 0 else "") if names else "none"


def _json_size(value: Any) -> int | None:
    try:
        return len(json.dumps(value, ensure_ascii=False, default=str))
    except (ValueError, TypeError, RecursionError):
        return None


def _block(block: Any, budget: Budget, index: int) -> dict[str, Any]:
    if isinstance(block, mcp_types.TextContent):
        if budget.fits(len(block.text)):
            budget.spend(len(block.text))
            return {"type": "text", "text": block.text}
        budget.cuts.append(
            f"content[{index}]: a text block of {len(block.text)} characters shown only in `text`"
        )
        budget.left = 0
        return {
            "type": "text",
            "chars": len(block.text),
            "summary": f"[text block of {len(block.text)} characters, not repeated: its start is in `text`]",
        }
    if isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
        size, mime = b64_size(block.data), short(block.mime_type, 100)
        return {
            "type": block.type,
            "mime_type": mime,
            "bytes": size,
            "summary": f"[{block.type} {mime}, {size} bytes, not shown]",
        }
    if isinstance(block, mcp_types.EmbeddedResource):
        res = block.resource
        uri = short(res.uri)
        item: dict[str, Any] = {"type": "resource", "uri": uri, "mime_type": short(res.mime_type, 100)}
        if isinstance(res, mcp_types.TextResourceContents):
            item["text"] = budget.take(res.text, f"content[{index}] resource text")
        else:
            item["bytes"] = b64_size(res.blob)
            item["summary"] = f"[resource {uri}, {item['bytes']} bytes, not shown]"
        return item
    if isinstance(block, mcp_types.ResourceLink):
        item = {
            "type": "resource_link",
            "uri": short(block.uri),
            "name": short(block.name, 200),
            "description": None
            if block.description is None
            else budget.take(block.description, f"content[{index}] description"),
            "mime_type": short(block.mime_type, 100),
        }
        return item
    return {"type": short(getattr(block, "type", "unknown"), 100), "summary": "[unsupported content block]"}


def convert_result(
    server: str, tool: str, result: mcp_types.CallToolResult, max_chars: int
) -> dict[str, Any]:
    """A JSON-safe result — text, structured content, summarised binaries, the error flag — cut to
    ``max_chars`` characters as a whole (see the module docstring)."""
    budget = Budget(max_chars)
    blocks = list(result.content)
    texts = [b.text for b in blocks if isinstance(b, mcp_types.TextContent)]
    text = budget.take("\n".join(texts), "text")
    out: dict[str, Any] = {"server": server, "tool": tool, "is_error": bool(result.is_error), "text": text}

    structured = result.structured_content
    if structured is not None:
        size = _json_size(structured)
        if size is not None and budget.fits(size):
            budget.spend(size)
        else:
            dumped = json.dumps(structured, ensure_ascii=False, default=str) if size is not None else "null"
            what = (
                f"structured_content ({len(dumped)} characters of JSON) given as structured_content_preview"
            )
            out["structured_content_preview"] = budget.take(dumped, what)
            structured = None

    content: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        if budget.left <= 0 and index > 0:
            omitted = len(blocks) - index
            budget.cuts.append(f"content: {omitted} more blocks omitted")
            content.append(
                {
                    "type": "omitted",
                    "blocks": omitted,
                    "summary": (
                        f"[{omitted} more content blocks not shown: result limit max_text_chars={max_chars}]"
                    ),
                }
            )
            break
        content.append(_block(block, budget, index))
    out["content"] = content
    out["structured_content"] = structured
    out["truncated"] = bool(budget.cuts)
    if budget.cuts:
        out["truncation"] = f"the result was cut to max_text_chars={max_chars}: " + "; ".join(budget.cuts)
    return out


def bounded_listing(server: str, tools: list[dict[str, Any]], max_chars: int) -> dict[str, Any]:
    """A ``tools/list`` answer (entries from ``tool_to_dict``, in name order) cut to ``max_chars``:
    long descriptions are cut, a schema that does not fit is left out with its size, and tools past
    the budget are counted, not listed."""
    budget = Budget(max_chars)
    listed: list[dict[str, Any]] = []
    for index, tool in enumerate(tools):
        if budget.left <= 0:
            rest = len(tools) - index
            budget.cuts.append(f"{rest} more tools not listed")
            break
        entry = {
            "name": short(tool["name"], 200),
            "title": short(tool.get("title"), 200),
            "description": budget.take(tool.get("description") or "", f"tools[{index}].description"),
        }
        size = _json_size(tool.get("input_schema"))
        if size is not None and budget.fits(size):
            budget.spend(size)
            entry["input_schema"] = tool.get("input_schema")
        else:
            budget.cuts.append(f"tools[{index}].input_schema ({size} characters) left out")
            entry["input_schema"] = None
            entry["input_schema_chars"] = size
        budget.spend(len(entry["name"]) + 40)
        listed.append(entry)
    out: dict[str, Any] = {
        "server": server,
        "tools": listed,
        "total_tools": len(tools),
        "truncated": bool(budget.cuts),
    }
    if budget.cuts:
        out["truncation"] = (
            f"the listing was cut to max_text_chars={max_chars}: "
            + "; ".join(budget.cuts[:20])
            + (f"; and {len(budget.cuts) - 20} more cuts" if len(budget.cuts) > 20 else "")
            + ". Every tool can still be called by name with call_mcp_tool."
        )
    return out
