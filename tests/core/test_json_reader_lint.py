"""The one JSON reader, by construction (issue 24): ruff's TID251 bans ``json.loads``, ``json.load``
and ``JSONDecoder`` in first-party packages, naming ``reyn_core.jsondata``'s readers, so a peer's text
cannot be parsed beside the value bound and JSON's numbers. These run ruff itself, with the project's
configuration, on a scratch file given the path it would have in the tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
RUFF = Path(sys.executable).with_name("ruff")
# Where json.loads stays allowed, each for a reason pyproject.toml states beside it.
EXEMPT = {
    "reyn_core/jsondata.py",
    "reyn_sandbox/_grants.py",
    "tests/**",
    "benchmarks/**",
    "reyn_plugin_example/tests/**",
}


def ruff_on(source: str, as_path: str) -> str:
    """ruff's findings (TID251 only) for ``source`` checked as the file ``as_path`` of the tree; ""
    when there are none."""
    done = subprocess.run(
        [
            *(str(RUFF), "check", "--no-cache", "--select", "TID251", "--output-format", "concise"),
            *("--stdin-filename", as_path, "-"),
        ],
        input=source,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout if done.returncode else ""  # 0: nothing found ("All checks passed!")


@pytest.mark.parametrize(
    "source",
    [
        "import json\n\njson.loads('1')\n",
        "import json\n\nwith open('f') as f:\n    json.load(f)\n",
        "from json import loads\n\nloads('1')\n",
        "import json\n\njson.JSONDecoder().raw_decode('1')\n",
    ],
    ids=["json.loads", "json.load", "from json import loads", "JSONDecoder"],
)
@pytest.mark.parametrize("as_path", ["reyn_core/scratch.py", "reyn_builtin_tools/web/reyn_tools_web/x.py"])
def test_reading_json_beside_jsondata_is_a_lint_error_naming_the_reader(source: str, as_path: str) -> None:
    found = ruff_on(source, as_path)
    assert "TID251" in found and "reyn_core.jsondata" in found and "read_json" in found, found


def test_reading_through_jsondata_is_clean() -> None:
    source = "from reyn_core.host import read_json\n\nread_json(b'[1]', 10)\n"
    assert ruff_on(source, "reyn_core/scratch.py") == ""


@pytest.mark.parametrize("as_path", sorted(p.replace("**", "x/y.py") for p in EXEMPT))
def test_the_exempt_files_may_call_json_loads(as_path: str) -> None:
    assert ruff_on("import json\n\njson.loads('1')\n", as_path) == ""


def test_the_exemptions_are_exactly_the_stated_ones() -> None:
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "TID251" in lint["select"]
    ignoring = {path for path, codes in lint["per-file-ignores"].items() if "TID251" in codes}
    assert ignoring == EXEMPT


def test_no_first_party_line_silences_the_ban() -> None:
    packages = [p for p in ROOT.iterdir() if p.is_dir() and p.name.startswith("reyn_")]
    silenced = [
        f"{path.relative_to(ROOT)}:{n}"
        for package in packages
        for path in package.rglob("*.py")
        if ".venv" not in path.parts and "build" not in path.parts
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "noqa" in line and "TID251" in line
    ]
    assert silenced == []
