"""``[plugins.search.settings]``: how ``find_tools`` ranks."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SearchSettings(BaseModel):
    """Settings of the search pack. Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    semantic: bool = Field(
        default=False,
        description="fuse BM25F with WordLlama's static embedding, shipped inside its wheel (needs "
        "pip install 'reyn-tools-search[semantic]'): held out, recall@5 0.888 against plain BM25's "
        "0.848 (docs/large-registries.md); off, the search needs no dependency",
    )
