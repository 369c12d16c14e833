"""``reyn_trusted_files`` and isolated plugins (issue 24): the worker answers the hook and the host
adds the files to its one list as for a plugin in process (resolved against the host's working
directory, not the worker's ``/``); a hook that raises in the worker refuses the plugin (``RI013``);
and no plugin may trust a file another isolated plugin's write grant covers. Real worker processes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import reyn_core.host as host

from .plugin_kit import declaration, install_package_plugin

PLUGIN = '''
from reyn_core import hookimpl, tool

REYN_API = 1


@tool(purity="read_only")
def {pid}_hello() -> str:
    """Say hello."""
    return "hello"


@hookimpl
def reyn_register_tools(register, settings):
    register({pid}_hello)


@hookimpl
def reyn_trusted_files(settings, workspace):
    {body}
'''


def _install(site: Path, pid: str, body: str, *, read: bool = False) -> None:
    files = {"__init__.py": PLUGIN.format(pid=pid, body=body)}
    permissions = declaration(filesystem_write=True, filesystem_read=read)
    install_package_plugin(site, pid, {**files, "reyn_permissions.toml": permissions})


def _plugin(pid: str, isolation: str, write: list[str] | None = None, read: list[str] | None = None) -> str:
    table = f'[plugins.{pid}]\nisolation = "{isolation}"\n'
    if write or read:
        table += f"[plugins.{pid}.grants]\n"
    table += f"write = {write!r}\n".replace("'", '"') if write else ""
    return table + (f"read = {read!r}\n".replace("'", '"') if read else "")


def _load(*tables: str, enable: list[str]) -> Any:
    enabled = ", ".join(f'"{p}"' for p in enable)
    return host.load(host.Profile.from_toml_text(f"[plugins]\nenable = [{enabled}]\n" + "".join(tables)))


def _state(tmp_path: Path) -> Path:
    """A folder the worker's unprivileged user may write."""
    state = tmp_path / "state"
    state.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(state, 0o777)
    return state


def _info(result: Any, pid: str) -> Any:
    return next(i for i in result.report.plugins if i.plugin_id == pid)


def test_an_isolated_plugin_names_its_files_from_its_worker(site: Path, tmp_path: Path) -> None:
    _state(tmp_path)
    _install(site, "owner", "return {str(workspace / 'state' / 'own.db'): 'its database'}")
    # its own write grant covers its own file: the worker is the file's owner
    result = _load(_plugin("owner", "process", [str(tmp_path / "state")]), enable=["owner"])
    assert _info(result, "owner").status == "loaded", [d.render() for d in _info(result, "owner").diagnostics]
    assert result.host_files[str(tmp_path / "state" / "own.db")] == "its database (plugin 'owner')"


def test_a_hook_raising_in_the_worker_refuses_the_plugin(site: Path) -> None:
    _install(site, "raiser", "raise RuntimeError('no store configured')")
    result = _load(_plugin("raiser", "process"), enable=["raiser"])
    info = _info(result, "raiser")
    assert info.status == "failed" and "raiser_hello" not in result.registry
    (diag,) = [d for d in info.diagnostics if d.code == "RI013"]
    assert "(in the worker)" in diag.message and "no store configured" in diag.message


def _writer_and_namer(site: Path, tmp_path: Path, suffix: str, folder: str) -> Any:
    """Plugin ``writer<suffix>`` isolated with a write grant over ``state``, and ``namer<suffix>`` in
    process trusting ``<folder>/its.db``: the load."""
    _state(tmp_path)
    _install(site, f"writer{suffix}", "return {}")
    _install(site, f"namer{suffix}", f"return {{str(workspace / {folder!r} / 'its.db'): 'its database'}}")
    writer = _plugin(f"writer{suffix}", "process", [str(tmp_path / "state")])
    namer = _plugin(f"namer{suffix}", "in-process")
    return _load(writer, namer, enable=[f"namer{suffix}", f"writer{suffix}"])


def test_no_plugin_may_trust_a_file_another_isolated_plugin_may_write(site: Path, tmp_path: Path) -> None:
    result = _writer_and_namer(site, tmp_path, "", "state")
    info = _info(result, "namer")
    assert info.status == "failed" and "namer_hello" not in result.registry
    (diag,) = [d for d in info.diagnostics if d.code == "RI013"]
    assert "which isolated plugin 'writer' may write ([plugins.writer.grants] write" in diag.message
    assert _info(result, "writer").status == "loaded"  # the writer is not the one refused
    assert str(tmp_path / "state" / "its.db") not in result.host_files


def test_positive_control_a_file_out_of_every_grant_is_trusted(site: Path, tmp_path: Path) -> None:
    result = _writer_and_namer(site, tmp_path, "2", "kept")
    assert _info(result, "namer2").status == "loaded" and "namer2_hello" in result.registry
    assert result.host_files[str(tmp_path / "kept" / "its.db")] == "its database (plugin 'namer2')"


def test_an_isolated_plugin_may_name_only_files_its_grants_cover(site: Path, tmp_path: Path) -> None:
    _state(tmp_path)
    _install(site, "stray", "return {str(workspace / 'kept' / 'its.db'): 'its database'}")
    result = _load(_plugin("stray", "process", [str(tmp_path / "state")]), enable=["stray"])
    info = _info(result, "stray")
    assert info.status == "failed" and "stray_hello" not in result.registry
    (diag,) = [d for d in info.diagnostics if d.code == "RI013"]
    assert "outside every path [plugins.stray.grants] lets it write" in diag.message
    assert str(tmp_path / "kept" / "its.db") not in result.host_files
    # positive control: test_an_isolated_plugin_names_its_files_from_its_worker (inside its grant)


def test_a_file_an_isolated_plugin_may_only_read_is_not_its_own(site: Path, tmp_path: Path) -> None:
    """A read grant over the workspace does not let a worker protect a file in another surface's write
    root (it would refuse the shell pack's `out`, or a source file a model edits)."""
    _state(tmp_path)
    (tmp_path / "out").mkdir()
    _install(site, "reader", "return {str(workspace / 'out' / 'x'): 'its cache'}", read=True)
    result = _load(_plugin("reader", "process", read=[str(tmp_path)]), enable=["reader"])
    info = _info(result, "reader")
    assert info.status == "failed" and "reader_hello" not in result.registry, info.diagnostics
    (diag,) = [d for d in info.diagnostics if d.code == "RI013"]
    assert "outside every path [plugins.reader.grants] lets it write" in diag.message
    assert str(tmp_path / "out" / "x") not in result.host_files
    # positive control: the same plugin with a write grant over the folder names it
    _install(site, "reader2", "return {str(workspace / 'state' / 'x'): 'its cache'}", read=True)
    result = _load(
        _plugin("reader2", "process", [str(tmp_path / "state")], [str(tmp_path)]), enable=["reader2"]
    )
    assert _info(result, "reader2").status == "loaded", _info(result, "reader2").diagnostics
    assert result.host_files[str(tmp_path / "state" / "x")] == "its cache (plugin 'reader2')"
