"""Published days of real records for the Wikimedia export and tag sitemap tests: the original records of
``../shared/fixtures`` (ingestion3's hub fixtures, DPLA's published documents) mapped, enriched and indexed by the
shipped profiles, written as a day's indexing output and published through the gates as a run publishes them; and a
hub's own institutions table (DPLA's with some ``upload`` flags changed)."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone
from importlib.resources import files
from pathlib import Path

from ingest_assets.core.registry import ProviderEntry, ReviewBlock
from ingest_assets.records.enrichment import chain_for
from ingest_assets.records.enrichment.institutions import SHIPPED
from ingest_assets.records.indexing import index_record
from ingest_assets.records.mapping import mapper_for
from ingest_assets.records.preview import read_inputs
from ingest_assets.records.mapping.profiles import PROFILES
from ingest_assets.records.publishing.promotion import Published, Publisher
from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
from ingest_assets.storage.avro import INDEX_RECORD
from ingest_assets.storage.backends import Storage
from ingest_assets_tests.support.dpla_published import FOLDER, publish

TOLERANCE = 0.02


def fixture_records(hub: str, path: Path, provider: str | None = None) -> list[dict]:
    """IndexRecords of the records of a hub's file (an ingestion3 fixture), as the pipeline indexes them."""
    entry = ProviderEntry(provider or hub, {"mapping": hub})
    mapper, chain = mapper_for(entry), chain_for(entry)
    out = []
    for original in read_inputs([str(path)], PROFILES[hub], entry.name):
        mapped = mapper.map(original).record
        assert mapped is not None, f"{path.name} did not map"
        out.append(index_record(chain.enrich(mapped)[0]))
    return out


def published_document_record(name: str) -> dict:
    """The IndexRecord we make of a DPLA published document's original record (``dpla-published/<name>``)."""
    ours, _ = publish(FOLDER / name)
    return {"id": ours["id"], "deleted": False,
            "document": json.dumps(ours, ensure_ascii=False, separators=(",", ":"), sort_keys=True)}


def publish_day(storage: Storage, publisher: Publisher, provider: str, day: date, records: list[dict],
                review: ReviewBlock | None = None) -> tuple[RecordSource, Published]:
    """``records`` as ``provider``'s indexing output of ``day``, registered for publication (held when ``review``
    requires it) and, unless held, published through the gates."""
    started = datetime.combine(day, datetime.min.time(), tzinfo=timezone.utc).replace(hour=3)
    result = write_activity(storage, RecordStream(records, started=started), provider=provider, activity="indexing",
                            day=day, started=started, schema=INDEX_RECORD, partition=f"{day.isoformat()}|{provider}")
    source = RecordSource(storage, result.output)
    state = publisher.ledger.register(provider, day, source.key, review or ReviewBlock(), started)
    if state.state == "pending":
        return source, None
    return source, publisher.publish({provider: [(day, source)]}, storage, {provider: TOLERANCE},
                                     run_id=f"run-{provider}-{day}")[provider]


def own_table(folder: Path, uploads: dict[tuple[str, str], bool]) -> Path:
    """DPLA's institutions table with ``uploads`` ((hub, institution) -> upload) changed, as a hub's own file."""
    table = json.loads(files("ingest_assets.records.enrichment.data").joinpath(SHIPPED).read_bytes())
    for (hub, institution), upload in uploads.items():
        table[hub]["institutions"][institution]["upload"] = upload
    path = folder / "institutions_v2.json"
    path.write_text(json.dumps(table, indent=2), encoding="utf-8")
    return path
