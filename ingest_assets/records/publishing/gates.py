"""The gates a candidate index passes before and after it is promoted (DPLA's Contract 3 / Gates B and C).

Before the flip, each must pass:

    index_queryable  the candidate answers a count and a search; the index it replaces is still behind the alias
    index_count      the copy was exact, the candidate holds exactly what its build accounted for, it falls
                     short of the index it replaces by no more than the tolerance (default 2%; growth is what
                     harvests are for), and the index refused no more than that share of the documents written
    index_health     the cluster is green or yellow and every shard of the candidate it can place is assigned
    index_fields     a sample of known ids (some already there, some written now) returns the required MAP fields

After the flip, ``index_canary``: records this build added or changed are found through the alias as the
candidate holds them, and records it removed are gone. A failed canary rolls the flip back.
Each result carries its evidence and, when it fails, a remediation hint for the operator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from ingest_assets.core.errors import IngestError
from ingest_assets.records.indexing import SearchIndex
from ingest_assets.records.publishing.candidates import Candidate

QUERYABLE, COUNT, HEALTH, FIELDS, CANARY = "index_queryable", "index_count", "index_health", "index_fields", "index_canary"
GATES = (QUERYABLE, COUNT, HEALTH, FIELDS)
DESCRIPTIONS = {
    QUERYABLE: "The candidate index answers a count and a search, and the index it replaces is still live",
    COUNT: "The candidate holds what its build accounted for and no more than the tolerance fewer documents than "
           "the index it replaces",
    HEALTH: "The cluster is green or yellow and every shard of the candidate that it can place is assigned",
    FIELDS: "A sample of known ids returns the required MAP fields from the candidate",
    CANARY: "After the flip, records this publish added, changed or removed read back through the alias as the "
            "candidate holds them (else the flip is rolled back)",
}
# every document must carry these (dotted paths into the IndexRecord document), as the portal reads them
REQUIRED_FIELDS = ("id", "@id", "ingestDate", "provider", "dataProvider", "isShownAt", "sourceResource.title")


@dataclass(frozen=True)
class GateResult:
    gate: str
    passed: bool
    description: str
    evidence: dict[str, Any] = field(default_factory=dict)
    remediation: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def judge(index: SearchIndex, candidate: Candidate, tolerance: float) -> list[GateResult]:
    """The four pre-flip gates of ``candidate``."""
    return [_guarded(QUERYABLE, lambda: queryable(index, candidate)),
            _guarded(COUNT, lambda: count(candidate, tolerance)),
            _guarded(HEALTH, lambda: health(index, candidate)),
            _guarded(FIELDS, lambda: fields(index, candidate))]


def _guarded(gate: str, judge_one: Callable[[], GateResult]) -> GateResult:
    """A gate that cannot even be judged (the cluster does not answer) fails, saying why."""
    try:
        return judge_one()
    except IngestError as exc:
        return GateResult(gate, False, f"{gate} could not be judged: {exc}", {"error": str(exc)},
                          "the search backend did not answer the gate's requests: check that it is up and reachable, "
                          "then publish again; the current index keeps serving")


def queryable(index: SearchIndex, candidate: Candidate) -> GateResult:
    documents = index.count(candidate.name)
    index.search(candidate.name, "*", 1)
    behind = index.aliased(candidate.alias)
    evidence = {"candidate": candidate.name, "documents": documents, "replaces": candidate.base,
                "alias_points_at": behind}
    if candidate.base and candidate.base not in behind:
        return GateResult(QUERYABLE, False, f"{candidate.base}, which {candidate.name} would replace, is no longer "
                          f"behind {candidate.alias!r}", evidence,
                          "another publish or a rollback moved the alias meanwhile: see `ingest-assets index status`, "
                          "then publish this day again")
    return GateResult(QUERYABLE, True, f"{candidate.name} answers ({documents} documents); it replaces "
                      f"{candidate.base or 'nothing (the provider has no index yet)'}", evidence)


def count(candidate: Candidate, tolerance: float) -> GateResult:
    f = candidate.figures
    before, after, expected = f.get("base_count"), f["count"], f["expected"]
    attempted = f["written"] + f["failed"]
    evidence = {"replaces": candidate.base, "before": before, "after": after, "expected": expected,
                "copied": f.get("copied"), "refused_documents": f["failed"], "tolerance": tolerance}
    change = (after - before) / before if before else None
    evidence["change"] = round(change, 6) if change is not None else None
    problems, hints = [], []
    if "copied" in f and f["copied"] != before:
        problems.append(f"the copy of {candidate.base} took {f.get('copied')} of its {before} documents")
        hints.append("the cluster lost writes while copying: check its logs and disk space, then publish again")
    if after != expected:
        problems.append(f"it holds {after} documents where its build accounted for {expected}")
        hints.append("documents went missing while indexing (silent write failures): check the cluster's logs, then "
                     "publish again")
    if change is not None and -change > tolerance:
        problems.append(f"it holds {after} documents, {before} before ({change:+.1%}, more than the {tolerance:.0%} "
                        "allowed)")
        hints.append(f"compare the day with the previous one (`ingest-assets report {candidate.provider}`); if the "
                     f"drop is real, set `quality: {{index_count_tolerance: ...}}` for {candidate.provider} in the "
                     "registry and publish again")
    if attempted and f["failed"] / attempted > tolerance:
        problems.append(f"the index refused {f['failed']} of {attempted} documents")
        hints.append("see the refused documents in the search_index metadata (`failures`) and fix their mapping")
    if problems:
        return GateResult(COUNT, False, f"{candidate.name}: " + "; ".join(problems), evidence, "; ".join(hints))
    if before is None:
        text = f"{candidate.name} holds {after} documents (the provider's first index: no count to compare with)"
    else:
        text = f"{candidate.name} holds {after} documents, {before} before" + (f" ({change:+.1%})" if before else "")
    return GateResult(COUNT, True, text, evidence)


def health(index: SearchIndex, candidate: Candidate) -> GateResult:
    verdict = index.health(candidate.name)
    evidence = {"status": verdict.status, **verdict.evidence}
    if not verdict.ok:
        return GateResult(HEALTH, False, f"{candidate.name} cannot serve: status {verdict.status}", evidence,
                          "shards of the candidate are unassigned or the cluster is red: see `GET "
                          f"_cluster/health/{candidate.name}` and `GET _cluster/allocation/explain`, fix the cluster, "
                          "then publish again (the current index keeps serving)")
    return GateResult(HEALTH, True, f"{candidate.name} is {verdict.status}", evidence)


def fields(index: SearchIndex, candidate: Candidate) -> GateResult:
    found = index.documents(candidate.name, candidate.samples)
    missing = [i for i in candidate.samples if i not in found]
    lacking = {i: gaps for i, doc in found.items() if (gaps := [p for p in REQUIRED_FIELDS if not field_value(doc, p)])}
    evidence = {"checked": candidate.samples, "required": list(REQUIRED_FIELDS), "not_found": missing,
                "missing_fields": lacking}
    if missing or lacking:
        parts = [f"{len(missing)} known id(s) not found"] if missing else []
        parts += [f"{len(lacking)} document(s) lack required fields"] if lacking else []
        return GateResult(FIELDS, False, f"{candidate.name}: " + ", ".join(parts), evidence,
                          "documents were lost or written without the fields the portal needs: check the index mapping "
                          "and the indexing output of the day (`ingest-assets lineage <provider> <id>`)")
    return GateResult(FIELDS, True, f"{len(found)} sampled documents of {candidate.name} carry every required field",
                      evidence)


def canary(index: SearchIndex, candidate: Candidate) -> GateResult:
    """Post-flip: what the alias answers for the canary records."""
    answered = index.documents(candidate.alias, list(candidate.canary))
    wrong = {}
    for record_id, expected in candidate.canary.items():
        if expected is None and record_id in answered:
            wrong[record_id] = "still found after its deletion"
        elif expected is not None and record_id not in answered:
            wrong[record_id] = "not found"
        elif expected is not None and answered[record_id] != expected:
            wrong[record_id] = "found in an older version"
    evidence = {"checked": list(candidate.canary), "wrong": wrong}
    if wrong:
        return GateResult(CANARY, False, f"through {candidate.alias!r}, {len(wrong)} of {len(candidate.canary)} canary "
                          f"record(s) do not read as {candidate.name} holds them", evidence,
                          "the alias does not serve the new index as it should (a stale alias cache, a replica lagging, "
                          "or another flip): the flip was rolled back; see `ingest-assets index status`")
    return GateResult(CANARY, True, f"{len(candidate.canary)} canary record(s) read back through {candidate.alias!r}",
                      evidence)


def field_value(document: dict, path: str) -> Any:
    """The value at a dotted ``path`` of an index document (None when it has none)."""
    value: Any = document
    for name in path.split("."):
        value = value.get(name) if isinstance(value, dict) else None
    return value
