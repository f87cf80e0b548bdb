"""A record's lineage: index document -> enriched -> mapped -> original -> the harvest request that fetched it.
A record a full harvest no longer held goes index deletion -> that harvest (absent) -> the harvest that last held it.

The record (a local id or its DPLA id) is looked for in the provider's outputs of the last activity first
(indexing, newest output first, then enrichment, mapping, harvest), then each step back follows the
output's ``_MANIFEST`` inputs to the first one holding the record. Part files are streamed and the search
stops at the first hit. The original's page is the harvest request log entry (``_LOGS/``) whose output
positions hold the record's position (see :mod:`ingest_assets.records.harvest.requests`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from ingest_assets.core.errors import NotFoundError
from ingest_assets.lineage import Lineage, Step
from ingest_assets.records.harvest.requests import REQUEST_LOG, page_of
from ingest_assets.records.mapping.mapper import mint_id
from ingest_assets.storage import layout
from ingest_assets.storage.avro import part_keys, read_part
from ingest_assets.storage.backends import Storage
from ingest_assets.storage.manifest import Manifest

Matcher = Callable[[str], Callable[[dict], bool]]  # activity -> does this record of its output match?
STEP_NAMES = {"indexing": "index document", "enrichment": "enriched record", "mapping": "mapped record",
              "harvest": "original record"}


@dataclass
class Hit:
    output: layout.ActivityOutput
    part: str
    position: int  # 0-based, over the output's parts in order
    record: dict


def record_lineage(storage: Storage, provider: str, record_id: str, day: date | None = None,
                   mint: Callable[[str], str] | None = None) -> Lineage:
    """The lineage of ``record_id`` (local or DPLA id) of ``provider``, from its newest output (of ``day``);
    ``mint`` makes a local id's DPLA id (default: prefixed with the provider's name)."""
    mint = mint or (lambda local_id: mint_id(provider, local_id))
    dpla_ids = {record_id, mint(record_id)}

    def matches(activity: str) -> Callable[[dict], bool]:
        if activity == "harvest":
            return lambda record: record["id"] == record_id or mint(record["id"]) == record_id
        return lambda record: record["id"] in dpla_ids

    hit = _newest_hit(storage, provider, day, matches)
    if hit is None:
        where = f" of {day.isoformat()}" if day else ""
        raise NotFoundError(f"no output{where} holds this record (as a local or DPLA id)", provider=provider,
                            record=record_id)
    steps = [_step(storage, hit)]
    while hit.output.activity != "harvest":
        inputs = Manifest.from_bytes(storage.read_bytes(hit.output.manifest)).inputs
        found = next((h for key in inputs if (h := _find(storage, layout.parse_output(key), matches)) is not None), None)
        if found is None and hit.output.activity == "indexing" and hit.record.get("deleted"):
            found = _absence(storage, layout.parse_output(inputs[-1]), matches, steps)
        if found is None:
            raise NotFoundError(f"the record is in {storage.uri(hit.output.folder)} but in none of its inputs {inputs}",
                                provider=provider, record=record_id)
        hit = found
        steps.append(_step(storage, hit))
    steps.append(_request(storage, hit))
    local_id = hit.record["id"]
    return Lineage(f"record {local_id} of {provider} (DPLA id {mint(local_id)})", steps)


def _absence(storage: Storage, harvest: layout.ActivityOutput, matches: Matcher, steps: list[Step]) -> Hit | None:
    """An index deletion of a record its full harvest no longer held: the harvest it was absent from, then the
    newest earlier harvest that held it."""
    earlier = [o for o in layout.complete_outputs(storage, harvest.provider, "harvest") if o.started < harvest.started]
    for output in reversed(earlier):
        found = _find(storage, output, matches)
        if found is not None:
            steps.append(Step("absent from a full harvest", storage.uri(harvest.folder), {
                "note": "the full harvest no longer held the record, so it was deleted from the index",
                "last held by": storage.uri(output.folder)}))
            return found
    return None


def _newest_hit(storage: Storage, provider: str, day: date | None, matches: Matcher) -> Hit | None:
    for activity in reversed(layout.ACTIVITIES):
        for output in reversed(layout.complete_outputs(storage, provider, activity, day)):
            hit = _find(storage, output, matches)
            if hit is not None:
                return hit
    return None


def _find(storage: Storage, output: layout.ActivityOutput, matches: Matcher) -> Hit | None:
    """The first record of ``output`` that ``matches(activity)`` accepts (parts streamed, stopping there)."""
    accept, position = matches(output.activity), 0
    for key in part_keys(storage, output.folder):
        for record in read_part(storage, key):
            if accept(record):
                return Hit(output, key.rsplit("/", 1)[1], position, record)
            position += 1
    return None


def _step(storage: Storage, hit: Hit) -> Step:
    manifest = Manifest.from_bytes(storage.read_bytes(hit.output.manifest))
    facts = {
        "id": hit.record["id"],
        "part": hit.part,
        "position": hit.position,
        "deleted": hit.record.get("deleted", False),
        "software version": manifest.software_version,
        "manifest": {"activity": manifest.activity, "partition": manifest.partition, "schema": manifest.schema,
                     "record count": manifest.record_count, "start time": manifest.start_time.isoformat(),
                     "inputs": manifest.inputs, **manifest.extra},
    }
    return Step(STEP_NAMES[hit.output.activity], storage.uri(hit.output.folder), facts)


def _request(storage: Storage, hit: Hit) -> Step:
    key = f"{hit.output.folder}/{hit.output.log(REQUEST_LOG)}"
    if not storage.exists(key):
        return Step("harvest request", "unknown", {"reason": f"{hit.output.folder} has no {REQUEST_LOG} (written "
                                                            "before request logs, or a snapshot)"})
    with storage.open_read(key) as lines:
        entry = page_of(lines, hit.position)
    if entry is None:
        return Step("harvest request", "unknown", {"reason": f"no entry of {REQUEST_LOG} holds position {hit.position}"})
    return Step("harvest request", entry.get("url") or "checkpoint spool of an earlier run", entry)
