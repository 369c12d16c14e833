"""The isolated plugin worker: ``python -m reyn_isolation.worker``, started by the host through the kernel
sandbox launcher with exactly the plugin's grants, a scrubbed environment and only its pipes.

It reads one load request, forbids starting programs unless granted, imports the plugin from its
digested bytes only (``reyn_core.host.serve_from_digested_files``), validates its settings
with the plugin's own model, collects its tools and diagnostics, sends their definitions and then
serves calls until its input closes. Nothing of the host crosses but data. ``plugin_host`` loads,
``serve`` answers.
"""
