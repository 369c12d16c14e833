"""The fresh-venv fixtures install real wheels offline from the wheelhouse."""

from __future__ import annotations


def test_fresh_venv_installs_core_from_wheelhouse_and_imports_it(make_venv):
    venv = make_venv()
    venv.install("reyn-core")
    proc = venv.run(
        "python", "-c", "import reyn_core, sys; print(reyn_core.__file__); print('litellm' in sys.modules)"
    )
    assert proc.returncode == 0, proc.stderr
    path, heavy = proc.stdout.split()
    assert str(venv.site_packages) in path  # the installed copy, not the repository's
    assert heavy == "False"
