"""File harvesting: an XML file (records selected by a streamed XPath), JSON lines, or a zip of either.

The source is a local ``path`` or a ``url`` (downloaded with :class:`HttpClient` to a temporary file,
within its size limit). Everything is streamed: XML through ``iterparse`` (each record is cleared once
yielded), JSON lines one line at a time, zip members straight from the archive (nothing is extracted).

Zip (or tar) members are hostile: :mod:`ingest_assets.core.archives` checks them (``harvest.limits``); a refused
member, or one that cannot be read or parsed, is reported and the others are still harvested. Files carry no
deletions and are not checkpointed (one pass, nothing to resume).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from fnmatch import fnmatch
from pathlib import Path
from typing import BinaryIO

from lxml import etree

from ingest_assets.core import archives, json_input
from ingest_assets.core.errors import ArchiveError, ConfigError, IngestError, ParseError, ValidationError, context
from ingest_assets.core.registry import FileHarvest
from ingest_assets.core.xml_input import UnresolvedEntity, UnsafeXML, iter_elements, standalone
from ingest_assets.records.harvest.api import record_id
from ingest_assets.records.harvest.base import HarvestContext, Harvester
from ingest_assets.records.harvest.original import SeenIds, original_record

MAX_LINE_BYTES = 64 * 1024 * 1024


class FileHarvester(Harvester):
    config: FileHarvest

    def __init__(self, provider: str, config: FileHarvest, context: HarvestContext):
        super().__init__(provider, config, context)
        self.id_xpath = etree.XPath(config.id_xpath, namespaces=config.namespaces) if config.id_xpath else None
        self.fetched = None

    def records(self) -> Iterator[dict]:
        seen = SeenIds()
        try:
            with self.local_file() as path:
                if self.config.format == "zip":
                    records = self.zip_records(path)
                else:
                    self.stats.pages += 1
                    records = self.stream_records(path.open("rb"), self.config.source)
                yield from (record for record in records if self.stats.admit(record, seen))
            url, status = (self.fetched.url, self.fetched.status) if self.fetched else (self.config.source, None)
            self.requests.request(1, url, None, status, None, range(self.stats.records))
        finally:
            seen.close()

    @contextmanager
    def local_file(self) -> Iterator[Path]:
        if self.config.path is not None:
            path = Path(self.config.path)
            if not path.is_file():
                raise ConfigError("harvest.path: no such file", provider=self.provider, file=str(path))
            yield path
            return
        with tempfile.TemporaryDirectory(prefix="harvest-file-") as tmp:
            path = Path(tmp) / "download"
            with context(provider=self.provider):
                self.fetched = self.http.download(self.config.url, path)
            yield path

    def stream_records(self, stream: BinaryIO, name: str) -> Iterator[dict]:
        with stream:
            if self.config.records_format == "xml":
                yield from self.xml_records(stream, name)
            else:
                yield from self.jsonl_records(stream, name)

    def xml_records(self, stream: BinaryIO, name: str) -> Iterator[dict]:
        steps = self.config.record_steps
        number = 0
        try:
            for element in iter_elements(stream, steps[-1][1]):
                tags = [ancestor.tag for ancestor in element.iterancestors()][::-1] + [element.tag]
                if not _path_matches(steps, tags):
                    continue
                number += 1
                try:
                    local_id = _xpath_text(self.id_xpath(element)).strip()
                    if not local_id:
                        raise ValidationError(f"record has no id at {self.id_xpath.path!r}", provider=self.provider)
                    try:
                        document = standalone(element)
                    except UnresolvedEntity as exc:
                        raise ParseError(str(exc), provider=self.provider) from exc
                    yield original_record(self.provider, local_id, self.ingest_ts, document, "application/xml", False)
                except IngestError as exc:
                    exc.file, exc.record = name, f"record #{number} (line {element.sourceline})"
                    self.stats.record_error(exc)
                finally:
                    element.clear(keep_tail=True)
                    parent = element.getparent()
                    while parent is not None and element.getprevious() is not None:
                        del parent[0]
        except etree.XMLSyntaxError as exc:
            raise ParseError(
                f"not well-formed XML after record #{number}: {exc}", provider=self.provider, file=name
            ) from exc
        except UnsafeXML as exc:
            raise ParseError(str(exc), provider=self.provider, file=name) from exc

    def jsonl_records(self, stream: BinaryIO, name: str) -> Iterator[dict]:
        line_no = 0
        while raw := stream.readline(MAX_LINE_BYTES + 1):
            line_no += 1
            try:
                if len(raw) > MAX_LINE_BYTES:
                    while raw and not raw.endswith(b"\n"):
                        raw = stream.readline(MAX_LINE_BYTES + 1)
                    raise ParseError(f"line longer than {MAX_LINE_BYTES} bytes", provider=self.provider)
                text = raw.decode("utf-8").lstrip("\ufeff").strip()
                if not text:
                    continue
                try:
                    item = json_input.loads(text)
                except ValueError as exc:
                    raise ParseError(f"not JSON: {exc}", provider=self.provider) from exc
                local_id = record_id(item, self.config.id_path, self.provider)
                record = original_record(self.provider, local_id, self.ingest_ts, text, "application/json", False)
            except UnicodeDecodeError as exc:
                self.stats.record_error(ParseError(f"not UTF-8: {exc}", provider=self.provider, file=name, record=f"line {line_no}"))
                continue
            except IngestError as exc:
                exc.file, exc.record = name, f"line {line_no}"
                self.stats.record_error(exc)
                continue
            yield record

    def zip_records(self, path: Path) -> Iterator[dict]:
        for member in archives.scan(path, archives.Limits(**self.config.limits.model_dump()),
                                    label=self.config.source, provider=self.provider):
            if isinstance(member, ArchiveError):
                self.stats.record_error(member)
                continue
            if not fnmatch(member.name, self.config.members):
                continue
            self.stats.pages += 1
            name = f"{self.config.source}!{member.name}"
            try:
                yield from self.stream_records(member.stream, name)
            except ParseError as exc:  # an ArchiveError too: the member's bytes were corrupt
                self.stats.record_error(exc)


def _path_matches(steps: tuple[tuple[str, str], ...], tags: list[str]) -> bool:
    """Whether the root-to-element tag path matches the parsed record_xpath steps."""

    def match(step: int, depth: int) -> bool:
        if step == len(steps):
            return depth == len(tags)
        axis, name = steps[step]
        if axis == "child":
            return depth < len(tags) and tags[depth] == name and match(step + 1, depth + 1)
        return any(tags[d] == name and match(step + 1, d + 1) for d in range(depth, len(tags)))

    return match(0, 0)


def _xpath_text(result) -> str:
    if isinstance(result, list):
        if not result:
            return ""
        first = result[0]
        return "".join(first.itertext()) if isinstance(first, etree._Element) else str(first)
    return str(result)
