"""Ingestion 1 (legacy MAP 3.1) documents become MAP3_1 IndexRecords: the real Kentucky document ingestion3's
JsonRetcon mapper re-maps, as an Elasticsearch hit and as JSON lines with bad lines beside good ones."""

import io
import json

import fastavro
import pytest

from ingest_assets.core.errors import ParseError, ValidationError
from ingest_assets.records.indexing.legacy import LEGACY_INDEX_RECORD, read_legacy_documents
from ingest_assets.storage.avro import load_schema

KENTUCKY = "dpla/dpla-legacy-map-es-doc-kentucky-retcon.json"


@pytest.fixture
def kentucky(shared_fixtures) -> bytes:
    return (shared_fixtures / KENTUCKY).read_bytes()


def test_the_kentucky_hit_is_one_index_record_of_the_map3_1_schema(kentucky):
    [record] = read_legacy_documents(io.BytesIO(kentucky), file=KENTUCKY)
    source = json.loads(kentucky)["_source"]
    assert record["id"] == "7781509fd5609a093a5c58dcf5017d4d" == source["id"]
    assert json.loads(record["document"]) == source  # the MAP 3.1 document as it is indexed, nothing dropped
    assert json.loads(record["document"])["sourceResource"]["title"].startswith("Image 1 of Paducah sun")
    schema = fastavro.parse_schema(load_schema(LEGACY_INDEX_RECORD))
    written = io.BytesIO()
    fastavro.writer(written, schema, [record])
    written.seek(0)
    assert list(fastavro.reader(written)) == [record]


def test_json_lines_keep_the_good_documents_and_name_the_bad_lines(kentucky):
    hit = json.loads(kentucky)
    other = {**hit["_source"], "id": "0" * 32, "@id": "http://dp.la/api/items/" + "0" * 32}
    lines = [json.dumps(hit), "", json.dumps(other), json.dumps({**other, "id": "kentucky--1"}), "{not json",
             json.dumps({k: v for k, v in other.items() if k != "sourceResource"})]
    errors = []
    records = list(read_legacy_documents(io.BytesIO("\n".join(lines).encode()), file="export.jsonl", errors=errors))
    assert [r["id"] for r in records] == ["7781509fd5609a093a5c58dcf5017d4d", "0" * 32]
    assert [(type(e), e.file, e.record) for e in errors] == [
        (ValidationError, "export.jsonl", "line 4"), (ParseError, "export.jsonl", "line 5"),
        (ValidationError, "export.jsonl", "0" * 32)]
    assert "32 hex digits" in str(errors[0]) and "no sourceResource" in str(errors[2])
    with pytest.raises(ValidationError, match="32 hex digits"):  # without a place for errors, the first is raised
        list(read_legacy_documents(io.BytesIO("\n".join(lines[2:4]).encode()), file="export.jsonl"))
