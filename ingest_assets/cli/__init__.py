"""Every ``ingest-assets`` command: one module per command group, one entry point (:mod:`.main`)."""
