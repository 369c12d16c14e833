"""Loading: the pipeline from a profile to a frozen registry (``loader.load``), one sub-package per
step in the order they run, every failure a diagnostic for the plugin concerned:

1. ``step1_profile`` — the profile, and its call policy applied once
2. ``step2_discovery`` — installed plugins from metadata, one distribution per id
3. ``step3_provenance`` — where the code came from, its digest, the pin and the lock
4. ``step4_import`` — import only the digested files
5. ``step5_hooks`` — settings, tools, diagnostics and commands from the plugin's hooks
6. ``step6_registry`` — collisions, the registry, call hooks and the audit log

Shared by the steps: ``plugin_state`` (the load's working state), ``diagnostics`` (the stable codes),
``userdirs``, ``argument_key``, ``permissions`` (what a plugin declares),
``isolation_step`` with ``isolation_point`` (in process, or through the isolation extension point),
``tracing_addon`` (the tracing add-on a profile turns on, by its entry point); after a load: ``report``
(what it returns) and ``unavailable`` (why a tool name is not loaded)."""
