"""Parity with what DPLA published: every ingestion3-era document of ``../shared/fixtures/dpla-published/`` whose
hub has a shipped profile, mapped, enriched and indexed, then compared field by field with DPLA's document
(``support/dpla_published.py``; ``python -m ingest_assets_tests.support.dpla_published`` prints the figures)."""

from __future__ import annotations

from pathlib import Path

import yaml

from ingest_assets_tests.support.dpla_published import compare, documents

LISTED = yaml.safe_load((Path(__file__).parent / "dpla_published_differences.yaml").read_text(encoding="utf-8"))


def test_what_we_publish_is_what_dpla_published(shared_fixtures):
    assert len(documents()) == 12  # the ingestion3-era files; ingestion1-era/ is secondary evidence, not read
    comparison = compare()
    print("\n" + comparison.table())
    assert sum(comparison.documents.values()) >= 4  # cdl and mdl at least
    found = {(d.document, d.field) for d in comparison.differences}
    listed = {(document, name) for document, fields in LISTED.items() for name in fields}
    unexplained = sorted(found - listed)
    assert not unexplained, "differences without a reason in dpla_published_differences.yaml: " + "; ".join(
        f"{d.document} {d.field}: ours {d.ours!r}, DPLA {d.dpla!r}" for d in comparison.differences
        if (d.document, d.field) in set(unexplained))
    compared_documents = {path.name for path in documents()} - set(comparison.skipped)
    stale = sorted(item for item in listed - found if item[0] in compared_documents)
    assert not stale, f"listed differences that no longer occur (remove them): {stale}"
    assert comparison.share() >= 0.90
