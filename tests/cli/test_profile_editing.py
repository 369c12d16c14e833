"""``reyn init``, ``reyn plugins enable | disable``, ``reyn --version`` and ``plugins lock`` with nothing
enabled — the real ``reyn`` command in a subprocess, on real files."""

from __future__ import annotations

import textwrap

import pytest

import reyn_core
from reyn_core.host import Profile

COMMENTED = textwrap.dedent(
    """\
    # Our team's profile: keep this header.
    [plugins]
    # packs we rely on
    enable = ["example"]   # the example plugin

    [plugins.example.settings]
    precision = 4  # digits
    """
)


def test_version_prints_the_core_version(tmp_path, reyn_cli):
    proc = reyn_cli("--version", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"reyn {reyn_core.__version__}"


def test_init_writes_a_commented_profile_listing_installed_plugins_none_enabled(tmp_path, reyn_cli):
    proc = reyn_cli("init", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "reyn.toml").read_text()
    assert "# Installed plugins:" in text
    assert "#   file " in text and "reyn-tools-file" in text and "#   example " in text
    assert Profile.from_toml_text(text).enabled == ()
    assert "reyn plugins enable ID" in proc.stdout


def test_init_never_overwrites_an_existing_profile(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text(COMMENTED)
    proc = reyn_cli("init", cwd=tmp_path)
    assert proc.returncode == 2
    assert "already exists" in proc.stderr
    assert (tmp_path / "reyn.toml").read_text() == COMMENTED


def test_enable_keeps_every_comment_and_the_layout(tmp_path, reyn_cli):
    path = tmp_path / "reyn.toml"
    path.write_text(COMMENTED)
    proc = reyn_cli("plugins", "enable", "file", "web", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = path.read_text()
    assert text == COMMENTED.replace('enable = ["example"]', 'enable = ["example", "file", "web"]')
    assert Profile.from_toml_text(text).enabled == ("example", "file", "web")


def test_disable_removes_only_the_named_ids_and_keeps_comments(tmp_path, reyn_cli):
    path = tmp_path / "reyn.toml"
    path.write_text(COMMENTED.replace('["example"]', '["example", "file"]'))
    proc = reyn_cli("plugins", "disable", "example", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert path.read_text() == COMMENTED.replace('["example"]', '["file"]')


def test_enable_after_init_round_trips(tmp_path, reyn_cli):
    assert reyn_cli("init", cwd=tmp_path).returncode == 0
    before = (tmp_path / "reyn.toml").read_text()
    assert reyn_cli("plugins", "enable", "example", cwd=tmp_path).returncode == 0
    after = (tmp_path / "reyn.toml").read_text()
    assert after == before.replace("enable = []", 'enable = ["example"]')
    listed = reyn_cli("tools", "list", cwd=tmp_path)
    assert "convert_units" in listed.stdout


def test_enable_without_a_profile_creates_reyn_toml(tmp_path, reyn_cli):
    proc = reyn_cli("plugins", "enable", "example", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "created" in proc.stdout
    assert Profile.from_toml_text((tmp_path / "reyn.toml").read_text()).enabled == ("example",)


def test_enable_edits_tool_reyn_in_pyproject(tmp_path, reyn_cli):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"  # keep\n\n[tool.reyn.plugins]\nenable = []\n')
    proc = reyn_cli("plugins", "enable", "example", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (
        pyproject.read_text()
        == '[project]\nname = "x"  # keep\n\n[tool.reyn.plugins]\nenable = ["example"]\n'
    )


@pytest.mark.parametrize(
    ("argv", "code", "said"),
    [
        (("enable", "fiel"), 2, ["no installed plugin 'fiel' (did you mean 'file'?)", "installed: "]),
        (("disable", "web"), 2, ["'web' not enabled in", "(enabled: example)"]),
        (("enable", "example"), 0, ["example: already enabled"]),
    ],
    ids=[
        "enabling-an-unknown-id-suggests-the-closest",
        "disabling-an-id-not-enabled",
        "enabling-an-enabled-id",
    ],
)
def test_an_edit_that_changes_nothing_says_why_and_leaves_the_file(tmp_path, argv, code, said, reyn_cli):
    path = tmp_path / "reyn.toml"
    path.write_text(COMMENTED)
    proc = reyn_cli("plugins", *argv, cwd=tmp_path)
    assert proc.returncode == code
    for text in said:
        assert text in (proc.stderr if code else proc.stdout)
    assert path.read_text() == COMMENTED


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[plugins]\nenable = "example"\n', "must be a list of plugin ids"),
        ("[plugins\n", "reyn.toml"),
    ],
)
def test_a_profile_that_cannot_be_edited_is_reported_and_kept(tmp_path, text, message, reyn_cli):
    path = tmp_path / "reyn.toml"
    path.write_text(text)
    proc = reyn_cli("plugins", "enable", "example", cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert path.read_text() == text


def test_a_named_profile_is_not_edited(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text(COMMENTED + "\n[profiles.ci]\n")
    proc = reyn_cli("plugins", "enable", "file", "--profile", "ci", cwd=tmp_path)
    assert proc.returncode == 2 and "edited by hand" in proc.stderr


def test_lock_with_nothing_enabled_says_so_and_writes_no_lock(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text("[plugins]\nenable = []\n")
    proc = reyn_cli("plugins", "lock", cwd=tmp_path)
    assert proc.returncode == 1
    assert "nothing to lock" in proc.stderr and "reyn plugins enable ID" in proc.stderr
    assert not (tmp_path / "reyn.lock").exists()
