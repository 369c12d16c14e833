"""A throwaway PostgreSQL server for tests and benchmarks of the postgres backend (never imported by
the plugin).

``TemporaryPostgres`` runs ``initdb`` and ``pg_ctl`` from the PostgreSQL server binaries found on
this machine (``$PATH``, else ``/usr/lib/postgresql/<newest>/bin``) into a fresh temporary folder,
listening on 127.0.0.1 at a free port and on a Unix socket in that folder. PostgreSQL refuses to run
as root, so as root the server runs as the ``postgres`` user (or ``nobody``) through ``runuser`` /
``setpriv``. Every wait is bounded; ``stop()`` removes the cluster.

    with TemporaryPostgres() as pg:
        os.environ["REYN_MEMORY_DSN"] = pg.dsn(schema=pg.new_schema())
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

WAIT_S = 60  # bound on initdb, start and stop


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries on this machine, or the server would not start; says why."""


def find_bindir() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``, or None."""
    candidates = [Path(p).resolve().parent for p in [shutil.which("initdb")] if p]
    candidates += [
        Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version, reverse=True)
    ]
    for folder in candidates:
        if all((folder / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return folder
    return None


def _version(path: str) -> float:
    try:
        return float(Path(path).parent.name)
    except ValueError:
        return 0.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TemporaryPostgres:
    """A PostgreSQL cluster in a temporary folder; superuser ``reyn`` with a random password over TCP
    (scram-sha-256) and trust over the Unix socket (for the admin helpers)."""

    def __init__(self, bindir: Path | None = None, *, fsync: bool = True) -> None:
        found = bindir or find_bindir()
        if found is None:
            raise PostgresUnavailable(
                "no PostgreSQL server binaries (initdb, pg_ctl, postgres) on $PATH or in "
                "/usr/lib/postgresql/*/bin; install them (Debian: apt-get install postgresql — "
                "`make test` does this when it runs as root)"
            )
        self.bindir = found
        self.user = "reyn"
        self.password = "pw-" + secrets.token_urlsafe(12)
        self.port = free_port()
        self.fsync = fsync
        self.root = Path(tempfile.mkdtemp(prefix="reyn-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._run_as: list[str] = []
        self._schemas = 0
        if os.geteuid() == 0:
            self._run_as, uid, gid = _unprivileged()
            os.chown(self.root, uid, gid)
        os.chmod(self.root, 0o700)

    # ------------------------------------------------------------------ lifecycle

    def _cmd(self, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [*self._run_as, str(self.bindir / tool), *args],
            capture_output=True,
            text=True,
            timeout=WAIT_S + 10,
            cwd=self.root,
        )
        if proc.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise PostgresUnavailable(f"{tool} {' '.join(args)} failed: {proc.stderr.strip()}\n{log}")
        return proc

    def start(self) -> TemporaryPostgres:
        """initdb (the first time) and start; returns when the server accepts connections."""
        if not self.data.exists():
            pwfile = self.root / "pw"
            pwfile.write_text(self.password + "\n")
            if self._run_as:
                shutil.chown(pwfile, *(_owner(self.root)))
            self._cmd(
                "initdb", "-D", str(self.data), "-U", self.user, f"--pwfile={pwfile}", "-E", "UTF8",
                "--no-locale", "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync",
            )  # fmt: skip
            pwfile.unlink()
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.root} "
            f"-c max_connections=200 -c fsync={'on' if self.fsync else 'off'}"
        )
        self._cmd(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-w",
            "-t",
            str(WAIT_S),
            "-o",
            options,
            "start",
        )
        return self

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: roll back open transactions; ``immediate``: like a crash)."""
        self._cmd("pg_ctl", "-D", str(self.data), "-w", "-t", str(WAIT_S), "-m", mode, "stop")

    def restart(self, down_s: float = 0.0) -> None:
        """Stop, stay down ``down_s`` seconds, start again (same port, same data)."""
        self.stop()
        time.sleep(down_s)
        self.start()

    def remove(self) -> None:
        """Stop the server if it runs, and delete the cluster."""
        if (self.data / "postmaster.pid").exists():
            try:
                self.stop("immediate")
            except (PostgresUnavailable, subprocess.TimeoutExpired):
                pass
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> TemporaryPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.remove()

    # ------------------------------------------------------------------ using it

    def dsn(self, *, dbname: str = "postgres", schema: str | None = None, password: bool = True) -> str:
        """A URI DSN over TCP (with the password), optionally with ``search_path`` set to ``schema``."""
        auth = f"{self.user}:{quote(self.password, safe='')}" if password else self.user
        dsn = f"postgresql://{auth}@127.0.0.1:{self.port}/{dbname}"
        return dsn + (f"?options=-csearch_path%3D{schema}" if schema else "")

    def admin(self, dbname: str = "postgres") -> Any:
        """A superuser psycopg connection over the Unix socket (autocommit)."""
        import psycopg

        return psycopg.connect(
            host=str(self.root),
            port=self.port,
            user=self.user,
            dbname=dbname,
            autocommit=True,
            connect_timeout=10,
        )

    def new_schema(self, prefix: str = "t") -> str:
        """A new empty schema (one store each: the DSN's search_path picks it)."""
        self._schemas += 1
        name = f"{prefix}_{os.getpid()}_{self._schemas}"
        with self.admin() as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        return name


def _owner(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_uid, st.st_gid


def _unprivileged() -> tuple[list[str], int, int]:
    """The argv prefix that runs a command as an unprivileged user, with that user's uid and gid."""
    try:
        pw = pwd.getpwnam("postgres")
    except KeyError:
        pw = pwd.getpwnam("nobody")
    runuser = shutil.which("runuser")
    if runuser and pw.pw_name == "postgres":
        return [runuser, "-u", pw.pw_name, "--"], pw.pw_uid, pw.pw_gid
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise PostgresUnavailable(
            "running as root, and neither runuser nor setpriv is there to drop privileges"
        )
    return (
        [setpriv, f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups", "--"],
        pw.pw_uid,
        pw.pw_gid,
    )
