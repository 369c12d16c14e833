r"""The source pack's two tools as ``@tool`` functions: the one source of truth of their names,
descriptions, parameter schemas and gates. Imported on a tool's first call; loading and rendering
read the generated ``tools.json`` through ``definitions.py``. After changing a tool, regenerate the
manifest (``tests/packs/test_lazy_definitions.py`` fails until you do)::

    python -m reyn_core.manifest reyn_tools_source.tools:TOOLS \
        > reyn_builtin_tools/source/reyn_tools_source/tools.json

Both tools are router only (``phase="deny"``): they answer a person's questions about Reyn in chat;
a phase does a task in the workspace and has no reason to read the framework's or a plugin's code.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from reyn_core import (
    ArgumentProblem,
    InvalidToolArguments,
    ToolContext,
    ToolGates,
    secret_paths,
    settings_as,
    tool,
)

from .availability import source_available
from .listing import ReadableDistribution, find, names, readable_all
from .reading import SourceRefused, line_window, verified_bytes
from .settings import SourceSettings

CLUSTER = "source"
ROUTER_ONLY = ToolGates(router="allow", phase="deny")


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _invalid(tool_name: str, pointer: str, message: str) -> InvalidToolArguments:
    return InvalidToolArguments(
        f"invalid arguments for {tool_name!r}: {pointer}: {message}",
        tool=tool_name,
        problems=[ArgumentProblem(pointer, message)],
    )


def _distribution(ctx: ToolContext, name: str, tool_name: str) -> ReadableDistribution:
    found = find(ctx, name)
    if found is None:
        known = ", ".join(names(ctx))
        raise _invalid(
            tool_name,
            "/distribution",
            f"{name[:100]!r} is not readable here; readable: {known} (reyn-core and the enabled plugins)",
        )
    return found


class SrcListArgs(_Args):
    distribution: Annotated[str, Field(max_length=200)] | SkipJsonSchema[None] = Field(
        None,
        description="a distribution from the list this tool returns without one (e.g. reyn-core)",
    )
    prefix: str = Field(
        "", max_length=1024, description="only files whose recorded path starts with this text"
    )


@tool(cluster=CLUSTER, purity="read_only", gates=ROUTER_ONLY, available=source_available)
def reyn_src_list(args: SrcListArgs, ctx: ToolContext) -> dict[str, Any]:
    """List the installed, digest-verified source of Reyn: without distribution, the readable
    distributions (reyn-core and the enabled plugins); with one, its recorded files (narrow with
    prefix). Read a file with reyn_src_read."""
    if args.distribution is None:
        dists, note = readable_all(ctx)
        result: dict[str, Any] = {"distributions": [d.summary() for d in dists]}
        if note:
            result["note"] = note
        return result
    dist = _distribution(ctx, args.distribution, "reyn_src_list")
    limit = settings_as(ctx, SourceSettings).max_list_entries
    matched = [f for f in dist.files.values() if f.path.startswith(args.prefix)]
    files: list[dict[str, Any]] = []
    for f in matched[:limit]:
        entry: dict[str, Any] = {"path": f.path}
        if f.problem:
            entry["not_served"] = f.problem
        files.append(entry)
    result = {**dist.summary(), "files": files, "count": len(matched)}
    if len(matched) > limit:
        result["truncated"] = f"showing {limit} of {len(matched)} files; pass a longer prefix"
    return result


class SrcReadArgs(_Args):
    distribution: str = Field(max_length=200, description="the distribution, as reyn_src_list names it")
    path: str = Field(
        min_length=1, max_length=1024, description="a file path exactly as reyn_src_list lists it"
    )
    start_line: int = Field(default=1, ge=1, description="the first line to return (1-based; see next_line)")


@tool(cluster=CLUSTER, purity="read_only", gates=ROUTER_ONLY, available=source_available)
def reyn_src_read(args: SrcReadArgs, ctx: ToolContext) -> dict[str, Any]:
    """Read one recorded source file of Reyn or an enabled plugin. It is re-hashed on every read and
    served only when it matches its recorded hash. Long files come in windows: pass next_line as
    start_line to read on."""
    settings = settings_as(ctx, SourceSettings)
    dist = _distribution(ctx, args.distribution, "reyn_src_read")
    entry = dist.files.get(args.path)
    if entry is None:
        raise _invalid("reyn_src_read", "/path", _not_recorded(dist, args.path))
    try:
        # a RECORD can list any path, the host's secrets too (an installer that read the key could
        # record its hash): the core's one rule refuses them, naming only the recorded name
        refusal = secret_paths(ctx.host_files).refusal(entry.location, entry.path)
        if refusal is not None:
            raise SourceRefused(f"{refusal}; it is not served.")
        data = verified_bytes(entry, settings.max_file_bytes)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise SourceRefused(
                f"{entry.path} is not UTF-8 text (a binary file); it is not served."
            ) from None
        window = line_window(text, args.start_line, settings.max_read_chars)
    except SourceRefused as exc:
        return {"distribution": dist.name, "path": entry.path, "served": False, "reason": exc.message}
    result: dict[str, Any] = {
        "distribution": dist.name,
        "version": dist.version,
        "path": entry.path,
        "served": True,
        "sha256": entry.sha256,
        "lines": f"{window.start}-{window.end} of {window.total}",
        "text": window.text,
    }
    if window.truncated:
        result["next_line"] = window.end + 1 if window.end < window.total else None
        result["truncated"] = f"the window holds at most {settings.max_read_chars:,} characters; " + (
            f"pass start_line={window.end + 1} to read on"
            if window.end < window.total
            else "the line was cut"
        )
    return result


def _not_recorded(dist: ReadableDistribution, path: str) -> str:
    """Why ``path`` names no recorded file, and the closest recorded ones."""
    shown = path[:200]
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":") or ".." in path.split("/"):
        why = (
            f"{shown!r} is a file-system path; paths here are the names {dist.name}'s record lists "
            "(relative, no '..'), never joined to a folder"
        )
    else:
        why = f"{shown!r} is not a file {dist.name}'s record lists"
    close = difflib.get_close_matches(path, list(dist.files), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else "; see reyn_src_list"
    return why + hint


TOOLS = (reyn_src_list, reyn_src_read)
