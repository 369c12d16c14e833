"""Idmapped read roots for a root launcher: the operator's files appear owned by the sandbox's uid.

Started as root, the command runs as an unprivileged uid (Grants.uid), so a root-owned `0700`
folder in a read root would be closed to it although the operator granted it. An idmapped mount
(Linux 5.12+) presents files owned by uid/gid 0 on disk as owned by the sandbox's uid/gid, on that
mount only. Read roots only, and read-only: on a writable idmapped mount the sandbox's files would
be stored as root's, and as their "owner" it could set the setuid bit on a root-owned file — a
privilege escalation for whoever runs it later outside. Write roots therefore keep plain ownership
and must be writable by the sandbox's uid (checked before anything starts).
"""

from __future__ import annotations

import os

from . import _syscalls as sc


def mapping_namespace(uid: int, gid: int, proc: str) -> int:
    """An fd of a user namespace mapping 0 → uid and 0 → gid (its only use: to idmap mounts).

    A short-lived child unshares it; we (root) write its maps through `proc` — a procfs of our own
    PID namespace, since the child's pid is one of ours — and keep the namespace by its fd.
    """
    ready_r, ready_w = os.pipe()
    hold_r, hold_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(hold_w)
        try:
            sc.unshare(sc.CLONE_NEWUSER)
            os.write(ready_w, b"1")
            os.read(hold_r, 1)
        finally:
            os._exit(0)
    os.close(ready_w)
    os.close(hold_r)
    try:
        if os.read(ready_r, 1) != b"1":
            raise OSError("cannot create the user namespace for idmapped read roots")
        for name, host in (("uid_map", uid), ("gid_map", gid)):
            with open(f"{proc}/{pid}/{name}", "w", encoding="ascii") as handle:
                handle.write(f"0 {host} 1")
        return os.open(f"{proc}/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(hold_w)
        os.close(ready_r)
        os.waitpid(pid, 0)


def bind_read_only(source_fd: int, target_fd: int, userns_fd: int) -> bool:
    """Mount a read-only, idmapped copy of `source_fd`'s tree onto the file `target_fd` is open on;
    False when the filesystem (or a mount below it) cannot be idmapped — the caller then binds it
    plainly. No path is looked up: source and target are descriptors."""
    try:
        tree = sc.clone_tree(source_fd)
    except OSError:
        return False
    try:
        attributes = sc.MOUNT_ATTR_IDMAP | sc.MOUNT_ATTR_RDONLY | sc.MOUNT_ATTR_NOSUID | sc.MOUNT_ATTR_NODEV
        try:
            sc.set_tree_attributes(tree, attributes, userns_fd)
        except OSError:
            return False
        sc.attach_tree(tree, target_fd)
    finally:
        os.close(tree)
    return True
