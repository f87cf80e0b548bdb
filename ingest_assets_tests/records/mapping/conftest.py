"""Helpers for mapping tests: OriginalRecords built from the shared fixtures (read in place)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import fastavro
import pytest
from lxml import etree

OAI = "{http://www.openarchives.org/OAI/2.0/}"
SCHEMA = Path(__file__).resolve().parents[3] / "ingest_assets" / "schemas" / "dpla.avro.v1.MAP4_x.MAPRecord.avsc"


def _originals(path: Path, provider: str) -> Iterator[dict]:
    """One OriginalRecord per OAI ``<record>``, shaped as the OAI harvester stores them."""
    for record in etree.parse(str(path)).iter(f"{OAI}record"):
        header = record.find(f"{OAI}header")
        deleted = header.get("status") == "deleted"
        yield {
            "id": header.findtext(f"{OAI}identifier").strip(),
            "ingestDate": 1700000000,
            "provider": provider,
            "document": etree.tostring(header if deleted else record, encoding="unicode", with_tail=False),
            "mimetype": "application_xml",
            "deleted": deleted,
        }


@pytest.fixture
def originals(shared_fixtures) -> Callable[[str, str], list[dict]]:
    """``originals("oai-pmh/zenodo-listrecords-oai_dc.xml", "zenodo")`` -> list of OriginalRecord dicts."""
    return lambda relative, provider: list(_originals(shared_fixtures / relative, provider))


@pytest.fixture(scope="session")
def map_schema():
    return fastavro.parse_schema(json.loads(SCHEMA.read_text()))
