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
from site_plugin import install_distribution, install_site_plugin

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
