"""Mapped records from the shared fixtures (read in place) as enrichment input."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pytest
from lxml import etree

from ingest_assets.records.mapping import mapper_for
from ingest_assets.core.registry import ProviderEntry

OAI = "{http://www.openarchives.org/OAI/2.0/}"
SCHEMA = Path(__file__).resolve().parents[3] / "ingest_assets" / "schemas" / "dpla.avro.v1.MAP4_x.MAPRecord.avsc"


@pytest.fixture
def mapped(shared_fixtures):
    """``mapped("oai-pmh/zenodo-listrecords-oai_dc.xml", provider_entry)`` -> MAPRecord dicts of that file."""

    def build(relative: str, provider: ProviderEntry) -> list[dict]:
        mapper = mapper_for(provider)
        out = []
        for record in etree.parse(str(shared_fixtures / relative)).iter(f"{OAI}record"):
            original = {
                "id": record.findtext(f"{OAI}header/{OAI}identifier").strip(),
                "ingestDate": 1700000000,
                "provider": provider.name,
                "document": etree.tostring(record, encoding="unicode", with_tail=False),
                "mimetype": "application_xml",
            }
            out.append(mapper.map(original).record)
        return out

    return build


@pytest.fixture
def maryland(mapped):
    (record,) = mapped("dpla/provider-maryland-cdm-oai_qdc-record.xml", ProviderEntry("maryland", {"mapping": "qdc"}))
    return record


@pytest.fixture
def zenodo(mapped):
    entry = ProviderEntry("zenodo", {"mapping": "oai_dc", "mapping_overrides": {"dataProvider": {"value": "Zenodo"}}})
    return mapped("oai-pmh/zenodo-listrecords-oai_dc.xml", entry)


@pytest.fixture(scope="session")
def map_schema():
    return fastavro.parse_schema(json.loads(SCHEMA.read_text()))
