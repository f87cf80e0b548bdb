"""Dataset ingest (the sandcrawler ``dataset`` ingest type): requests -> platform -> manifest -> archive.

Domain code only (no Dagster): :mod:`.ingest` runs one request end to end; the Dagster wiring lives in
``ingest_assets.defs.datasets``.
"""
