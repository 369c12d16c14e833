"""The host's secret files: which of its own files no tool reads for a model, and the one rule that
says so.

``ToolContext.host_files`` maps each of the host's own files to what it is; none may be written. A
few are also *secret*: what they hold must reach no model in any form — the argument key (with it,
low-entropy argument hashes in the audit log can be reversed) and the operator's log of failures
(``reyn.remote``, which keeps raw output that may carry secrets). Their value in the mapping is a
``SecretFile``: still the words of what the file is (a ``str``), marked secret, so the one list the
load computes (``reyn_core.loading.trusted_files``) is also the list of secrets. Every confining
surface hides them from confined processes (``reyn_sandbox.resolve_grants`` reads the mark as the
``secret`` attribute: the sandbox imports nothing of Reyn), and a pack that reads files on a model's
behalf asks ``secret_paths(ctx.host_files).refusal(path, shown)`` before it reads.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


class SecretFile(str):
    """What one of the host's files is (a value of ``ToolContext.host_files``), for a file no
    confined process and no tool may read either, not only write: ``SecretFile("the host's
    argument key")``."""

    __slots__ = ()
    secret = True
    """Read by ``reyn_sandbox`` (which imports nothing of Reyn) to hide the file from confined
    processes."""


def path_within(path: str, root: str) -> bool:
    """Whether the normalised absolute ``path`` is ``root`` or lies inside it (by components, as text)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def is_secret(what: object) -> bool:
    """Whether ``what`` (a value of ``ToolContext.host_files``) marks a secret file."""
    return getattr(what, "secret", False) is True


@dataclass(frozen=True, slots=True)
class SecretPaths:
    """The secret files of one ``host_files`` mapping, each as given and with links resolved,
    case-folded (fail closed on a case-insensitive file system)."""

    folded: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.folded)

    def refusal(self, path: str | os.PathLike[str], shown: str, *, resolved: bool = False) -> str | None:
        """The model-visible refusal to read ``path`` (absolute) when it is, or lies inside, a
        secret file, naming only ``shown`` (the path as the model gave it); None when it may be
        read. ``resolved``: the caller opens ``path`` without following any link (as the file
        pack's walk does from a resolved root), so its links need not be resolved here."""
        if not self.folded:
            return None
        text = os.path.normpath(os.fspath(path))
        for form in {text} if resolved else {text, os.path.realpath(text)}:
            folded = form.casefold()
            if any(path_within(folded, s) for s in self.folded):
                return (
                    f"{shown!r} is one of the host's secret files (or lies inside one), which no tool "
                    "reads for a model"
                )
        return None


def secret_paths(host_files: Mapping[str, str]) -> SecretPaths:
    """The secret files among ``host_files`` (``ToolContext.host_files``), ready to check many
    paths against (``SecretPaths.refusal``)."""
    found: dict[str, None] = {}
    for path, what in host_files.items():
        if is_secret(what) and os.path.isabs(path):
            for form in (os.path.normpath(path), os.path.realpath(path)):
                found[form.casefold()] = None
    return SecretPaths(tuple(found))


__all__ = ["SecretFile", "SecretPaths", "is_secret", "path_within", "secret_paths"]
