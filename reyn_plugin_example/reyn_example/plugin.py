"""The ``example`` Reyn plugin: three pure tools and a settings model.

Entry point (see pyproject.toml): ``[project.entry-points."reyn.plugins"] example = "reyn_example.plugin"``.
Only ``reyn_core``'s public API is used, exactly as any third-party plugin would.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reyn_core import InvalidToolArguments, ToolContext, ToolGates, hookimpl, settings_as, tool

from .units import Unit, convert, dimension

REYN_API = 1

DEFAULT_STOPWORDS = (
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "but",
    "by",
    "for",
    "from",
    "in",
    "is",
    "it",
    "of",
    "on",
    "or",
    "that",
    "the",
    "this",
    "to",
    "was",
    "were",
    "with",
)


class ExampleSettings(BaseModel):
    """``[plugins.example.settings]`` in a profile. Unknown keys are errors (typos must not pass)."""

    model_config = ConfigDict(extra="forbid")

    precision: int = Field(default=6, ge=0, le=15, description="Significant digits kept by convert_units.")
    words_per_minute: int = Field(default=230, gt=0, le=2000, description="Reading speed used by text_stats.")
    stopwords: list[str] = Field(
        default_factory=lambda: list(DEFAULT_STOPWORDS),
        description="Words left out of text_stats' top_words (case-insensitive).",
    )


# --------------------------------------------------------------------------- convert_units


class ConvertUnitsArgs(BaseModel):
    """Arguments of ``convert_units``."""

    model_config = ConfigDict(extra="forbid")

    value: float = Field(description="The quantity to convert.")
    from_unit: Unit = Field(description="Unit of `value`.")
    to_unit: Unit = Field(description="Unit to convert to; must measure the same thing as from_unit.")


@tool(cluster="example", purity="read_only")
def convert_units(args: ConvertUnitsArgs, ctx: ToolContext) -> dict[str, Any]:
    """Convert a quantity between units of length, mass, time, data size, volume or temperature.

    Returns the converted value rounded to the configured significant digits, and the dimension.
    """
    try:
        raw = convert(args.value, args.from_unit, args.to_unit)
    except ValueError as exc:
        raise InvalidToolArguments(
            f"{exc}; convert between units of one dimension, e.g. km -> mi or C -> F"
        ) from None
    digits = settings_as(ctx, ExampleSettings).precision
    value = float(f"{raw:.{digits}g}") if digits else round(raw)
    return {"value": value, "unit": args.to_unit, "dimension": dimension(args.to_unit)}


# --------------------------------------------------------------------------- text_stats

_WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
_SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")


class TextStatsArgs(BaseModel):
    """Arguments of ``text_stats``."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The text to measure.", max_length=1_000_000)
    top_n: int = Field(default=5, ge=0, le=50, description="How many of the most frequent words to list.")


@tool(cluster="example", purity="read_only")
def text_stats(args: TextStatsArgs, ctx: ToolContext) -> dict[str, Any]:
    """Measure a text: characters, words, sentences, lines, paragraphs, reading time, top words."""
    settings = settings_as(ctx, ExampleSettings)
    text = args.text
    words = _WORD.findall(text)
    lowered = [w.lower() for w in words]
    stop = {s.lower() for s in settings.stopwords}
    counts = Counter(w for w in lowered if w not in stop)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: args.top_n]
    stripped = text.strip()
    return {
        "characters": len(text),
        "characters_no_spaces": sum(1 for c in text if not c.isspace()),
        "words": len(words),
        "unique_words": len(set(lowered)),
        "sentences": len(_SENTENCE_END.findall(stripped))
        + (0 if not stripped or stripped[-1] in ".!?" else 1),
        "lines": len(text.splitlines()),
        "paragraphs": len([p for p in re.split(r"\n\s*\n", text) if p.strip()]),
        "average_word_length": round(sum(map(len, words)) / len(words), 2) if words else 0.0,
        "reading_time_minutes": round(len(words) / settings.words_per_minute, 2),
        "top_words": [{"word": w, "count": n} for w, n in top],
    }


# --------------------------------------------------------------------------- markdown_outline

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^(```|~~~)")


class MarkdownOutlineArgs(BaseModel):
    """Arguments of ``markdown_outline``."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="Markdown text.", max_length=1_000_000)
    max_depth: int = Field(default=3, ge=1, le=6, description="Deepest heading level to include.")


@tool(cluster="example", purity="read_only", gates=ToolGates(router="deny", phase="allow"))
def markdown_outline(args: MarkdownOutlineArgs) -> list[dict[str, Any]]:
    """List the headings of a Markdown document (level, title, 1-based line), skipping code blocks.

    Phase only: a structuring step for skills; in chat the model reads the text itself.
    """
    outline: list[dict[str, Any]] = []
    fenced = False
    for number, line in enumerate(args.text.splitlines(), start=1):
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match and len(match.group(1)) <= args.max_depth:
            outline.append({"level": len(match.group(1)), "title": match.group(2), "line": number})
    return outline


# --------------------------------------------------------------------------- hooks


@hookimpl
def reyn_settings_model() -> type[ExampleSettings]:
    """The model of ``[plugins.example.settings]``."""
    return ExampleSettings


@hookimpl
def reyn_register_tools(register: Any, settings: ExampleSettings | None) -> None:
    """Register the three tools."""
    register(convert_units)
    register(text_stats)
    register(markdown_outline)
