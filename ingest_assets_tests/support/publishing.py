"""IndexRecords for publishing tests: MAP4_x records of a provider, built from a number and a title, as the
indexing activity would write them."""

from __future__ import annotations

from ingest_assets.records.indexing import deletion_record, index_record
from ingest_assets.records.mapping import mint_id

INGESTED = 1_767_225_600  # 2026-01-01T00:00:00Z


def local_id(n: int) -> str:
    return f"oai:example.org:{n:05d}"


def dpla_id(provider: str, n: int) -> str:
    return mint_id(provider, local_id(n))


def map_record(provider: str, n: int, title: str | None = None, **changes) -> dict:
    """A MAPRecord as mapping and enrichment leave it (only what the index document reads)."""
    record = {
        "id": dpla_id(provider, n),
        "ingestDate": INGESTED,
        "provider": f"{provider.title()} Hub",
        "dataProvider": "Riverside Historical Society",
        "isShownAt": f"https://{provider}.example.org/items/{n:05d}",
        "object": f"https://{provider}.example.org/thumbs/{n:05d}.jpg",
        "rightsStatement": "http://rightsstatements.org/vocab/NoC-US/1.0/",
        "sourceResource": {"title": [title or f"Mills in Millbrook, view {n}"], "subject": ["Mills"],
                           "type": ["image"]},
    }
    return {**record, **changes}


def documents(provider: str, numbers, title: str | None = None) -> list[dict]:
    """IndexRecords of ``provider`` for each number."""
    return [index_record(map_record(provider, n, title)) for n in numbers]


def deletions(provider: str, numbers) -> list[dict]:
    return [deletion_record(dpla_id(provider, n)) for n in numbers]
