"""Load step 5: the plugin's hooks, in order — its settings validated (``settings_check``), its
tools collected and checked (``tool_collection``), its own diagnostics (``plugin_diagnostics``)
and its commands (``commands``)."""
