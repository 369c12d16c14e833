"""Load step 9: what a plugin's load reads besides its own files and settings (``reyn_load_inputs``).

A plugin that implements the hook declares the environment variables and the files or folders its
tools, checks, enrichers, settings and diagnostics read. The render cache (``cli/render_cache.py``)
replays ``reyn tools render`` only when every enabled plugin declared its inputs, and only while
each declared input is unchanged. A plugin without the hook — the default for every third-party
plugin — makes every load that enables it uncacheable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from reyn_core.errors import describe_exception
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.report import LoadInputs

MAX_DECLARED = 256
"""At most this many environment variables and this many paths per plugin (each is checked on every
cached render)."""

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def parse_load_inputs(value: Any, cwd: str | None = None) -> LoadInputs:
    """``LoadInputs`` from a hook's answer (relative paths joined to ``cwd``, default the current
    directory); ``ValueError`` saying what is wrong with a malformed one."""
    if not isinstance(value, Mapping):
        raise ValueError(f"returned a {type(value).__name__}, not a mapping or None")
    unknown = sorted(str(k) for k in value if k not in ("env", "paths"))
    if unknown:
        raise ValueError(f"returned unknown key(s) {', '.join(map(repr, unknown))} (allowed: env, paths)")
    env, paths = value.get("env", ()), value.get("paths", ())
    for key, items in (("env", env), ("paths", paths)):
        if isinstance(items, str | bytes) or not isinstance(items, list | tuple | set | frozenset):
            raise ValueError(f"{key} must be a list, got {type(items).__name__}")
        if len(items) > MAX_DECLARED:
            raise ValueError(f"{key} lists {len(items)} entries; at most {MAX_DECLARED}")
    bad_env = [n for n in env if not (isinstance(n, str) and _ENV_NAME.match(n))]
    if bad_env:
        raise ValueError(f"env entry {bad_env[0]!r} is not an environment variable name")
    base = cwd if cwd is not None else os.getcwd()
    resolved = []
    for path in paths:
        if not isinstance(path, str | os.PathLike) or not os.fspath(path) or "\0" in os.fspath(path):
            raise ValueError(f"paths entry {path!r} is not a path")
        resolved.append(os.path.normpath(os.path.join(base, os.path.expanduser(os.fspath(path)))))
    return LoadInputs(tuple(sorted(set(env))), tuple(sorted(set(resolved))))


def collect_load_inputs(session: LoadSession, p: PluginState) -> None:
    """Ask the plugin's ``reyn_load_inputs`` hook; a raising or malformed hook warns (``RI010``) and
    leaves the plugin undeclared, like a plugin without the hook."""
    assert p.pm is not None
    if not p.pm.hook.reyn_load_inputs.get_hookimpls():
        return
    try:
        declared = p.pm.hook.reyn_load_inputs(settings=p.settings)
    except (Exception, SystemExit) as exc:
        _warn(p, f"raised {describe_exception(exc)}")
        return
    if declared is None:
        return
    try:
        p.load_inputs = parse_load_inputs(declared)
    except ValueError as exc:
        _warn(p, str(exc))


def _warn(p: PluginState, problem: str) -> None:
    p.warn("RI010", f"reyn_load_inputs {problem}; no render that enables {p.plugin_id!r} is cached")


__all__ = ["MAX_DECLARED", "collect_load_inputs", "parse_load_inputs"]
