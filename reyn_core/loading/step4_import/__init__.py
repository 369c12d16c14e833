"""Load step 4: a plugin imported only from the files that were digested (``importing``), every
module compiled from its hashed bytes (``verified_import``, with Reyn's own code cache in
``bytecode_cache``)."""
