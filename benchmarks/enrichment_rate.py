"""Enrichment throughput on one core, next to the mapping rate of the same records.

    uv run python benchmarks/enrichment_rate.py --records 20000

Real records: the original records of DPLA's published documents (``dpla-published/``, every hub with a shipped
profile) and the oai_dc / QDC / MODS fixtures the pipeline benchmark uses, each replicated to ``--records``
records with unique ids. Mapping is ``Mapper.map``; enrichment is what the enrichment activity does per record
(``Chain.enrich`` and ``EnrichmentReport.add`` with its samples), on the mapped records with each replica's
titles and descriptions made unique so that no cache serves a replica from an earlier one. One process, so
one core. ingestion3 enriches 160-580 records/s on Spark ``local[4]`` (40-145 per core); the last column is
our rate over 145 records/s per core. Needs ../shared/fixtures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest_assets.core.registry import ProviderEntry  # noqa: E402
from ingest_assets.records.enrichment import EnrichmentReport, chain_for  # noqa: E402
from ingest_assets.records.mapping import mapper_for  # noqa: E402
from ingest_assets.records.mapping.profiles import PROFILES  # noqa: E402
from ingest_assets_tests.support.dpla_published import documents, profile_of  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
OAI = "{http://www.openarchives.org/OAI/2.0/}"
INGESTION3_PER_CORE = 580 / 4  # the fast end of ingestion3's 160-580 records/s on local[4]
XML_FIXTURES = {
    "oai_dc": ["oai-pmh/zenodo-listrecords-oai_dc.xml", "oai-pmh/cyberleninka-listrecords-cyrillic-dcterms.xml"],
    "qdc": ["dpla/provider-maryland-cdm-oai_qdc-record.xml"],
    "mods": ["oai-pmh/harvard-librarycloud-listrecords-mods-resumption.xml",
             "dpla/provider-montana-repox-getrecord-mods.xml"],
}
OVERRIDES = {"dataProvider": {"default": "Fixture Data Provider"},
             "rights": {"default": "http://rightsstatements.org/vocab/InC/1.0/"}}


def originals() -> dict[str, tuple[ProviderEntry, list[dict]]]:
    """Per profile: its provider entry and its base original records."""
    out: dict[str, tuple[ProviderEntry, list[dict]]] = {}
    for path in documents():
        profile = profile_of(path)
        if profile in PROFILES:
            doc = json.loads(path.read_text(encoding="utf-8"))
            entry = ProviderEntry(profile.replace("-", ""), {"mapping": profile, "label": doc["provider"]["name"]})
            mimetype = "application_json" if PROFILES[profile].source == "json" else "application_xml"
            record = {"id": path.stem, "ingestDate": 1700000000, "provider": entry.name, "mimetype": mimetype,
                      "document": doc["originalRecord"]["stringValue"], "deleted": False}
            out.setdefault(profile, (entry, []))[1].append(record)
    for profile, names in XML_FIXTURES.items():
        entry = ProviderEntry(profile.replace("_", ""), {"mapping": profile, "mapping_overrides": OVERRIDES})
        records = []
        for name in names:
            for element in etree.parse(str(FIXTURES / name)).iter(f"{OAI}record"):
                if element.find(f"{OAI}metadata") is not None:
                    records.append({"id": element.findtext(f"{OAI}header/{OAI}identifier").strip(),
                                    "ingestDate": 1700000000, "provider": entry.name, "mimetype": "application_xml",
                                    "document": etree.tostring(element, encoding="unicode"), "deleted": False})
        out[profile] = (entry, records)
    return out


def unique(record: dict, n: int) -> dict:
    source = dict(record["sourceResource"])
    for name in ("title", "description"):
        if source.get(name):
            source[name] = [f"{value} ({n})" for value in source[name]]
    return {**record, "id": f"{record['id']}-{n}", "sourceResource": source}


def measure(entry: ProviderEntry, base: list[dict], count: int) -> tuple[float, float, int]:
    mapper, chain = mapper_for(entry), chain_for(entry)
    batch = [{**base[n % len(base)], "id": f"{base[n % len(base)]['id']}#{n}"} for n in range(count)]
    start = time.perf_counter()
    mapped = [result.record for result in map(mapper.map, batch) if result.record is not None]
    map_seconds = time.perf_counter() - start
    inputs = [unique(record, n) for n, record in enumerate(mapped)]
    report = EnrichmentReport()
    start = time.perf_counter()
    for record in inputs:
        enriched, changes = chain.enrich(record)
        report.add(record["id"], changes, (record, enriched))
    enrich_seconds = time.perf_counter() - start
    return len(batch) / map_seconds, len(inputs) / enrich_seconds, report.improved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000, help="records per profile")
    args = parser.parse_args()
    print(f"{'profile':<10} {'records':>8} {'map rec/s':>10} {'enrich rec/s':>13} {'improved':>9} "
          f"{'x ingestion3/core':>18}")
    for profile, (entry, base) in originals().items():
        map_rate, enrich_rate, improved = measure(entry, base, args.records)
        print(f"{profile:<10} {args.records:>8} {map_rate:>10,.0f} {enrich_rate:>13,.0f} {improved:>9} "
              f"{enrich_rate / INGESTION3_PER_CORE:>17.1f}x")


if __name__ == "__main__":
    main()
