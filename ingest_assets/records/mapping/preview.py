"""Preview a profile before publishing (``ingest-assets map``): map files or a provider's newest harvest output,
write nothing, and show per record the MAP JSON-LD and the mapping messages, then how many records filled
each MAP field.

Inputs: an XML file (an OAI-PMH page, or a document holding the profile's root elements), a JSON file (one
record, a list, or a page whose records the profile's ``records`` path finds), a JSON lines file, or
``harvest:<provider>`` (the newest complete harvest output of that provider in the storage).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

import jmespath
from jmespath.exceptions import JMESPathError
from lxml import etree

from ingest_assets.core import json_input
from ingest_assets.core.errors import ConfigError, IngestError, ParseError
from ingest_assets.records.indexing import index_record
from ingest_assets.records.mapping.fields import FIELDS
from ingest_assets.records.mapping.mapper import UNPARSEABLE, Mapper, MappingResult, Message
from ingest_assets.records.mapping.profiles import Profile, paths_for
from ingest_assets.records.mapping.report import MappingReport
from ingest_assets.records.mapping.rules import compile_rule
from ingest_assets.storage import avro, layout
from ingest_assets.storage.backends import Storage
from ingest_assets.core.xml_input import UnsafeXML, parse_xml, standalone

HARVEST = "harvest:"
OAI = "{http://www.openarchives.org/OAI/2.0/}"


def read_inputs(inputs: Iterable[str], profile: Profile, provider: str,
                storage: Storage | None = None) -> Iterator[dict | Message]:
    """OriginalRecord dicts from each input, in order; a record that cannot be read is a ``Message`` instead."""
    local_id = _id_reader(profile, provider)
    for given in inputs:
        if given.startswith(HARVEST):
            yield from newest_harvest(storage, given[len(HARVEST):])
            continue
        path = Path(given)
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


def _id_reader(profile: Profile, provider: str):
    """``element or JSON record -> local id`` from the profile's ``id`` rule ('' without one)."""
    if profile.id_rule is None:
        return _no_id
    paths = paths_for(profile)
    rule = compile_rule(profile.id_rule, provider=provider, field="id", paths=paths)
    return lambda root: next(iter(rule(paths.select(root))), "")


def _xml_originals(path: Path, content: bytes, profile: Profile, provider: str, local_id) -> Iterator[dict | Message]:
    try:
        root, _ = parse_xml(content)
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
    if root.tag in profile.root_tags or not profile.root_tags:
        elements = [root]
    else:
        elements = list(root.iter(*profile.root_tags)) or [root]  # none: the mapper says what it misses
    for n, element in enumerate(elements, 1):
        yield _serialised(path, provider, local_id(element) or f"{path.name}#{n}", element, False)


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


class Coverage:
    """How many mapped records filled each MAP field."""

    def __init__(self) -> None:
        self.records = 0
        self.filled: Counter[str] = Counter()

    def add(self, record: dict) -> None:
        self.records += 1
        for name, (section, _) in FIELDS.items():
            if (record if section == "top" else record["sourceResource"]).get(name):
                self.filled[name] += 1

    def as_dict(self) -> dict[str, int]:
        return {name: self.filled[name] for name in FIELDS}


def preview(mapper: Mapper, items: Iterable[dict | Message], out: TextIO, *, output: str = "table",
            limit: int | None = None) -> MappingReport:
    """Map every item, print the first ``limit`` records (all without a limit) then the coverage; returns the report."""
    report, coverage, shown, count = MappingReport(), Coverage(), [], 0
    for item in items:
        result = MappingResult(None, [item]) if isinstance(item, Message) else mapper.map(item)
        report.add(result)
        if result.record is not None:
            coverage.add(result.record)
        if limit is None or count < limit:
            count += 1
            entry = _entry(item, result)
            if output == "json":
                shown.append(entry)
            else:
                _print_entry(entry, out)
    summary = {**report.summary(), "coverage": coverage.as_dict()}
    if output == "json":
        json.dump({"records": shown, "summary": summary}, out, ensure_ascii=False, indent=2)
        out.write("\n")
    else:
        _print_coverage(summary, out)
    return report


def _entry(item: dict | Message, result: MappingResult) -> dict:
    jsonld = None
    messages = [{"kind": m.kind, "field": m.field, "value": m.value[:200], "reason": m.reason} for m in result.messages]
    if result.record is not None:
        try:
            jsonld = json.loads(index_record(result.record)["document"])
        except IngestError as exc:
            messages.append({"kind": "invalid_value", "field": "", "value": "", "reason": exc.message})
    local_id = item.record if isinstance(item, Message) else item.get("id")
    return {"local_id": local_id, "id": result.record["id"] if result.record else None, "jsonld": jsonld,
            "messages": messages}


def _print_entry(entry: dict, out: TextIO) -> None:
    status = "mapped" if entry["jsonld"] is not None else "NOT MAPPED"
    out.write(f"== {entry['local_id']} ({status}{', ' + entry['id'] if entry['id'] else ''})\n")
    if entry["jsonld"] is not None:
        for line in json.dumps(entry["jsonld"], ensure_ascii=False, indent=2).splitlines():
            out.write(f"   {line}\n")
    for m in entry["messages"]:
        value = f" {m['value']!r}" if m["value"] else ""
        out.write(f"   ! {m['kind']} {m['field'] or '-'}{value}: {m['reason']}\n")


def _print_coverage(summary: dict, out: TextIO) -> None:
    mapped = summary["mapped"]
    out.write(f"\n{summary['attempted']} records: {mapped} mapped, {summary['failed']} failed, "
              f"{summary['deleted']} deleted\n\nfield                 filled\n")
    for name, count in summary["coverage"].items():
        share = f"{100 * count / mapped:5.1f}%" if mapped else "    -"
        out.write(f"{name:<21} {count:>6}  {share}\n")
