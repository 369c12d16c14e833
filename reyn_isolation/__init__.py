"""reyn-isolation: isolated plugins, a plugin that runs out of process under the operator's grants.

The core loads a plugin whose profile section says ``isolation = "process"`` through its isolation
extension point (``reyn_core.host.PluginIsolation``): the entry point ``process`` of the group
``reyn.isolation`` names ``step.backend`` here. A plugin declares what it needs
(``reyn_permissions.toml`` inside its hashed tree, read by the core); the profile grants it
(``[plugins.<id>.grants]``, ``grants``), never more than declared; this package starts a fresh
interpreter through the kernel sandbox launcher (reyn-sandbox) with exactly those grants
(``launch``, ``client``), which imports the plugin from its digested bytes (``python -m
reyn_isolation.worker``) and sends its tool definitions; the host registers them as proxies
(``proxy``) whose calls travel over the worker's pipes (``protocol``, ``wire``).

Built on reyn-core's public API only (``reyn_core``, ``reyn_core.host``).
"""
