"""What a ``hide`` entry covers is reachable by no other name: no file under it has a hard link,
and no entry under a hidden folder is a symbolic link.

A cover is a mount over one path. The file's content belongs to its inode, and every other name of
that inode (a hard link) in a mounted root reads it: a link an earlier confined command made while
the path was not hidden yet — ``touch sec/k; ln sec/k k2`` — reads whatever the operator later writes
into ``sec/k`` in place. Nothing in the kernel hides an inode's other names: Landlock grants by the
path walked (a link in a read root is under that root's rule and Landlock has no deny rule), a mount
covers one path, and ``link(2)``'s limits (``EXDEV`` across mounts, ``fs.protected_hardlinks``)
only restrict making a link, not using one made before. So the launcher (and the host, when it makes
the grants) checks the names: a hidden file with more than one, or a hidden folder holding any file
(of any kind but a folder) with more than one, is refused. A symbolic link under a hidden folder is
refused too, whatever it points to: one an earlier command planted (``sec/k -> ../loot``,
``sec/keys -> ../out``) sends what the operator later writes into ``sec/k`` or ``sec/keys/`` to a
path no cover hides, and what it points to may change after any check of it. A folder's check
visits every entry below it, so it is bounded — at most ``MAX_HIDDEN_ENTRIES`` entries and
``MAX_HIDDEN_DEPTH`` levels per hidden folder — and a folder over a bound, or one it cannot read,
is refused (fail closed), with words saying which bound and what to do.

Standard library only: the launcher imports it, and so does the host when it makes the grants.
"""

from __future__ import annotations

import os
import stat

MAX_HIDDEN_ENTRIES = 10_000
"""The most entries (files and folders, at any depth) a hidden folder may hold: each is checked for a
second name every time a command starts."""
MAX_HIDDEN_DEPTH = 64
"""The most folder levels below a hidden folder that are checked."""


class SecondName(OSError):
    """What a hidden path covers can be reached by a name its cover does not hide (or cannot be
    checked for one); the message names the file and what to do."""


_OPEN_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def check_one_name(fd: int, what: str, path: str, *, folders: bool = True) -> None:
    """``SecondName`` when what is open at ``fd`` (the hidden ``path``, named ``what`` in errors)
    can be read through a name its cover does not hide: a file with more than one name, or (with
    ``folders``) a folder holding one, or a symbolic link, at any depth; also when a folder is over
    a bound or cannot be read through. Without ``folders`` a folder is not looked into: the
    launcher's covers over the host's secrets (``Grants.secrets``), whose files the load made before
    anything was confined and no confined command has ever seen, so none of them could have linked
    one."""
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode) and not folders:
        return
    if not stat.S_ISDIR(info.st_mode):
        if info.st_nlink > 1:
            raise SecondName(
                f"{what} has {info.st_nlink} names (hard links): a confined command could read it through "
                f"one the cover does not hide. Remove the other links (find / -samefile {path}) or keep "
                "the file elsewhere"
            )
        return
    budget = [MAX_HIDDEN_ENTRIES]
    try:
        folder = os.open(".", _OPEN_FOLDER, dir_fd=fd)
    except OSError as exc:
        raise _unreadable(what, path, exc) from None
    try:
        _check_folder(folder, what, path, 0, budget)
    finally:
        os.close(folder)


def _check_folder(folder: int, what: str, where: str, depth: int, budget: list[int]) -> None:
    """Every entry of the folder open at ``folder`` (``where``), then each subfolder, depth first;
    ``budget`` is what is left of ``MAX_HIDDEN_ENTRIES`` for the whole hidden folder."""
    subfolders = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                budget[0] -= 1
                if budget[0] < 0:
                    raise SecondName(
                        f"{what} is a folder of more than {MAX_HIDDEN_ENTRIES:,} entries: each file under a "
                        "hidden folder is checked for a second name (a hard link outside the cover would "
                        "read it) every time a command starts, up to that many. Hide a smaller folder, or "
                        "keep it outside the roots"
                    )
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    raise _symbolic_link(what, f"{where}/{entry.name}", folder, entry.name)
                if stat.S_ISDIR(info.st_mode):
                    subfolders.append(entry.name)
                elif info.st_nlink > 1:
                    inside = f"{where}/{entry.name}"
                    raise SecondName(
                        f"{what} holds {inside}, which has {info.st_nlink} names (hard links): a confined "
                        f"command could read it through one the cover does not hide. Remove the other "
                        f"links (find / -samefile {inside}) or keep the file elsewhere"
                    )
    except OSError as exc:
        if isinstance(exc, SecondName):
            raise
        raise _unreadable(what, where, exc) from None
    for name in subfolders:
        inside = f"{where}/{name}"
        if depth + 1 > MAX_HIDDEN_DEPTH:
            raise SecondName(
                f"{what} holds folders more than {MAX_HIDDEN_DEPTH} levels deep ({inside}): each file under "
                "a hidden folder is checked for a second name (hard link), to that depth. Hide a shallower "
                "folder, or keep it outside the roots"
            )
        try:
            sub = os.open(name, _OPEN_FOLDER, dir_fd=folder)
        except OSError as exc:
            raise _unreadable(what, inside, exc) from None
        try:
            _check_folder(sub, what, inside, depth + 1, budget)
        finally:
            os.close(sub)


def _symbolic_link(what: str, inside: str, folder: int, name: str) -> SecondName:
    try:
        points = f" (to {os.readlink(name, dir_fd=folder)})"
    except OSError:
        points = ""
    return SecondName(
        f"{what} holds {inside}, a symbolic link{points}: what it points to can change after any check, "
        "so what the operator writes through it may land outside the cover, where a confined command "
        "reads it. Look where it points for anything already written through it (a secret found there "
        "was exposed: delete it there and rotate it), then remove the link, or hide a folder that holds none"
    )


def _unreadable(what: str, where: str, exc: OSError) -> SecondName:
    return SecondName(
        f"{what}: {where} cannot be read ({exc.strerror}), so its files cannot be checked for a second "
        "name (a hard link outside the cover would read them). Make it readable to the user starting "
        "the sandbox, or hide a folder that holds only readable ones"
    )
