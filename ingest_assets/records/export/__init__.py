"""Exports of published records for other programs (Parquet)."""
