"""Isolated plugins, host side: a plugin that runs out of process under the operator's grants.

A plugin declares what it needs (``reyn_permissions.toml`` inside its hashed tree, ``permissions``);
the profile grants it (``[plugins.<id>] isolation = "process"`` with ``[plugins.<id>.grants]``,
``grants``), never more than declared; the host starts a fresh interpreter through the kernel sandbox
launcher with exactly those grants (``client``), which imports the plugin from its digested bytes
(``python -m reyn_core.worker``) and sends its tool definitions; the host registers them as proxies
(``proxy``) whose calls travel over the worker's pipes (``protocol``, ``wire``).

This package sits below ``loading`` and imports nothing of it: the load step that uses it is
``reyn_core.loading.isolation_step``.
"""
