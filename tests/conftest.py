"""Shared test fixtures: the repository root, a wheelhouse, and fresh virtual environments.

Fresh venvs are real: ``python -m venv`` plus ``pip install`` of real wheels and real project
folders. Dependencies are downloaded once into a wheelhouse cached under ``.venv/`` (the package
index is the only network this machine has), so each venv then installs offline in seconds.
"""

from __future__ import annotations

import fcntl
import hashlib
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from local_server import QuietHandler
from plugin_distkit import source_copy

REPO_ROOT = Path(__file__).resolve().parent.parent


# Distributions no fresh-venv test installs, whose dependencies the wheelhouse leaves out: the LLM
# runtime (litellm's large tree; before issue 24 it was reyn-core's `llm` extra, left out the same way).
NOT_IN_FRESH_VENVS = ("reyn-loops",)


def _tree_requirements() -> tuple[str, ...]:
    """Every third-party requirement of every distribution in the tree (core, packs with their extras,
    example, demo), read from their pyproject.toml files — so a dependency added there is in the
    wheelhouse too — plus what building and testing a plugin needs."""
    import tomllib

    found: set[str] = {"setuptools>=77", "wheel", "pytest>=8", "pytest-asyncio>=0.23"}
    for pyproject in sorted(REPO_ROOT.glob("**/pyproject.toml")):
        if any(part in (".venv", "build", "node_modules") for part in pyproject.relative_to(REPO_ROOT).parts):
            continue
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") in NOT_IN_FRESH_VENVS:
            continue
        extras = project.get("optional-dependencies", {})
        wanted = [
            *project.get("dependencies", []),
            *(r for name, reqs in extras.items() if name not in ("dev", "bench") for r in reqs),
        ]
        found.update(r for r in wanted if not r.startswith("reyn-") and "python_version <" not in r)
    return tuple(sorted(found))


# Third-party packages any distribution of the tree may need in a fresh venv; downloaded once per
# change of this list.
WHEELHOUSE_REQUIREMENTS = _tree_requirements()
_SCRUBBED_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")


def _pip(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def _deps_wheelhouse() -> Path:
    key = hashlib.sha256("\n".join(WHEELHOUSE_REQUIREMENTS).encode()).hexdigest()[:16]
    root = REPO_ROOT / ".venv" / "test-wheelhouse"
    target = root / key
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # other test processes may populate it at the same time
        if not (target / ".complete").exists():
            tmp = root / f"{key}.tmp{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            _pip("download", "--only-binary", ":all:", "-q", "-d", str(tmp), *WHEELHOUSE_REQUIREMENTS)
            (tmp / ".complete").touch()
            shutil.rmtree(target, ignore_errors=True)
            tmp.rename(target)
    return target


# The argument-hash key (reyn_core.loading.argument_key) of every load in this session, subprocesses
# included, lives in a private temporary folder: a test run never writes into the user's real config.
_KEY_DIR = tempfile.mkdtemp(prefix="reyn-test-key-")
os.environ.setdefault("REYN_ARGUMENT_KEY_FILE", os.path.join(_KEY_DIR, "argument-hash.key"))


@pytest.fixture
def isolated_profile_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No profile from the environment or the user's folders, a private cache folder, cwd = tmp_path:
    a load sees only what the test writes."""
    for var in ("REYN_PROFILE", "REYN_PROFILE_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def temp_site(isolated_profile_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A site folder first on ``sys.path`` for distributions a test lays out (``site_plugin``), in an
    isolated profile environment; the modules imported from it are forgotten afterwards."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(folder) + os.sep):
            del sys.modules[name]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[object]:
    """A real PostgreSQL server for the whole run (``TemporaryPostgres``; fsync off: the tests kill
    clients, not the OS). Without server binaries the tests that use it skip locally and FAIL under
    ``CI=true`` (``make postgres-server`` installs them)."""
    from reyn_tools_memory.testing import PostgresUnavailable, TemporaryPostgres

    try:
        server = TemporaryPostgres(fsync=False).start()
    except PostgresUnavailable as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"these tests need a PostgreSQL server: {exc}", pytrace=False)
        pytest.skip(f"no PostgreSQL server: {exc}")
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of wheels: reyn-core, reyn-sandbox, reyn-isolation and reyn-testing built from this
    tree, plus every dependency a pack needs. Built once per run: the workers of a parallel run
    (pytest-xdist) share the one the first of them builds (under a lock; it appears complete, by a rename)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # this run's folder, above each worker's own
    house = base / "wheelhouse"
    with open(base / "wheelhouse.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not house.exists():
            _build_wheelhouse(base / f"wheelhouse.tmp{os.getpid()}", house)
    return house


def _build_wheelhouse(tmp: Path, house: Path) -> None:
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    for wheel in _deps_wheelhouse().glob("*.whl"):
        os.link(wheel, tmp / wheel.name) if _same_fs(wheel, tmp) else shutil.copy2(wheel, tmp)
    src = tmp / "src" / "reyn-core"
    src.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO_ROOT / name, src / name)
    shutil.copytree(
        REPO_ROOT / "reyn_core", src / "reyn_core", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    _pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp), str(src))
    # the kernel sandbox launcher, a dependency of the shell and mcp packs (issue 22), isolated
    # plugins, which the core runs only through reyn-isolation, and the plugin author's test kit, in a
    # scaffolded plugin's test extra (issue 24)
    for folder in ("reyn_sandbox", "reyn_isolation", "reyn_testing"):
        copy = source_copy(REPO_ROOT / folder, tmp / "src")
        _pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp), str(copy))
    shutil.rmtree(tmp / "src")
    tmp.rename(house)


def _same_fs(a: Path, b: Path) -> bool:
    return a.stat().st_dev == b.stat().st_dev


@dataclass
class FreshVenv:
    """A brand-new virtual environment with its own site-packages."""

    path: Path
    wheelhouse: Path

    @property
    def bin(self) -> Path:
        return self.path / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    @property
    def site_packages(self) -> Path:
        return next((self.path / "lib").glob("python3*/site-packages"))

    def install(self, *specs: str | os.PathLike[str], editable: bool = False) -> None:
        """``pip install`` into this venv from the wheelhouse only. Relative folders resolve
        against the repository root; ``editable=True`` installs each folder with ``-e``."""
        args: list[str] = []
        for spec in specs:
            text = os.fspath(spec)
            candidate = Path(text) if Path(text).is_absolute() else REPO_ROOT / text
            if candidate.is_dir() and not editable and candidate.is_relative_to(REPO_ROOT):
                # built from a copy: pip builds in the folder itself (build/, *.egg-info), which
                # another test (another pytest-xdist worker) may be building at the same time
                into = Path(tempfile.mkdtemp(prefix="src-", dir=self.path.parent))
                candidate = source_copy(candidate, into)
            if candidate.exists():
                text = str(candidate)
            args.extend(["-e", text] if editable and candidate.is_dir() else [text])
        _pip(
            "--python",
            str(self.python),
            "install",
            "-q",
            "--no-index",
            "--find-links",
            str(self.wheelhouse),
            *args,
        )

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV and not k.startswith("REYN_")}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.path)
        env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        if extra:
            env.update(extra)
        return env

    def run(
        self,
        *argv: str | os.PathLike[str],
        cwd: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
        check: bool = False,
        timeout: float = 300,
        input: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a program of this venv (``python``, ``reyn``, ``pytest``…) or any program on PATH.

        The default working directory is outside the repository, so the repository's own
        packages can never shadow what is installed in the venv."""
        cwd = cwd if cwd is not None else self.path.parent
        args = [os.fspath(a) for a in argv]
        local = self.bin / args[0]
        if local.exists():
            args[0] = str(local)
        return subprocess.run(
            args,
            cwd=cwd,
            env=self.env(env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=check,
            input=input,
        )


@pytest.fixture
def make_venv(tmp_path: Path, wheelhouse: Path) -> Iterator[Callable[..., FreshVenv]]:
    """A factory of fresh venvs:
    ``venv = make_venv(); venv.install("reyn-core", "reyn_builtin_tools/file")``."""
    made: list[Path] = []

    def factory(name: str = "venv") -> FreshVenv:
        path = tmp_path / name
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(path)],
            check=True,
            capture_output=True,
            timeout=120,
        )
        made.append(path)
        return FreshVenv(path, wheelhouse)

    yield factory


@pytest.fixture(scope="module")
def make_module_venv(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Callable[..., FreshVenv]:
    """Like ``make_venv`` but module-scoped, for a venv shared by the tests of one module."""

    def factory(name: str = "venv") -> FreshVenv:
        path = tmp_path_factory.mktemp("mvenv") / name
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(path)],
            check=True,
            capture_output=True,
            timeout=120,
        )
        return FreshVenv(path, wheelhouse)

    return factory


def run_reyn(
    *argv: str,
    cwd: Path,
    env: dict[str, str | None] | None = None,
    stdin: str = "",
    timeout: float = 300,
    command: Sequence[str] = (sys.executable, "-m", "reyn_core"),
) -> subprocess.CompletedProcess[str]:
    """``reyn ARGV`` in a child process run from ``cwd``, as a user would run it there: the calling
    shell's ``REYN_*`` variables removed (a developer's own profile never leaks in), the user config
    folder under ``cwd / "xdg"`` (no user profile), LiteLLM's bundled model-cost map (no fetch).
    ``env`` sets variables on top (None removes one); ``stdin`` is all the input (then end of file);
    ``command`` is what runs (an installed ``reyn`` script instead of ``python -m reyn_core``)."""
    return subprocess.run(
        [*command, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=reyn_env(cwd, env),
        timeout=timeout,
    )


def reyn_env(cwd: Path, env: dict[str, str | None] | None = None) -> dict[str, str]:
    """The environment ``run_reyn`` gives ``reyn`` (for a test that wires its stdio itself)."""
    child = {k: v for k, v in os.environ.items() if not k.startswith("REYN_")}
    child.update(XDG_CONFIG_HOME=str(cwd / "xdg"), LITELLM_LOCAL_MODEL_COST_MAP="True")
    for key, value in (env or {}).items():
        if value is None:
            child.pop(key, None)
        else:
            child[key] = value
    return child


@pytest.fixture
def audit_line_fields() -> frozenset[str]:
    """The fields of one audit-log line, as docs/concepts.md documents them (the one list tests
    compare a written line with)."""
    return frozenset(
        "time surface agent tool definition_sha256 plugin digest status duration_ms args_sha256".split()
    )


@pytest.fixture
def reyn_environment() -> Callable[..., dict[str, str]]:
    """``reyn_env(cwd, env=None)``: the environment ``run_reyn`` gives ``reyn``, for a test that
    wires the child's stdio itself (a closed pipe, a terminal)."""
    return reyn_env


@pytest.fixture
def reyn_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """The one way tests run the ``reyn`` command in a child process: ``run_reyn``."""
    return run_reyn


@pytest.fixture
def umask() -> Callable[[int], AbstractContextManager[None]]:
    """``with umask(0o022):`` this process — and every child it starts meanwhile, such as ``reyn_cli``
    — runs with that umask, restored after (the mode a new file gets)."""

    @contextmanager
    def set_umask(value: int) -> Iterator[None]:
        old = os.umask(value)
        try:
            yield
        finally:
            os.umask(old)

    return set_umask


@pytest.fixture
def within_bound() -> Callable[..., Any]:
    """``within_bound(fn, *args, seconds=20)``: what ``fn(*args)`` returned, or the exception it
    raised (returned, for the test to assert on), run in a daemon thread; the test fails when it has
    not finished within ``seconds``, so a hang or a super-linear blow-up fails instead of stalling."""

    def run(fn: Callable[..., Any], *args: Any, seconds: float = 20.0) -> Any:
        outcome: list[Any] = []

        def call() -> None:
            try:
                outcome.append(fn(*args))
            except Exception as exc:
                outcome.append(exc)

        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        worker.join(seconds)
        assert outcome, f"{getattr(fn, '__name__', fn)} did not finish within {seconds} s"
        return outcome[0]

    return run


@pytest.fixture
def child_pytest() -> Callable[..., subprocess.CompletedProcess[str]]:
    """pytest in a child process run from ``cwd`` the way ``run_reyn`` runs reyn (no ``REYN_*``
    variables), quiet, without the cache provider, in asyncio auto mode:
    ``child_pytest(*args, cwd=..., timeout=...)``."""

    def run(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        options = ("-q", "-p", "no:cacheprovider", "-o", "asyncio_mode=auto")
        command = (sys.executable, "-m", "pytest")
        return run_reyn(*options, *args, cwd=cwd, timeout=timeout, command=command)

    return run


def run_checked(argv: Sequence[str], **kw: object) -> subprocess.CompletedProcess[str]:
    """Run a command; raise with its output on failure (for fixture setup)."""
    proc = subprocess.run(list(argv), capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- a recording HTTP server


@dataclass
class CountingServer:
    """A real HTTP server on 127.0.0.1 that counts every request it receives."""

    port: int
    requests: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def counting_server() -> Iterator[CountingServer]:
    """Serve JSON schemas on 127.0.0.1 and record each request path. Stops after the test, and in any
    case after 60 s on its own (a timer shuts it down), so a stuck test cannot leak it."""
    state = CountingServer(port=0)

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            state.requests.append(self.path)
            self.reply(200, b'{"type": "integer"}', "application/schema+json")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.timeout = 1
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    watchdog = threading.Timer(60, server.shutdown)
    watchdog.daemon = True
    watchdog.start()
    try:
        yield state
    finally:
        watchdog.cancel()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# Remote failures' raw text goes to Reyn's user log folder by default (reyn_core.remote_log): keep a
# test run's records, and those of every subprocess it starts, out of the real home folder.
os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="reyn-test-state-"))


class OperatorLog:
    """The operator's log of remote failures (``$REYN_REMOTE_LOG``), pointed at a file of the test."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def text(self) -> str:
        """Everything logged so far (empty before the first record)."""
        return self.path.read_text(encoding="utf-8") if self.path.exists() else ""

    def record(self, message: str) -> str:
        """The record a model-visible ``message`` cites (``… ref 1a2b3c4d)``): its text, traceback
        included. Fails when the message cites none or the log holds no such record."""
        import re

        cited = re.search(r"\(reyn\.remote\.[\w.]+, ref ([0-9a-f]{8})\)", message)
        assert cited, f"the message cites no record of the operator's log: {message}"
        records = re.split(r"^(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ reyn\.remote)", self.text(), flags=re.M)
        found = [r for r in records if f" ref={cited.group(1)} " in r]
        assert len(found) == 1, f"no one record ref={cited.group(1)} in the operator's log:\n{self.text()}"
        return found[0]


@pytest.fixture
def operator_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> OperatorLog:
    """``REYN_REMOTE_LOG`` set to a file of this test, for this process and the ones it starts."""
    path = tmp_path / "operator" / "remote.log"
    monkeypatch.setenv("REYN_REMOTE_LOG", str(path))
    return OperatorLog(path)


def _secret_forms(token: str) -> dict[str, str]:
    """``token`` as plain text and in the encodings a leak could use: what must never reach a model."""
    import base64
    import codecs
    import json
    import urllib.parse

    return {
        "plain": token,
        "url": urllib.parse.quote(token, safe=""),
        "url_every_char": "".join(f"%{b:02X}" for b in token.encode()),
        "json": json.dumps(token)[1:-1].replace("-", "\\u002d"),
        "base64": base64.b64encode(token.encode()).decode(),
        "base64url": base64.urlsafe_b64encode(token.encode()).decode().rstrip("="),
        "upper": token.upper(),
        "reversed": token[::-1],
        "hex": token.encode().hex(),
        "rot13": codecs.encode(token, "rot13"),
        "spaced": " ".join(token),
    }


class SecretForms:
    """Every form of one secret, and the checks on model-visible text and on the operator's log."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.forms = _secret_forms(token)

    def json(self) -> str:
        """The forms as JSON (for a server's environment)."""
        import json

        return json.dumps(self.forms)

    def assert_absent(self, text: str) -> None:
        """No form of the secret — nor either half of it — is in ``text`` (case-insensitively)."""
        folded = text.lower()
        for name, value in self.forms.items():
            assert value.lower() not in folded, f"the {name} form of the secret is in {text[:300]!r}"
        half = len(self.token) // 2
        assert self.token[:half].lower() not in folded and self.token[half:].lower() not in folded

    def assert_logged(self, log: str) -> None:
        """Every form is in the operator's log (the positive control: the leak did happen), as it
        was written or as a remote party's text shows it there (``shown_raw``: backslashes doubled)."""
        from reyn_core.remote_log import shown_raw

        for name, value in self.forms.items():
            assert value in log or shown_raw(value) in log, (
                f"the {name} form is missing from the operator's log"
            )


@pytest.fixture
def secret_forms() -> SecretForms:
    """A credential-shaped secret and its encoded forms."""
    return SecretForms("sk-live-Zq81wPz5-secret-0042")


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A path in ``REYN_TEST_MARKER`` that code under test writes when it runs (an attack test's proof
    that nothing of it ran is that the file does not exist)."""
    path = tmp_path / "marker"
    monkeypatch.setenv("REYN_TEST_MARKER", str(path))
    return path
