"""The seven file tools as ``@tool`` functions: the one source of truth of their names, descriptions,
parameter schemas and gates (``definitions.py`` reads the manifest generated from them). Every path
goes through ``paths`` and ``scope`` (checked as text, then against the roots), and every file system
call through ``descriptors`` and ``tree_walk`` (never following a link)."""

from __future__ import annotations

import os
import stat
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reyn_core import (
    ArgumentProblem,
    InvalidToolArguments,
    ToolContext,
    ToolExecutionError,
    ToolGates,
    settings_as,
    tool,
)

from .definitions import writable
from .descriptors import (
    atomic_write_at,
    kind_of,
    lstat_at,
    open_directory,
    open_parent,
    open_regular_at,
    unlink_at,
)
from .globs import Glob, compile_glob
from .grep import Grep
from .paths import Location, PathMissing, refuse_pseudo_fs
from .patterns import LineSearch
from .reading import read_lines, read_whole, refuse_if_binary
from .scope import Scope
from .settings import FileSettings, is_pseudo_fs_parts
from .tree_walk import PSEUDO_FS_NOTE, SearchWalk, WalkStats, list_names

CLUSTER = "file"
GATES = ToolGates(router="allow", phase="allow")
# Every file tool runs in a worker thread under this limit (the dispatcher's ``timeout_s``): a call
# that runs past it is answered with a ``timeout`` error and the event loop never waits on it.
TIMEOUT_S = 60.0
# glob_files and grep_files stop after this long (at most; ``search_seconds`` in the settings) and
# return what they found (truncated, with a note), well inside TIMEOUT_S: a thread cannot be killed,
# so the search stops itself — between files, and inside a file between bounded chunks of text
# (patterns.WORK_UNIT) — and its thread ends with the call, never after it.
WORK_SECONDS = 20.0


class _Args(BaseModel):
    """The arguments of a file tool: a key the schema does not name is an error."""

    model_config = ConfigDict(extra="forbid")


def _scope(ctx: ToolContext) -> tuple[FileSettings, Scope]:
    settings = settings_as(ctx, FileSettings)
    return settings, Scope.from_settings(settings, ctx.workspace, ctx.host_files)


def _invalid(field: str, message: str) -> InvalidToolArguments:
    return InvalidToolArguments(message, problems=[ArgumentProblem(f"/{field}", message)])


def _encode(content: str, field: str, limit: int) -> bytes:
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        raise _invalid(field, "content is not valid UTF-8 text (it contains lone surrogates)") from None
    if len(data) > limit:
        raise _invalid(field, f"content is {len(data)} bytes; the write limit is {limit} bytes")
    return data


def _noted(result: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """``result`` with its ``note``: why it is partial or what it leaves out, when anything."""
    if notes:
        result["note"] = "; ".join(notes)
    return result


# --------------------------------------------------------------------------- read_file


class ReadFileArgs(_Args):
    path: str = Field(description="File path, relative to the workspace (or absolute inside a root).")
    offset: int = Field(default=1, ge=1, description="First line to return; 1 is the first line of the file.")
    limit: int | None = Field(
        None, ge=1, description="Most lines to return; default: as many as the byte cap allows."
    )


@tool(cluster=CLUSTER, purity="read_only", gates=GATES, timeout_s=TIMEOUT_S)
def read_file(args: ReadFileArgs, ctx: ToolContext) -> dict[str, Any]:
    """Read a UTF-8 text file inside the workspace, optionally from line `offset` for `limit` lines.

    Output is capped in bytes; when cut, `note` says how to continue. Binary files are refused.
    """
    settings, scope = _scope(ctx)
    loc = scope.locate(args.path)
    scope.check_readable(loc)
    with open_parent(loc) as parent:
        fd, st = open_regular_at(
            parent, loc.name, loc.display, allow_hardlinks=settings.allow_hardlinked_reads
        )
    try:
        refuse_if_binary(fd, st.st_size, loc.display)
        part = read_lines(fd, start_line=args.offset, limit=args.limit, max_bytes=settings.max_read_bytes)
    finally:
        os.close(fd)
    result: dict[str, Any] = {
        "path": loc.display,
        "content": part.content,
        "start_line": part.start_line,
        "end_line": part.end_line,
        "size_bytes": st.st_size,
        "truncated": part.truncated,
    }
    if part.truncated:
        cut = "" if part.content.endswith("\n") else f" (line {part.end_line} was cut)"
        result["note"] = (
            f"output truncated at {settings.max_read_bytes} bytes, the read limit{cut}; the file is "
            f"{st.st_size} bytes — call read_file again with offset={part.end_line + 1} to continue"
        )
    elif not part.reached_end:
        result["note"] = f"more lines follow; call read_file with offset={part.end_line + 1} to continue"
    elif part.end_line < part.start_line and args.offset > 1:
        result["note"] = f"offset {args.offset} is past the end of the file"
    return result


# --------------------------------------------------------------------------- write_file


class WriteFileArgs(_Args):
    path: str = Field(description="File path inside a write root.")
    content: str = Field(description="The complete new content of the file (UTF-8 text).")
    create_dirs: bool = Field(True, description="Create missing parent directories.")


@tool(cluster=CLUSTER, purity="side_effect", gates=GATES, available=writable, timeout_s=TIMEOUT_S)
def write_file(args: WriteFileArgs, ctx: ToolContext) -> dict[str, Any]:
    """Create or overwrite a text file inside a write root, atomically (readers never see half a file)."""
    settings, scope = _scope(ctx)
    loc = scope.locate(args.path, write=True)
    scope.check_not_protected(loc)
    data = _encode(args.content, "content", settings.max_write_bytes)
    with open_parent(loc, create=args.create_dirs) as parent:
        created = atomic_write_at(parent, loc.name, data, loc.display)
    return {"path": loc.display, "bytes_written": len(data), "created": created}


# --------------------------------------------------------------------------- edit_file


class EditFileArgs(_Args):
    path: str = Field(description="File path inside a write root.")
    old_string: str = Field(min_length=1, description="Exact text to replace, whitespace included.")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(
        False, description="Replace every occurrence; otherwise old_string must be unique."
    )


@tool(cluster=CLUSTER, purity="side_effect", gates=GATES, available=writable, timeout_s=TIMEOUT_S)
def edit_file(args: EditFileArgs, ctx: ToolContext) -> dict[str, Any]:
    """Replace exact text in a file inside a write root. Fails when `old_string` is missing, or appears
    more than once without `replace_all`."""
    if args.old_string == args.new_string:
        raise _invalid("new_string", "new_string is identical to old_string; nothing would change")
    settings, scope = _scope(ctx)
    loc = scope.locate(args.path, write=True)
    scope.check_not_protected(loc)
    with open_parent(loc) as parent:
        fd, st = open_regular_at(parent, loc.name, loc.display)
        try:
            refuse_if_binary(fd, st.st_size, loc.display)
            raw = read_whole(fd, settings.max_write_bytes, loc.display)
        finally:
            os.close(fd)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolExecutionError(
                f"{loc.display!r} is not UTF-8 text; edit_file edits UTF-8 text only"
            ) from None
        count = text.count(args.old_string)
        if count == 0:
            raise ToolExecutionError(
                f"old_string was not found in {loc.display!r}; read the file and copy the exact text, "
                "whitespace and indentation included"
            )
        if count > 1 and not args.replace_all:
            raise ToolExecutionError(
                f"old_string appears {count} times in {loc.display!r}; include more surrounding text so it "
                "is unique, or pass replace_all=true"
            )
        new_text = text.replace(args.old_string, args.new_string, -1 if args.replace_all else 1)
        atomic_write_at(
            parent, loc.name, _encode(new_text, "new_string", settings.max_write_bytes), loc.display
        )
    return {"path": loc.display, "replacements": count if args.replace_all else 1}


# --------------------------------------------------------------------------- delete_file


class DeleteFileArgs(_Args):
    path: str = Field(description="Path of a regular file inside a write root.")


@tool(cluster=CLUSTER, purity="side_effect", gates=GATES, available=writable, timeout_s=TIMEOUT_S)
def delete_file(args: DeleteFileArgs, ctx: ToolContext) -> dict[str, Any]:
    """Delete one regular file inside a write root (never a directory, link or protected path)."""
    _, scope = _scope(ctx)
    loc = scope.locate(args.path, write=True)
    scope.check_not_protected(loc)
    with open_parent(loc) as parent:
        unlink_at(parent, loc.name, loc.display)
    return {"path": loc.display, "deleted": True}


# --------------------------------------------------------------------------- list_directory


class ListDirectoryArgs(_Args):
    path: str = Field(
        default=".", description="Directory path, relative to the workspace; default the workspace."
    )


# How list_directory shows a file type (named as in messages by ``kind_of``); anything else: "other".
_LISTED_TYPES = {"directory": "directory", "regular file": "file", "symbolic link": "symlink"}


@tool(cluster=CLUSTER, purity="read_only", gates=GATES, timeout_s=TIMEOUT_S)
def list_directory(args: ListDirectoryArgs, ctx: ToolContext) -> dict[str, Any]:
    """List one directory: each entry's name, type (file, directory, symlink, other) and size."""
    settings, scope = _scope(ctx)
    loc = scope.locate(args.path)
    stats = WalkStats()
    entries = []
    with open_directory(loc) as fd:
        names = list_names(fd, stats)
        pseudo = [n for n in names if is_pseudo_fs_parts((*loc.absolute_parts, n))]
        stats.skipped_pseudo_fs = len(pseudo)
        names = [n for n in names if n not in pseudo]
        for name in names[: settings.max_results]:
            st = lstat_at(fd, name)
            if st is None:
                continue
            entry: dict[str, Any] = {"name": name, "type": _LISTED_TYPES.get(kind_of(st.st_mode), "other")}
            if stat.S_ISREG(st.st_mode):
                entry["size"] = st.st_size
            entries.append(entry)
    result: dict[str, Any] = {
        "path": loc.display,
        "entries": entries,
        "truncated": len(names) > settings.max_results,
    }
    notes = []
    if result["truncated"]:
        notes.append(f"showing {settings.max_results} of {len(names)} entries (the result limit)")
    if stats.skipped_non_utf8:
        notes.append(f"{stats.skipped_non_utf8} entries with non-UTF-8 names are not shown")
    if stats.skipped_pseudo_fs:
        notes.append(f"{PSEUDO_FS_NOTE} are not shown")
    return _noted(result, notes)


# --------------------------------------------------------------------------- glob_files


class GlobFilesArgs(_Args):
    pattern: str = Field(
        description="Glob relative to `path`: `*` and `?` within a name, `**` across directories, "
        "e.g. `src/**/*.py`."
    )
    path: str = Field(default=".", description="Directory to search from; default the workspace.")


@tool(cluster=CLUSTER, purity="read_only", gates=GATES, timeout_s=TIMEOUT_S)
def glob_files(args: GlobFilesArgs, ctx: ToolContext) -> dict[str, Any]:
    """Find regular files whose path below `path` matches a glob pattern. Links are not followed."""
    settings, scope = _scope(ctx)
    loc = scope.locate(args.path)
    pattern = compile_glob(args.pattern, field="pattern")
    start = loc.child(*pattern.prefix)
    refuse_pseudo_fs(start.absolute_parts, start.display)  # the glob's literal prefix is a path too
    walk = SearchWalk(settings, WORK_SECONDS)
    found: list[str] = []
    more = False
    depth = None if pattern.depth is None else pattern.depth - len(pattern.prefix)
    try:
        with open_directory(start) as fd:
            for _, _, rel in walk.regular_files(fd, start.absolute_parts, depth):
                if pattern.matches((*pattern.prefix, *rel)):
                    if len(found) >= settings.max_results:
                        more = True
                        break
                    found.append(start.child(*rel).display)
    except PathMissing:
        if not pattern.prefix:
            raise
    result: dict[str, Any] = {
        "pattern": pattern.text,
        "path": loc.display,
        "files": found,
        "truncated": more or walk.out_of_time,
    }
    return _noted(result, walk.notes(limit=settings.max_results, more=more, what="files"))


# --------------------------------------------------------------------------- grep_files


class GrepFilesArgs(_Args):
    pattern: str = Field(
        description="Regular expression searched in each line, RE2 syntax (Python-like; no backreferences "
        "or lookaround), at most 1000 characters."
    )
    path: str = Field(default=".", description="File or directory to search; default the workspace.")
    glob: str | None = Field(
        None, description="Only files matching this glob, e.g. `*.py` (any depth) or `src/**/*.md`."
    )
    ignore_case: bool = Field(False, description="Match case-insensitively.")
    context: int = Field(default=0, ge=0, le=10, description="Lines of context before and after each match.")
    max_matches: int | None = Field(
        None, ge=1, description="Stop after this many matches (capped by the settings)."
    )


@tool(cluster=CLUSTER, purity="read_only", gates=GATES, timeout_s=TIMEOUT_S)
def grep_files(args: GrepFilesArgs, ctx: ToolContext) -> dict[str, Any]:
    """Search text files for a regular expression; returns matching lines with optional context.

    Binary and oversized files are skipped; links are not followed; results are capped.
    """
    settings, scope = _scope(ctx)
    loc = scope.locate(args.path)
    search = LineSearch(
        args.pattern, field="pattern", what="regular expression", ignore_case=args.ignore_case
    )
    file_filter: Glob | None = (
        compile_glob(args.glob, field="glob", basename_if_plain=True) if args.glob else None
    )
    limit = min(args.max_matches or settings.max_results, settings.max_results)
    walk = SearchWalk(settings, WORK_SECONDS)
    grep = Grep(search, walk, args.context, limit)
    if loc.parts and _is_regular(loc):
        scope.check_readable(loc)
        with open_parent(loc) as parent:
            grep.search(parent, loc.name, loc.display)
    else:
        with open_directory(loc) as fd:
            for parent, name, rel in walk.regular_files(fd, loc.absolute_parts, None):
                if file_filter and not file_filter.matches(rel):
                    continue
                found = loc.child(*rel)
                if scope.secret_refusal(found):
                    grep.skipped_secret += 1
                    continue
                grep.search(parent, name, found.display)
                if grep.full:
                    grep.more = True
                    break
                if walk.expired():
                    break
    result: dict[str, Any] = {
        "pattern": args.pattern,
        "path": loc.display,
        "matches": grep.matches,
        "files_searched": grep.searched,
        "truncated": grep.more or walk.out_of_time,
    }
    return _noted(result, [*walk.notes(limit=limit, more=grep.more, what="matches"), *grep.notes()])


def _is_regular(loc: Location) -> bool:
    with open_parent(loc) as parent:
        st = lstat_at(parent, loc.name)
    return st is not None and stat.S_ISREG(st.st_mode)


TOOLS = (read_file, write_file, edit_file, delete_file, list_directory, glob_files, grep_files)
