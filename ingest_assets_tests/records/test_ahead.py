"""Steps ahead: the enrichment and index documents a mapping stages are the outputs those steps compute, committed
only by their own step, only from the very input they were made from, and dropped when anything goes wrong.

Real records: Zenodo's OAI-PMH page, and the inputs of ingestion3's mapping tests of JSON, QDC and MODS hubs.
"""

import uuid
from itertools import cycle
from datetime import date, datetime, timezone

import boto3
import fastavro
import pytest

from ingest_assets.core.errors import IngestError
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.defs.resources import StorageResource
from ingest_assets.records.engines import ahead
from ingest_assets.records.engines.ahead import staged_stream, staging_ahead
from ingest_assets.records.engines.steps import BURST, RecordActivity, applied, in_process
from ingest_assets.records.enrichment.enrich import Chain
from ingest_assets.records.mapping.profiles import PROFILES
from ingest_assets.records.preview import read_inputs
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
from ingest_assets.storage.avro import INDEX_RECORD, MAP_RECORD, ORIGINAL_RECORD, part_keys

DAY = date(2026, 2, 1)
SCHEMAS = {"harvest": ORIGINAL_RECORD, "indexing": INDEX_RECORD}
ZENODO = ("oai-pmh/zenodo-listrecords-oai_dc.xml", "oai_dc", {
    "dataProvider": {"value": "Zenodo"}, "rights": {"value": "http://rightsstatements.org/vocab/InC/1.0/"}})
HUBS = [ZENODO] + [(f"ingestion3/{name}", profile, {}) for name, profile in (
    ("mdl.json", "mdl"), ("nypl.json", "nypl"), ("maryland.xml", "maryland"), ("mt.xml", "mt"), ("ohio.xml", "ohio"))]
BURSTS = 2 * BURST + 7  # records: two whole bursts of the steps and part of a third


class Day:
    """One provider's day in a storage: its harvest and each activity written as the record IO manager writes it."""

    def __init__(self, storage, entry: ProviderEntry):
        self.storage, self.entry, self.second = storage, entry, 0

    def write(self, activity: str, stream: RecordStream) -> RecordSource:
        self.second += 1
        result = write_activity(self.storage, stream, provider=self.entry.name, activity=activity, day=DAY,
                                schema=SCHEMAS.get(activity, MAP_RECORD), partition=f"{DAY}|{self.entry.name}",
                                started=datetime(2026, 2, 2, 2, 0, self.second, tzinfo=timezone.utc))
        return RecordSource(self.storage, result.output)

    def harvest(self, originals: list[dict]) -> RecordSource:
        summary = {"records": len(originals), "deleted": sum(bool(r["deleted"]) for r in originals)}
        return self.write("harvest", RecordStream(originals, summary=lambda: summary))

    def computed(self, activity: str, inputs: list[RecordSource]) -> RecordSource:
        return self.write(activity, in_process(RecordActivity(activity, self.entry), inputs))

    def mapped_ahead(self, harvest: RecordSource, stages=ahead.STAGES) -> RecordSource:
        mapping = RecordActivity("mapping", self.entry)
        return self.write("mapping", staging_ahead(in_process(mapping, [harvest]), mapping, stages, self.storage))

    def committed(self, activity: str, inputs: list[RecordSource]) -> RecordSource:
        stream = staged_stream(RecordActivity(activity, self.entry), inputs, self.storage)
        assert stream is not None, f"nothing staged for {activity} of {inputs[0].key}"
        return self.write(activity, stream)

    def staging(self) -> list[str]:
        return list(self.storage.list_keys(layout.ahead_staging_key(self.entry.name, DAY)))


def originals(fixtures, path: str, profile: str, provider: str) -> list[dict]:
    found = [r for r in read_inputs([str(fixtures / path)], PROFILES[profile], provider) if isinstance(r, dict)]
    assert found
    return found


def replicated(records: list[dict], count: int) -> list[dict]:
    """``count`` records taken in turn from ``records``, each with an id of its own (more than a burst of them)."""
    return [{**record, "id": f"{record['id']}-{n}"} for n, record in zip(range(count), cycle(records))]


def contents(source: RecordSource) -> tuple:
    """What a step's output holds: records, _LOGS, summary; and the Avro doc of each part (it names the inputs)."""
    storage = source.storage
    docs = set()
    for key in part_keys(storage, source.key):
        with storage.open_read(key) as handle:
            docs.add(fastavro.reader(handle).writer_schema["doc"])
    logs = {key.rsplit("/", 1)[1]: storage.read_bytes(key) for key in storage.list_keys(f"{source.key}/_LOGS")}
    return list(source), logs, source.manifest().extra, source.manifest().record_count, docs


def doc_names(source: RecordSource, *inputs: RecordSource) -> set[str]:
    return {f"{source.output.activity} of {source.output.provider} for {DAY.isoformat()} by ingest-assets "
            f"{source.manifest().software_version}; derived from {', '.join(i.key for i in inputs)}"}


@pytest.mark.parametrize("path, profile, overrides, count", [(*hub, None) for hub in HUBS] + [(*ZENODO, BURSTS)],
                         ids=[h[1] for h in HUBS] + ["oai_dc-bursts"])
def test_staged_outputs_are_what_the_steps_compute(tmp_storage, shared_fixtures, path, profile, overrides, count):
    entry = ProviderEntry("hub", {"mapping": profile, "mapping_overrides": overrides})
    day = Day(tmp_storage, entry)
    found = originals(shared_fixtures, path, profile, "hub")
    harvest = day.harvest(replicated(found, count) if count else found)
    mapped = day.computed("mapping", [harvest])
    enriched = day.computed("enrichment", [mapped])
    indexed = day.computed("indexing", [enriched, harvest])

    mapped_ahead = day.mapped_ahead(harvest)
    assert day.staging(), "the mapping staged nothing"
    enriched_ahead = day.committed("enrichment", [mapped_ahead])
    indexed_ahead = day.committed("indexing", [enriched_ahead, harvest])

    assert enriched_ahead.manifest().record_count == mapped.manifest().record_count > 0
    for computed, committed in ((mapped, mapped_ahead), (enriched, enriched_ahead), (indexed, indexed_ahead)):
        assert contents(committed)[:4] == contents(computed)[:4]  # records, _LOGS, summary, count
    assert contents(enriched_ahead)[4] == doc_names(enriched_ahead, mapped_ahead)
    assert contents(indexed_ahead)[4] == doc_names(indexed_ahead, enriched_ahead, harvest)
    assert day.staging() == [], "committed staging is removed"


def test_staging_and_committing_on_s3(s3_endpoint, shared_fixtures):
    """The same on S3 (moto's server): staged folders appear with their marker, parts are copied under the step's
    schema doc, and nothing is left under ``_ahead-staging/``."""
    bucket = f"ahead-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    s3 = {"endpoint_url": s3_endpoint, "region_name": "us-east-1", "aws_access_key_id": "testing",
          "aws_secret_access_key": "testing"}
    storage = StorageResource(url=f"s3://{bucket}/hub", s3=s3).get_client()
    path, profile, overrides = ZENODO
    day = Day(storage, ProviderEntry("zenodo", {"mapping": profile, "mapping_overrides": overrides}))
    harvest = day.harvest(originals(shared_fixtures, path, profile, "zenodo"))
    indexed = day.computed("indexing", [day.computed("enrichment", [day.computed("mapping", [harvest])]), harvest])
    enriched_ahead = day.committed("enrichment", [day.mapped_ahead(harvest)])
    indexed_ahead = day.committed("indexing", [enriched_ahead, harvest])
    assert contents(indexed_ahead)[:4] == contents(indexed)[:4]
    assert contents(indexed_ahead)[4] == doc_names(indexed_ahead, enriched_ahead, harvest)
    assert not [k for k in storage.list_keys() if k.startswith("_ahead-staging/")]


def test_indexing_adds_the_harvests_deletions_after_the_staged_documents(tmp_storage, shared_fixtures):
    path, profile, overrides = ZENODO
    entry = ProviderEntry("zenodo", {"mapping": profile, "mapping_overrides": overrides})
    day = Day(tmp_storage, entry)
    records = originals(shared_fixtures, path, profile, "zenodo")
    deleted = [{**records[0], "id": f"{records[0]['id']}-gone", "deleted": True}]
    harvest = day.harvest(records + deleted)
    indexed = day.computed("indexing", [day.computed("enrichment", [day.computed("mapping", [harvest])]), harvest])
    indexed_ahead = day.committed("indexing", [day.committed("enrichment", [day.mapped_ahead(harvest)]), harvest])
    assert contents(indexed_ahead)[:4] == contents(indexed)[:4]
    assert indexed_ahead.manifest().extra["Summary deletions"] == "1"
    assert list(indexed_ahead)[-1]["deleted"] is True


def test_a_staged_output_is_committed_from_its_own_input_only(tmp_storage, shared_fixtures):
    path, profile, overrides = ZENODO
    entry = ProviderEntry("zenodo", {"mapping": profile, "mapping_overrides": overrides})
    day = Day(tmp_storage, entry)
    harvest = day.harvest(originals(shared_fixtures, path, profile, "zenodo"))
    first = day.mapped_ahead(harvest)
    enrichment = RecordActivity("enrichment", entry)
    second = day.mapped_ahead(harvest)  # a re-run of the mapping: the first's staging was never claimed
    assert staged_stream(enrichment, [first], tmp_storage) is None
    other = ProviderEntry("zenodo", {"mapping": profile, "mapping_overrides": overrides, "label": "Zenodo, renamed"})
    assert staged_stream(RecordActivity("enrichment", other), [second], tmp_storage) is None  # another entry
    assert staged_stream(enrichment, [second], tmp_storage, run="another run") is None  # staged for another run
    assert staged_stream(RecordActivity("indexing", entry), [second, harvest], tmp_storage) is None  # not before enrichment
    enriched = day.committed("enrichment", [second])
    assert staged_stream(RecordActivity("indexing", entry), [second, harvest], tmp_storage) is None
    day.committed("indexing", [enriched, harvest])
    assert day.staging() == []


def test_only_the_stages_asked_for_are_staged(tmp_storage, shared_fixtures):
    path, profile, overrides = ZENODO
    entry = ProviderEntry("zenodo", {"mapping": profile, "mapping_overrides": overrides})
    day = Day(tmp_storage, entry)
    harvest = day.harvest(originals(shared_fixtures, path, profile, "zenodo"))
    mapped = day.mapped_ahead(harvest, stages=("enrichment",))
    enriched = day.committed("enrichment", [mapped])
    assert staged_stream(RecordActivity("indexing", entry), [enriched, harvest], tmp_storage) is None
    assert day.staging() == []
    day.mapped_ahead(harvest, stages=())
    assert day.staging() == []


@pytest.mark.parametrize("position", [3, BURST + 3], ids=["first-burst", "second-burst"])
def test_a_record_the_enrichment_refuses_drops_the_staging_not_the_mapping(tmp_storage, shared_fixtures, monkeypatch,
                                                                           position):
    path, profile, overrides = ZENODO
    entry = ProviderEntry("zenodo", {"mapping": profile, "mapping_overrides": overrides})
    day = Day(tmp_storage, entry)
    harvest = day.harvest(replicated(originals(shared_fixtures, path, profile, "zenodo"), BURSTS))
    refused = list(day.computed("mapping", [harvest]))[position]["id"]
    enrich = Chain.enrich

    def refusing(self, record):  # a fault no real record of the page has
        if record["id"] == refused:
            raise IngestError("enrichment refused this record", provider="zenodo", record=refused)
        return enrich(self, record)

    monkeypatch.setattr(Chain, "enrich", refusing)
    mapped = day.mapped_ahead(harvest)
    assert mapped.manifest().record_count == len(list(harvest)) and day.staging() == []
    assert staged_stream(RecordActivity("enrichment", entry), [mapped], tmp_storage) is None
    with pytest.raises(IngestError, match="enrichment refused this record"):
        day.computed("enrichment", [mapped])  # the step meets the error itself, in its own step


def test_a_mapping_that_fails_leaves_nothing_staged(tmp_storage, shared_fixtures):
    path, profile, overrides = ZENODO
    entry = ProviderEntry("zenodo", {"mapping": profile, "mapping_overrides": overrides})
    day = Day(tmp_storage, entry)
    harvest = day.harvest(originals(shared_fixtures, path, profile, "zenodo"))
    mapping = RecordActivity("mapping", entry)
    stream = staging_ahead(in_process(mapping, [harvest]), mapping, ahead.STAGES, tmp_storage)
    records = iter(stream.records)
    next(records), next(records)
    records.close()  # the mapping's write stopped: a failure of the storage, of the record after, of the run
    assert day.staging() == []


def test_steps_take_their_input_a_burst_at_a_time():
    pulled = []

    def source():
        for n in range(BURSTS):
            pulled.append(n)
            yield {"n": n}

    records = applied(lambda record: record if record["n"] % 3 else None, source())
    first = next(records)
    assert first == {"n": 1} and len(pulled) == BURST  # one burst read ahead, no more
    assert [first, *records] == [{"n": n} for n in range(BURSTS) if n % 3]
