"""Provenance: where a plugin's code came from (``record``), its digest over the files (``cache`` keeps
file hashes), and the lock that pins both (``lock``), checked before any of the plugin's code runs."""
