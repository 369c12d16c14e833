"""The persistent schema-check cache: a warm load repeats no metaschema work, and a damaged cache
file is ignored rather than trusted or fatal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reyn_core.loading.schema_cache import FILE_NAME, SchemaCheckCache
from reyn_core.schema import check_tool_schema

GOOD = {"type": "object", "properties": {"q": {"type": "string", "pattern": "^[a-z]+$"}}, "required": ["q"]}
BAD = {"type": "object", "properties": {"x": {"type": "nonsense"}}}
KIND = {"type": "object", "properties": {"kind": {"type": "string"}}}


def test_results_equal_the_uncached_check(tmp_path):
    cache = SchemaCheckCache(tmp_path / FILE_NAME)
    for schema in (GOOD, BAD, KIND):
        for phase in (True, False):
            assert cache(schema, phase_usable=phase) == check_tool_schema(schema, phase_usable=phase)


def test_saved_results_are_reused_by_a_new_cache(tmp_path, monkeypatch):
    path = tmp_path / FILE_NAME
    first = SchemaCheckCache(path)
    expected = first(BAD, phase_usable=True)
    first.save()
    assert path.is_file()

    import reyn_core.loading.schema_cache as module

    def fail(*args, **kwargs):
        raise AssertionError("the cached result should have been used")

    monkeypatch.setattr(module, "check_tool_schema", fail)
    assert SchemaCheckCache(path)(BAD, phase_usable=True) == expected


def test_phase_flag_is_part_of_the_key(tmp_path):
    cache = SchemaCheckCache(tmp_path / FILE_NAME)
    assert [i.code for i in cache(KIND, phase_usable=True)] == ["RS006"]
    assert not [i for i in cache(KIND, phase_usable=False) if i.severity == "error"]


def test_corrupt_cache_file_is_ignored(tmp_path):
    path = tmp_path / FILE_NAME
    path.write_text("{not json")
    cache = SchemaCheckCache(path)
    assert [i.code for i in cache(BAD, phase_usable=True)] == ["RS005"]
    cache.save()
    assert json.loads(path.read_text())["entries"]


def test_cache_written_for_another_checker_version_is_ignored(tmp_path):
    path = tmp_path / FILE_NAME
    cache = SchemaCheckCache(path)
    cache(BAD, phase_usable=True)
    cache.save()
    data = json.loads(path.read_text())
    data["checker"] = "an older schema.py"
    for key in data["entries"]:
        data["entries"][key] = []  # a stale "no issues" must not be believed
    path.write_text(json.dumps(data))
    assert [i.code for i in SchemaCheckCache(path)(BAD, phase_usable=True)] == ["RS005"]


def test_unwritable_cache_dir_is_not_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = SchemaCheckCache(blocker / "sub" / FILE_NAME)
    cache(GOOD, phase_usable=True)
    cache.save()  # cannot create a directory under a file: silently skipped


def test_non_json_parameters_are_checked_directly(tmp_path):
    cache = SchemaCheckCache(tmp_path / FILE_NAME)
    assert [i.code for i in cache({"type": "object", "default": object()}, phase_usable=True)] == ["RS001"]


def test_warm_load_in_a_new_process_does_not_import_the_validator_library(tmp_path):
    script = (
        "import sys\n"
        "from reyn_core.loading.schema_cache import SchemaCheckCache\n"
        f"cache = SchemaCheckCache(__import__('pathlib').Path({str(tmp_path / FILE_NAME)!r}))\n"
        # cold, the meta-schema check and the compile import the library; warm, the cache answers.
        f"cache({BAD!r}, phase_usable=True)\n"
        "cache.save()\n"
        "print('jsonschema_rs' in sys.modules)\n"
    )
    cold = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    warm = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert cold.stdout.strip() == "True" and warm.stdout.strip() == "False"


def test_the_fingerprint_covers_every_module_the_check_runs():
    # A cached verdict is only as fresh as the fingerprint: every module of reyn_core that
    # check_tool_schema imports (beyond `import reyn_core` itself) must be hashed, so an edit to any
    # of them — e.g. one module of the validation package — invalidates the cache.
    script = """
import sys
import reyn_core
before = set(sys.modules)
from reyn_core.schema import check_tool_schema
bad = {"x": {"type": "nonsense", "pattern": "(?=a)"},
       "y": {"$ref": "http://example.invalid/s"}, "z": {"$ref": "#/$defs/none"}}
check_tool_schema({"type": "object", "properties": bad}, phase_usable=True)
good = {"q": {"type": "string", "pattern": "^a+$"}}
check_tool_schema({"type": "object", "properties": good}, phase_usable=True)
for name in sorted(set(sys.modules) - before):
    if name.startswith("reyn_core."):
        print(sys.modules[name].__file__)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = {Path(line).resolve() for line in out.stdout.split()}
    from reyn_core.loading.schema_cache import checker_files

    covered = {p.resolve() for p in checker_files()}
    assert any(p.parent.name == "validation" and p.name == "screening.py" for p in loaded)
    assert sorted(map(str, loaded - covered)) == []
    assert all(p.is_file() for p in covered)


def test_the_fingerprint_changes_with_any_checker_file(tmp_path, monkeypatch):
    import reyn_core.loading.schema_cache as module

    core = Path(module.__file__).resolve().parent.parent
    files = module.checker_files()
    copies = {}
    for path in files:
        copy = tmp_path / path.relative_to(core)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path.read_bytes())
        copies[path] = copy
    monkeypatch.setattr(module, "checker_files", lambda: list(copies.values()))
    monkeypatch.setattr(module, "__file__", str(tmp_path / "loading" / "schema_cache.py"))

    def fingerprint() -> str:
        module._checker_fingerprint.cache_clear()
        return module._checker_fingerprint()

    try:
        first = fingerprint()
        for path in (p for p in copies.values() if p.parent.name == "validation"):
            path.write_bytes(path.read_bytes() + b"\n# edited\n")
            assert fingerprint() != first, path
            path.write_bytes(path.read_bytes()[: -len(b"\n# edited\n")])
            assert fingerprint() == first
    finally:
        module._checker_fingerprint.cache_clear()


def _forged(path):
    """A cache file, for this checker, saying BAD has no issues."""
    cache = SchemaCheckCache(path)
    cache(BAD, phase_usable=True)
    cache.save()
    data = json.loads(path.read_text())
    for key in data["entries"]:
        data["entries"][key] = []
    path.write_text(json.dumps(data))
    path.chmod(0o600)


def _group_writable(path):
    path.chmod(0o660)


def _world_writable(path):
    path.chmod(0o606)


def _a_link(path):
    planted = path.with_name("planted.json")
    path.rename(planted)
    path.symlink_to(planted)


@pytest.mark.skipif(os.name != "posix", reason="owner and mode bits are checked on POSIX only")
@pytest.mark.parametrize("plant", [_group_writable, _world_writable, _a_link], ids=lambda f: f.__name__[1:])
def test_a_forged_verdict_someone_else_could_write_does_not_skip_the_check(tmp_path, plant):
    path = tmp_path / FILE_NAME
    _forged(path)
    plant(path)
    cache = SchemaCheckCache(path)
    assert [i.code for i in cache(BAD, phase_usable=True)] == ["RS005"]
    assert cache.disk_miss is not None and str(path) in cache.disk_miss
    cache.save()  # replaced by a private file with the real verdict, the forged one not carried over
    assert not path.is_symlink() and path.stat().st_mode & 0o777 == 0o600
    assert [i.code for i in SchemaCheckCache(path)(BAD, phase_usable=True)] == ["RS005"]


def test_a_private_forged_verdict_is_believed_which_is_the_boundary(tmp_path):
    # The counterpart: only the user who owns the cache (who can change Reyn itself) can forge it.
    path = tmp_path / FILE_NAME
    _forged(path)
    cache = SchemaCheckCache(path)
    assert cache(BAD, phase_usable=True) == [] and cache.disk_miss is None


def test_saved_cache_file_and_the_folders_reyn_made_are_private(tmp_path):
    path = tmp_path / "made" / "for" / FILE_NAME
    cache = SchemaCheckCache(path)
    cache(GOOD, phase_usable=True)
    cache.save()
    assert path.stat().st_mode & 0o777 == 0o600
    for folder in (tmp_path / "made", path.parent):
        assert folder.stat().st_mode & 0o777 == 0o700, folder
