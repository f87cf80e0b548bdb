"""Dagster wiring: one folder per capability; ``ingest_assets.definitions`` merges them."""
