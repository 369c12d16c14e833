"""The filesystem: only the roots exist, read roots are read-only, hidden paths are empty, /tmp is private."""

from __future__ import annotations

from pathlib import Path

from reyn_sandbox import Grants

from .conftest import Sandbox

READ = "import sys; print(open(sys.argv[1]).read())"
WRITE = "import sys; open(sys.argv[1], 'w').write('written')"


def test_secret_outside_the_read_roots_is_unreadable(sandbox: Sandbox, area: Path) -> None:
    secret = area / "outside" / "secret.txt"
    secret.write_text("outside-secret")
    secret.chmod(0o644)
    allowed = area / "read" / "notes.txt"
    allowed.write_text("inside-notes")
    allowed.chmod(0o644)
    grants = Grants(read_roots=(str(area / "read"),))

    inside = sandbox.python_code(READ, grants, str(allowed))
    outside = sandbox.python_code(READ, grants, str(secret))

    assert inside.returncode == 0, inside.stderr
    assert "inside-notes" in inside.stdout
    assert outside.returncode != 0
    assert "outside-secret" not in outside.stdout
    assert "FileNotFoundError" in outside.stderr


def test_hidden_file_and_directory_inside_a_read_root_are_unreadable(sandbox: Sandbox, area: Path) -> None:
    workspace = area / "read"
    (workspace / ".env").write_text("API_KEY=hidden-secret")
    (workspace / "keys").mkdir()
    (workspace / "keys" / "id").write_text("hidden-key")
    (workspace / "visible.txt").write_text("visible")
    for path in (workspace / ".env", workspace / "keys" / "id", workspace / "visible.txt"):
        path.chmod(0o644)
    grants = Grants(read_roots=(str(workspace),), hide=(str(workspace / ".env"), str(workspace / "keys")))
    code = (
        "import os, sys; w = sys.argv[1]\n"
        "print('env=' + open(os.path.join(w, '.env')).read())\n"
        "keys = os.path.join(w, 'keys')\n"
        "print('keys=' + ','.join(os.listdir(keys)) if os.access(keys, os.R_OK) else 'keys=denied')\n"
        "print('visible=' + open(os.path.join(w, 'visible.txt')).read())\n"
    )

    result = sandbox.python_ok(code, grants, str(workspace))

    assert "visible=visible" in result.stdout
    assert "hidden-secret" not in result.stdout
    assert "env=\n" in result.stdout
    assert "hidden-key" not in result.stdout and "keys=id" not in result.stdout


def test_writes_land_only_in_write_roots(sandbox: Sandbox, area: Path) -> None:
    grants = Grants(read_roots=(str(area / "read"),), write_roots=(str(area / "write"),))

    in_write_root = sandbox.python_code(WRITE, grants, str(area / "write" / "out.txt"))
    in_read_root = sandbox.python_code(WRITE, grants, str(area / "read" / "out.txt"))
    outside = sandbox.python_code(WRITE, grants, str(area / "outside" / "out.txt"))

    assert in_write_root.returncode == 0, in_write_root.stderr
    assert (area / "write" / "out.txt").read_text() == "written"
    assert in_read_root.returncode != 0 and not (area / "read" / "out.txt").exists()
    assert outside.returncode != 0 and not (area / "outside" / "out.txt").exists()


def test_private_tmp_is_writable_set_as_tmpdir_and_gone_afterwards(sandbox: Sandbox, area: Path) -> None:
    code = (
        "import os, tempfile\n"
        "path = os.path.join(tempfile.gettempdir(), 'reyn-private-marker')\n"
        "open(path, 'w').write('x'); print(os.environ['TMPDIR'], path)\n"
    )

    result = sandbox.python_ok(code, Grants())

    tmpdir, path = result.stdout.split()
    assert tmpdir == "/tmp"
    assert not Path(path).exists()


def test_a_missing_root_fails_closed_before_the_command(sandbox: Sandbox, area: Path) -> None:
    marker = area / "write" / "ran"
    grants = Grants(read_roots=(str(area / "nope"),), write_roots=(str(area / "write"),))

    result = sandbox.python_code(WRITE, grants, str(marker))

    assert result.returncode == 125
    assert result.stderr.strip() == f"reyn-sandbox: read root {area / 'nope'} does not exist"
    assert not marker.exists()


def test_the_working_directory_must_be_granted(sandbox: Sandbox, area: Path) -> None:
    grants = Grants(read_roots=(str(area / "read"),))

    granted = sandbox.run(["pwd"], grants, cwd=str(area / "read"))
    not_granted = sandbox.run(["pwd"], grants, cwd=str(area / "outside"))

    assert granted.returncode == 0, granted.stderr
    assert granted.stdout.strip() == str(area / "read")
    assert not_granted.returncode == 125
    assert not_granted.stderr.strip() == (
        f"reyn-sandbox: the working directory {area / 'outside'} is outside the read and write roots"
    )


def test_started_as_root_a_root_only_read_root_is_readable_and_stays_read_only(
    root_sandbox: Sandbox, area: Path
) -> None:
    sandbox = root_sandbox
    private = area / "read" / "private"
    private.mkdir(mode=0o700)
    (private / "notes.txt").write_text("operator-notes")
    (private / "notes.txt").chmod(0o600)
    grants = Grants(read_roots=(str(private),))

    read = sandbox.python_code(READ, grants, str(private / "notes.txt"))
    write = sandbox.python_code(WRITE, grants, str(private / "notes.txt"))
    chmod = sandbox.run(["chmod", "4777", str(private / "notes.txt")], grants)

    assert read.returncode == 0, read.stderr
    assert "operator-notes" in read.stdout
    assert write.returncode != 0 and (private / "notes.txt").read_text() == "operator-notes"
    assert chmod.returncode != 0 and (private / "notes.txt").stat().st_mode & 0o7777 == 0o600


def test_started_as_root_a_write_root_the_command_cannot_write_fails_closed(
    root_sandbox: Sandbox, area: Path
) -> None:
    sandbox = root_sandbox
    closed = area / "read" / "closed"
    closed.mkdir(mode=0o755)
    marker = area / "write" / "ran"
    grants = Grants(write_roots=(str(closed), str(area / "write")))

    result = sandbox.run(["touch", str(marker)], grants)

    assert result.returncode == 125
    assert result.stderr.startswith(
        f"reyn-sandbox: write root {closed} is not writable by uid 65534 / gid 65534"
    )
    assert not marker.exists()


def test_a_read_only_path_inside_a_write_root_cannot_be_changed(sandbox: Sandbox, area: Path) -> None:
    workspace = area / "write"
    hooks = workspace / ".git" / "hooks"
    hooks.mkdir(parents=True)
    for folder in (workspace / ".git", hooks):
        folder.chmod(0o777)
    grants = Grants(write_roots=(str(workspace),), read_only=(str(workspace / ".git"),))
    code = (
        "import os, sys, shutil; w = sys.argv[1]\n"
        "open(os.path.join(w, 'ok.txt'), 'w').write('fine'); print('workspace written')\n"
        "for attempt in (lambda: open(os.path.join(w, '.git', 'hooks', 'pre-commit'), 'w'),\n"
        "                lambda: os.rename(os.path.join(w, '.git'), os.path.join(w, 'moved')),\n"
        "                lambda: shutil.rmtree(os.path.join(w, '.git'))):\n"
        "    try:\n"
        "        attempt(); print('changed')\n"
        "    except OSError as exc:\n"
        "        print('refused', exc.errno)\n"
    )

    result = sandbox.python_ok(code, grants, str(workspace))

    assert "workspace written" in result.stdout and (workspace / "ok.txt").read_text() == "fine"
    assert "changed" not in result.stdout and result.stdout.count("refused") == 3
    assert hooks.is_dir() and not (hooks / "pre-commit").exists()
