"""The five attacks of issue 22, re-run through the real ``shell`` tool inside the kernel sandbox.

Each plants model-written configuration in the write root ``out/`` that makes an allowed program
run a payload (pytest imports ``out/conftest.py``, mypy loads ``plugins =``, mkdocs ``hooks:``,
lint-imports ``contract_types``, tar's ``--checkpoint-act=exec=``). The payload writes ``ran.txt``
into ``out/`` (so the test knows it ran), tries to write a marker in the read-only workspace and
outside it, and to copy a planted secret into ``out/``. The promise: the program runs (and a benign
run of it succeeds), the payload runs — that is what running the program means — and no marker
appears outside the write roots and the secret stays unread. Every run is a child Python calling
the tool through the real dispatcher, as root and as an unprivileged user (``setpriv``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[3]
# the payload tar runs needs only the standard library: any Python every user can start
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
SECRET = "TOPSECRET-issue22"
UNPRIVILEGED = 65534  # nobody

PAYLOAD = """\
import os, pathlib
out = pathlib.Path({out!r})
(out / "ran.txt").write_text("ran")
for target in {targets!r}:
    try:
        pathlib.Path(target).write_text("pwned")
    except OSError as exc:
        with open(out / "denied.txt", "a") as fh:
            fh.write(f"{{target}}: {{exc.errno}}\\n")
try:
    (out / "leak.txt").write_text(pathlib.Path({secret!r}).read_text())
except OSError:
    pass
"""


MYPY_PLUGIN = """
from mypy.plugin import Plugin

def plugin(version):
    return Plugin
"""
EVIL_IMPORTLINTER = """[importlinter]
root_package = pkg
contract_types =
    evil: evil_contract.Evil

[importlinter:contract:one]
name = one
type = evil
"""
EVIL_CONTRACT = """
from importlinter.domain.contract import Contract, ContractCheck

class Evil(Contract):
    def check(self, graph, verbose):
        return ContractCheck(kept=True)

    def render_broken_contract(self, check):
        pass
"""
OK_IMPORTLINTER = """[importlinter]
root_package = okpkg

[importlinter:contract:one]
name = one
type = layers
layers =
    okpkg.a
    okpkg.b
"""


@dataclass(frozen=True)
class Attack:
    """One attack: the files it plants in ``out/`` (``{payload}`` is the payload's code), the rule
    for its program, the command that triggers it and the benign command (the positive control)."""

    name: str
    program: str
    rule: dict[str, Any]
    files: dict[str, str]
    command: list[str]
    cwd: str
    benign: list[str]
    benign_cwd: str = "."
    benign_files: dict[str, str] = field(default_factory=dict)


def _exe(name: str) -> str:
    found = BIN / name
    return str(found) if found.exists() else str(shutil.which(name) or name)


ATTACKS = (
    Attack(
        name="pytest-conftest",
        program="pytest",
        # the docs' own rule: it accepts tests/../out, so pytest collects out/ and imports conftest.py
        rule={
            "name": "pytest",
            "path": _exe("pytest"),
            "allow_args": ["^-q$", "^-p$", "^no:cacheprovider$", r"^tests(/[\w./-]*)?$"],
        },
        files={"conftest.py": "{payload}", "test_nothing.py": "def test_nothing():\n    pass\n"},
        command=["pytest", "-q", "-p", "no:cacheprovider", "tests/../out"],
        cwd=".",
        benign=["pytest", "-q", "-p", "no:cacheprovider", "tests"],
    ),
    Attack(
        name="mypy-plugins",
        program="mypy",
        rule={"name": "mypy", "path": _exe("mypy"), "allow_args": [r"^[\w-]+\.py$", "^--no-incremental$"]},
        files={
            "mypy.ini": "[mypy]\nplugins = evil_plugin.py\n",
            "evil_plugin.py": "{payload}" + MYPY_PLUGIN,
            "ok.py": "x: int = 1\n",
        },
        command=["mypy", "--no-incremental", "ok.py"],
        cwd="out",
        benign=["mypy", "--no-incremental", "ok.py"],
        benign_cwd="out/mypy-ok",  # mypy writes its cache where it runs
        benign_files={"out/mypy-ok/ok.py": "x: int = 1\n"},
    ),
    Attack(
        name="mkdocs-hooks",
        program="mkdocs",
        rule={"name": "mkdocs", "path": _exe("mkdocs"), "subcommands": ["build"], "allow_args": ["^-q$"]},
        files={
            "mkdocs.yml": "site_name: x\nhooks:\n  - evil_hook.py\n",
            "evil_hook.py": "{payload}",
            "docs/index.md": "# x\n",
        },
        command=["mkdocs", "build", "-q"],
        cwd="out",
        benign=["mkdocs", "build", "-q"],
        benign_cwd="out/site-ok",
        benign_files={"out/site-ok/mkdocs.yml": "site_name: ok\n", "out/site-ok/docs/index.md": "# ok\n"},
    ),
    Attack(
        name="lint-imports-contract-types",
        program="lint-imports",
        rule={"name": "lint-imports", "path": _exe("lint-imports"), "allow_args": ["^--no-cache$"]},
        files={
            ".importlinter": EVIL_IMPORTLINTER,
            "evil_contract.py": "{payload}" + EVIL_CONTRACT,
            "pkg/__init__.py": "",
        },
        command=["lint-imports", "--no-cache"],
        cwd="out",
        benign=["lint-imports", "--no-cache"],
        benign_cwd="out/lint-ok",
        benign_files={
            "out/lint-ok/.importlinter": OK_IMPORTLINTER,
            "out/lint-ok/okpkg/__init__.py": "",
            "out/lint-ok/okpkg/a.py": "from okpkg import b\n",
            "out/lint-ok/okpkg/b.py": "",
        },
    ),
    Attack(
        name="tar-checkpoint-act",
        program="tar",
        # a deny list that misses the abbreviation --checkpoint-act= (tar accepts unique prefixes)
        rule={
            "name": "tar",
            "any_args": True,
            "deny_args": ["^--checkpoint-action", "^--to-command", "^-I$", "^--use-compress"],
        },
        files={"payload.py": "{payload}"},
        command=[
            "tar",
            "-cf",
            "out/a.tar",
            "--checkpoint=1",
            f"--checkpoint-act=exec={SYSTEM_PYTHON} out/payload.py",
            "tests",
        ],
        cwd=".",
        benign=["tar", "-cf", "out/ok.tar", "tests"],
    ),
)


@dataclass
class Outcome:
    """What one run did: the tool's result (or error envelope), and the markers found."""

    result: dict[str, Any]
    ran: bool
    leaked: bool
    markers: list[str]


def build(root: Path, attack: Attack, python: str = sys.executable) -> dict[str, Any]:
    """Plant the workspace under ``root``: benign tests, the attack's files in ``out/``, a secret
    outside every root. Returns the settings and the paths the payload aims at."""
    ws, outside = root / "ws", root / "outside"
    for d in (ws / "tests", ws / "out", outside / ".ssh"):
        d.mkdir(parents=True, exist_ok=True)
    (ws / "tests" / "test_ok.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    (ws / "tests" / "ok.py").write_text("x: int = 1\n")
    secret = outside / ".ssh" / "id_ed25519"
    secret.write_text(SECRET)
    targets = [str(ws / "PWNED"), str(ws / "tests" / "PWNED"), str(outside / "PWNED")]
    payload = PAYLOAD.format(out=str(ws / "out"), targets=targets, secret=str(secret))
    for rel, text in {**{f"out/{k}": v for k, v in attack.files.items()}, **attack.benign_files}.items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("{payload}", payload))
    if os.geteuid() == 0:
        # under root the launcher runs the command as an unprivileged user (Grants.uid, 65534): a
        # write root must be writable by it, as the shell pack's page tells operators
        for here, dirs, files in os.walk(ws / "out"):
            for name in (*dirs, *files):
                os.chown(os.path.join(here, name), UNPRIVILEGED, UNPRIVILEGED)
        os.chown(ws / "out", UNPRIVILEGED, UNPRIVILEGED)
    rule = dict(attack.rule)
    if python != sys.executable and "path" in rule:  # the console script of the other interpreter
        rule["path"] = str(Path(python).parent / attack.program)
    settings = {
        "programs": [rule],
        "write_roots": ["out"],
        # the tools' environment, as an operator grants it: the venv, and the editable installs'
        # sources (this repository; its pytest plugin is reyn_core's)
        "read_roots": [".", sys.prefix, sys.base_prefix, str(REPO), str(Path(python).parent.parent)],
        "timeout_s": 120,
    }
    return {"workspace": str(ws), "settings": settings, "targets": targets, "secret": str(secret)}


def inspect(setup: dict[str, Any], result: dict[str, Any]) -> Outcome:
    """Which markers exist, and whether the payload ran and leaked the secret into ``out/``."""
    out = Path(setup["workspace"]) / "out"
    leak = out / "leak.txt"
    return Outcome(
        result=result,
        ran=(out / "ran.txt").exists(),
        leaked=leak.exists() and SECRET in leak.read_text(),
        markers=[t for t in setup["targets"] if os.path.exists(t)],
    )


DRIVER = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from reyn_core import PhaseCallerState, ToolContext, ToolOrigin
    from reyn_core.host import RegistryBuilder, dispatch_tool
    import reyn_tools_shell.plugin as plugin
    from reyn_tools_shell.settings import ShellSettings

    job = json.loads(sys.argv[1])
    settings = ShellSettings.model_validate(job["settings"])
    builder = RegistryBuilder(settings={"shell": settings})
    origin = ToolOrigin(kind="plugin", plugin_id="shell", distribution="reyn-tools-shell")
    plugin.reyn_register_tools(register=lambda t: builder.register(t, origin=origin), settings=settings)
    ctx = ToolContext(surface="phase", workspace=Path(job["workspace"]),
                      phase_state=PhaseCallerState(allowed_ops=("shell",)))
    env = asyncio.run(dispatch_tool(builder.freeze(), "shell", job["args"], ctx))
    print(json.dumps(env))
    """
)


def _as_user(uid: int) -> list[str]:
    return [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
    ]


def _runs_as(uid: int, python: str) -> bool:
    # the interpreter must also be able to start itself again as that user (the supervisor and the
    # launcher are started with sys.executable)
    again = (
        "import subprocess, sys; subprocess.run([sys.executable, '-c', 'import reyn_sandbox'], check=True)"
    )
    probe = [*_as_user(uid), python, "-c", f"import reyn_core; {again}"]
    return subprocess.run(probe, capture_output=True, timeout=60, cwd="/", check=False).returncode == 0


def unprivileged_python(uid: int, where: Path) -> str | None:
    """A Python ``uid`` can run with this environment's packages, or None.

    The test venv's interpreter may live where another user cannot reach it (here under
    ``/root``): then a venv of the system's Python of the same minor version is made in ``where``,
    whose ``.pth`` adds this venv's site-packages (editable installs included)."""
    if _runs_as(uid, sys.executable):
        return sys.executable
    system = shutil.which(f"python{sys.version_info.major}.{sys.version_info.minor}", path="/usr/bin:/bin")
    if system is None:
        return None
    venv = where / "venv"
    subprocess.run([system, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(site, "reyn_test_env.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    for attack in ATTACKS:  # the tools' console scripts, started by this interpreter
        script = BIN / attack.program
        if script.is_file():
            body = script.read_text().split("\n", 1)[1]
            (venv / "bin" / attack.program).write_text(f"#!{python}\n{body}")
            (venv / "bin" / attack.program).chmod(0o755)
    subprocess.run(["chmod", "-R", "a+rX", str(where)], check=True, timeout=60)
    return python if _runs_as(uid, python) else None


def run_as(
    uid: int | None, setup: dict[str, Any], argv: list[str], cwd: str, python: str = sys.executable
) -> dict[str, Any]:
    """The ``shell`` tool's envelope for ``argv``, called in a child Python — as ``uid`` (through
    ``setpriv``, no capabilities) or, with ``uid=None``, as the current user."""
    job = json.dumps(
        {"settings": setup["settings"], "workspace": setup["workspace"], "args": {"argv": argv, "cwd": cwd}}
    )
    prefix = (
        []
        if uid is None
        else ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all"]
    )
    done = subprocess.run(
        [*prefix, python, "-c", DRIVER, job],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(setup["workspace"]).parent,  # not the repository: its reyn_sandbox/ folder would shadow
        env={"PATH": os.defpath, "HOME": setup["workspace"], "LANG": "C.UTF-8"},
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"driver failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _sandbox_or_skip() -> None:
    from reyn_tools_shell.sandbox import unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"the kernel sandbox is unavailable here: {reason}")


def _root_for(uid: int | None, tmp_path: Path) -> Path:
    if uid is None:
        return tmp_path
    if os.geteuid() != 0:
        pytest.skip("running as another user needs root")
    root = Path(tempfile.mkdtemp(prefix="reyn-sbx-"))
    os.chown(root, uid, uid)
    return root


def _chown_tree(root: Path, uid: int | None) -> None:
    if uid is None:
        return
    for here, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            os.chown(os.path.join(here, name), uid, uid)
        os.chown(here, uid, uid)


USERS = [pytest.param(None, id="as-current-user"), pytest.param(UNPRIVILEGED, id="as-nobody")]


@pytest.fixture(scope="module")
def python_for() -> Any:
    """``python_for(uid)``: the interpreter the driver runs with for that user."""
    made = Path(tempfile.mkdtemp(prefix="reyn-sbx-py-"))
    cache: dict[int | None, str | None] = {None: sys.executable}

    def get(uid: int | None) -> str:
        if uid not in cache:
            cache[uid] = unprivileged_python(uid, made)
        found = cache[uid]
        if found is None:
            pytest.skip("no Python an unprivileged user can run with this environment's packages")
        return found

    yield get
    shutil.rmtree(made, ignore_errors=True)


@pytest.fixture
def confined(
    tmp_path: Path, python_for: Any
) -> Iterator[Callable[..., tuple[dict[str, Any], dict[str, Any]]]]:
    """``confined(attack, uid, benign)``: build the attack's files for ``uid`` (the runner itself when
    None), run its benign or its attack command sandboxed as ``uid``; (setup, envelope). A root made
    for another uid is removed after the test."""
    made: list[Path] = []

    def run(attack: Attack, uid: int | None, benign: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        _sandbox_or_skip()
        root = _root_for(uid, tmp_path)
        if uid is not None:
            made.append(root)
        python = python_for(uid)
        setup = build(root, attack, python)
        _chown_tree(root, uid)
        command, cwd = (attack.benign, attack.benign_cwd) if benign else (attack.command, attack.cwd)
        return setup, run_as(uid, setup, command, cwd, python)

    yield run
    for root in made:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("uid", USERS)
@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_benign_run_of_the_program_succeeds(attack: Attack, uid: int | None, confined: Any) -> None:
    _, envelope = confined(attack, uid, benign=True)
    assert envelope["status"] == "ok", envelope
    assert envelope["data"]["exit_code"] == 0, envelope["data"]


@pytest.mark.parametrize("uid", USERS)
@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_model_written_config_runs_but_reaches_only_the_write_roots(
    attack: Attack, uid: int | None, confined: Any
) -> None:
    setup, envelope = confined(attack, uid, benign=False)
    outcome = inspect(setup, envelope)
    assert envelope["status"] == "ok", envelope  # the program ran: it was allowed, and the sandbox set up
    assert outcome.ran, f"the payload did not run, so this test shows nothing: {envelope}"
    assert outcome.markers == [], f"markers outside the write roots: {outcome.markers}"
    assert not outcome.leaked, "the payload read the secret outside the read roots"


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_unconfined_the_same_attack_escapes(attack: Attack, tmp_path: Path) -> None:
    """The control that makes the attack tests mean something: with ``sandbox = "off"`` the same
    files make the same program write outside the write roots and copy the secret."""
    setup = build(tmp_path, attack)
    setup["settings"]["sandbox"] = "off"
    envelope = run_as(None, setup, attack.command, attack.cwd)
    outcome = inspect(setup, envelope)
    assert outcome.ran, envelope
    assert outcome.markers == setup["targets"] and outcome.leaked, envelope
