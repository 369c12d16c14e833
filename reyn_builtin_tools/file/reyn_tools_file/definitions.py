"""The seven file tools as loading and rendering see them: name, description, parameters schema,
gates, and a lazy ``"module:attr"`` handler.

The handlers and their argument models live in ``tools.py`` (with the path-safety code they use);
it is imported on a tool's first call, so loading the pack and rendering its tools cost only this
module. Each definition here must equal its ``@tool`` twin in ``tools.py`` field for field (the
handler aside): ``tests/packs/file/test_definitions.py`` checks it, so change both together.
"""

from __future__ import annotations

from collections.abc import Mapping

from reyn_core import ToolContext, ToolDefinition, ToolGates, ToolRuntimeMissing

from .settings import FileSettings

BOTH = ToolGates(router="allow", phase="allow")


def file_settings(ctx: ToolContext) -> FileSettings:
    """The pack's settings for this call (defaults when the host gave none)."""
    settings = ctx.settings
    if isinstance(settings, FileSettings):
        return settings
    if settings is None:
        return FileSettings()
    if isinstance(settings, Mapping):
        return FileSettings.model_validate(dict(settings))
    raise ToolRuntimeMissing(
        f"the file pack got settings of type {type(settings).__name__}, not FileSettings"
    )


def writable(ctx: ToolContext) -> bool:
    """Gate layer 3 of the write tools: available only when a write root is configured."""
    if not file_settings(ctx).write_roots:
        raise ToolRuntimeMissing(
            'no write root is configured; set [plugins.file.settings] write_roots = ["out"] '
            "in the profile to allow writes below out/"
        )
    return True


READ_FILE = ToolDefinition(
    name="read_file",
    description="Read a UTF-8 text file inside the workspace, optionally from line `offset` for `limit` lines.\n\nOutput is capped in bytes; when cut, `note` says how to continue. Binary files are refused.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "path": {
                "description": "File path, relative to the workspace (or absolute inside a root).",
                "type": "string",
            },
            "offset": {
                "default": 1,
                "description": "First line to return; 1 is the first line of the file.",
                "minimum": 1,
                "type": "integer",
            },
            "limit": {
                "anyOf": [{"minimum": 1, "type": "integer"}, {"type": "null"}],
                "default": None,
                "description": "Most lines to return; default: as many as the byte cap allows.",
            },
        },
        "required": ["path"],
        "type": "object",
    },
    handler="reyn_tools_file.tools:read_file",
    gates=BOTH,
    cluster="file",
    purity="read_only",
)

WRITE_FILE = ToolDefinition(
    name="write_file",
    description="Create or overwrite a text file inside a write root, atomically (readers never see half a file).",
    parameters={
        "additionalProperties": False,
        "properties": {
            "path": {"description": "File path inside a write root.", "type": "string"},
            "content": {
                "description": "The complete new content of the file (UTF-8 text).",
                "type": "string",
            },
            "create_dirs": {
                "default": True,
                "description": "Create missing parent directories.",
                "type": "boolean",
            },
        },
        "required": ["path", "content"],
        "type": "object",
    },
    handler="reyn_tools_file.tools:write_file",
    gates=BOTH,
    cluster="file",
    purity="side_effect",
    available=writable,
)

EDIT_FILE = ToolDefinition(
    name="edit_file",
    description="Replace exact text in a file inside a write root. Fails when `old_string` is missing, or appears\nmore than once without `replace_all`.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "path": {"description": "File path inside a write root.", "type": "string"},
            "old_string": {
                "description": "Exact text to replace, whitespace included.",
                "minLength": 1,
                "type": "string",
            },
            "new_string": {"description": "Replacement text.", "type": "string"},
            "replace_all": {
                "default": False,
                "description": "Replace every occurrence; otherwise old_string must be unique.",
                "type": "boolean",
            },
        },
        "required": ["path", "old_string", "new_string"],
        "type": "object",
    },
    handler="reyn_tools_file.tools:edit_file",
    gates=BOTH,
    cluster="file",
    purity="side_effect",
    available=writable,
)

DELETE_FILE = ToolDefinition(
    name="delete_file",
    description="Delete one regular file inside a write root (never a directory, link or protected path).",
    parameters={
        "additionalProperties": False,
        "properties": {
            "path": {"description": "Path of a regular file inside a write root.", "type": "string"},
        },
        "required": ["path"],
        "type": "object",
    },
    handler="reyn_tools_file.tools:delete_file",
    gates=BOTH,
    cluster="file",
    purity="side_effect",
    available=writable,
)

LIST_DIRECTORY = ToolDefinition(
    name="list_directory",
    description="List one directory: each entry's name, type (file, directory, symlink, other) and size.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "path": {
                "default": ".",
                "description": "Directory path, relative to the workspace; default the workspace.",
                "type": "string",
            },
        },
        "type": "object",
    },
    handler="reyn_tools_file.tools:list_directory",
    gates=BOTH,
    cluster="file",
    purity="read_only",
)

GLOB_FILES = ToolDefinition(
    name="glob_files",
    description="Find regular files whose path below `path` matches a glob pattern. Links are not followed.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "pattern": {
                "description": "Glob relative to `path`: `*` and `?` within a name, `**` across directories, e.g. `src/**/*.py`.",
                "type": "string",
            },
            "path": {
                "default": ".",
                "description": "Directory to search from; default the workspace.",
                "type": "string",
            },
        },
        "required": ["pattern"],
        "type": "object",
    },
    handler="reyn_tools_file.tools:glob_files",
    gates=BOTH,
    cluster="file",
    purity="read_only",
)

GREP_FILES = ToolDefinition(
    name="grep_files",
    description="Search text files for a regular expression; returns matching lines with optional context.\n\nBinary and oversized files are skipped; links are not followed; results are capped.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "pattern": {
                "description": "Python regular expression searched in each line.",
                "type": "string",
            },
            "path": {
                "default": ".",
                "description": "File or directory to search; default the workspace.",
                "type": "string",
            },
            "glob": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "Only files matching this glob, e.g. `*.py` (any depth) or `src/**/*.md`.",
            },
            "ignore_case": {"default": False, "description": "Match case-insensitively.", "type": "boolean"},
            "context": {
                "default": 0,
                "description": "Lines of context before and after each match.",
                "maximum": 10,
                "minimum": 0,
                "type": "integer",
            },
            "max_matches": {
                "anyOf": [{"minimum": 1, "type": "integer"}, {"type": "null"}],
                "default": None,
                "description": "Stop after this many matches (capped by the settings).",
            },
        },
        "required": ["pattern"],
        "type": "object",
    },
    handler="reyn_tools_file.tools:grep_files",
    gates=BOTH,
    cluster="file",
    purity="read_only",
)

TOOLS = (
    READ_FILE,
    WRITE_FILE,
    EDIT_FILE,
    DELETE_FILE,
    LIST_DIRECTORY,
    GLOB_FILES,
    GREP_FILES,
)
