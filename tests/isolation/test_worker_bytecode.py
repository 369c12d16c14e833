"""The worker reads no cached bytecode (issue 24): a ``.pyc`` planted in an installed reyn-isolation's
``__pycache__`` (built from other source, its header naming the real source's mtime and size, so a
plain interpreter takes it for the source's) never runs in the worker, whose code is the digested
source only (``-X pycache_prefix=/dev/null/…``). The tree digest and the lock skip ``__pycache__``,
so nothing else would tell. Positive control: the same worker answers with the real code. A fresh
venv from the wheelhouse (no editable install), its reyn-isolation installed by pip; the real
sandbox."""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import subprocess
from pathlib import Path
from typing import Any

ISOLATED = '[plugins]\nenable = ["example"]\n\n[plugins.example]\nisolation = "process"\n'
# the description of the isolated plugin's tool as the worker sent it
DESCRIBE = """
import json
from reyn_core.host import load
result = load()
[info] = [i for i in result.report.plugins if i.plugin_id == "example"]
print(json.dumps({"status": info.status, "codes": [d.code for d in info.diagnostics],
                  "description": result.registry.get("convert_units").description}))
"""
# appended to the real wire.py: every definition the worker sends says it ran
PLANTED = """

_sent = definition_to_data


def definition_to_data(tool, settings):
    data = _sent(tool, settings)
    data["served"]["description"] = "PLANTED BYTECODE RAN"
    return data
"""


def _plant(wire: Path) -> Path:
    """A timestamp ``.pyc`` of ``wire`` plus ``PLANTED`` where CPython looks for wire's bytecode, its
    header the real source's mtime and size (as valid as the one an import would write)."""
    source = wire.read_text() + PLANTED
    st = wire.stat()
    header = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
    header += (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
    header += (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    cached = Path(importlib.util.cache_from_source(str(wire)))
    cached.parent.mkdir(exist_ok=True)
    cached.write_bytes(header + marshal.dumps(compile(source, str(wire), "exec")))
    return cached


def test_bytecode_planted_beside_reyn_isolation_never_runs_in_the_worker(
    make_venv: Any, tmp_path: Path
) -> None:
    os.chmod(tmp_path, 0o755)  # the worker runs as an unprivileged user
    venv = make_venv("planted")
    venv.install("reyn_plugin_example", "reyn-isolation")
    work = tmp_path / "work"
    work.mkdir()
    (work / "reyn.toml").write_text(ISOLATED)

    def describe() -> dict[str, Any]:
        done = venv.run("python", "-c", DESCRIBE, cwd=work)
        assert done.returncode == 0, done.stdout + done.stderr
        found: dict[str, Any] = json.loads(done.stdout)
        return found

    # positive control: the real code runs in the worker and describes the tool
    before = describe()
    assert before["status"] == "loaded" and "RJ012" not in before["codes"], before
    assert before["description"] and "PLANTED" not in before["description"]

    wire = venv.site_packages / "reyn_isolation" / "wire.py"
    cached = _plant(wire)
    # the planted file is one a plain interpreter runs (what the worker did before this fix)
    plain = subprocess.run(
        [str(venv.python), "-I", "-c", "import reyn_isolation.wire as w; print(w._sent.__name__)"],
        capture_output=True, text=True, timeout=60, cwd=work,
    )  # fmt: skip
    assert plain.stdout.strip() == "definition_to_data", plain.stderr
    assert cached.is_file()

    after = describe()
    assert after["status"] == "loaded", after  # the plugin still works, its digest and lock unaffected
    assert after["description"] == before["description"]  # the worker compiled wire.py from its source
