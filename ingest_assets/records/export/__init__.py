"""Exports of published records for other programs (Parquet; the JSON-L DPLA's indexer reads)."""
