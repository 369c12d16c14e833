"""Provenance: where a plugin's code came from (``record``), its digest over the files (``digest``, with
``cache`` keeping file hashes), the lock that pins both (``lock``, ``lock_file``) and what drifted
from it (``drift``), checked before any of the plugin's code runs."""
