"""The records in one file's (or archive member's) bytes, as a file harvest's block says to read them.

    reader = RecordReader(provider, config, ingest_ts, stats)
    for record in reader.records(stream, where="s3://b/k.zip!a.xml", name="a.xml"):   # OriginalRecord dicts
        ...
    reader.deleted_ids(stream, where, name)          # a delete list's ids, as deleted records

``format`` decides how: ``xml`` streams the elements at ``record_xpath`` (each cleared once read, so memory
holds one record), ``xml-lines`` reads one XML document per line (xmll's output), ``jsonl`` one JSON record per
line (a line's leading ``[`` or ``,`` and trailing ``,`` or ``]``, as ingestion3's harvesters strip them, are
ignored), ``json`` the items of the array at ``records_path``, streamed (ijson). A record is skipped when
``filter_xpath`` is false for it, dropped or kept as a deletion by ``status``; its id comes from ``id_xpath`` /
``id_path`` or the file or member name, through ``id_pattern``.

A bad record (no id, an id the pattern does not match, past ``max_record_bytes``, an undeclared entity) is
counted in the run's stats with the file and record it was and the others are read; a file that is not
well-formed past some record raises a :class:`ParseError` naming it (the caller decides whether that ends the
harvest: a file does, an archive member does not).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import BinaryIO, Protocol

import ijson
from lxml import etree

from ingest_assets.core import json_input
from ingest_assets.core.errors import IngestError, ParseError, ValidationError
from ingest_assets.core.registry import FileHarvest, record_path_steps
from ingest_assets.core.xml_input import (
    NAMESPACES,
    UnresolvedEntity,
    UnsafeXML,
    iter_elements,
    parse_document,
    refuse_declared_entities,
    safe_parser,
    standalone,
)
from ingest_assets.records.harvest.api_pages import lookup, record_id
from ingest_assets.records.harvest.original import original_record

JSON_PUNCTUATION = re.compile(r"^\s*\[?\s*,?\s*|\s*,?\s*\]?\s*$")  # a JSON array written one item a line


class RecordPath:
    """A ``record_xpath`` (or a delete list's ``id_element``): an element is a record when its path from the root
    matches one of the alternatives and no ancestor is a record (an element inside a record is part of it)."""

    def __init__(self, value: str, namespaces: dict[str, str]):
        self.alternatives = record_path_steps(value, namespaces)
        lasts = {(namespace, local) for *_, (_axis, namespace, local) in self.alternatives}
        # the tags iterparse stops at (None: every element, when one alternative ends in `*`)
        self.tags = None if any(local == "*" for _ns, local in lasts) else tuple(sorted(
            f"{{{namespace}}}{local}" if namespace else local for namespace, local in lasts))
        # every alternative one `//name` step: a stopped element matches; a record above it is one with those tags
        self.simple = self.tags is not None and all(len(a) == 1 and a[0][0] == "descendant" for a in self.alternatives)
        self.whole = self.alternatives == ((("child", "*", "*"),),)  # `/*`: the document is the record

    def matches(self, element: etree._Element) -> bool:
        if self.simple:
            return next(element.iterancestors(*self.tags), None) is None
        tags = [ancestor.tag for ancestor in element.iterancestors()][::-1] + [element.tag]
        return self._path(tags) and not any(self._path(tags[:depth]) for depth in range(1, len(tags)))

    def select(self, root: etree._Element) -> Iterator[etree._Element]:
        """The records of a parsed document, in document order."""
        candidates = root.iter(*self.tags) if self.tags is not None else root.iter(etree.Element)
        return (element for element in candidates if self.matches(element))

    def _path(self, tags: list) -> bool:
        return any(_steps_match(steps, tags, 0, 0) for steps in self.alternatives)


def _steps_match(steps: tuple, tags: list, step: int, depth: int) -> bool:
    if step == len(steps):
        return depth == len(tags)
    axis, namespace, local = steps[step]
    if axis == "child":
        return depth < len(tags) and _tag_is(tags[depth], namespace, local) and _steps_match(steps, tags, step + 1, depth + 1)
    return any(_tag_is(tags[d], namespace, local) and _steps_match(steps, tags, step + 1, d + 1)
               for d in range(depth, len(tags)))


def _tag_is(tag, namespace: str | None, local: str) -> bool:
    if not isinstance(tag, str):  # a comment or processing instruction
        return False
    if local == "*":
        return True
    if namespace == "*":
        return tag == local or tag.endswith("}" + local)
    return tag == (f"{{{namespace}}}{local}" if namespace else local)


def _text(raw: bytes) -> str | None:
    """A line's text (None when it is not UTF-8: then the parsed element is serialized instead)."""
    try:
        return raw.decode("utf-8").lstrip("\ufeff").strip()
    except UnicodeDecodeError:
        return None


def _xpath_text(result) -> str:
    if isinstance(result, list):
        if not result:
            return ""
        first = result[0]
        return "".join(first.itertext()) if isinstance(first, etree._Element) else str(first)
    return str(result)


class Reported(Protocol):
    """Where a reader reports bad records and notes for the harvest log (the run's HarvestStats, a file's reader)."""

    def record_error(self, error: IngestError) -> None: ...

    def note(self, message: str) -> None: ...


class RecordReader:
    """Reads records (and delete lists) the way one block says; counts what it skipped and dropped."""

    def __init__(self, provider: str, config: FileHarvest, ingest_ts: int, stats: Reported):
        self.provider, self.config, self.ingest_ts, self.stats = provider, config, ingest_ts, stats
        self.max_record_bytes = config.limits.max_record_bytes
        self.skipped = self.dropped = 0  # filter_xpath false; status dropped
        namespaces = dict(config.namespaces)
        self.prefixes = {**NAMESPACES, **namespaces}

        def compile_(xpath: str | None) -> etree.XPath | None:
            return etree.XPath(xpath, namespaces=namespaces, smart_strings=False) if xpath else None

        self.path = RecordPath(config.record_xpath, namespaces) if config.is_xml else None
        self.filter, self.id_xpath = compile_(config.filter_xpath), compile_(config.id_xpath)
        status = config.status
        self.status_xpath = compile_(status.xpath) if status else None
        self.status_values = {value.lower() for value in status.values} if status else set()
        self.id_pattern = re.compile(config.id_pattern) if config.id_pattern else None
        self.delete_path = RecordPath(config.deletes.id_element, namespaces) if config.deletes else None
        self.parser = safe_parser()
        self.entities = True  # whether the document being read may hold entity references (a DOCTYPE)

    def records(self, stream: BinaryIO, where: str, name: str) -> Iterator[dict]:
        """The records of ``stream`` (``where``: the file, ``<file>!<member>``, in errors; ``name``: a name-id)."""
        if self.config.format == "xml":
            if self.path.whole:
                return self.xml_whole(stream, where, name)
            return self.xml_document(stream, where, name, self.path, self.xml_record)
        if self.config.format == "xml-lines":
            return self.xml_lines(stream, where, name)
        if self.config.format == "jsonl":
            return self.json_lines(stream, where, name)
        return self.json_document(stream, where, name)

    def deleted_ids(self, stream: BinaryIO, where: str, name: str) -> Iterator[dict]:
        """A delete list's ids (each ``id_element``'s text), as deleted records whose document is that element."""
        return self.xml_document(stream, where, name, self.delete_path, self.deleted_record)

    # ---- XML ----------------------------------------------------------------------------------------------

    def xml_document(self, stream: BinaryIO, where: str, name: str, path: RecordPath,
                     build: Callable[[etree._Element, str], dict | None]) -> Iterator[dict]:
        number = 0
        try:
            for element in iter_elements(stream, path.tags):
                if not path.matches(element):
                    continue
                number += 1
                if number == 1:  # entity references outlive the parse only under a document type declaration
                    self.entities = bool(element.getroottree().docinfo.doctype)
                try:
                    record = build(element, name)
                except IngestError as exc:
                    self.fail(exc, where, f"record #{number} (line {element.sourceline})")
                    record = None
                element.clear(keep_tail=True)
                parent = element.getparent()
                while parent is not None and element.getprevious() is not None:
                    del parent[0]
                if record is not None:
                    yield record
        except etree.XMLSyntaxError as exc:
            raise ParseError(f"not well-formed XML after record #{number}: {exc}", provider=self.provider,
                             file=where) from exc
        except UnsafeXML as exc:
            raise ParseError(str(exc), provider=self.provider, file=where) from exc

    def xml_whole(self, stream: BinaryIO, where: str, name: str) -> Iterator[dict]:
        """A file or member that is one record (``record_xpath: /*``): read whole, within ``max_record_bytes``, and
        parsed as harvested records are, undeclared prefixes declared (as ingestion3's reader takes them)."""
        data = stream.read(self.max_record_bytes + 1)
        if len(data) > self.max_record_bytes:
            raise ParseError(f"a one-record document past {self.max_record_bytes} bytes (harvest.limits.max_record_bytes)",
                             provider=self.provider, file=where)
        if not data.strip():
            return
        try:
            root = parse_document(data, self.parser, self.prefixes)
            refuse_declared_entities(root)
        except (etree.XMLSyntaxError, UnsafeXML) as exc:
            raise ParseError(f"not well-formed XML: {exc}", provider=self.provider, file=where) from exc
        self.entities = bool(root.getroottree().docinfo.doctype)
        try:
            record = self.xml_record(root, name)
        except IngestError as exc:
            self.fail(exc, where, "record #1")
            return
        if record is not None:
            yield record

    def xml_lines(self, stream: BinaryIO, where: str, name: str) -> Iterator[dict]:
        for line_no, raw in self.lines(stream, where):
            try:
                root = parse_document(raw, self.parser, self.prefixes)
                refuse_declared_entities(root)
            except (etree.XMLSyntaxError, UnsafeXML) as exc:
                self.fail(ParseError(f"not well-formed XML: {exc}", provider=self.provider), where, f"line {line_no}")
                continue
            self.entities = bool(root.getroottree().docinfo.doctype)
            for number, element in enumerate(self.path.select(root), 1):
                try:  # a line that is the record is kept as it came (its undeclared prefixes are the mapping's to read)
                    record = self.xml_record(element, name, _text(raw) if element is root else None)
                except IngestError as exc:
                    self.fail(exc, where, f"line {line_no} record #{number}")
                    continue
                if record is not None:
                    yield record

    def xml_record(self, element: etree._Element, name: str, document: str | None = None) -> dict | None:
        if self.filter is not None and not self.filter(element):
            self.skipped += 1
            return None
        deleted = self.status_xpath is not None and _xpath_text(self.status_xpath(element)).strip().lower() in self.status_values
        if deleted and self.config.status.action == "drop":
            self.dropped += 1
            return None
        local_id = self.clean_id(name if self.id_xpath is None else _xpath_text(self.id_xpath(element)), "id_xpath")
        if document is None:
            document = self.serialize(element)
        else:
            self.check_size(document)
        return original_record(self.provider, local_id, self.ingest_ts, document, "application/xml", deleted)

    def deleted_record(self, element: etree._Element, _name: str) -> dict:
        local_id = self.clean_id(element.text or "", "deletes.id_element")
        return original_record(self.provider, local_id, self.ingest_ts, self.serialize(element), "application/xml", True)

    def serialize(self, element: etree._Element) -> str:
        """The record as a document of its own (in-scope namespaces declared), entity references resolved when
        the document could hold any."""
        if self.entities:
            try:
                document = standalone(element)
            except UnresolvedEntity as exc:
                raise ParseError(str(exc), provider=self.provider) from exc
        else:
            document = etree.tostring(element, encoding="unicode", with_tail=False)
        self.check_size(document)
        return document

    # ---- JSON ---------------------------------------------------------------------------------------------

    def json_lines(self, stream: BinaryIO, where: str, name: str) -> Iterator[dict]:
        for line_no, raw in self.lines(stream, where):
            try:
                try:
                    text = JSON_PUNCTUATION.sub("", raw.decode("utf-8").lstrip("\ufeff"))
                except UnicodeDecodeError as exc:
                    raise ParseError(f"not UTF-8: {exc}", provider=self.provider) from None
                if not text:
                    continue
                try:
                    item = json_input.loads(text)
                except ValueError as exc:
                    raise ParseError(f"not JSON: {exc}", provider=self.provider) from exc
                record = self.json_record(item, text, name)
            except IngestError as exc:
                self.fail(exc, where, f"line {line_no}")
                continue
            if record is not None:
                yield record

    def json_document(self, stream: BinaryIO, where: str, name: str) -> Iterator[dict]:
        path = self.config.records_path
        prefix = "" if path == "." else "item" if path == "[]" else f"{path}.item"
        number = 0
        try:
            for item in ijson.items(stream, prefix, use_float=True):
                number += 1
                try:
                    record = self.json_record(item, json.dumps(item, ensure_ascii=False), name)
                except IngestError as exc:
                    self.fail(exc, where, f"record #{number}")
                    continue
                if record is not None:
                    yield record
        except ijson.JSONError as exc:
            raise ParseError(f"not well-formed JSON after record #{number}: {exc}", provider=self.provider,
                             file=where) from exc
        if number == 0:
            self.stats.note(f"{where}: no records at {path!r}")

    def json_record(self, item, text: str, name: str) -> dict | None:
        deleted = False
        if self.config.status is not None and isinstance(item, dict):
            value = lookup(item, self.config.status.path)
            deleted = isinstance(value, (str, int)) and str(value).strip().lower() in self.status_values
            if deleted and self.config.status.action == "drop":
                self.dropped += 1
                return None
        local_id = self.clean_id(name if self.config.id_path is None else record_id(item, self.config.id_path, self.provider),
                                 "id_path")
        self.check_size(text)
        return original_record(self.provider, local_id, self.ingest_ts, text, "application/json", deleted)

    # ---- shared -------------------------------------------------------------------------------------------

    def lines(self, stream: BinaryIO, where: str) -> Iterator[tuple[int, bytes]]:
        """The non-blank lines (numbered from 1); one past ``max_record_bytes`` is that line's error."""
        limit, line_no = self.max_record_bytes, 0
        while raw := stream.readline(limit + 1):
            line_no += 1
            if len(raw) > limit and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):
                    raw = stream.readline(limit + 1)
                self.fail(ParseError(f"line longer than {limit} bytes (harvest.limits.max_record_bytes)",
                                     provider=self.provider), where, f"line {line_no}")
                continue
            if raw.strip():
                yield line_no, raw

    def clean_id(self, value: str, key: str) -> str:
        local_id = value.strip()
        if local_id and self.id_pattern is not None:
            match = self.id_pattern.search(local_id)
            if match is None:
                raise ValidationError(f"id {local_id!r} does not match id_pattern {self.id_pattern.pattern!r}",
                                      provider=self.provider)
            local_id = (match.group(1) if self.id_pattern.groups else match.group(0)) or ""
        if not local_id:
            raise ValidationError(f"record has no id at {key} {getattr(self.config, key, None) or ''!r}".rstrip(),
                                  provider=self.provider)
        return local_id

    def check_size(self, document: str) -> None:
        if len(document) > self.max_record_bytes:
            raise ValidationError(f"record of {len(document)} characters (harvest.limits.max_record_bytes: "
                                  f"{self.max_record_bytes})", provider=self.provider)

    def fail(self, error: IngestError, where: str, record: str) -> None:
        error.file, error.record = where, record
        self.stats.record_error(error)
