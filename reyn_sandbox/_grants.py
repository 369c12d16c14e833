"""What a confined command may reach: the `Grants` an operator gives, and their JSON form.

The launcher receives grants on its command line as JSON (`launcher_argv`), so the form is part of
the contract between the process that builds the argv and the launcher that enforces it: every field
is checked here, once, on both sides. `json` writes the form (`Grants.to_json`, on the host) and
`json`'s own scanner reads it (`Grants.from_json`, the one reader: the launcher's and any other),
without importing `json` itself — whose `json.decoder` brings `re`, `enum` and `functools`, the
largest part of every launch's imports (docs/performance.md, "The launcher's imports, trimmed").
"""

from __future__ import annotations

import os

from ._value import Value

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a launch ~15 ms

if TYPE_CHECKING:
    from typing import Any

_MIB = 1024 * 1024


class GrantsError(ValueError):
    """A `Grants` value or its JSON form is malformed (names the field and what is allowed)."""


class Grants(Value):
    """The operator's grants for one confined command.

    Paths are absolute real paths (normalized here; a symbolic link in one is refused when the grants
    are pinned, see `identities`), and each root is visible at its own path. Everything not granted
    (other than the launcher's fixed system directories, see `docs/sandbox.md`) does not exist inside
    the sandbox. Immutable, equal to another `Grants` with equal fields (`_value.Value`: `replace`,
    `as_dict`, `field_names`).
    """

    __slots__ = (
        "cpu_seconds", "file_size_bytes", "gid", "hide", "identities", "max_processes", "memory_bytes",
        "network", "open_files", "read_only", "read_roots", "secrets", "tmp_bytes", "uid", "write_roots",
    )  # fmt: skip

    read_roots: tuple[str, ...]
    """Directories or files the command may read and execute (never write)."""
    write_roots: tuple[str, ...]
    """Directories or files the command may read, write, create in and delete from."""
    network: bool
    """Whether the command may open internet sockets; without it only unix sockets exist."""
    hide: tuple[str, ...]
    """Paths inside the roots made unreachable (covered by an empty mount), e.g. a workspace `.env`.
    One that exists when the grants are made must still be there at the start (else nothing runs;
    the file there when the command starts is covered — one the host puts at the path later is not,
    docs/sandbox.md; a file with a second name is refused); one that does not is skipped (created
    later, it is covered from the next call)."""
    read_only: tuple[str, ...]
    """Paths inside write roots kept read-only (a read-only mount over each), e.g. a workspace `.git`,
    so the command cannot plant what the operator may later run. As with `hide`: one that exists when
    the grants are made must be there, the same folder, at the start; one that does not is skipped. Inside
    the sandbox, every folder from its write root down to a `hide` or `read_only` path is a mount
    point, so the command cannot rename it away for the next call."""
    secrets: tuple[str, ...]
    """The host's secret files (resolved paths; `resolve_grants` adds those inside the mounted paths):
    covered like `hide`, but never skipped. One missing at the start — it may appear while the
    command runs — has its nearest existing folder covered instead, below the mount that holds it;
    when that folder is the mount itself (or a mount lies at or inside a secret), nothing runs
    (`_secret_covers.secret_covers`)."""
    identities: tuple[tuple[str, int, int, bool], ...]
    """Each root's identity as the host found it — `(path, st_dev, st_ino, is a folder)` for every
    read root, write root, `read_only` and `hide` path that existed — set by `resolve_grants` right
    after its check, and by `launcher_argv` for any root given without one. The launcher reaches each
    again without following a symbolic link and refuses to start (naming it) when what is there
    differs, or when one that exists has no identity (`_identity`)."""
    cpu_seconds: int
    """CPU time per process (RLIMIT_CPU); the process gets SIGXCPU, then SIGKILL a second later."""
    memory_bytes: int
    """Address space per process (RLIMIT_AS); allocations beyond it fail."""
    max_processes: int
    """Processes and threads in the sandbox at once (RLIMIT_NPROC); reaching it ends the command."""
    file_size_bytes: int
    """Largest file the command may write (RLIMIT_FSIZE); a write beyond it gets SIGXFSZ."""
    open_files: int
    """Open file descriptors per process (RLIMIT_NOFILE)."""
    tmp_bytes: int
    """Size of the private, memory-backed /tmp (and /dev/shm), discarded when the sandbox ends."""
    uid: int
    """The unprivileged user the command runs as when the launcher is started as root."""
    gid: int
    """The group the command runs as when the launcher is started as root."""

    def __init__(
        self,
        read_roots: tuple[str, ...] = (),
        write_roots: tuple[str, ...] = (),
        network: bool = False,
        hide: tuple[str, ...] = (),
        read_only: tuple[str, ...] = (),
        secrets: tuple[str, ...] = (),
        identities: tuple[tuple[str, int, int, bool], ...] = (),
        cpu_seconds: int = 60,
        memory_bytes: int = 2048 * _MIB,
        max_processes: int = 128,
        file_size_bytes: int = 1024 * _MIB,
        open_files: int = 1024,
        tmp_bytes: int = 256 * _MIB,
        uid: int = 65534,
        gid: int = 65534,
    ) -> None:
        paths = {"read_roots": read_roots, "write_roots": write_roots, "hide": hide, "read_only": read_only,
                 "secrets": secrets}  # fmt: skip
        for name, value in paths.items():
            if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
                raise GrantsError(f"Grants.{name} must be a tuple of absolute paths, got {value!r}")
            for path in value:
                if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
                    raise GrantsError(f"Grants.{name}: {path!r} is not an absolute path")
            paths[name] = tuple(_normal(path) for path in value)
        self._init(
            **paths,
            network=network,
            identities=identities,
            cpu_seconds=cpu_seconds,
            memory_bytes=memory_bytes,
            max_processes=max_processes,
            file_size_bytes=file_size_bytes,
            open_files=open_files,
            tmp_bytes=tmp_bytes,
            uid=uid,
            gid=gid,
        )
        object.__setattr__(self, "identities", _identities(self))
        if not isinstance(self.network, bool):
            raise GrantsError(f"Grants.network must be true or false, got {self.network!r}")
        for name in ("cpu_seconds", "memory_bytes", "max_processes", "file_size_bytes", "open_files"):
            _require_positive_int(name, getattr(self, name))
        _require_positive_int("tmp_bytes", self.tmp_bytes)
        for name in ("uid", "gid"):
            _require_positive_int(name, getattr(self, name), what="a non-zero (unprivileged) id")

    def to_json(self) -> str:
        """The compact JSON form the launcher takes after `--grants`."""
        import json  # the host's side only: the launcher reads with json's scanner alone (_json_value)

        return json.dumps(self.as_dict(), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Grants:
        """Parse `to_json`'s form; unknown or malformed fields raise `GrantsError`."""
        data = _json_value(text)
        if not isinstance(data, dict):
            raise GrantsError("grants must be a JSON object")
        known = set(cls.field_names())
        unknown = sorted(set(data) - known)
        if unknown:
            raise GrantsError(f"unknown grant fields {unknown}; known: {sorted(known)}")
        return cls(**data)


class _Decoding:
    """What json's scanner reads from its decoder (``json.JSONDecoder()``'s defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity, -Infinity: as json.loads (Grants then refuses a float)


_JSON_SPACE = " \t\n\r"  # json.decoder.WHITESPACE: what json.loads skips around the value


def _json_value(text: object) -> Any:
    """``json.loads(text)`` for a ``str``, read by the very scanner json.loads uses
    (``json.scanner.make_scanner``: ``_json``'s, where this Python has it) without importing ``json``,
    whose decoder imports ``re``. The same answers as json.loads: one value, whitespace around it
    allowed, anything after it refused; GrantsError naming what is wrong and where."""
    if not isinstance(text, str):
        raise GrantsError(f"grants must be JSON text, got {type(text).__name__}")
    try:
        from _json import make_scanner
    except ImportError:  # a Python without json's C scanner: json.loads uses the Python one
        return _json_loads(text)
    start = len(text) - len(text.lstrip(_JSON_SPACE))
    if text.startswith("\ufeff"):
        raise GrantsError("grants are not valid JSON: an unexpected byte-order mark at char 0")
    try:
        value, end = make_scanner(_Decoding())(text, start)  # type: ignore[arg-type]  # reads these only
    except StopIteration as exc:
        raise GrantsError(f"grants are not valid JSON: expecting a value at char {exc.value}") from None
    except Exception:  # the scanner raises json's error (what and where) only once json is
        # imported — without it, a SystemError — so a failed read asks json.loads for its message
        return _json_loads(text)
    rest = text[end:].lstrip(_JSON_SPACE)
    if rest:
        raise GrantsError(f"grants are not valid JSON: extra data at char {len(text) - len(rest)}")
    return value


def _json_loads(text: str) -> Any:
    """``json.loads`` with its errors as GrantsError (json imported: a launch pays for it only on a
    failed read or a Python without ``_json``)."""
    import json

    try:
        return json.loads(text)
    except ValueError as exc:  # json.JSONDecodeError: what and where
        raise GrantsError(f"grants are not valid JSON: {exc}") from None
    except RecursionError:
        raise GrantsError("grants are not valid JSON: nested too deeply") from None


def _identities(grants: Grants) -> tuple[tuple[str, int, int, bool], ...]:
    """`grants.identities` checked: one well-formed entry per root at most, for roots only."""
    value = grants.identities
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
        raise GrantsError(
            f"Grants.identities must be a tuple of (path, device, inode, is_dir), not {value!r}"
        )
    roots = {*grants.read_roots, *grants.write_roots, *grants.read_only, *grants.hide}
    out: dict[str, tuple[str, int, int, bool]] = {}
    for entry in value:
        if not (
            isinstance(entry, (tuple, list))
            and len(entry) == 4
            and isinstance(entry[0], str)
            and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in entry[1:3])
            and isinstance(entry[3], bool)
        ):
            raise GrantsError(f"Grants.identities: {entry!r} is not (path, device, inode, is_dir)")
        path = _normal(entry[0]) if os.path.isabs(entry[0]) else entry[0]
        if path not in roots:
            raise GrantsError(f"Grants.identities: {entry[0]!r} is not one of the roots or hidden paths")
        if out.setdefault(path, (path, *entry[1:])) != (path, *entry[1:]):
            raise GrantsError(f"Grants.identities: {path} is given two identities")
    return tuple(out.values())


def _normal(path: str) -> str:
    """``path`` normalized, leading slashes squeezed: POSIX lets ``//`` mean something else than
    ``/``, so ``normpath`` keeps it, yet Linux resolves it as ``/`` (which no check may miss)."""
    return os.path.normpath("/" + path.lstrip("/")) if path.startswith("/") else os.path.normpath(path)


def _require_positive_int(name: str, value: object, what: str = "a positive integer") -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise GrantsError(f"Grants.{name} must be {what}, got {value!r}")


MAX_DESCRIPTOR = 2**31 - 1
"""The largest descriptor number ``pass_fds`` / ``--pass-fds`` takes (the kernel's fds are C ints)."""


def descriptor_numbers(values: object, what: str = "pass_fds") -> tuple[int, ...]:
    """The descriptors to pass to the command, sorted and unique, from ``launcher_argv``'s
    ``pass_fds`` (an iterable of ints, read once) or the launcher's ``--pass-fds`` text (``N,…``): one
    rule for both, a number from 3 to ``MAX_DESCRIPTOR`` written in ASCII digits (no sign, no space,
    no other script's digits); GrantsError naming ``what`` and what was given for anything else."""
    numbers: list[object] = [values]  # refused below, unless read as numbers
    if isinstance(values, str):
        texts = values.split(",")
        if all(0 < len(t) <= 10 and t.isascii() and t.isdigit() for t in texts):
            numbers = [int(t) for t in texts]
    elif not isinstance(values, (bytes, int)):
        try:
            numbers = list(values)  # type: ignore[call-overload]
        except TypeError:
            pass
    else:
        numbers = [None]  # bytes, or one int where a collection of them is asked
    checked: set[int] = set()
    for n in numbers:
        if not isinstance(n, int) or isinstance(n, bool) or not 3 <= n <= MAX_DESCRIPTOR:
            shown = values if isinstance(values, (str, bytes)) else numbers
            raise GrantsError(
                f"{what} takes descriptor numbers from 3 to {MAX_DESCRIPTOR} (comma-separated ASCII "
                f"digits on the launcher's command line), got {shown!r}"
            )
        checked.add(n)
    return tuple(sorted(checked))
