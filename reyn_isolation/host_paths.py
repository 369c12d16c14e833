"""What an isolated plugin's write roots must stay clear of: the code the host imports and the host's
own records.

A write root that contains, equals or lies inside such a path refuses the plugin (``RJ011``): from
there the worker could change what the host runs or trusts — drop a module or a ``.pth`` on the
host's import path (a namespace package needs no more than a folder), replace the interpreter's
folder, rewrite the profile, the lock or the audit log. Mounting those paths read-only inside the
root would not do: a rename inside a writable root moves the mounted folder away from its path, and
the host finds code and records by path. The paths are the host's, found when the worker is set up:
where the host's code comes from (``reyn_core.host.host_code``: every entry of ``sys.path``, the
working directory too when it is on the path, the Python installation, every installed
distribution's code — an editable install's mapped folders too —, every imported module's, every
meta-path finder's mapping), Reyn's and the plugin's code, the profile, the lock, the audit log, the remote
failure log, the SQLite approval store (a worker that could write it could approve calls), the
argument key, and Reyn's user cache and configuration folders (the host's ``own_folders``: the
next load trusts and runs the compiled bytecode cached there — a worker sharing the host's uid in a
user namespace would pass the cache's ownership check).

The host's secret files (the argument key, the remote failure log) are not even readable: those
inside the worker's read roots are hidden from its sandbox (``secret_findings``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from reyn_isolation.codes import Finding
from reyn_sandbox import path_within


def protected_paths(code_roots: Iterable[str], host_files: Mapping[str, str]) -> dict[str, str]:
    """``{real path: what it is}`` of what write roots must stay clear of: where the host's code
    comes from (``reyn_core.host.host_code``, the working directory too when it is on the import
    path), the code the worker imports, and ``host_files`` (the load's list of the host's own files,
    path → what it is: ``IsolationRequest.host_files``)."""
    from reyn_core.host import host_code

    found = host_code(working_directory=True).paths
    for root in code_roots:
        found.setdefault(os.path.realpath(root), "code the worker imports")
    for file, what in host_files.items():
        if file and os.path.isabs(file):
            found.setdefault(os.path.realpath(file), what)
    return found


def write_root_findings(
    plugin_id: str, write_roots: Iterable[str], protected: Mapping[str, str]
) -> list[Finding]:
    """One ``RJ011`` naming every write root that contains, equals or lies inside a protected path:
    the sandbox's one rule (``reyn_sandbox.protected_problem``), the same the shell and mcp packs'
    grants are resolved with."""
    from reyn_sandbox import protected_problem

    problem = protected_problem(write_roots, protected, who="the worker")
    if problem is None:
        return []
    return [Finding("RJ011", f"[plugins.{plugin_id}.grants]: {problem}")]


def secret_findings(
    plugin_id: str, roots: Iterable[str], host_files: Mapping[str, str]
) -> tuple[tuple[str, ...], list[Finding]]:
    """``(the worker's Grants.secrets, findings)``: the host's secret files (``host_files`` values
    that are ``SecretFile``) lying inside the worker's ``roots`` (every path its sandbox mounts) are
    covered in its sandbox — also one made after it starts (``reyn_sandbox.Grants.secrets``), as in
    every confined process (the sandbox's one rule, ``reyn_sandbox.secret_hides``); a root that is
    one or lies inside one is an ``RJ011`` (write roots over any host file are refused already)."""
    from reyn_sandbox import secret_hides

    secrets, problems = secret_hides(roots, host_files)
    if not problems:
        return secrets, []
    return secrets, [
        Finding(
            "RJ011",
            f"[plugins.{plugin_id}.grants]: the worker could read the host's secrets: "
            + "; ".join(problems[:10])
            + ". Grant folders that hold none of them (those inside a granted folder are hidden)",
        )
    ]


def nested_root_findings(
    plugin_id: str, roots: Iterable[str], write_roots: Mapping[str, str]
) -> list[Finding]:
    """One ``RJ011`` naming every granted root of ``plugin_id`` (read or write, resolved) that lies
    strictly inside a write root of an isolated plugin (``write_roots``: root → plugin id, this one's
    included). That worker could move the root's folder aside and leave a symlink at its path, which
    the host's next load would resolve to the link's target, anywhere on the host (a worker's restart
    is refused by the launcher, which checks the identity taken at load). A root equal to a write root
    is not movable from inside (it is a mount point)."""
    clashes = [
        f"{root} lies inside {'its own' if owner == plugin_id else f'plugin {owner!r}'}'s write root {write}"
        for root in roots
        for write, owner in write_roots.items()
        if path_within(root, write, strict=True)
    ]
    if not clashes:
        return []
    return [
        Finding(
            "RJ011",
            f"[plugins.{plugin_id}.grants] has roots a worker could swap for a link to anywhere: "
            + "; ".join(clashes[:10])
            + ". Grant folders side by side, not one inside another's write root",
        )
    ]


__all__ = [
    "nested_root_findings",
    "protected_paths",
    "secret_findings",
    "write_root_findings",
]
