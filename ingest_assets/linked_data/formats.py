"""Which RDF syntax a VoID file or dump is in: by file extension, then Content-Type, then a hint, then sniffing."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from pyoxigraph import RdfFormat

EXTENSIONS = {
    ".ttl": RdfFormat.TURTLE,
    ".nt": RdfFormat.N_TRIPLES,
    ".nq": RdfFormat.N_QUADS,
    ".trig": RdfFormat.TRIG,
    ".n3": RdfFormat.N3,
    ".rdf": RdfFormat.RDF_XML,
    ".xml": RdfFormat.RDF_XML,
    ".owl": RdfFormat.RDF_XML,
    ".jsonld": RdfFormat.JSON_LD,
}
CONTENT_TYPES = {
    "text/turtle": RdfFormat.TURTLE,
    "application/x-turtle": RdfFormat.TURTLE,
    "application/n-triples": RdfFormat.N_TRIPLES,
    "application/n-quads": RdfFormat.N_QUADS,
    "application/trig": RdfFormat.TRIG,
    "text/n3": RdfFormat.N3,
    "application/rdf+xml": RdfFormat.RDF_XML,
    "application/xml": RdfFormat.RDF_XML,
    "text/xml": RdfFormat.RDF_XML,
    "application/ld+json": RdfFormat.JSON_LD,
}
# void:feature values naming a syntax (https://www.w3.org/ns/formats/)
FORMAT_FEATURES = {
    "http://www.w3.org/ns/formats/Turtle": RdfFormat.TURTLE,
    "http://www.w3.org/ns/formats/N-Triples": RdfFormat.N_TRIPLES,
    "http://www.w3.org/ns/formats/N-Quads": RdfFormat.N_QUADS,
    "http://www.w3.org/ns/formats/TriG": RdfFormat.TRIG,
    "http://www.w3.org/ns/formats/N3": RdfFormat.N3,
    "http://www.w3.org/ns/formats/RDF_XML": RdfFormat.RDF_XML,
    "http://www.w3.org/ns/formats/JSON-LD": RdfFormat.JSON_LD,
}
# rdflib's parser names for the same syntaxes (VoID files are small and parsed with rdflib)
RDFLIB_NAMES = {
    RdfFormat.TURTLE: "turtle",
    RdfFormat.N_TRIPLES: "nt",
    RdfFormat.N_QUADS: "nquads",
    RdfFormat.TRIG: "trig",
    RdfFormat.N3: "n3",
    RdfFormat.RDF_XML: "xml",
    RdfFormat.JSON_LD: "json-ld",
}
_XML_START = re.compile(rb"^(<\?xml|<!DOCTYPE|<!--|<[A-Za-z_][\w.-]*:RDF\b|<RDF\b)")


def strip_gzip_suffix(name: str) -> str:
    return name[:-3] if name.lower().endswith(".gz") else name


def by_extension(url: str) -> RdfFormat | None:
    path = strip_gzip_suffix(urlsplit(url).path).lower()
    for extension, rdf_format in EXTENSIONS.items():
        if path.endswith(extension):
            return rdf_format
    return None


def by_content_type(content_type: str | None) -> RdfFormat | None:
    if not content_type:
        return None
    return CONTENT_TYPES.get(content_type.split(";", 1)[0].strip().lower())


def sniff(head: bytes) -> RdfFormat:
    """RDF/XML if the text starts like XML, else Turtle (which also reads N-Triples)."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if _XML_START.match(text):
        return RdfFormat.RDF_XML
    if text.startswith((b"{", b"[")):
        return RdfFormat.JSON_LD
    return RdfFormat.TURTLE


def detect(url: str, content_type: str | None, head: bytes, hint: RdfFormat | None = None) -> RdfFormat:
    """Extension of the URL path, then the Content-Type, then ``hint`` (a VoID format feature), then sniffing."""
    return by_extension(url) or by_content_type(content_type) or hint or sniff(head)
