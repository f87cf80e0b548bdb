"""The JSON-L export as its reader sees it, and a provider's days published without Dagster for the export's tests.

``sparkindexer_folder`` picks a hub's export the way DPLA's sparkindexer does (``MasterDataset.scala``, as ingestion3's
``docs/pipeline-unification`` describes it: 02-system-architecture "Handoff 1" lists ``<prefix>/jsonl/`` and "selects
the most recent directory by lexicographic string comparison on the full key"; 03-integration-contracts "Contract 2"
rule 3: a directory is eligible only with ``_SUCCESS`` (and ``_MANIFEST``); 05-technical-findings SI-H1: the key is
compared with ``<prefix>/jsonl/<maxTimestamp>``, ``now`` taking everything). It lists object keys, not our layout
module, so it checks the names we write. ``read_export`` reads a folder as Spark's text source does: every file
whose name does not start with ``_`` or ``.`` (Hadoop's hidden-file filter), gzip by the ``.gz`` suffix.
"""

from __future__ import annotations

import gzip
import json
from datetime import date, datetime, timedelta, timezone

from ingest_assets.core.registry import ProviderEntry, ReviewBlock
from ingest_assets.records.engines.steps import RecordActivity, in_process
from ingest_assets.records.publishing.promotion import Publisher
from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
from ingest_assets.storage.avro import INDEX_RECORD, MAP_RECORD, ORIGINAL_RECORD
from ingest_assets.storage.backends import Storage


def sparkindexer_folder(storage: Storage, prefix: str, max_timestamp: str = "now") -> str | None:
    """The folder sparkindexer reads for the hub at ``prefix``: of the keys below ``<prefix>/jsonl/`` that are a
    ``_SUCCESS`` marker (at or before ``<prefix>/jsonl/<max_timestamp>`` unless ``now``), the greatest."""
    base = f"{prefix}/jsonl/"
    markers = [key for key in storage.list_keys(base.rstrip("/")) if key.endswith("/_SUCCESS")]
    eligible = [key for key in markers if max_timestamp == "now" or key <= base + max_timestamp]
    return max(eligible).removesuffix("/_SUCCESS") if eligible else None


def read_export(storage: Storage, folder: str) -> list[dict]:
    """Every line of the folder's data files, parsed, in part order."""
    lines = []
    for key in sorted(storage.list_keys(folder)):
        name = key.rsplit("/", 1)[1]
        if name.startswith(("_", ".")):
            continue
        data = storage.read_bytes(key)
        text = (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")
        lines += [json.loads(line) for line in text.splitlines()]
    return lines


class DayClock:
    """A clock one second further at each reading (each candidate index gets its own name)."""

    def __init__(self, start: datetime):
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def run_day(storage: Storage, entry: ProviderEntry, day: date, originals: list[dict], mode: str) -> RecordSource:
    """Harvest (``originals``, a ``mode`` harvest), mapping, enrichment and indexing outputs of ``entry``'s ``day``, as
    a pipeline run writes them; returns the indexing output."""
    started = datetime(day.year, day.month, day.day, 2, tzinfo=timezone.utc)
    summary = {"mode": mode, "deleted": sum(bool(r["deleted"]) for r in originals)}

    def write(stream: RecordStream, activity: str, schema: str) -> RecordSource:
        result = write_activity(storage, stream, provider=entry.name, activity=activity, day=day, started=started,
                                schema=schema, partition=f"{day.isoformat()}|{entry.name}")
        return RecordSource(storage, result.output)

    harvest = write(RecordStream(originals, summary=lambda: summary), "harvest", ORIGINAL_RECORD)
    mapped = write(in_process(RecordActivity("mapping", entry), [harvest]), "mapping", MAP_RECORD)
    enriched = write(in_process(RecordActivity("enrichment", entry), [mapped]), "enrichment", MAP_RECORD)
    return write(in_process(RecordActivity("indexing", entry), [enriched, harvest]), "indexing", INDEX_RECORD)


def publish_day(storage: Storage, publisher: Publisher, entry: ProviderEntry, day: date, indexing: RecordSource) -> None:
    """Register the day (no review) and publish it through the gates, as ``provider_report`` and ``search_index`` do."""
    publisher.ledger.register(entry.name, day, indexing.key, ReviewBlock(), publisher.clock())
    outcome = publisher.publish({entry.name: [(day, indexing)]}, storage, tolerance={entry.name: 1.0})
    assert outcome[entry.name].promoted, outcome[entry.name].note
