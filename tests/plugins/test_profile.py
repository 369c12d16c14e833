"""The profile: where it is found, named profiles, and errors that name the key and the file."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from reyn_core.loading.step1_profile.profile import Profile, ProfileError, load_profile


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch, tmp_path):
    for var in ("REYN_PROFILE", "REYN_PROFILE_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def error_of(text: str, name: str | None = None) -> ProfileError:
    with pytest.raises(ProfileError) as info:
        Profile.from_toml_text(textwrap.dedent(text), "conf/reyn.toml", name)
    return info.value


# --------------------------------------------------------------------------- errors


def test_typo_in_plugins_table_names_the_key_and_the_file():
    err = error_of("""
        [plugins]
        enabel = ["file"]
        """)
    assert err.key == "plugins.enabel" and err.file == "conf/reyn.toml"
    assert (
        "conf/reyn.toml" in str(err)
        and "'plugins.enabel'" in str(err)
        and "did you mean 'enable'" in str(err)
    )


def test_unknown_top_level_table_is_an_error():
    err = error_of("[featurs]\nplugins = true\n")
    assert err.key == "featurs" and "did you mean 'features'" in str(err)


def test_unknown_key_inside_a_plugin_table_lists_the_allowed_keys():
    err = error_of("""
        [plugins.file]
        digset = "sha256:00"
        """)
    assert err.key == "plugins.file.digset"
    assert "did you mean 'digest'" in str(err) and "prefix" in str(err)


def test_unknown_key_in_tools_filter_is_an_error():
    assert error_of("[plugins.file.tools]\nexclde = ['x']\n").key == "plugins.file.tools.exclde"


def test_wrong_type_is_an_error_not_a_coercion():
    err = error_of('[lock]\nenforce = "yes"\n')
    assert err.key == "lock.enforce" and "boolean" in str(err) and "'yes'" in str(err)


def test_enable_must_be_a_list():
    assert error_of('[plugins]\nenable = "file"\n').key == "plugins.enable"


def test_unknown_surface_name_points_at_the_list_item():
    err = error_of('[plugins.file]\nsurfaces = ["router", "rooter"]\n')
    assert err.key == "plugins.file.surfaces[1]"


def test_malformed_digest_pin_is_an_error():
    assert error_of('[plugins.file]\ndigest = "md5:abc"\n').key == "plugins.file.digest"


def test_prefix_must_make_valid_tool_names():
    assert error_of('[plugins.file]\nprefix = "my prefix"\n').key == "plugins.file.prefix"


def test_invalid_toml_names_the_file():
    err = error_of("[plugins\n")
    assert "conf/reyn.toml" in str(err) and "invalid TOML" in str(err)


def test_typo_inside_a_named_profile_is_reported_even_when_it_is_not_selected():
    err = error_of("""
        [profiles.ci.lock]
        enforse = true
        """)
    assert err.key == "profiles.ci.lock.enforse"


def test_named_profiles_cannot_nest():
    assert error_of("[profiles.ci.profiles.x]\n").key == "profiles.ci.profiles"


def test_unknown_named_profile_lists_the_defined_ones():
    err = error_of("[profiles.ci]\n[profiles.dev]\n", name="prod")
    assert "'prod'" in str(err) and "ci, dev" in str(err)


# --------------------------------------------------------------------------- values and merging


def test_empty_profile_enables_nothing():
    profile = Profile()
    assert profile.enabled == () and profile.features.plugins is True
    assert profile.surfaces.phase.default_allowed_ops == ["file", "ask_user"]
    assert profile.lock.enforce is False and profile.provenance.allow_editable is True


def test_full_profile_from_the_design_parses():
    profile = Profile.from_toml_text(
        textwrap.dedent("""
        [features]
        plugins = true
        [plugins]
        enable = ["file", "memory", "mcp", "file"]
        [plugins.file]
        digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
        surfaces = ["router", "phase"]
        tools.exclude = ["delete_file"]
        prefix = ""
        [plugins.file.settings]
        read_roots = ["."]
        write_roots = ["out"]
        [surfaces.router]
        exclude = ["plan"]
        [surfaces.phase]
        default_allowed_ops = ["file"]
        [lock]
        path = "locks/reyn.lock"
        enforce = true
        [audit]
        log = ".reyn/audit.jsonl"
        """)
    )
    assert profile.enabled == ("file", "memory", "mcp")
    cfg = profile.plugin("file")
    assert cfg.tools.exclude == ["delete_file"] and cfg.settings == {
        "read_roots": ["."],
        "write_roots": ["out"],
    }
    assert profile.plugin("memory").prefix == ""  # defaults for a plugin without a table
    assert profile.surfaces.router.exclude == ["plan"] and profile.lock.enforce


def test_named_profile_deep_merges_over_the_base():
    text = textwrap.dedent("""
        [plugins]
        enable = ["file", "web"]
        [plugins.file.settings]
        read_roots = ["."]
        write_roots = ["out"]
        [profiles.ci.plugins]
        enable = ["file"]
        [profiles.ci.plugins.file.settings]
        write_roots = []
        [profiles.ci.lock]
        enforce = true
        """)
    base = Profile.from_toml_text(text)
    ci = Profile.from_toml_text(text, profile_name="ci")
    assert base.enabled == ("file", "web") and not base.lock.enforce
    assert ci.enabled == ("file",) and ci.lock.enforce and ci.name == "ci"
    assert ci.plugin("file").settings == {"read_roots": ["."], "write_roots": []}


# --------------------------------------------------------------------------- finding the file


def test_no_profile_file_means_the_empty_profile(tmp_path):
    profile = load_profile(cwd=tmp_path)
    assert profile.source is None and profile.enabled == ()


def test_explicit_file_wins_over_everything(tmp_path, monkeypatch):
    write(tmp_path / "reyn.toml", '[plugins]\nenable = ["local"]\n')
    explicit = write(tmp_path / "other.toml", '[plugins]\nenable = ["explicit"]\n')
    monkeypatch.setenv(
        "REYN_PROFILE_FILE", str(write(tmp_path / "env.toml", '[plugins]\nenable = ["env"]\n'))
    )
    assert load_profile(profile_file=explicit, cwd=tmp_path).enabled == ("explicit",)


def test_env_file_wins_over_the_local_file(tmp_path, monkeypatch):
    write(tmp_path / "reyn.toml", '[plugins]\nenable = ["local"]\n')
    monkeypatch.setenv(
        "REYN_PROFILE_FILE", str(write(tmp_path / "env.toml", '[plugins]\nenable = ["env"]\n'))
    )
    assert load_profile(cwd=tmp_path).enabled == ("env",)


def test_missing_explicit_file_is_an_error(tmp_path):
    with pytest.raises(ProfileError, match="does not exist"):
        load_profile(profile_file=tmp_path / "nope.toml", cwd=tmp_path)


def test_local_reyn_toml_wins_over_pyproject(tmp_path):
    write(tmp_path / "reyn.toml", '[plugins]\nenable = ["local"]\n')
    write(tmp_path / "pyproject.toml", '[tool.reyn.plugins]\nenable = ["pyproject"]\n')
    assert load_profile(cwd=tmp_path).enabled == ("local",)


def test_tool_reyn_in_pyproject_is_used_and_errors_carry_its_prefix(tmp_path):
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n[tool.reyn.plugins]\nenable = ["pp"]\n')
    assert load_profile(cwd=tmp_path).enabled == ("pp",)
    write(tmp_path / "pyproject.toml", '[tool.reyn.plugins]\nenabel = ["pp"]\n')
    with pytest.raises(ProfileError) as info:
        load_profile(cwd=tmp_path)
    assert info.value.key == "tool.reyn.plugins.enabel" and "pyproject.toml" in str(info.value)


def test_pyproject_without_tool_reyn_is_skipped(tmp_path):
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n')
    write(tmp_path / "xdg-config" / "reyn" / "reyn.toml", '[plugins]\nenable = ["user"]\n')
    assert load_profile(cwd=tmp_path).enabled == ("user",)


def test_user_config_dir_is_the_last_resort(tmp_path):
    write(tmp_path / "xdg-config" / "reyn" / "reyn.toml", '[plugins]\nenable = ["user"]\n')
    work = tmp_path / "work"
    work.mkdir()
    profile = load_profile(cwd=work)
    assert profile.enabled == ("user",) and profile.source.endswith("xdg-config/reyn/reyn.toml")


def test_named_profile_from_the_environment(tmp_path, monkeypatch):
    write(tmp_path / "reyn.toml", '[plugins]\nenable = ["a"]\n[profiles.ci.plugins]\nenable = ["b"]\n')
    monkeypatch.setenv("REYN_PROFILE", "ci")
    assert load_profile(cwd=tmp_path).enabled == ("b",)
    assert load_profile(cwd=tmp_path, profile_name="ci").describe_source().endswith("[profile ci]")


def test_requesting_a_named_profile_without_any_file_is_an_error(tmp_path):
    with pytest.raises(ProfileError, match="no profile file was found"):
        load_profile(cwd=tmp_path, profile_name="ci")


def test_relative_paths_resolve_against_the_profile_file(tmp_path):
    write(tmp_path / "conf" / "reyn.toml", '[lock]\npath = "locks/reyn.lock"\n[audit]\nlog = "a.jsonl"\n')
    profile = load_profile(profile_file=tmp_path / "conf" / "reyn.toml", cwd=tmp_path)
    assert profile.lock_path == (tmp_path / "conf" / "locks" / "reyn.lock").resolve()
    assert profile.resolve_path(profile.audit.log) == (tmp_path / "conf" / "a.jsonl").resolve()


def test_unreadable_profile_names_the_file(tmp_path):
    path = tmp_path / "reyn.toml"
    path.write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(ProfileError, match="cannot read profile file"):
        load_profile(cwd=tmp_path)
