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
        write_id_maps(f"{proc}/{pid}", f"0 {uid} 1", f"0 {gid} 1")
        return os.open(f"{proc}/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(hold_w)
        os.close(ready_r)
        os.waitpid(pid, 0)


def write_id_maps(proc: str, uid_map: str, gid_map: str, *, deny_setgroups: bool = False) -> None:
    """Write a user namespace's maps through ``proc`` (``/proc/self``, ``/proc/<pid>``): ``setgroups``
    denied first when asked (the kernel requires it of an unprivileged writer's gid_map), then
    ``uid_map`` and ``gid_map``, each in one write, as bytes (a text file would import a codec)."""
    files = [("setgroups", "deny")] if deny_setgroups else []
    for name, text in (*files, ("uid_map", uid_map), ("gid_map", gid_map)):
        fd = os.open(f"{proc}/{name}", os.O_WRONLY | os.O_CLOEXEC)
        try:
            if os.write(fd, text.encode()) != len(text):
                raise OSError(f"cannot write {proc}/{name}: the kernel took part of {text!r}")
        finally:
            os.close(fd)


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
