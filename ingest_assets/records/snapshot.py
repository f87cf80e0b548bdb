"""A provider's snapshot from its mapped records, as the storage specification sketches it: "retrieving the
most recent Avro file of mapped records from a particular date (perhaps by walking backwards until a date is
found), and then enriching those and indexing the results ... a new provenance file ... points to the
historical mapped-records Avro file".

The mapped records as of the day are those of the newest mapping output at or before it, walked back (newest
first, each record's newest version) to the one derived from a full harvest, with the deletions of the
harvests in between applied (a mapping output has no deletion records: its harvest has them). They are
enriched and indexed in this process into two new outputs of the day, one plan: the enrichment's ``_MANIFEST``
inputs are the mapping outputs it read and its ``-prov.json`` generator the newest of them; the indexing's
inputs are that enrichment and the newest harvest (whose deletions it passes on, as a pipeline run does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.engines.steps import RecordActivity, in_process
from ingest_assets.records.mapping import minter_for
from ingest_assets.storage.activities import ActivityResult, PlanRef, RecordSource, RecordStream, write_activity
from ingest_assets.storage.avro import INDEX_RECORD, MAP_RECORD
from ingest_assets.storage.backends import Storage
from ingest_assets.storage.snapshot import harvest_of, snapshot_records, snapshot_sources


@dataclass(frozen=True)
class MappedSnapshot:
    mapped: list[RecordSource]  # the mapping outputs read, newest first
    enrichment: ActivityResult
    indexing: ActivityResult


def deleted_ids(mint: Callable[[str], str], mapped: RecordSource) -> Iterator[str]:
    """The DPLA ids (``mint``: local id -> DPLA id) of the records the harvest behind ``mapped`` (a mapping or
    enrichment output) deleted; a harvest whose summary counts no deletion is not read."""
    harvest = harvest_of(mapped)
    if harvest.manifest().extra.get("Summary deleted") == "0":
        return iter(())
    return (mint(record["id"]) for record in harvest if record.get("deleted"))


def snapshot_from_mapping(storage: Storage, entry: ProviderEntry, as_of: date, started: datetime) -> MappedSnapshot | None:
    """Enrich and index ``entry``'s mapped records as of ``as_of`` (None when no mapping output is that old)."""
    provider = entry.name
    mapped = snapshot_sources(storage, provider, as_of, "mapping")
    if not mapped:
        return None
    plan, partition = PlanRef(started), f"snapshot as of {as_of.isoformat()}"
    enrichment = RecordActivity("enrichment", entry)
    report = enrichment.new_report()
    [enrich] = enrichment.steps(report)
    mint = minter_for(entry)
    records = snapshot_records(mapped, hidden=lambda source: deleted_ids(mint, source))
    stream = RecordStream((enrich(record) for record in records), inputs=mapped, started=started,
                          logs=lambda: enrichment.logs(report),
                          summary=lambda: {"mode": "snapshot", **enrichment.summary(report)})
    enriched = write_activity(storage, stream, provider=provider, activity="enrichment", day=as_of, started=started,
                              schema=MAP_RECORD, partition=partition, plan=plan)
    indexing = in_process(RecordActivity("indexing", entry), [RecordSource(storage, enriched.output), harvest_of(mapped[0])])
    indexed = write_activity(storage, indexing, provider=provider, activity="indexing", day=as_of, started=started,
                             schema=INDEX_RECORD, partition=partition, plan=plan)
    return MappedSnapshot(mapped, enriched, indexed)
