"""What the launcher covers so that the host's secret files stay unread (``Grants.secrets``).

A cover is a mount on the file found at a path when the sandbox is built; a file the host puts at
that path later (a log rotated, a key replaced by rename, a first record) would appear under no
cover. So a secret is never covered alone: the folder holding it is (or, when missing, the nearest
folder that exists on its way), and when that folder is a mounted root itself, the command does
not start. The operator's ``hide`` entries are not secrets: missing ones are left out, and each
covers the file present at the start (docs/sandbox.md).
"""

from __future__ import annotations

import os

from ._paths import path_within as within

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: see _grants.py

if TYPE_CHECKING:
    from collections.abc import Iterable


def secret_covers(
    secrets: Iterable[str], mounts: Iterable[str], hidden: Iterable[str] = (), fixed: Iterable[str] = ()
) -> tuple[str, ...]:
    """What the launcher covers so that no secret of ``secrets`` (``Grants.secrets``) can be read in
    a view made of ``mounts`` (every path bound into it) where ``hidden`` (the operator's ``hide``
    paths, covered first: a cover below one could not be reached) are covered already.

    A cover holds the file found at its path when the command starts, not the path: a file the host
    puts there later — a log rotated, a key replaced by rename, a first record — would be readable.
    So the *folder* holding a secret file is covered (a secret folder itself), or, when it is
    missing, the nearest existing folder on its way below the mount: whatever appears there later is
    under the cover. Never skipped (fail closed): ``ValueError`` naming the secret when that folder is
    the mount itself (covering it would take the grant away: grant folders side by side) or when a
    mount is, or lies inside, a secret. In ``fixed`` mounts (the system folders and the Python
    installation, nothing the operator could re-grant) a secret lying directly in the mount is
    covered itself. A secret inside no mount is not in the view."""
    mounted = tuple(dict.fromkeys(mounts))
    fixed = frozenset(fixed)
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
        path = secret if os.path.isdir(secret) else os.path.dirname(secret)
        while not os.path.lexists(path) and path != holder:
            path = os.path.dirname(path)
        if path == holder and holder in fixed and os.path.lexists(secret):
            path = secret
        elif path == holder:
            raise ValueError(
                f"the folder holding the host's secret file {secret} is {holder} itself, which is "
                "mounted: a file put at that path while the command runs (a rotation, a replacement, "
                "its first record) would be readable. Grant folders side by side, none holding it"
            )
        covers[path] = None
    # a cover inside another one, or inside an operator's, is out of sight already
    hidden = tuple(hidden)
    return tuple(
        p
        for p in covers
        if not any(within(p, q, strict=True) for q in covers) and not any(within(p, h) for h in hidden)
    )
