"""Enrichment: per-record normalization of MAP4_x MAPRecord dicts (no I/O, no Dagster).

    enriched, changes = enrich(record)       # changes: names of the fields that changed
    report.add(record["id"], changes, (record, enriched))   # EnrichmentReport
"""

from ingest_assets.records.enrichment.dates import parse_date
from ingest_assets.records.enrichment.dcmitype import normalize_type
from ingest_assets.records.enrichment.enrich import enrich
from ingest_assets.records.enrichment.language import normalize_language
from ingest_assets.records.enrichment.report import EnrichmentReport
from ingest_assets.records.enrichment.rights import normalize_rights

__all__ = [
    "EnrichmentReport",
    "enrich",
    "normalize_language",
    "normalize_rights",
    "normalize_type",
    "parse_date",
]
