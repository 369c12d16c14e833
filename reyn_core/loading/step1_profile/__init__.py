"""Load step 1: the profile — found (``profile_location``), read and checked (``profile``, its tables in
``profile_sections``), and its call policy applied once per load (``profile_policy``, the
router's deferral with it)."""
