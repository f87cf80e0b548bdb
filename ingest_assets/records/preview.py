"""Preview a profile before publishing (``ingest-assets map``): map files or a provider's newest harvest output,
write nothing, and show per record the MAP JSON-LD and the mapping messages, then how many records filled
each MAP field. With an enrichment chain (``--enrich``), each record's enriched index document is shown beside
the mapped one with the steps that changed each field, and the enrichment report follows the coverage.

Inputs: an XML file (an OAI-PMH page, or a document holding the profile's root elements), a JSON file (one
record, a list, or a page whose records the profile's ``records`` path finds), a JSON lines file, or
``harvest:<provider>`` (the newest complete harvest output of that provider in the storage). Given the
provider's registry ``harvest:`` block, a file is read as that harvest reads it (a file harvest's own reader, its
``record_xpath`` and ``id_xpath`` or ``id_path``; an API harvest's ``id_path``), so a preview mints the DPLA ids
the harvest will; without one, a record's local id is the profile's ``id`` rule, else its place in the file.
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

import jmespath
from jmespath.exceptions import JMESPathError
from lxml import etree

from ingest_assets.core import json_input
from ingest_assets.core.errors import ConfigError, IngestError, ParseError, ValidationError
from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import ENRICHMENT_STEPS, ApiHarvest, FileHarvest, HarvestBlock
from ingest_assets.records.harvest import HARVESTERS, HarvestStats, RequestLog
from ingest_assets.records.harvest.api import record_id
from ingest_assets.records.harvest.base import HarvestContext
from ingest_assets.records.enrichment import Chain, EnrichmentReport
from ingest_assets.records.indexing import index_record
from ingest_assets.records.mapping.mapper import UNPARSEABLE, Mapper, MappingResult, Message, deployment_catalog
from ingest_assets.records.mapping.profiles import Profile, paths_for
from ingest_assets.records.mapping.report import Coverage, MappingReport
from ingest_assets.records.mapping.rules import compile_rule, label
from ingest_assets.storage import avro, layout
from ingest_assets.storage.backends import Storage
from ingest_assets.core.xml_input import UnsafeXML, parse_xml, standalone

HARVEST = "harvest:"
_STEP_ORDER = {step: n for n, step in enumerate(ENRICHMENT_STEPS)}
OAI = "{http://www.openarchives.org/OAI/2.0/}"


def read_inputs(inputs: Iterable[str], profile: Profile, provider: str, storage: Storage | None = None,
                harvest: HarvestBlock | None = None) -> Iterator[dict | Message]:
    """OriginalRecord dicts from each input, in order; a record that cannot be read is a ``Message`` instead.
    ``harvest``: the provider's registry block, whose harvest the local ids are read as (see the module)."""
    local_id = _id_reader(profile, provider, harvest)
    for given in inputs:
        if given.startswith(HARVEST):
            yield from newest_harvest(storage, given[len(HARVEST):])
            continue
        path = Path(given)
        if isinstance(harvest, FileHarvest):
            yield from _as_harvested(path, provider, harvest)
            continue
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise ParseError(f"cannot read the input: {exc.strerror}", provider=provider, file=given,
                             hint="check the path") from None
        kind = "xml" if content.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"<" else "json"
        ids = local_id if kind == profile.source else _no_id  # the mapper reports the mismatch per record
        if kind == "xml":
            yield from _xml_originals(path, content, profile, provider, ids)
        else:
            yield from _json_originals(path, content, profile, provider, ids)


def newest_harvest(storage: Storage, provider: str) -> Iterator[dict]:
    """The records of the newest complete harvest output of ``provider``."""
    outputs = layout.complete_outputs(storage, provider, "harvest")
    if not outputs:
        raise ConfigError(f"no complete harvest output in {storage.uri(provider)}", provider=provider)
    newest = max(outputs, key=lambda output: output.started)
    yield from avro.read_folder(storage, newest.folder)


def _original(provider: str, local_id: str, document: str, mimetype: str, deleted: bool = False) -> dict:
    return {"id": local_id, "ingestDate": int(time.time()), "provider": provider, "document": document,
            "mimetype": mimetype, "deleted": deleted}


def _no_id(_root: Any) -> str:
    return ""


def _as_harvested(path: Path, provider: str, block: FileHarvest) -> Iterator[dict | Message]:
    """The records of the file at ``path`` as the provider's file harvest reads them (with its own reader: the
    same records, local ids and ``ingestDate`` rules); the records it would skip, as messages."""
    try:
        path.stat()
    except OSError as exc:
        raise ParseError(f"cannot read the input: {exc.strerror}", provider=provider, file=str(path),
                         hint="check the path") from None
    stats = HarvestStats(provider)
    # a file harvest fetches nothing and keeps no checkpoint (one pass, nothing to resume)
    context = HarvestContext(datetime.now(timezone.utc), None, HttpClient(), None, stats, RequestLog())
    yield from HARVESTERS["file"](provider, block.model_copy(update={"path": str(path), "urls": []}), context).records()
    for error in stats.errors:
        yield Message(UNPARSEABLE, "document", error.record or path.name, "", error.message)


def _id_reader(profile: Profile, provider: str, harvest: HarvestBlock | None = None):
    """``element or JSON record -> local id``: an API harvest's ``id_path``, else the profile's ``id`` rule ('' without
    either)."""
    if isinstance(harvest, ApiHarvest):
        def harvested_id(record: Any) -> str:
            try:
                return record_id(record, harvest.id_path, provider)
            except ValidationError:  # the harvest would skip it; the preview shows where it is in the file
                return ""

        return harvested_id
    if profile.id_rule is None:
        return _no_id
    paths = paths_for(profile)
    rule = compile_rule(profile.id_rule, field="id", paths=paths, source=profile.rule_language,
                        vocabularies=deployment_catalog().vocabularies)

    def local_id(record: Any) -> str:
        root = _metadata(record, profile) if profile.source == "xml" else record
        return next((label(value) for value in rule(paths.select(root, record))), "")

    return local_id


def _metadata(record: etree._Element, profile: Profile) -> etree._Element:
    """The element of ``record`` the profile's rules are relative to (the record itself when none is found)."""
    if record.tag in profile.root_tags or not profile.root_tags:
        return record
    return next(record.iter(*profile.root_tags), record)


def _xml_originals(path: Path, content: bytes, profile: Profile, provider: str, local_id) -> Iterator[dict | Message]:
    try:
        root, _ = parse_xml(content, profile.namespaces)
    except (etree.XMLSyntaxError, UnsafeXML) as exc:
        raise ParseError(f"not readable XML: {exc}", provider=provider, file=str(path)) from exc
    records = list(root.iter(f"{OAI}record"))
    if records:  # an OAI-PMH page: the records as the OAI harvester stores them
        for record in records:
            header = record.find(f"{OAI}header")
            deleted = header is not None and header.get("status") == "deleted"
            identifier = (header.findtext(f"{OAI}identifier") or "").strip() if header is not None else ""
            yield _serialised(path, provider, identifier, header if deleted else record, deleted)
        return
    for n, element in enumerate(_records(root, profile), 1):
        yield _serialised(path, provider, local_id(element) or f"{path.name}#{n}", element, False)


def _records(root: etree._Element, profile: Profile) -> list[etree._Element]:
    """The records of a file that is no OAI-PMH page: the whole document when it holds one metadata element (its
    header, if any, stays with it), else each metadata element's ancestor just below the document element."""
    if root.tag in profile.root_tags or not profile.root_tags:
        return [root]
    found = list(root.iter(*profile.root_tags))
    if len(found) < 2:
        return [root]  # none: the mapper says what it misses
    return [next((a for a in element.iterancestors() if a.getparent() is root), element) for element in found]


def _serialised(path: Path, provider: str, local_id: str, element, deleted: bool) -> dict | Message:
    try:
        return _original(provider, local_id, standalone(element), "application_xml", deleted)
    except UnsafeXML as exc:
        return Message(UNPARSEABLE, "document", local_id or path.name, "", str(exc))


def _json_originals(path: Path, content: bytes, profile: Profile, provider: str, local_id) -> Iterator[dict | Message]:
    try:
        documents = [json_input.loads(content)]
        lines = False
    except ValueError as exc:  # JSON lines (one record a line), when the first line is JSON on its own
        documents, lines = content.decode("utf-8", "replace").splitlines(), True
        first = next((line for line in documents if line.strip()), "")
        try:
            json_input.loads(first)
        except ValueError:
            raise ParseError(f"not well-formed JSON: {exc}", provider=provider, file=str(path)) from None
    for n, document in enumerate(documents, 1):
        if lines:
            if not document.strip():
                continue
            try:
                document = json_input.loads(document)
            except ValueError as exc:
                yield Message(UNPARSEABLE, "document", f"{path.name}:{n}", document[:200], f"not well-formed JSON: {exc}")
                continue
        for m, record in enumerate(_json_records(document, profile), 1):
            fallback = f"{path.name}:{n}" if lines else f"{path.name}#{m}"
            yield _original(provider, local_id(record) or fallback, json.dumps(record, ensure_ascii=False),
                            "application_json")


def _json_records(document: Any, profile: Profile) -> list:
    if profile.records:
        try:
            found = jmespath.search(profile.records, document)
        except JMESPathError:  # a function given a value of the wrong type in this document
            found = None
        if isinstance(found, list):
            return found
    return document if isinstance(document, list) else [document]


def preview(mapper: Mapper, items: Iterable[dict | Message], out: TextIO, *, output: str = "table",
            limit: int | None = None, enrich: Chain | None = None) -> MappingReport:
    """Map (and with ``enrich``, enrich) every item, print the first ``limit`` records (all without a limit) then
    the coverage and the enrichment report; returns the mapping report."""
    report, coverage, shown, count = MappingReport(), Coverage(), [], 0
    enrichment = EnrichmentReport() if enrich is not None else None
    for item in items:
        result = MappingResult(None, [item]) if isinstance(item, Message) else mapper.map(item)
        report.add(result)
        enriched, changes = None, set()
        if result.record is not None:
            coverage.add(result.record)
            if enrich is not None:
                enriched, changes = enrich.enrich(result.record)
                enrichment.add(result.record["id"], changes)
        if limit is None or count < limit:
            count += 1
            entry = _entry(item, result, enriched, changes if enrich is not None else None)
            if output == "json":
                shown.append(entry)
            else:
                _print_entry(entry, out)
    summary = {**report.summary(), "coverage": coverage.as_dict()}
    if enrichment is not None:
        summary["enrichment"] = enrichment.summary()
    if output == "json":
        json.dump({"records": shown, "summary": summary}, out, ensure_ascii=False, indent=2)
        out.write("\n")
    else:
        _print_coverage(summary, out)
        if enrichment is not None:
            _print_enrichment(summary["enrichment"], out)
    return report


def _document(record: dict, messages: list[dict]) -> dict | None:
    try:
        return json.loads(index_record(record)["document"])
    except IngestError as exc:
        messages.append({"kind": "invalid_value", "field": "", "value": "", "reason": exc.message})
        return None


def _entry(item: dict | Message, result: MappingResult, enriched: dict | None = None,
           changes: set[tuple[str, str]] | None = None) -> dict:
    messages = [{"kind": m.kind, "field": m.field, "value": m.value[:200], "reason": m.reason} for m in result.messages]
    jsonld = _document(result.record, messages) if result.record is not None else None
    local_id = item.record if isinstance(item, Message) else item.get("id")
    entry = {"local_id": local_id, "id": result.record["id"] if result.record else None, "jsonld": jsonld,
             "messages": messages}
    if changes is not None:
        entry["enriched"] = _document(enriched, messages) if enriched is not None else None
        steps: dict[str, list[str]] = {}
        for step, name in sorted(changes, key=lambda change: (change[1], _STEP_ORDER[change[0]])):
            steps.setdefault(name, []).append(step)
        entry["enrichment"] = steps
    return entry


def _print_entry(entry: dict, out: TextIO) -> None:
    status = "mapped" if entry["jsonld"] is not None else "NOT MAPPED"
    out.write(f"== {entry['local_id']} ({status}{', ' + entry['id'] if entry['id'] else ''})\n")
    if entry.get("enriched") is not None:
        _print_beside(entry["jsonld"], entry["enriched"], out)
        for name, steps in entry["enrichment"].items():
            out.write(f"   ~ {name}: {', '.join(steps)}\n")
    elif entry["jsonld"] is not None:
        for line in json.dumps(entry["jsonld"], ensure_ascii=False, indent=2).splitlines():
            out.write(f"   {line}\n")
    for m in entry["messages"]:
        value = f" {m['value']!r}" if m["value"] else ""
        out.write(f"   ! {m['kind']} {m['field'] or '-'}{value}: {m['reason']}\n")


COLUMN = 64  # characters of each side of the mapped | enriched view


def _print_beside(mapped: dict, enriched: dict, out: TextIO) -> None:
    """The mapped and the enriched index document side by side, aligned line by line; ``|`` marks a changed
    line, ``<`` one only the mapped document has, ``>`` one only the enriched has (long lines are cut)."""
    left = json.dumps(mapped, ensure_ascii=False, indent=2).splitlines()
    right = json.dumps(enriched, ensure_ascii=False, indent=2).splitlines()
    out.write(f"   {'mapped':<{COLUMN}}   enriched\n")
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, left, right, autojunk=False).get_opcodes():
        pairs = zip(left[i1:i2], right[j1:j2]) if tag in ("equal", "replace") else ()
        for a, b in pairs:
            out.write(f"   {_cut(a):<{COLUMN}} {'|' if tag == 'replace' else ' '} {_cut(b)}\n")
        if tag == "replace" or tag == "delete":
            for a in left[i1 + (j2 - j1 if tag == "replace" else 0):i2]:
                out.write(f"   {_cut(a):<{COLUMN}} <\n")
        if tag == "replace" or tag == "insert":
            for b in right[j1 + (i2 - i1 if tag == "replace" else 0):j2]:
                out.write(f"   {'':<{COLUMN}} > {_cut(b)}\n")


def _cut(line: str) -> str:
    return line if len(line) <= COLUMN else line[: COLUMN - 1] + "…"


def _print_enrichment(summary: dict, out: TextIO) -> None:
    out.write(f"\nenrichment: {summary['improved']} of {summary['records']} records changed\n"
              f"\n{'field':<21} {'changed':>7}  steps\n")
    steps: dict[str, list[str]] = {}
    for key, n in summary["steps"].items():
        step, name = key.split(" ", 1)
        steps.setdefault(name, []).append(f"{step} {n}")
    for name, counts in summary["fields"].items():
        out.write(f"{name:<21} {counts['changed']:>7}  {', '.join(steps.get(name, ()))}\n")


def _print_coverage(summary: dict, out: TextIO) -> None:
    mapped = summary["mapped"]
    out.write(f"\n{summary['attempted']} records: {mapped} mapped, {summary['failed']} failed, "
              f"{summary['deleted']} deleted\n\nfield                 filled\n")
    for name, count in summary["coverage"].items():
        share = f"{100 * count / mapped:5.1f}%" if mapped else "    -"
        out.write(f"{name:<21} {count:>6}  {share}\n")
