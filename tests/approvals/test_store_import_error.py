"""An approval store (an extension) whose import raises (issue 24, review B).

Its refusal reaches a model: the store is unusable (``RC011``) and every call needing approval is
refused with ``reason: unavailable``, whose message carries why. That message names where the store
raised by its path inside the distribution (``reyn_custom_store/helper.py:2 (in start)``), never a host
path; the operator's diagnostic has the host path in its traceback (``reyn --traceback doctor``).
Only ``Exception`` and ``SystemExit`` become a refusal: ``KeyboardInterrupt``, a task's cancellation
and ``GeneratorExit`` raised while importing propagate. Real ``reyn`` subprocesses over the approvals
world of conftest.py, and in-process lookups for the exceptions that must propagate."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from site_plugin import install_distribution

from reyn_core.loading.extension_origin import ExtensionError, ExtensionSession

HELPER = """
def start():
    {body}
"""

STORE = """
from reyn_approvals_sqlite import SqliteApprovalStore
from reyn_custom_store.helper import start

start()

def open_store(settings, base):
    return SqliteApprovalStore(base / "custom.sqlite")
"""

ENTRY = "[reyn.approval_stores]\ncustom = reyn_custom_store.store:open_store\n"


def _store(world: Any, body: str) -> None:
    files = {"__init__.py": "", "helper.py": HELPER.format(body=body), "store.py": STORE}
    install_distribution(world.site, "reyn-custom-store", "reyn_custom_store", files, ENTRY)
    text = world.profile.read_text().replace('settings.file = "approvals.sqlite"', 'backend = "custom"')
    world.profile.write_text(text)


def _call(world: Any) -> dict[str, Any]:
    done = world.reyn("tools", "call", world.write, "path=out/a.md", "text=hi", "--json")
    envelope: dict[str, Any] = json.loads(done.stdout)
    return envelope


def test_the_model_visible_refusal_names_no_host_path_and_the_operator_gets_it(world: Any) -> None:
    _store(world, "raise ValueError('the store cannot start')")
    envelope = _call(world)
    assert envelope["error"]["reason"] == "unavailable", envelope
    message = envelope["error"]["message"]
    assert "reyn_custom_store/helper.py:3 (in start)" in message
    assert "ValueError: the store cannot start" in message
    assert str(world.site) not in message and str(world.root) not in message
    assert not re.search(r"(^|[\s'\"(=])/[\w.-]+/", message), message  # no absolute path at all
    assert not (world.root / "out" / "a.md").exists()  # fail closed: refused, not run
    done = world.reyn("--traceback", "doctor")
    helper = world.site / "reyn_custom_store" / "helper.py"
    assert "RC011" in done.stdout and "reyn: traceback of RC011" in done.stderr, done.stderr
    assert f"raised at {helper}:3 (in start)" in done.stderr
    assert "Traceback (most recent call last)" in done.stderr


def test_control_the_same_store_that_starts_holds_the_call(world: Any) -> None:
    _store(world, "return None")
    envelope = _call(world)
    assert envelope["error"]["kind"] == "approval_required", envelope
    assert (world.root / "custom.sqlite").exists() and not (world.root / "out" / "a.md").exists()


# --------------------------------------------------------------------------- what propagates

PROBE = "[reyn.approval_stores]\nprobe = {pkg}.ext:VALUE\n"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    before = set(sys.modules)
    yield folder
    for name in set(sys.modules) - before:
        if name.startswith("rse_"):
            del sys.modules[name]


def _probe(site: Path, pkg: str, raised: str) -> Any:
    body = f"import asyncio\n{raised}\nVALUE = 'ready'\n"
    install_distribution(
        site, pkg.replace("_", "-"), pkg, {"__init__.py": "", "ext.py": body}, PROBE.format(pkg=pkg)
    )
    return ExtensionSession().load("reyn.approval_stores", "probe", distribution=None)


@pytest.mark.parametrize(
    ("raised", "kind"),
    [
        ("raise KeyboardInterrupt", KeyboardInterrupt),
        ("raise asyncio.CancelledError()", asyncio.CancelledError),
        ("raise GeneratorExit", GeneratorExit),
    ],
)
def test_interrupts_and_cancellation_at_import_propagate(site: Path, raised: str, kind: type) -> None:
    with pytest.raises(kind):
        _probe(site, f"rse_{kind.__name__.lower()}", raised)


@pytest.mark.parametrize("raised", ["raise SystemExit(3)", "raise RuntimeError('no')"])
def test_an_exception_or_exit_at_import_is_a_refusal(site: Path, raised: str) -> None:
    pkg = "rse_exit" if "SystemExit" in raised else "rse_error"
    with pytest.raises(ExtensionError) as refused:
        _probe(site, pkg, raised)
    assert f"{pkg}/ext.py:2 (in <module>)" in str(refused.value) and str(site) not in str(refused.value)
    assert refused.value.traceback is not None and str(site / pkg / "ext.py") in refused.value.traceback


def test_control_an_extension_that_imports_cleanly_is_returned(site: Path) -> None:
    assert _probe(site, "rse_fine", "") == "ready"


def test_a_file_of_the_extension_named_in_the_exception_is_shown_inside_the_distribution(site: Path) -> None:
    # exception texts name files (the verified finder's refusals, a module naming its own __file__):
    # the message shows each of the extension's files by its path inside the distribution, the
    # traceback keeps the host path
    with pytest.raises(ExtensionError) as refused:
        _probe(site, "rse_named", "raise RuntimeError(f'cannot start from {__file__}')")
    message = str(refused.value)
    assert "RuntimeError: cannot start from rse_named/ext.py" in message and str(site) not in message
    assert (
        refused.value.traceback is not None and str(site / "rse_named" / "ext.py") in refused.value.traceback
    )
