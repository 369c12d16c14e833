"""The render cache: ``reyn tools render`` replayed without loading while nothing it depends on changed.

A warm render spends nearly all its time importing and building what the load needs (pydantic's
model machinery, the profile's and the packs' settings models, the plugin modules) to print the
bytes it printed last time. When every enabled plugin declares what its load reads
(``reyn_load_inputs``), a successful run's output — stdout, stderr, exit code 0 — is stored under
the user cache dir, and a later run replays it when every input is the same (``render_inputs``: the
command line, directory, interpreter and import path, the environment that matters, the profile's
bytes, reyn-core's and each plugin's verified digest, the declared variables and paths). All of it
is checked again on every run; an entry that is missing, unreadable, corrupt, foreign or different,
or that anyone but this user could have written (a link, another owner, group- or world-writable),
is a miss that loads as usual, never an error.

Never stored: a run with an ``[audit] log`` (its state is reported), ``[lock] verify = "full"`` (it
asks for re-hashing on every load), a plugin that declares nothing (the default for third-party
plugins), a run whose load read another profile than the key holds, an input that changed during
the run or less than two seconds before it, and any run that failed. ``REYN_RENDER_CACHE=off`` or
``--no-cache`` (or an abbreviation argparse accepts) turns the cache off; ``REYN_RENDER_CACHE=trace``
says on stderr what it did and why.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reyn_core.cli import render_inputs as inputs
from reyn_core.cli.render_inputs import NotCacheable

ENTRIES_DIR = "renders"
MAX_ENTRIES = 64
"""The oldest entries beyond this many are deleted when one is written."""
MAX_ENTRY_BYTES = 32 * 1024 * 1024


def applies(argv: Sequence[str], command: str | None, words: Sequence[str]) -> bool:
    """Whether this command line may use the cache: ``tools render`` without help or ``--no-cache``
    (nor an abbreviation argparse reads as one, such as ``--no-cach``), and the cache not switched
    off."""
    if os.environ.get(inputs.SWITCH, "").strip().lower() in ("off", "0", "no", "false"):
        return False
    return (
        command == "tools"
        and bool(words)
        and words[0] == "render"
        and not any(_abbreviates(word) for word in argv)
    )


def _abbreviates(word: str) -> bool:
    """``-h`` or a prefix argparse expands to ``--help`` or ``--no-cache`` (``--no-`` alone is
    ambiguous with ``--no-defer``, an error)."""
    option = word.partition("=")[0]
    return (
        option == "-h"
        or (len(option) > 2 and "--help".startswith(option))
        or (len(option) > 5 and "--no-cache".startswith(option))
    )


def run_cached(argv: Sequence[str], profile_file: str | None, run: Callable[[], int]) -> int:
    """Replay the stored output of ``argv`` when every input is unchanged, else ``run()`` it and store
    its output when it may be replayed later. Returns the exit code."""
    trace = os.environ.get(inputs.SWITCH, "").strip().lower() == "trace"
    started = time.time_ns()
    notes: list[str] = []
    try:
        before = inputs.world(argv, profile_file)
        entry = _entry_path(argv, before)
        replayed = _replay(entry, before, notes)
    except NotCacheable as exc:
        _trace(trace, f"not used: {exc}")
        return run()
    except Exception as exc:  # the cache only saves time: it never stops a render
        _trace(trace, f"not used: {type(exc).__name__}: {exc}")
        return run()
    if replayed is not None:
        _trace(trace, f"replayed {entry.name}")
        return replayed
    from reyn_core.cli.loading import observe_loads

    with _captured() as (writes, tees), observe_loads() as loads:
        code = run()
    try:
        if any(tee.bypassed for tee in tees):
            raise NotCacheable("something wrote to stdout or stderr around sys.stdout / sys.stderr")
        _store(entry, argv, profile_file, started, before, loads, writes, code)
    except NotCacheable as exc:
        _trace(trace, f"loaded; not stored: {exc}", notes)
    except Exception as exc:  # e.g. the cache folder cannot be written
        _trace(trace, f"loaded; not stored: {type(exc).__name__}: {exc}", notes)
    else:
        _trace(trace, f"loaded; stored {entry.name}", notes)
    return code


def _trace(enabled: bool, message: str, notes: Sequence[str] = ()) -> None:
    """One line on stderr per run, what the cache did (and, in parentheses, why an entry found was
    not used when it was not private)."""
    if enabled:
        print(f"reyn: render cache: {message}{''.join(f' ({note})' for note in notes)}", file=sys.stderr)


def _entry_path(argv: Sequence[str], before: dict[str, Any]) -> Path:
    """One entry per command line, folder, interpreter and terminal-ness (a render to a terminal and
    one piped elsewhere keep an entry each instead of replacing each other's)."""
    from reyn_core.loading.userdirs import user_cache_dir

    named = [inputs.FORMAT, sys.executable, os.getcwd(), list(argv), before["terminal"]]
    name = inputs.sha256_hex(inputs.canonical(named))
    return user_cache_dir() / ENTRIES_DIR / f"{name[:32]}.json"


def _digest(salt: str, recorded: dict[str, Any], writes: list[list[Any]]) -> str:
    """The hash of every input of an entry and of its output (a corrupt entry is a miss). Salted, so
    that a value (an API key in a declared variable) cannot be looked up in a precomputed table or
    matched across entries; the salt is in the entry, so whoever can read an entry can test guesses,
    which is one more reason entries are private to their user. Not a signature: see ``_replay``."""
    return inputs.sha256_hex(bytes.fromhex(salt) + inputs.canonical([recorded, writes]))


def _current(before: dict[str, Any], plugins: list[list[str]], env: list[str], paths: list[str]) -> Any:
    return {
        "world": before,
        "plugins": {pid: inputs.plugin_digest(pid, dist) for pid, dist in plugins},
        "env": inputs.env_values(env),
        "paths": inputs.path_states(paths),
    }


def _replay(entry: Path, before: dict[str, Any], notes: list[str]) -> int | None:
    """Write the stored output and return its exit code when the entry is valid and every input it
    records is unchanged; None otherwise (``notes`` says why when the entry was not private)."""
    import json

    from reyn_core.loading.userdirs import CacheMiss, read_private

    try:
        # The digest ties an entry to its inputs but proves nothing about who wrote it: whoever else
        # could write the entry (a shared ``$REYN_CACHE_DIR``) could compute a digest for any output.
        raw = read_private(entry, MAX_ENTRY_BYTES)
    except CacheMiss as miss:
        if not miss.absent:
            notes.append(f"not replayed: {miss}")
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not _well_formed(data):
        return None
    try:
        current = _current(before, data["plugins"], data["env"], data["paths"])
    except NotCacheable:  # e.g. a recorded plugin is no longer installed
        return None
    if _digest(data["salt"], current, data["writes"]) != data["digest"]:
        return None
    # The writes in their order, to streams buffered as the run's were: stdout and stderr merged
    # into one file or terminal interleave as they did.
    streams = (sys.stdout, sys.stderr)
    for stream, text in data["writes"]:
        streams[stream].write(text)
    return 0


def _well_formed(data: Any) -> bool:
    def strings(value: Any) -> bool:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)

    def hexes(value: Any, length: int) -> bool:
        return isinstance(value, str) and len(value) == length and all(c in "0123456789abcdef" for c in value)

    return (
        isinstance(data, dict)
        and data.get("format") == inputs.FORMAT
        and hexes(data.get("salt"), 32)
        and hexes(data.get("digest"), 64)
        and isinstance(data.get("plugins"), list)
        and all(strings(p) and len(p) == 2 for p in data["plugins"])
        and strings(data.get("env"))
        and strings(data.get("paths"))
        and isinstance(data.get("writes"), list)
        and all(
            isinstance(w, list)
            and len(w) == 2
            and w[0] in (0, 1)
            and type(w[0]) is int
            and isinstance(w[1], str)
            for w in data["writes"]
        )
    )


def _store(
    entry: Path,
    argv: Sequence[str],
    profile_file: str | None,
    started: int,
    before: dict[str, Any],
    loads: list[Any],
    writes: list[list[Any]],
    code: int,
) -> None:
    """Write the entry, or raise ``NotCacheable`` saying why this run may not be replayed."""
    if code != 0:
        raise NotCacheable(f"exit code {code}")
    if len(loads) != 1:
        raise NotCacheable(f"{len(loads)} loads in one run")
    result = loads[0]
    profile = result.profile
    keyed = before["profile"][0] if before["profile"] else None
    if profile.source != keyed:
        # The key found the profile with the fast path's reading of the command line; argparse, which
        # the load used, can read it otherwise (a repeated or abbreviated --profile-file).
        raise NotCacheable(f"the load read the profile {profile.source}, not {keyed}, which the key holds")
    if profile.audit.log:
        raise NotCacheable("the profile has an [audit] log, whose state a load reports")
    if profile.lock.verify != "cache":
        raise NotCacheable('[lock] verify = "full" re-hashes on every load')
    undeclared = sorted(pid for pid, declared in result.load_inputs.items() if declared is None)
    if undeclared:
        raise NotCacheable(
            f"plugin(s) {', '.join(undeclared)} did not load or declare their inputs (reyn_load_inputs)"
        )
    plugins, env, paths = [], set(), set()
    for pid, declared in sorted(result.load_inputs.items()):
        info = result.report.plugin(pid)
        if info is None or info.provenance is None or not info.distribution:
            raise NotCacheable(f"plugin {pid!r} has no provenance record")
        inputs.plugin_digest(pid, info.distribution, loaded=info.provenance)
        plugins.append([pid, info.distribution])
        env.update(declared.env)
        paths.update(declared.paths)
    if profile.lock.enforce:
        paths.add(str(profile.lock_path))
    if inputs.world(argv, profile_file) != before:
        raise NotCacheable("the profile, the environment or an installed distribution changed during the run")
    current = _current(before, plugins, sorted(env), sorted(paths))
    racy = inputs.recently_changed(before, current["paths"], started)
    if racy is not None:
        raise NotCacheable(f"{racy} changed while the render ran or less than two seconds before")
    salt = os.urandom(16).hex()
    record = {
        "format": inputs.FORMAT,
        "salt": salt,
        "digest": _digest(salt, current, writes),
        "plugins": plugins,
        "env": sorted(env),
        "paths": sorted(paths),
        "writes": writes,
    }
    from reyn_core.loading.userdirs import write_private

    write_private(entry, inputs.canonical(record))
    _prune(entry.parent)


def _prune(folder: Path) -> None:
    try:
        found = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
        for old in found[:-MAX_ENTRIES]:
            old.unlink()
    except OSError:
        pass


class _Tee(io.TextIOBase):
    """Writes go to ``stream`` and are kept, in order with the other stream's, in ``writes`` as
    ``[index, text]`` (what a replay prints). Reaching past it — its buffer, its file descriptor, any
    other attribute — marks the run as not replayable: such output is not kept.
    With ``keep=False`` (standing in for ``sys.__stdout__`` / ``sys.__stderr__``, which bypass
    ``sys.stdout`` / ``sys.stderr``) a write or its buffer marks it, while looking at it does not
    (argparse asks ``sys.__stdout__.fileno()`` for the terminal's width)."""

    def __init__(self, stream: Any, writes: list[list[Any]], index: int, keep: bool = True) -> None:
        self._stream, self._writes, self._index = stream, writes, index
        self.bypassed, self._keep = False, keep

    def write(self, text: str) -> int:
        if not self._keep:
            self.bypassed = True
        elif self._writes and self._writes[-1][0] == self._index:
            self._writes[-1][1] += text  # one chunk per run of writes to the same stream
        elif text:
            self._writes.append([self._index, text])
        return int(self._stream.write(text))

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return bool(self._stream.isatty())

    def fileno(self) -> int:
        self.bypassed = self.bypassed or self._keep
        return int(self._stream.fileno())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(self._stream.encoding)

    def __getattr__(self, name: str) -> Any:
        self.bypassed = self.bypassed or self._keep or name == "buffer"
        return getattr(self._stream, name)


@contextmanager
def _captured() -> Iterator[tuple[list[list[Any]], list[_Tee]]]:
    """What ``sys.stdout`` (0) and ``sys.stderr`` (1) are written, in order; ``sys.__stdout__`` and
    ``sys.__stderr__`` watched. Writes to the file descriptors themselves (``os.write(2, ...)``, a
    child process's output, C code) are not seen: docs/performance.md."""
    saved = {name: getattr(sys, name) for name in ("stdout", "stderr", "__stdout__", "__stderr__")}
    writes: list[list[Any]] = []
    tees = {"stdout": _Tee(saved["stdout"], writes, 0), "stderr": _Tee(saved["stderr"], writes, 1)}
    for name in ("__stdout__", "__stderr__"):
        if saved[name] is not None:
            tees[name] = _Tee(saved[name], writes, -1, keep=False)
    for name, tee in tees.items():
        setattr(sys, name, tee)
    try:
        yield writes, list(tees.values())
    finally:
        for name, value in saved.items():
            setattr(sys, name, value)


__all__ = ["applies", "run_cached"]
