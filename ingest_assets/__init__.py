"""ingest-assets: a metadata and data ingestion platform built as a Dagster asset graph."""
