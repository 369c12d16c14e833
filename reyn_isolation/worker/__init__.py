"""The isolated plugin worker: ``python -m reyn_isolation.worker``, started by the host through the kernel
sandbox launcher with exactly the plugin's grants, a scrubbed environment and only its pipes.

It reads one load request, forbids starting programs unless granted, loads the plugin through the
loader's own steps (``reyn_core.host.plugin_from_record``: imported from its digested bytes only, API
and hooks checked, settings validated with the plugin's own model, tools collected), sends their
definitions and diagnostics and then serves calls until its input closes
(``WorkerPlugin.run_decided_call``: each a call the host's dispatcher decided). Nothing of the host
crosses but data. ``serve`` loads, ``call_server`` answers.
"""
