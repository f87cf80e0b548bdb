"""The enrichment activity: the provider's chain (registry ``enrichment:``) over a mapping output, written as an
output whose ``_LOGS/enrichment-report.csv`` counts changes per step and field and whose ``_MANIFEST`` says how
many records enrichment improved."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timezone

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.engines.steps import RecordActivity, in_process
from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
from ingest_assets.storage.avro import MAP_RECORD, read_folder

STARTED = datetime(2026, 3, 1, 6, tzinfo=timezone.utc)


def _write(storage, stream, activity, started):
    return write_activity(storage, stream, provider="maryland", activity=activity, day=started.date(),
                          started=started, schema=MAP_RECORD, partition="2026-03-01|maryland")


def test_enrichment_output_and_its_report(tmp_storage, maryland, zenodo):
    records = [maryland, *({**r, "provider": "maryland"} for r in zenodo)]
    mapped = _write(tmp_storage, RecordStream(records, started=STARTED), "mapping", STARTED)
    entry = ProviderEntry("maryland", {"mapping": "qdc", "enrichment": {"skip": ["strip_ending_period"]}})
    stream = in_process(RecordActivity("enrichment", entry), [RecordSource(tmp_storage, mapped.output)])
    later = STARTED.replace(minute=5)
    result = _write(tmp_storage, RecordStream(stream.records, inputs=stream.inputs, logs=stream.logs,
                                              summary=stream.summary, started=later), "enrichment", later)

    enriched = list(read_folder(tmp_storage, result.output.folder))
    assert len(enriched) == 8
    assert enriched[0]["sourceResource"]["publisher"][0]["name"] == "Alfred A. Knopf, Inc."  # skipped step
    assert enriched[0]["dataProviderUri"] == "http://dp.la/api/contributor/maryland-state-archives"  # in the Avro
    assert result.summary["improved"] == 8 and result.summary["records"] == 8
    manifest = tmp_storage.read_bytes(f"{result.output.folder}/_MANIFEST").decode()
    assert "Summary improved: 8" in manifest

    report = tmp_storage.read_bytes(f"{result.output.folder}/_LOGS/enrichment-report.csv").decode()
    rows = list(csv.DictReader(io.StringIO(report)))
    counts = {(r["step"], r["field"]): int(r["changed"]) for r in rows if r["step"] != "(sample)"}
    assert counts["(any)", "(records)"] == 8
    assert counts["data_provider_uri", "dataProvider"] == 8
    assert counts["type", "type"] == 8  # maryland's Image -> image, Zenodo's eu-repo types dropped
    assert counts["strip_html", "description"] >= 1
    assert not any(step == "strip_ending_period" for step, _ in counts)
