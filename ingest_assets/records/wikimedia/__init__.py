"""Wikimedia Commons: which published records may go there and the metadata ingest-wikimedia reads, as ingestion3's
``wiki/`` package and WikiMetadataEntry decide and write them (no upload here).

    result, export = export_published_day(storage, index, alias, ledger, journal, provider, mint, day, started)

:mod:`.gate` (Gate D: only a published, validated day), :mod:`.eligibility` (WikiMapper's criteria),
:mod:`.markup` (buildWikiMarkup), :mod:`.export` (the Parquet folder in ingestion3's layout).
"""

from ingest_assets.records.wikimedia.export import WikiExport, export_published_day
from ingest_assets.records.wikimedia.gate import GateRefused

__all__ = ["GateRefused", "WikiExport", "export_published_day"]
