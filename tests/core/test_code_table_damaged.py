"""A damaged ``codes.toml`` in an installed copy (edited or broken after installation) is found at a
defined point, once, in one clear error naming the file and the problem: ``load()`` checks the core's
table before anything else (the ``reyn`` command says it in one line, exit 2), the isolation backend
checks its own when it is imported, and ``reyn doctor`` reports both (exit 1). Each case runs a real
copy of the packages (``python -S``: the copy, not the editable checkout, is what is imported),
against an intact copy as the control."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from reyn_core.code_table import CodeTable, CodeTableError

REPO = Path(__file__).resolve().parents[2]
SITE = sysconfig.get_paths()["purelib"]


def installed_copy(root: Path, damage: dict[str, tuple[str, str]] | None = None) -> Path:
    """A copy of reyn_core and reyn_isolation under ``root``; ``damage`` maps a package to (text to
    replace in its codes.toml, replacement)."""
    for package in ("reyn_core", "reyn_isolation"):
        shutil.copytree(
            REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
        )
        old, new = (damage or {}).get(package, ("", ""))
        if old:
            table = root / package / "codes.toml"
            text = table.read_text(encoding="utf-8")
            assert old in text
            table.write_text(text.replace(old, new, 1), encoding="utf-8")
    (root / "reyn.toml").write_text("", encoding="utf-8")
    return root


def run(root: Path, *args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -S`` (no site: the checkout's editable finders stay out) with the copy first on the path."""
    argv = [sys.executable, "-S", *(["-c", code] if code else ["-m", "reyn_core", *args])]
    env = {"PYTHONPATH": f"{root}:{SITE}", "PATH": "/usr/bin:/bin", "HOME": str(root)}
    env["XDG_STATE_HOME"] = str(root / "state")
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, cwd=root)


BAD_SEVERITY = ('[RC001]\nseverity = "error"', '[RC001]\nseverity = "fatal"')
CORE_PROBLEM = "RC001: severity 'fatal' is not one of error, warning, info"


def test_a_damaged_core_table_stops_a_command_in_one_line_naming_the_file(tmp_path: Path) -> None:
    root = installed_copy(tmp_path, {"reyn_core": BAD_SEVERITY})
    proc = run(root, "tools", "list", "--profile-file", "reyn.toml")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0] and "Traceback" not in proc.stderr
    assert f"{root}/reyn_core/codes.toml: {CORE_PROBLEM}" in lines[0]
    assert "reinstall" in lines[0]


def test_the_load_checks_the_core_table_first_and_once(tmp_path: Path) -> None:
    root = installed_copy(tmp_path, {"reyn_core": BAD_SEVERITY})
    script = (
        "from pathlib import Path\n"
        "from reyn_core.host import load\n"
        "from reyn_core.code_table import CodeTableError\n"
        "from reyn_core.loading.step1_profile.profile import load_profile\n"
        "profile = load_profile(profile_file=Path('reyn.toml'))\n"
        "seen = []\n"
        "for _ in range(3):\n"
        "    try:\n"
        "        load(profile)\n"
        "    except CodeTableError as exc:\n"
        "        seen.append(exc)\n"
        "Path('reyn_core/codes.toml').unlink()  # read once: the kept answer needs no file\n"
        "try:\n"
        "    load(profile)\n"
        "except CodeTableError as exc:\n"
        "    seen.append(exc)\n"
        "print(len(seen), all(e is seen[0] for e in seen))\n"
        "print(seen[0])\n"
    )
    proc = run(root, code=script)
    assert proc.returncode == 0, proc.stderr
    count, message = proc.stdout.splitlines()
    assert count == "4 True"
    assert message.startswith("the diagnostic code table of reyn_core is damaged: ")
    assert f"{root}/reyn_core/codes.toml: {CORE_PROBLEM}" in message


def test_doctor_reports_a_damaged_core_table(tmp_path: Path) -> None:
    root = installed_copy(tmp_path, {"reyn_core": ("[RT003]", "[RT003")})
    proc = run(root, "doctor", "--profile-file", "reyn.toml")
    assert proc.returncode == 1, proc.stderr
    assert f"{root}/reyn_core/codes.toml: invalid TOML" in proc.stderr and "reinstall" in proc.stderr
    assert "internal error" not in proc.stderr


def test_a_damaged_isolation_table_is_reported_by_doctor_and_at_the_backends_import(tmp_path: Path) -> None:
    root = installed_copy(tmp_path, {"reyn_isolation": ('hint = """', 'hint = 7\nx = """')})
    proc = run(root, "doctor", "--profile-file", "reyn.toml")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "RD007" in proc.stdout and f"{root}/reyn_isolation/codes.toml" in proc.stdout
    assert "1 error(s)" in proc.stdout
    imported = run(root, code="import reyn_isolation.codes")
    assert imported.returncode == 1
    last = imported.stderr.strip().splitlines()[-1]
    assert last.startswith("reyn_core.code_table.CodeTableError: the diagnostic code table of reyn_isolation")


def test_control_an_intact_copy_is_quiet(tmp_path: Path) -> None:
    root = installed_copy(tmp_path)
    doctor = run(root, "doctor", "--profile-file", "reyn.toml")
    assert doctor.returncode == 0 and "no problems found" in doctor.stdout, doctor.stdout + doctor.stderr
    listed = run(root, "tools", "list", "--profile-file", "reyn.toml")
    assert listed.returncode == 0, listed.stderr
    assert run(root, code="import reyn_isolation.codes").returncode == 0


def write_package(root: Path, name: str, table: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text("raise RuntimeError('a code table is read without importing')\n")
    (folder / "codes.toml").write_text(table, encoding="utf-8")
    return folder / "codes.toml"


GOOD = '[RZ001]\nseverity = "info"\ntitle = "t"\nhint = "h"\nexample = "e"\n'


def test_a_broken_table_is_read_once_and_answers_the_same_error(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    path = write_package(tmp_path, "rzbroken", GOOD.replace('"info"', '"loud"'))
    table = CodeTable("rzbroken")
    with pytest.raises(CodeTableError) as first:
        table.check()
    assert f"{path}: RZ001: severity 'loud'" in str(first.value)
    path.write_text(GOOD, encoding="utf-8")  # repaired afterwards: this table keeps its answer
    with pytest.raises(CodeTableError) as again:
        table.get("RZ001")
    assert again.value is first.value
    assert CodeTable("rzbroken")["RZ001"].severity == "info"  # control: a new table reads the repair


def test_a_missing_table_or_package_is_named(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    write_package(tmp_path, "rzmissing", GOOD).unlink()
    with pytest.raises(CodeTableError, match=r"rzmissing/codes\.toml: cannot be read: no such file"):
        CodeTable("rzmissing").check()
    with pytest.raises(CodeTableError, match="not installed"):
        CodeTable("rz_no_such_package").check()


def test_a_zip_imported_core_reads_its_table_through_the_loader(tmp_path: Path) -> None:
    """reyn_core imported from a zip archive (``zipimport``): the table is read through the package's
    loader, not as a file on disk, so a load raises no false RD007-style damage. The damaged copy in
    the same archive form is still reported (the control that the table is really read)."""
    import zipfile

    def zipped(root: Path, name: str) -> Path:
        archive = root.parent / f"{name}.zip"
        with zipfile.ZipFile(archive, "w") as out:
            for path in sorted((root / "reyn_core").rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    out.write(path, path.relative_to(root).as_posix())
        return archive

    code = (
        "import reyn_core, reyn_core.code_table as t\n"
        "assert '.zip' in reyn_core.__file__, reyn_core.__file__\n"
        "try:\n"
        "    t.CODES.check(); print('ok', len(t.CODES))\n"
        "except t.CodeTableError as exc:\n"
        "    print('damaged', exc)\n"
    )
    intact = zipped(installed_copy(tmp_path / "intact"), "intact")
    damaged = zipped(installed_copy(tmp_path / "damaged", {"reyn_core": BAD_SEVERITY}), "damaged")
    for archive, expected in ((intact, "ok "), (damaged, "damaged ")):
        (tmp_path / archive.stem / "reyn_core").rename(tmp_path / archive.stem / "unzipped")  # the zip only
        proc = subprocess.run(
            [sys.executable, "-S", "-c", code],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PYTHONPATH": f"{archive}:{SITE}", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(expected), proc.stdout
        if expected == "damaged ":
            assert CORE_PROBLEM in proc.stdout and "damaged.zip/reyn_core/codes.toml" in proc.stdout
