"""Dump files: download (size-limited), then parse (Turtle, N-Triples, N-Quads, TriG, RDF/XML, JSON-LD,
optionally gzip-compressed) into a normalised N-Triples spool, collecting the subjects for delete-by-subject.

Graph names inside a dump (TriG, N-Quads) are ignored: a dump only ever fills its provider's graph.
Blank nodes get fresh labels, so two files (or two harvests) never share one by accident.
"""

from __future__ import annotations

import gzip
import io
from dataclasses import dataclass
from pathlib import Path

from pyoxigraph import BlankNode, RdfFormat, parse

from ingest_assets.errors import FetchError, ParseError
from ingest_assets.http import HttpClient
from ingest_assets.linked_data import formats
from ingest_assets.linked_data.store import Term

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1 << 20


@dataclass(frozen=True)
class Download:
    url: str
    path: Path
    content_type: str | None


@dataclass(frozen=True)
class StagedDump:
    url: str
    spool: Path
    rdf_format: RdfFormat
    triples: int


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


def download(http: HttpClient, url: str, target: Path, *, provider: str, max_bytes: int) -> Download:
    """Stream ``url`` to ``target``; refuses more than ``max_bytes``."""
    size = 0
    try:
        with http.stream(url) as (response, _), target.open("wb") as out:
            for chunk in response.iter_content(CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise FetchError(f"dump larger than {max_bytes} bytes", url=url, provider=provider, retryable=False)
                out.write(chunk)
            content_type = response.headers.get("Content-Type")
    except FetchError as exc:
        exc.provider = exc.provider or provider
        raise
    return Download(url, target, content_type)


def stage(
    dump: Download,
    spool: Path,
    *,
    provider: str,
    hint: RdfFormat | None,
    max_bytes: int,
    subjects: set[Term] | None = None,
) -> StagedDump:
    """Parse ``dump`` into an N-Triples ``spool``; adds its IRI subjects to ``subjects`` when given."""
    with dump.path.open("rb") as raw:
        compressed = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        inner = gzip.GzipFile(fileobj=raw) if compressed else raw
        reader = io.BufferedReader(_Limited(inner, max_bytes, dump.url, provider), CHUNK)
        content_type = None if compressed else dump.content_type  # a gzip type says nothing of the syntax
        rdf_format = formats.detect(dump.url, content_type, reader.peek(512)[:512], hint)
        triples = 0
        try:
            with spool.open("w", encoding="utf-8") as out:
                for quad in parse(input=reader, format=rdf_format, base_iri=dump.url, rename_blank_nodes=True):
                    if subjects is not None and not isinstance(quad.subject, BlankNode):
                        subjects.add(quad.subject)
                    out.write(f"{quad.subject} {quad.predicate} {quad.object} .\n")
                    triples += 1
        except (SyntaxError, gzip.BadGzipFile, EOFError, UnicodeDecodeError) as exc:
            line = getattr(exc, "lineno", None)
            raise ParseError(
                f"dump is not valid {rdf_format.name}: {exc}",
                provider=provider,
                file=dump.url,
                record=f"line {line}" if line else f"after {triples} triples",
            ) from exc
    return StagedDump(dump.url, spool, rdf_format, triples)
