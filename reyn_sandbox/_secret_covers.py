"""What the launcher covers so that the host's secret files stay unread (``Grants.secrets``).

A cover is a mount on a path, so it hides only what exists when the sandbox is built; a secret the
host makes later (a log's first record, a key made on first use) would appear under no cover. So
a secret is never skipped: when it is missing, the nearest folder that exists on its way is covered
in its place, and when that folder is a mounted root itself, the command does not start. The host
makes its secrets at load (``reyn_core.loading.trusted_files``), so in practice each is there and
covered alone. The operator's ``hide`` entries are not secrets: missing ones are left out.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: see _grants.py

if TYPE_CHECKING:
    from collections.abc import Iterable


def within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or lies below it (both absolute and normalized)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def secret_covers(
    secrets: Iterable[str], mounts: Iterable[str], hidden: Iterable[str] = ()
) -> tuple[str, ...]:
    """What the launcher covers so that no secret of ``secrets`` (``Grants.secrets``) can be read in
    a view made of ``mounts`` (every path bound into it) where ``hidden`` (the operator's ``hide``
    paths, covered first: a cover below one could not be reached) are covered already. A secret
    inside a mount is covered itself
    when it exists; when it does not — it may appear while the command runs: a log's first record,
    a key made on first use — its nearest existing folder below that mount is covered instead, so
    whatever appears there later is under the cover. Never skipped (fail closed): ``ValueError``
    naming the secret when that folder is the mount itself (covering it would take the grant away)
    or when a mount is, or lies inside, a secret. A secret inside no mount is not in the view."""
    mounted = tuple(dict.fromkeys(mounts))
    covers: dict[str, None] = {}
    for secret in dict.fromkeys(secrets):
        inside = next((m for m in mounted if within(m, secret)), None)
        if inside is not None:
            raise ValueError(
                f"{inside} is mounted, and it is or lies inside the host's secret file {secret}, which no "
                "confined process may read"
            )
        holders = [m for m in mounted if within(secret, m)]
        if not holders:
            continue
        holder = max(holders, key=len)
        path = secret
        while not os.path.lexists(path) and path != holder:
            path = os.path.dirname(path)
        if path == holder:
            raise ValueError(
                f"the host's secret file {secret} does not exist, and the folder that would hold it is "
                f"{holder} itself, which is mounted: a file made there while the command runs would be "
                "readable. Let Reyn's load make it (it makes the argument key and the remote failure "
                "log), or keep it out of the granted folders"
            )
        covers[path] = None
    # a cover inside another one, or inside an operator's, is out of sight already
    hidden = tuple(hidden)
    return tuple(
        p
        for p in covers
        if not any(p != q and within(p, q) for q in covers) and not any(within(p, h) for h in hidden)
    )
