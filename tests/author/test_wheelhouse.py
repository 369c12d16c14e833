"""The install story: ``make dist`` writes a wheelhouse; a user installs packs from it by name.

The real ``make dist`` target runs (into a temporary folder); a brand-new venv then installs
``reyn-tools-file`` *by name* from those wheels only (no editable install, no source folder) and
calls one of its tools through the real ``reyn`` console script.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from plugin_distkit import source_copy


def _tree_distributions(repo_root: Path) -> dict[str, Path]:
    """Every distribution in the tree: its canonical name -> its folder."""
    # Found, not listed: the root, every top-level folder and every pack with a pyproject.toml.
    found = [*repo_root.glob("*/pyproject.toml"), *repo_root.glob("reyn_builtin_tools/*/pyproject.toml")]
    folders = [repo_root, *sorted(p.parent for p in found if not p.parent.name.startswith("."))]
    names = {}
    for folder in folders:
        project = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
        names[canonicalize_name(project["name"])] = folder
    return names


def _wheel_name(wheel: Path) -> str:
    return canonicalize_name(wheel.name.split("-")[0])


def _metadata(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as zf:
        (meta,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        return zf.read(meta).decode()


@pytest.fixture(scope="module")
def dist(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheelhouse, built by the real ``make dist`` (into a temporary DIST, with this
    interpreter's bin folder; ``-o`` keeps make from reinstalling the shared dev venv) in a copy of
    the tree: the target builds in each distribution's folder (build/, *.egg-info), which a test
    installing from the same folder at the same time (another pytest-xdist worker) would race."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    out = tmp_path_factory.mktemp("dist") / "dist"
    tree = source_copy(repo_root, tmp_path_factory.mktemp("dist-tree"))
    proc = subprocess.run(
        ["make", "-o", ".venv/.installed", "dist", f"DIST={out}", f"BIN={Path(sys.executable).parent}"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return out


def _cli_doc() -> str:
    return (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")


def test_make_dist_writes_one_wheel_per_distribution_in_the_tree(dist, repo_root):
    wheels = sorted(dist.glob("*.whl"))
    assert {_wheel_name(w) for w in wheels} == set(_tree_distributions(repo_root))
    assert len(wheels) == len(_tree_distributions(repo_root))  # exactly one each
    # core, sandbox, the LLM runtime, the approval stores (SQLite, PostgreSQL), seven packs, the example,
    # the demo
    assert len(_tree_distributions(repo_root)) >= 14
    assert {"reyn-approvals-sqlite", "reyn-approvals-postgres"} <= set(_tree_distributions(repo_root))


def test_every_pack_pins_a_compatible_reyn_core_range(dist):
    core_version = next(dist.glob("reyn_core-*.whl")).name.split("-")[1]
    packs = [w for w in dist.glob("*.whl") if _wheel_name(w).startswith("reyn-tools-")]
    assert len(packs) >= 7
    for wheel in packs:
        reqs = [
            Requirement(line.split(":", 1)[1].strip())
            for line in _metadata(wheel).splitlines()
            if line.startswith("Requires-Dist:")
        ]
        (core,) = [r for r in reqs if canonicalize_name(r.name) == "reyn-core"]
        assert core.specifier.contains(core_version), (wheel.name, str(core.specifier))
        # Bounded above: the next minor release of the core is not silently accepted.
        assert not core.specifier.contains("0.2.0"), (wheel.name, str(core.specifier))
        assert not core.specifier.contains("1.0.0"), (wheel.name, str(core.specifier))


def test_each_wheel_holds_exactly_the_source_modules(dist, repo_root):
    """No stale module from an old in-tree build/ folder, none missing."""
    for name, folder in _tree_distributions(repo_root).items():
        (wheel,) = [w for w in dist.glob("*.whl") if _wheel_name(w) == name]
        with zipfile.ZipFile(wheel) as zf:
            in_wheel = {n for n in zf.namelist() if n.endswith(".py")}
        tops = {n.split("/")[0] for n in in_wheel}
        assert tops, wheel.name
        if name == "reyn-core":
            assert tops == {"reyn_core"}
        # reyn-sandbox's and reyn-loops' project folders are their packages themselves (each pyproject.toml
        # sits beside __init__.py); every other distribution holds its package in a folder of its own
        base = folder if all((folder / top).is_dir() for top in tops) else folder.parent
        in_source = {
            str(p.relative_to(base))
            for top in tops
            for p in (base / top).rglob("*.py")
            if "__pycache__" not in p.parts and "build" not in p.relative_to(base).parts
        }
        assert in_wheel == in_source, (wheel.name, in_wheel ^ in_source)


def test_a_fresh_venv_installs_a_pack_by_name_from_the_wheelhouse_and_runs_a_tool(
    dist, wheelhouse, make_venv, tmp_path
):
    # The index a user would reach: third-party dependency wheels, and reyn's wheels only from dist/.
    house = tmp_path / "house"
    house.mkdir()
    for wheel in wheelhouse.glob("*.whl"):
        if not wheel.name.startswith("reyn_"):
            shutil.copy2(wheel, house / wheel.name)
    for wheel in dist.glob("*.whl"):
        shutil.copy2(wheel, house / wheel.name)
    venv = make_venv("user")
    venv.wheelhouse = house  # --no-index --find-links house: nothing else is reachable
    venv.install("reyn-tools-file")  # by name: the documented pip install --find-links dist reyn-tools-file

    listing = venv.run(
        "python",
        "-c",
        "import json, importlib.metadata as m; print(json.dumps({d.metadata['Name']: "
        "(d.version, d.read_text('direct_url.json')) for d in m.distributions()}))",
    )
    assert listing.returncode == 0, listing.stderr
    installed = {canonicalize_name(k): v for k, v in json.loads(listing.stdout).items()}
    assert {"reyn-core", "reyn-tools-file"} <= set(installed)
    assert not any(n.startswith("reyn-tools-") and n != "reyn-tools-file" for n in installed)
    for name in ("reyn-core", "reyn-tools-file"):
        direct_url = installed[name][1]
        assert direct_url is None or '"editable": true' not in direct_url.replace(" ", "")

    work = tmp_path / "work"
    work.mkdir()
    (work / "hello.txt").write_text("hello from the wheelhouse\n")
    (work / "reyn.toml").write_text(
        '[plugins]\nenable = ["file"]\n\n[plugins.file.settings]\nread_roots = ["."]\n'
    )
    proc = venv.run(
        "reyn", "tools", "call", "read_file", "--args", json.dumps({"path": "hello.txt"}), "--json", cwd=work
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    envelope = json.loads(proc.stdout)
    assert envelope["status"] == "ok", envelope
    assert envelope["data"]["content"] == "hello from the wheelhouse\n"

    # Installed by name from the wheelhouse, pip records no location: the source kind is `index`, as
    # docs/cli.md shows for this install (a wheel *file* handed to pip would be `wheel`).
    listed = venv.run("reyn", "plugins", "list", cwd=work)
    assert listed.returncode == 0, listed.stderr
    (row,) = [line.split() for line in listed.stdout.splitlines() if line.startswith("file ")]
    assert row[5] == "index", listed.stdout
    assert re.search(r"^file +loaded +yes +reyn-tools-file +0\.1\.0 +index ", _cli_doc(), re.M)

    # The code that ran is the installed wheel's, not the checkout's.
    where = venv.run("python", "-c", "import reyn_core, reyn_tools_file; print(reyn_core.__file__)")
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(venv.site_packages), where.stdout
    assert re.match(r"\d+\.\d+", installed["reyn-core"][0])
    assert os.fspath(venv.path) in where.stdout

    # The hint for a name that moved out of the core (`pip install --find-links DIST reyn-loops`) finds
    # reyn-loops in the wheelhouse: with no index at all, all pip lacks is the runtime's own litellm.
    hint = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv.python),
            "install",
            "--dry-run",
            "--no-index",
            "--find-links",
            str(house),
            "reyn-loops",
        ],
        env={**os.environ, "PIP_CONFIG_FILE": os.devnull},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert hint.returncode != 0
    assert "No matching distribution found for litellm" in hint.stderr, hint.stderr


# --- every install command the docs and the error hints give works -----------------------------

_PIP = re.compile(r"\bpip install\b([^`\n\"]*)")
_REYN_NAME = re.compile(
    r"^'?(reyn-core|reyn-loops|reyn-tools-[a-z]+|reyn-plugin-example|reyn-demo)(\[[a-z,]+\])?'?$"
)
_REYN_FOLDER = re.compile(
    r"^'?\.?/?(reyn_builtin_tools/[a-z<>]+|reyn_plugin_example|reyn_demo|reyn_loops)/?(\[[a-z,]+\])?'?$"
)


def _install_commands(repo_root: Path) -> list[tuple[str, str]]:
    files = [repo_root / "README.md", repo_root / "reyn_plugin_example" / "README.md"]
    files += sorted((repo_root / "docs").rglob("*.md"))
    for package in ("reyn_core", "reyn_loops", "reyn_builtin_tools", "reyn_demo"):
        files += [
            p for p in (repo_root / package).rglob("*.py") if "build" not in p.relative_to(repo_root).parts
        ]
    found = []
    for path in files:
        for match in _PIP.finditer(path.read_text(encoding="utf-8")):
            found.append((str(path.relative_to(repo_root)), match.group(1).split("#")[0].strip()))
    return found


def _broken_reason(where: str, args: str) -> str | None:
    """Why ``pip install ARGS`` (as written in ``where``) cannot work, or None."""
    tokens = args.split()
    if "-e" in tokens or "--editable" in tokens or any(t.startswith("-e") for t in tokens):
        return None  # editable, from a checkout or a plugin project: reyn-core is already installed
    if "--find-links" in tokens:
        return None  # the wheelhouse
    targets = [t for t in tokens if not t.startswith("-")]
    for target in targets:
        named = _REYN_NAME.match(target)
        if named and not (where.endswith(".py") and named.group(2)):
            # By name with no wheelhouse: no index has Reyn. (A runtime hint may name an extra of the
            # distribution that raised it: pip resolves it against the installed one.)
            return f"{target!r} by name without --find-links dist"
        if _REYN_FOLDER.match(target) and not {".", "./"} & set(targets):
            return f"{target!r} from its folder without reyn-core (on no index)"
    return None


def test_every_install_command_in_the_docs_and_hints_can_work(repo_root):
    commands = _install_commands(repo_root)
    assert len(commands) >= 10  # the scan sees the docs, the READMEs and the code hints
    broken = [(where, args, why) for where, args in commands if (why := _broken_reason(where, args))]
    assert broken == []


@pytest.mark.parametrize(
    ("where", "args", "ok"),
    [
        ("docs/packs/file.md", "./reyn_builtin_tools/file", False),
        ("docs/x.md", "reyn-core ./my_plugin pytest", False),
        ("docs/x.md", "'reyn-core[llm]'", False),
        ("reyn_core/cli/x.py", "'reyn-core[otel]'", True),
        ("reyn_core/moved.py", "reyn-loops", False),
        ("reyn_core/moved.py", "--find-links DIST reyn-loops", True),
        ("docs/x.md", "--find-links dist reyn-tools-file", True),
        ("docs/x.md", "-e '.[test]'", True),
        ("docs/x.md", ". ./reyn_builtin_tools/file", True),
        ("docs/x.md", "psycopg", True),
    ],
)
def test_the_install_command_check_tells_broken_from_working(where, args, ok):
    assert (_broken_reason(where, args) is None) is ok
