"""``[plugins.source.settings]``: how much the source tools list and read, and whether MCP clients
may use them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SourceSettings(BaseModel):
    """Settings of the source pack. Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_read_chars: int = Field(
        default=48_000,
        ge=1_000,
        le=1_000_000,
        description="reyn_src_read returns at most this many characters per call (then next_line)",
    )
    max_file_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=64 * 1024,
        le=64 * 1024 * 1024,
        description="larger files are refused: each read re-hashes the whole file before serving it",
    )
    max_list_entries: int = Field(
        default=1000,
        ge=10,
        le=100_000,
        description="reyn_src_list lists at most this many files per call (narrow with prefix)",
    )
    serve_over_mcp: bool = Field(
        default=False,
        description="offer the tools to MCP clients of `reyn mcp serve` too (they read private plugin "
        "source); off: router only",
    )
