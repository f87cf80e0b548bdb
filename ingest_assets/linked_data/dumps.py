"""Dump files: download (size-limited), then parse (Turtle, N-Triples, N-Quads, TriG, RDF/XML, JSON-LD,
optionally gzip-compressed) into a normalised N-Triples spool, collecting the subjects for delete-by-subject.

A dump packed as a zip or tar (.tar.gz/.tgz/.tar.bz2/.tar.xz) is read with :mod:`ingest_assets.core.archives` (its
guards: traversal, links, ratio, member count and size): each member is copied to a file of its own in turn
and parsed by its extension (screened like any RDF/XML dump). A dump or member in a syntax with no parser
(``.hdt``, ``.xlsx``...) is refused with a :class:`ParseError` naming it and the supported formats.

Graph names inside a dump (TriG, N-Quads) are ignored: a dump only ever fills its provider's graph.
Blank nodes get fresh labels, so two files (or two harvests) never share one by accident.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree
from pyoxigraph import BlankNode, RdfFormat, parse

from ingest_assets.core import archives
from ingest_assets.core.digests import hash_stream
from ingest_assets.core.errors import ParseError, context
from ingest_assets.core.http import HttpClient
from ingest_assets.linked_data import formats
from ingest_assets.linked_data.dump_state import DumpState
from ingest_assets.linked_data.triplestore import Term
from ingest_assets.core.xml_input import HARDENED

CHUNK = 1 << 20
# RDF/XML prolog screening: ontology editors declare entities as namespace abbreviations
# (<!ENTITY xsd "http://www.w3.org/2001/XMLSchema#">); anything beyond that can expand without bound.
MAX_PROLOG_BYTES = 256 * 1024
MAX_ENTITIES = 256
MAX_ENTITY_CHARS = 2048
MAX_RDFXML_DEPTH = 256  # element nesting (libxml2's own limit); a deeply nested dump takes pyoxigraph quadratic time
_PARAMETER_ENTITY = re.compile(rb"<!ENTITY\s+%")
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
MAX_ARCHIVE_MEMBERS = 1000
ARCHIVE_TYPES = {"application/zip", "application/x-zip-compressed", "application/x-tar", "application/x-gtar"}
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")  # "dump.hdt", not "v1.2" or "2015.11.05"
SUPPORTED = ", ".join([*formats.EXTENSIONS, "(each optionally .gz)", *ARCHIVE_SUFFIXES])


@dataclass(frozen=True)
class Download:
    url: str
    path: Path
    content_type: str | None
    size: int = 0
    sha256: str = ""
    state: DumpState = DumpState()  # the server's validators and the sha256 (see dump_state)
    not_modified: bool = False  # a conditional request answered 304: nothing was sent


@dataclass(frozen=True)
class StagedDump:
    url: str
    spool: Path
    rdf_format: RdfFormat
    triples: int
    size: int = 0  # bytes downloaded (an archive member's own), and their sha256 (the import's lineage)
    sha256: str = ""


class _Limited(io.RawIOBase):
    """A reader that fails once more than ``limit`` bytes came through (decompression bombs)."""

    def __init__(self, inner, limit: int, url: str, provider: str):
        self.inner, self.limit, self.url, self.provider, self.seen = inner, limit, url, provider, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.inner.read(len(buffer))
        self.seen += len(data)
        if self.seen > self.limit:
            raise ParseError(f"dump expands beyond {self.limit} bytes", provider=self.provider, file=self.url)
        buffer[: len(data)] = data
        return len(data)


def download(http: HttpClient, url: str, target: Path, *, provider: str, max_bytes: int,
             headers: dict[str, str] | None = None) -> Download:
    """Stream ``url`` to ``target`` (hashed with sha256 on the way); refuses more than ``max_bytes``. With
    conditional ``headers``, a ``304`` answer is a Download marked ``not_modified`` (and an empty file)."""
    with context(provider=provider):
        got = http.download(url, target, max_bytes=max_bytes, hashes=("sha256",), headers=headers)
    sha256 = got.digests["sha256"]
    not_modified = got.status == 304
    return Download(url, target, got.headers.get("Content-Type"), got.size, sha256,
                    DumpState.of(got.headers, None if not_modified else sha256), not_modified)


def screen_rdfxml(stream, *, provider: str, url: str) -> None:
    """Refuse an RDF/XML dump whose DTD could expand without bound, or that nests elements deeper than
    ``MAX_RDFXML_DEPTH``: one streaming pass in flat memory, before pyoxigraph (which expands and recurses) sees it.

    Accepted: internal entities with plain text values (namespace abbreviations). Refused, with a ParseError:
    an external DTD or entity, parameter entities, entities that refer to other entities or hold markup,
    more than ``MAX_ENTITIES`` or longer than ``MAX_ENTITY_CHARS``, a prolog over ``MAX_PROLOG_BYTES``.
    Nothing is expanded: entity references stay references while the rest of the document is scanned.
    A document whose root element is not closed when the bytes end (truncated) is a ParseError too.
    """

    def refuse(reason: str) -> ParseError:
        return ParseError(f"RDF/XML dump refused: {reason}", provider=provider, file=url)

    parser = etree.XMLPullParser(events=("start", "end"), **HARDENED)
    events = _read_prolog(stream, parser, refuse)
    if events is None:
        return  # no root element, or not well-formed: pyoxigraph reports the syntax error with a line number
    _check_dtd(events[0][1], refuse)
    if _scan_body(stream, parser, events, refuse):
        _check_complete(parser, provider=provider, url=url)


def _read_prolog(stream, parser: etree.XMLPullParser, refuse) -> list | None:
    """Feed ``stream`` until the root element starts; its first events (None: no root, or not well-formed)."""
    prolog = b""
    while True:
        chunk = stream.read(16 * 1024)
        if not chunk:
            return None
        prolog += chunk
        if _PARAMETER_ENTITY.search(prolog):
            raise refuse("it declares parameter entities")
        try:
            parser.feed(chunk)
            events = list(parser.read_events())
        except etree.XMLSyntaxError as exc:
            if _too_deep(exc):
                raise refuse(f"elements nest deeper than {MAX_RDFXML_DEPTH} ({exc})") from exc
            if b"<!ENTITY" in prolog:  # a DTD we cannot judge is not handed to a parser that expands it
                raise refuse(f"its DTD is not well-formed ({exc})") from exc
            return None
        if events:
            return events
        if len(prolog) > MAX_PROLOG_BYTES:
            raise refuse(f"no root element within the first {MAX_PROLOG_BYTES} bytes")


def _check_dtd(root, refuse) -> None:
    """No external DTD; internal entities only as a few short plain-text abbreviations."""
    docinfo = root.getroottree().docinfo
    if docinfo.system_url or docinfo.public_id:
        raise refuse("it names an external DTD")
    dtd = docinfo.internalDTD
    entities = list(dtd.iterentities()) if dtd is not None else []
    if len(entities) > MAX_ENTITIES:
        raise refuse(f"it declares {len(entities)} entities (at most {MAX_ENTITIES})")
    for entity in entities:
        if entity.system_url:
            raise refuse(f"entity {entity.name!r} is external ({entity.system_url})")
        content = entity.content or ""
        if len(content) > MAX_ENTITY_CHARS or any(c in content for c in "&%<"):
            raise refuse(f"entity {entity.name!r} is not a plain text abbreviation")


def _scan_body(stream, parser: etree.XMLPullParser, events: list, refuse) -> bool:
    """The rest of the document in flat memory, refusing nesting deeper than ``MAX_RDFXML_DEPTH``; False when it is
    not well-formed (pyoxigraph reports that with a line number), True at the end of its bytes."""
    depth = 0
    while True:
        for event, element in events:
            if event == "start":
                depth += 1
                if depth > MAX_RDFXML_DEPTH:
                    raise refuse(f"elements nest deeper than {MAX_RDFXML_DEPTH} (line {element.sourceline})")
            else:
                depth -= 1
                element.clear(keep_tail=False)  # flat memory: what was scanned is dropped
                while element.getprevious() is not None:
                    del element.getparent()[0]
        chunk = stream.read(64 * 1024)
        if not chunk:
            return True
        try:
            parser.feed(chunk)
            events = list(parser.read_events())
        except etree.XMLSyntaxError as exc:
            if _too_deep(exc):
                raise refuse(f"elements nest deeper than {MAX_RDFXML_DEPTH} ({exc})") from exc
            return False


def _check_complete(parser: etree.XMLPullParser, *, provider: str, url: str) -> None:
    """At the end of the bytes the root element must be closed: pyoxigraph would take a document cut short (a
    transfer that ended early) as the triples before the cut."""
    try:
        parser.close()
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"RDF/XML dump ends before its document does (truncated?): {exc}", provider=provider,
                         file=url) from exc


def _too_deep(exc: etree.XMLSyntaxError) -> bool:
    """libxml2 (without huge_tree) stops at a nesting depth of 256 itself: the same limit as ours."""
    return "depth" in str(exc).lower()


def _path(url: str) -> str:
    return urlsplit(url).path.lower()


def is_archive(url: str, content_type: str | None) -> bool:
    """By the URL's extension, or a zip or tar media type."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return _path(url).endswith(ARCHIVE_SUFFIXES) or media in ARCHIVE_TYPES


def unsupported(name: str, *, provider: str, url: str, member: str | None = None) -> ParseError:
    what = f"archive member {member!r}" if member else "dump"
    return ParseError(f"{what} {name!r} is in a format with no parser here (supported: {SUPPORTED})",
                      provider=provider, file=url, record=member)


def stage_all(
    dump: Download,
    spool: Path,
    *,
    provider: str,
    hint: RdfFormat | None,
    max_bytes: int,
    subjects: set[Term] | None = None,
) -> Iterator[StagedDump]:
    """Stage ``dump``, or each member of it when it is an archive (``spool`` is the spools' name prefix)."""
    if not is_archive(dump.url, dump.content_type):
        yield stage(dump, spool.with_suffix(".nt"), provider=provider, hint=hint, max_bytes=max_bytes,
                    subjects=subjects)
        return
    limits = archives.Limits(max_members=MAX_ARCHIVE_MEMBERS, max_member_bytes=max_bytes, max_total_bytes=max_bytes)
    for number, member in enumerate(archives.members(dump.path, limits, label=dump.url, provider=provider)):
        rdf_format = formats.by_extension(member.name)
        if rdf_format is None:
            raise unsupported(member.name, provider=provider, url=dump.url, member=member.name)
        copy = spool.with_name(f"{spool.name}-{number}.member")
        with copy.open("wb") as out:  # streamed: pyoxigraph and the RDF/XML screen each need their own pass
            digest = hash_stream(member.stream, ("sha256",), sink=out)
        part = Download(f"{dump.url}!{member.name}", copy, None, member.size, digest.hexdigests()["sha256"])
        yield stage(part, spool.with_name(f"{spool.name}-{number}.nt"), provider=provider, hint=None,
                    max_bytes=max_bytes, subjects=subjects, rdf_format=rdf_format)
        copy.unlink()


def stage(
    dump: Download,
    spool: Path,
    *,
    provider: str,
    hint: RdfFormat | None,
    max_bytes: int,
    subjects: set[Term] | None = None,
    rdf_format: RdfFormat | None = None,
) -> StagedDump:
    """Parse ``dump`` into an N-Triples ``spool``; adds its IRI subjects to ``subjects`` when given.

    The syntax is ``rdf_format`` when given, else detected (:func:`formats.detect`); a URL whose extension
    names no RDF syntax, served with no RDF media type, is refused.
    """
    with archives.open_decompressed(dump.path, label=dump.url, provider=provider) as (inner, compressed):
        reader = io.BufferedReader(_Limited(inner, max_bytes, dump.url, provider), CHUNK)
        content_type = None if compressed else dump.content_type  # a gzip type says nothing of the syntax
        if rdf_format is None:
            name = formats.strip_gzip_suffix(_path(dump.url)).rsplit("/", 1)[-1]
            if (_EXTENSION.search(name) and formats.by_extension(dump.url) is None
                    and formats.by_content_type(content_type) is None):
                raise unsupported(name, provider=provider, url=dump.url)
            rdf_format = formats.detect(dump.url, content_type, reader.peek(512)[:512], hint)
        if rdf_format == RdfFormat.RDF_XML:
            with archives.open_decompressed(dump.path, label=dump.url, provider=provider) as (screened, _):
                screen_rdfxml(_Limited(screened, max_bytes, dump.url, provider), provider=provider, url=dump.url)
        triples = 0
        try:
            with spool.open("w", encoding="utf-8") as out:
                for quad in parse(input=reader, format=rdf_format, base_iri=dump.url, rename_blank_nodes=True):
                    if subjects is not None and not isinstance(quad.subject, BlankNode):
                        subjects.add(quad.subject)
                    out.write(f"{quad.subject} {quad.predicate} {quad.object} .\n")
                    triples += 1
        except (SyntaxError, UnicodeDecodeError) as exc:
            line = getattr(exc, "lineno", None)
            raise ParseError(
                f"dump is not valid {rdf_format.name}: {exc}",
                provider=provider,
                file=dump.url,
                record=f"line {line}" if line else f"after {triples} triples",
            ) from exc
    return StagedDump(dump.url, spool, rdf_format, triples, dump.size, dump.sha256)
