"""The optional semantic ranking: BM25F fused with a static embedding (``[plugins.search.settings]
semantic = true``; ``pip install 'reyn-tools-search[semantic]'``).

The model is WordLlama's 256-dimension static embedding, whose weights and tokenizer ship inside the
``wordllama`` wheel: it is loaded from the package's own folder with downloads disabled, so nothing
is fetched at run time. Each tool is embedded once per snapshot (its name, description and parameter
names, as the index splits them); a search adds, over the best ``DEPTH`` tools of each ranking, the
BM25F score over the query's best score and ``WEIGHT`` times the cosine. The rule, the text embedded
and ``WEIGHT`` were chosen by the pre-registered cross-validation of docs/decisions.md (issue 31) and
measured once held out (docs/large-registries.md). numpy and the model are imported only here, on
the first semantic search.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reyn_core import ToolDefinition, ToolRuntimeMissing

from .ranking import DEFAULT_RANKING, field_texts

WEIGHT = 2.0
DEPTH = 50
MODEL = "wordllama-256"  # what the per-snapshot vectors are keyed by


@functools.lru_cache(maxsize=1)
def load_model() -> Any:
    """WordLlama's 256-dimension model from the files inside its wheel (the library looks for its
    tokenizer in a cache folder; its own package folder, which holds it, is passed as that folder).
    ``ToolRuntimeMissing`` when the extra is not installed."""
    try:
        import wordllama
    except ImportError:
        raise ToolRuntimeMissing(
            "tool 'find_tools': [plugins.search.settings] semantic = true needs the semantic extra: "
            "pip install 'reyn-tools-search[semantic]' (or set semantic = false)",
            tool="find_tools",
        ) from None
    root = Path(wordllama.__file__).parent
    return wordllama.WordLlama.load(dim=256, cache_dir=root, disable_download=True)


def embedding_text(tool: ToolDefinition) -> str:
    """What is embedded of ``tool``: its name split into words, its description and its parameters'
    names, joined as sentences."""
    name, description, param_names, _ = field_texts(tool, DEFAULT_RANKING)
    return ". ".join(p for p in (name, description, param_names) if p)


class SemanticRanking:
    """The embedding side of one index: a unit vector per tool, in the index's order."""

    def __init__(self, tools: Sequence[ToolDefinition], vectors: dict[str, Any]) -> None:
        """``vectors``: each tool's vector by name, shared by the indexes of one snapshot (filled
        here), so another visible set of the same snapshot embeds nothing again."""
        import numpy as np

        self._np = np
        self.model = load_model()
        missing = [t for t in tools if t.name not in vectors]
        if missing:
            rows = self.model.embed([embedding_text(t) for t in missing], norm=True)
            for tool, row in zip(missing, rows, strict=True):
                vectors[tool.name] = row
        self.names = [t.name for t in tools]
        self.matrix = np.stack([vectors[n] for n in self.names]) if tools else np.zeros((0, 256))

    def rank(self, lexical: Sequence[float], query: str, limit: int) -> list[int]:
        """The rows of the best ``limit`` tools for ``query``: over the best ``max(DEPTH, limit)`` of
        each ranking, ``lexical / max(lexical) + WEIGHT x cosine``, best first (ties by name)."""
        np = self._np
        if not self.names or limit < 1:
            return []
        depth = max(DEPTH, limit)
        scores = np.asarray(lexical, dtype=float)
        first = [int(i) for i in np.argsort(-scores, kind="stable")[:depth] if scores[i] > 0]
        # einsum, not BLAS: a matrix-vector product this small is faster than waking BLAS's threads
        # (10+ ms on a loaded machine against 0.4 ms for 2,000 tools)
        sims = np.einsum("ij,j->i", self.matrix, self.model.embed([query], norm=True)[0])
        second = [int(i) for i in np.argsort(-sims, kind="stable")[:depth]]
        top = float(scores.max()) or 1.0
        fused = {i: float(scores[i]) / top + WEIGHT * float(sims[i]) for i in {*first, *second}}
        return sorted(fused, key=lambda i: (-fused[i], self.names[i]))[:limit]
