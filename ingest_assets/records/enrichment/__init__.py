"""Enrichment: ingestion3's chain on MAP4_x MAPRecord dicts (no I/O, no Dagster), its lists and tables as data
files (``data/``, see ``data/SOURCES.md``).

    chain = Chain(skip=frozenset(entry.settings.enrichment.skip))   # once per provider
    enriched, changes = chain.enrich(record)     # changes: {(step, field), ...}
    report.add(record["id"], changes, (record, enriched))            # EnrichmentReport
"""

from ingest_assets.records.enrichment.enrich import Chain, chain_for, enrich
from ingest_assets.records.enrichment.report import EnrichmentReport

__all__ = ["Chain", "EnrichmentReport", "chain_for", "enrich"]
