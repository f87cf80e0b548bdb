"""Gate D of DPLA's contracts (``03-integration-contracts-and-gates.md``): Wikimedia eligibility is read only from a
published, validated index. A provider's day passes when

* it is published: its index went live and passed the post-flip canary (and was not rolled back since);
* the provider has an index behind the alias now (one, of its own);
* the provider mapping resolves: the institutions table loads, and the provider name of the day's documents is a
  hub of it with a Wikidata id (a name it does not know, or knows without an id, decides nothing);
* the API contract holds: a sample of the day's records, read through the alias, carries the fields a portal needs.

A refusal says what failed, with its evidence and what to do; nothing is written then.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date

from ingest_assets.core.errors import ConfigError, IngestError
from ingest_assets.records.enrichment.institutions import Institutions
from ingest_assets.records.indexing import SearchIndex
from ingest_assets.records.publishing.candidates import live_index
from ingest_assets.records.publishing.gates import CANARY, REQUIRED_FIELDS, GateResult, field_value
from ingest_assets.records.publishing.journal import Journal
from ingest_assets.records.publishing.review import PUBLISHED, Ledger

GATE = "wikimedia_refresh"
SAMPLE = 10  # records of the day read through the alias (Gate B's "10 known DPLA IDs")


class GateRefused(IngestError):
    """Gate D refused a provider's day: ``result`` holds why, the evidence and the remediation."""

    def __init__(self, result: GateResult, provider: str):
        super().__init__(f"Gate D refused: {result.description}", provider=provider, hint=result.remediation)
        self.result = result


def judge_day(provider: str, day: date, ledger: Ledger, journal: Journal, index: SearchIndex, alias: str,
              table: Callable[[], Institutions], sample: Sequence[str]) -> GateResult:
    """Gate D for ``provider``'s ``day``; ``sample``: ids of the day's documents (the first :data:`SAMPLE` are read)."""
    evidence: dict = {"provider": provider, "day": day.isoformat(), "alias": alias}
    where = f"{provider} {day.isoformat()}"
    state = ledger.get(provider, day)
    if state is None or state.state != PUBLISHED:
        evidence["state"] = state.state if state else None
        return _refused(f"{where} is not published ({state.describe() if state else 'it was never indexed'})",
                        evidence, f"publish the day first (`ingest-assets status {provider}`, `ingest-assets review "
                                  f"approve {provider} --date {day.isoformat()}`), then export it")
    evidence.update(published_in=state.index_name,
                    published_at=state.published_at.isoformat() if state.published_at else None)
    canary = next((r for r in journal.gate_results(state.index_name or "") if r.gate == CANARY), None)
    if canary is None or not canary.passed:
        return _refused(f"the post-flip check of {state.index_name} is not recorded as passed", evidence,
                        "see `ingest-assets index status`; publish the day again")
    try:
        live = live_index(index, alias, provider)
        institutions = table()
    except ConfigError as exc:
        return _refused(exc.message, evidence, exc.hint or "fix the configuration named, then export again")
    if live is None:
        return _refused(f"nothing of {provider} is behind {alias!r} (removed or rolled back)", evidence,
                        f"bring its index back (`ingest-assets index rollback --provider {provider}`) or publish again")
    evidence.update(live_index=live, institutions=institutions.source)
    return _documents_resolve(where, index, alias, institutions, list(sample[:SAMPLE]), evidence)


def _documents_resolve(where: str, index: SearchIndex, alias: str, institutions: Institutions, sample: list[str],
                       evidence: dict) -> GateResult:
    """The sampled documents carry the required fields and a provider name the table resolves."""
    found = index.documents(alias, sample)
    lacking = {i: gaps for i, doc in found.items() if (gaps := [p for p in REQUIRED_FIELDS if not field_value(doc, p)])}
    names = sorted({str(field_value(doc, "provider.name")) for doc in found.values()})
    unresolved = [name for name in names if not institutions.hubs.get(name)]
    evidence.update(sampled=sample, found=len(found), missing_fields=lacking, provider_names=names)
    if lacking:
        return _refused(f"{len(lacking)} of {where}'s documents read through {alias!r} lack required fields", evidence,
                        "the published documents are not what the API contract says: check the index mapping and the "
                        "day's indexing output (`ingest-assets lineage`)")
    if unresolved:
        return _refused(f"provider name {unresolved[0]!r} is not a hub with a Wikidata id in the institutions table "
                        f"({institutions.source})", evidence,
                        "add the hub (with its Wikidata id; upload: false keeps its records off Commons) to the table, "
                        "or point INGEST_WIKI_INSTITUTIONS at the hub's own table")
    return GateResult(GATE, True, f"{where} is published in {evidence['live_index']}, validated after its flip; "
                      f"{len(found)} of {len(sample)} sampled records read back with every required field",
                      evidence)


def _refused(description: str, evidence: dict, remediation: str) -> GateResult:
    return GateResult(GATE, False, description, evidence, remediation)
