"""Load step 3: where a plugin's code came from and whether it may run, before any of it does.

The record (``record``, from ``installed_files`` / ``direct_url`` / ``sources`` / ``source_walk``),
its digest over the files, every one hashed on every load (``digest``), and the bytecode and
``.pth`` files beside them (``inert``); the profile's pin checked (``provenance_check``); and the
lock together — as data (``lock``) and as TOML (``lock_file``), what drifted from it (``drift``)
and the lock checked at load (``lock_check``), a lock made from a whole finished load and its audit
(``lock_audit``, which reads the load through a protocol of its own, never the report)."""
