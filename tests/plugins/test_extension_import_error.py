"""An extension (an approval store, the tracing add-on) whose import raises (issue 24, review B).

Only ``Exception`` and ``SystemExit`` become a refusal (``ExtensionError``): ``KeyboardInterrupt``, a
task's cancellation and ``GeneratorExit`` raised while importing propagate. The refusal's message,
which can reach a model (an approval store's becomes the gate's ``unavailable``), names the
extension's files by their path inside the distribution; its ``traceback`` keeps the host path for
the operator (the subprocess test of a store is in tests/approvals/test_store_origin.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from plugin_distkit import tool_plugin
from site_plugin import install_distribution, install_site_plugin, lazy_plugin

from reyn_core.host import Profile, load
from reyn_core.loading.extension_origin import ExtensionError, ExtensionSession

PROBE = "[reyn.approval_stores]\nprobe = {pkg}.ext:VALUE\n"


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
def test_interrupts_and_cancellation_at_import_propagate(temp_site: Path, raised: str, kind: type) -> None:
    with pytest.raises(kind):
        _probe(temp_site, f"rse_{kind.__name__.lower()}", raised)


@pytest.mark.parametrize("raised", ["raise SystemExit(3)", "raise RuntimeError('no')"])
def test_an_exception_or_exit_at_import_is_a_refusal(temp_site: Path, raised: str) -> None:
    pkg = "rse_exit" if "SystemExit" in raised else "rse_error"
    with pytest.raises(ExtensionError) as refused:
        _probe(temp_site, pkg, raised)
    assert f"{pkg}/ext.py:2 (in <module>)" in str(refused.value) and str(temp_site) not in str(refused.value)
    assert refused.value.traceback is not None and str(temp_site / pkg / "ext.py") in refused.value.traceback


def test_control_an_extension_that_imports_cleanly_is_returned(temp_site: Path) -> None:
    assert _probe(temp_site, "rse_fine", "") == "ready"


def test_a_file_of_the_extension_named_in_the_exception_is_shown_inside_the_distribution(
    temp_site: Path,
) -> None:
    # exception texts name files (the verified finder's refusals, a module naming its own __file__):
    # the message shows each of the extension's files by its path inside the distribution, the
    # traceback keeps the host path
    with pytest.raises(ExtensionError) as refused:
        _probe(temp_site, "rse_named", "raise RuntimeError(f'cannot start from {__file__}')")
    message = str(refused.value)
    assert "RuntimeError: cannot start from rse_named/ext.py" in message and str(temp_site) not in message
    assert (
        refused.value.traceback is not None
        and str(temp_site / "rse_named" / "ext.py") in refused.value.traceback
    )


def test_a_plugin_cancelled_at_import_propagates_out_of_the_load_and_control_loads(temp_site: Path) -> None:
    install_site_plugin(temp_site, "rse_cancel", "import asyncio\nraise asyncio.CancelledError()\n")
    with pytest.raises(asyncio.CancelledError):
        load(Profile.from_toml_text('[plugins]\nenable = ["rse_cancel"]\n'))
    install_site_plugin(temp_site, "rse_calm", tool_plugin(["rse_calm_echo"]))
    result = load(Profile.from_toml_text('[plugins]\nenable = ["rse_calm"]\n'))
    assert result.report.plugin("rse_calm").status == "loaded" and "rse_calm_echo" in result.registry


def _lazy_call(site: Path, pid: str, handler: str) -> dict[str, Any]:
    from reyn_core import ToolContext
    from reyn_core.host import dispatch_tool

    pkg = f"{pid}_pkg"
    files = {"__init__.py": lazy_plugin(f"{pid}_run", f"{pkg}.h:fn"), "h.py": handler}
    install_distribution(site, pid.replace("_", "-"), pkg, files, f"[reyn.plugins]\n{pid} = {pkg}\n")
    result = load(Profile.from_toml_text(f'[plugins]\nenable = ["{pid}"]\n'))
    assert result.report.plugin(pid).status == "loaded"
    ctx = ToolContext(surface="router", agent="tester")
    envelope: dict[str, Any] = asyncio.run(dispatch_tool(result.registry, f"{pid}_run", {}, ctx))
    return envelope


@pytest.mark.parametrize("raised", ["raise SystemExit(3)", "open(__file__ + '.secret-path')"])
def test_a_lazy_handler_failing_at_import_is_runtime_missing_in_fixed_words(
    temp_site: Path, operator_log: Any, raised: str
) -> None:
    # review 2 (n): a handler module exiting at import ended the host; and its exception text (a host
    # path) reached the model. Both are now runtime_missing in fixed words citing the operator's log.
    pid = "rlz_exit" if "SystemExit" in raised else "rlz_path"
    envelope = _lazy_call(temp_site, pid, f"{raised}\ndef fn():\n    return 'ran'\n")
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "runtime_missing", envelope
    message = envelope["error"]["message"]
    assert f"the handler '{pid}_pkg.h:fn' of tool '{pid}_run' cannot be imported" in message
    assert str(temp_site) not in message and "secret-path" not in message and "SystemExit" not in message
    why = operator_log.record(message)
    assert ("SystemExit: 3" if "SystemExit" in raised else f"{temp_site}/{pid}_pkg/h.py.secret-path") in why


def test_a_lazy_handler_interrupted_at_import_propagates_and_control_runs(temp_site: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        _lazy_call(temp_site, "rlz_interrupt", "raise KeyboardInterrupt\n")
    envelope = _lazy_call(temp_site, "rlz_fine", "def fn():\n    return 'ran'\n")
    assert envelope["status"] == "ok" and envelope["data"] == "ran"
