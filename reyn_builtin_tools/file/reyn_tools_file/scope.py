"""The roots of a call: where a requested path lies, and what may never be written or read there.

A path checked as text (``paths``) is matched component-wise against the configured roots (so
``/ws-evil`` is not inside ``/ws``); the most specific root containing it is where the walk starts.
Protected paths — the profile's ``protected`` entries, the host's own files and every repository
marker — are never written or deleted; the host's secret files are never read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reyn_core import SecretPaths, ToolDenied, ToolRuntimeMissing, secret_paths

from .descriptors import supported
from .paths import Location, PathRefused, check_path_text, refuse_pseudo_fs
from .settings import PSEUDO_FS_PREFIXES, FileSettings


@dataclass(frozen=True, slots=True)
class Scope:
    """The workspace, roots and protected entries of one call, with links in the roots resolved.

    The roots themselves are operator configuration and are trusted; only what lies below them is
    walked without following links.
    """

    workspace: Path
    read_roots: tuple[Path, ...]
    write_roots: tuple[Path, ...]
    protected: tuple[str, ...]
    host_files: object = ()
    """The host's own files (``ToolContext.host_files``), as given: turned into components
    (``_host_protected``) only when a write or delete is checked, so a read never pays for them."""
    secret: SecretPaths = field(default_factory=SecretPaths)
    """The host's secret files (``SecretFile`` values of ``ToolContext.host_files``): never read."""

    @classmethod
    def from_settings(cls, settings: FileSettings, workspace: Path, protected_paths: object = ()) -> Scope:
        """Resolve ``settings`` against ``workspace`` (the host's, unless settings name one).

        ``protected_paths`` are the host's own files (``ToolContext.host_files``, which the
        dispatcher fills from the load on every surface: absolute path → what it is): never written
        or deleted, nor anything below them; the secret ones (``reyn_core.SecretFile``) never read.
        """
        if not supported():
            raise ToolRuntimeMissing("the file tools need a POSIX system with O_NOFOLLOW and dir_fd support")
        ws = Path(os.path.realpath(Path(workspace) / settings.workspace if settings.workspace else workspace))

        def resolve(roots: tuple[str, ...]) -> tuple[Path, ...]:
            out = []
            for root in roots:
                real = Path(os.path.realpath(ws / root))
                if any(str(real) == p or str(real).startswith(p + "/") for p in PSEUDO_FS_PREFIXES):
                    raise ToolDenied(f"root {root!r} resolves to {real}, inside a pseudo-filesystem; refused")
                out.append(real)
            return tuple(out)

        return cls(
            ws,
            resolve(settings.read_roots),
            resolve(settings.write_roots),
            settings.protected,
            protected_paths,
            secret_paths(protected_paths) if isinstance(protected_paths, Mapping) else SecretPaths(),
        )

    def secret_refusal(self, loc: Location) -> str | None:
        """Why ``loc`` is never read — it is, or lies inside, a secret file of the host — in the
        core's one rule and words (``reyn_core.secret_paths``), naming only ``loc.display``; None
        when it may be read."""
        # resolved: the root is, and the walk never follows a link below it (a link is refused)
        return self.secret.refusal("/" + "/".join(loc.absolute_parts), loc.display, resolved=True)

    def check_readable(self, loc: Location) -> None:
        """Refuse to read a secret file of the host (``secret_refusal``)."""
        refusal = self.secret_refusal(loc)
        if refusal is not None:
            raise PathRefused(refusal, reason="secret", path=loc.display)

    def _show(self, path: Path) -> str:
        try:
            rel = path.relative_to(self.workspace)
        except ValueError:
            return str(path)
        return rel.as_posix() or "."

    def roots_text(self, *, write: bool) -> str:
        """The roots a model may use, for error messages."""
        roots = self.write_roots if write else self.read_roots + self.write_roots
        return ", ".join(repr(self._show(r)) for r in dict.fromkeys(roots)) or "(none configured)"

    def locate(self, path: object, *, write: bool = False) -> Location:
        """Check ``path`` as text and find the most specific root containing it.

        Relative paths are taken from the workspace. Raises ``PathRefused``.
        """
        text = check_path_text(path)
        requested = tuple(p for p in text.split("/") if p not in ("", "."))
        full = requested if text.startswith("/") else self.workspace.parts[1:] + requested
        roots = self.write_roots if write else self.read_roots + self.write_roots
        best: Path | None = None
        for root in roots:
            rparts = root.parts[1:]
            if full[: len(rparts)] == rparts and (best is None or len(rparts) > len(best.parts) - 1):
                best = root
        if best is None:
            what = "writable" if write else "readable"
            raise PathRefused(
                f"path {text[:200]!r} is outside the {what} roots; allowed: {self.roots_text(write=write)}",
                reason="outside_roots",
                path=text[:200],
            )
        refuse_pseudo_fs(full, text[:200])
        return Location(best, full[len(best.parts) - 1 :], self._show(best))

    def check_not_protected(self, loc: Location) -> None:
        """Refuse a write or delete of a protected path (compared case-insensitively, fail-closed):
        a repository marker (always), a ``protected`` entry, or a host's protected path."""
        full = loc.root.parts[1:] + loc.parts
        ws = self.workspace.parts[1:]
        rel = [p.casefold() for p in (full[len(ws) :] if full[: len(ws)] == ws else full)]
        for entry in self.protected:
            pattern = [p.casefold() for p in entry.split("/") if p]
            anchored = entry.startswith("/") or len(pattern) > 1
            starts = [0] if anchored else range(len(rel))
            if any(rel[i : i + len(pattern)] == pattern for i in starts):
                raise PathRefused(
                    f"{loc.display!r} is protected ({entry!r}) and is never written or deleted "
                    "by the file tools",
                    reason="protected",
                    path=loc.display,
                )
        folded = tuple(p.casefold() for p in full)
        for host_path in _host_protected(self.host_files):
            if folded[: len(host_path)] == host_path:
                raise PathRefused(
                    f"{loc.display!r} is protected by the host (it is or lies below "
                    f"{'/' + '/'.join(host_path)!r}) and is never written or deleted by the file tools",
                    reason="protected",
                    path=loc.display,
                )
        refuse_repository_marker(loc)  # whatever `protected` says


# Names that make a directory a version-control repository whose configuration a program run there
# (``git status`` through the shell pack) obeys — ``core.fsmonitor``, hooks, aliases, filters. They are
# never written or deleted, whatever ``protected`` says: a component named like a repository
# directory, and a file named ``HEAD`` (git's test for a git directory, so a bare-repository layout —
# ``HEAD``, ``objects/``, ``refs/``, ``config`` — cannot be assembled in a write root).
REPOSITORY_DIRS: frozenset[str] = frozenset({".git", ".hg", ".svn", ".bzr", ".jj", "_darcs"})
REPOSITORY_FILES: frozenset[str] = frozenset({"head"})


def refuse_repository_marker(loc: Location) -> None:
    """Refuse a path that is, or lies inside, a repository marker (compared case-insensitively, on
    the whole absolute path: a write root inside a ``.git`` directory is no exception)."""
    folded = [p.casefold() for p in loc.absolute_parts]
    marker = next((p for p in folded if p in REPOSITORY_DIRS), None)
    if marker is None and folded and folded[-1] in REPOSITORY_FILES:
        marker = folded[-1]
    if marker is not None:
        raise PathRefused(
            f"{loc.display!r} is a repository marker or lies inside one ({marker!r}); programs such as git "
            "obey the configuration they find in a repository (hooks, fsmonitor, aliases), so the file "
            "tools never write or delete repository files",
            reason="protected",
            path=loc.display,
        )


def _host_protected(value: object) -> tuple[tuple[str, ...], ...]:
    """The host's files (``ToolContext.host_files``: its paths, or a list of them) as case-folded
    components, each path both as given and with links resolved (a path the load resolved already —
    a plugin's, ``resolved`` — is not resolved again: no call re-reads the file system for it).
    Anything but absolute paths is refused (fail-closed)."""
    if value is None:
        return ()
    if isinstance(value, Mapping):
        value = list(value)
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, set, frozenset)):
        raise ToolRuntimeMissing(
            f"ToolContext.host_files must map absolute paths to what they are, got {type(value).__name__}"
        )
    out: dict[tuple[str, ...], None] = {}
    for item in value:
        if not isinstance(item, (str, os.PathLike)) or not os.path.isabs(item) or "\x00" in str(item):
            raise ToolRuntimeMissing(f"ToolContext.host_files holds {item!r}, which is not an absolute path")
        if getattr(item, "resolved", False) is True:
            forms: tuple[str | os.PathLike[str], ...] = (item,)
        else:
            forms = (os.path.normpath(item), os.path.realpath(item))
        for form in forms:
            out[tuple(p.casefold() for p in Path(form).parts[1:])] = None  # "/" protects everything
    return tuple(out)
