"""Record pipeline domain code (DPLA Ingestion 3 style): harvest, mapping, enrichment, indexing."""
