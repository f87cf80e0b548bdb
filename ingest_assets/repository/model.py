"""Repository objects and their RDF form: DC elements + the K2N namespace + RELS-EXT-style relations."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote

from lxml import etree
from rdflib import RDF, Graph, Literal, Namespace, URIRef

DC = Namespace("http://purl.org/dc/elements/1.1/")
K2N = Namespace("http://www.keytonature.eu/k2n#")
REL = Namespace("info:fedora/fedora-system:def/relations-external#")
OAI_DC = "http://www.openarchives.org/OAI/2.0/oai_dc/"
LINEAGE = Namespace("urn:x-ingest-assets:lineage#")
FEED_MIME = "text/turtle"  # an object's RDF in the change feed


def feed_path(pid: str) -> str:
    """Where an object's RDF (:meth:`RepositoryObject.to_turtle`) is published in the change feed's set."""
    return f"objects/{pid}.ttl"


def fedora_uri(pid: str) -> URIRef:
    return URIRef(f"info:fedora/{pid}")


@dataclass
class RepositoryObject:
    pid: str
    kind: str
    dc: dict[str, list[str]] = field(default_factory=dict)
    k2n: dict[str, list[str]] = field(default_factory=dict)
    collection: str | None = None
    provider: str | None = None
    harvesting_url: str = ""
    lineage: dict[str, str] = field(default_factory=dict)  # where it came from: source, page, revision, ...

    def first(self, name: str) -> str:
        """First value of a K2N field (or a DC element given as ``dc:name``), ``""`` if absent."""
        values = self.dc.get(name[3:], []) if name.startswith("dc:") else self.k2n.get(name, [])
        return values[0] if values else ""

    def to_graph(self, subject: str | None = None) -> Graph:
        """RDF of the object; ``subject`` defaults to ``info:fedora/<pid>`` (Fedora 6 uses its URL)."""
        graph = Graph()
        graph.bind("dc", DC)
        graph.bind("k2n", K2N)
        graph.bind("rel", REL)
        node = URIRef(subject) if subject else fedora_uri(self.pid)
        graph.add((node, RDF.type, K2N[self.kind.capitalize()]))
        graph.add((node, DC.identifier, Literal(self.pid)))
        for name, values in self.dc.items():
            for value in values:
                graph.add((node, DC[name], Literal(value)))
        for name, values in self.k2n.items():
            for value in values:
                graph.add((node, K2N[name], Literal(value)))
        if self.collection:
            graph.add((node, REL.isMemberOfCollection, fedora_uri(self.collection)))
        if self.provider:
            graph.add((node, REL.isMemberOf, fedora_uri(self.provider)))
        if self.harvesting_url:
            graph.add((node, K2N.HarvestingURL, Literal(self.harvesting_url)))
        for name, value in self.lineage.items():
            graph.add((node, LINEAGE[name], Literal(value)))
        return graph

    def to_turtle(self, subject: str | None = None) -> bytes:
        return self.to_graph(subject).serialize(format="turtle", encoding="utf-8")

    def dc_xml(self) -> bytes:
        """The Fedora ``DC`` datastream form (``oai_dc:dc``)."""
        root = etree.Element(f"{{{OAI_DC}}}dc", nsmap={"oai_dc": OAI_DC, "dc": str(DC)})
        etree.SubElement(root, f"{{{DC}}}identifier").text = self.pid
        for name in sorted(self.dc):
            for value in self.dc[name]:
                etree.SubElement(root, f"{{{DC}}}{name}").text = value
        return etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True)

    @classmethod
    def from_turtle(cls, data: bytes, pid: str, pid_prefixes: tuple[str, ...] = ()) -> "RepositoryObject":
        """Read back an object written by :meth:`to_turtle` (server-managed triples are ignored). A related
        object's PID is its IRI less ``info:fedora/`` or one of ``pid_prefixes`` (Fedora 6 serves
        ``info:fedora/<pid>`` as ``<REST root>/<pid>``)."""
        prefixes = ("info:fedora/", *pid_prefixes)

        def related(iri: str) -> str:
            found = next((p for p in prefixes if iri.startswith(p)), "")
            return unquote(iri[len(found):]) if found else iri

        graph = Graph().parse(data=data, format="turtle")
        subject = next(graph.subjects(DC.identifier, Literal(pid)), None)
        obj = cls(pid=pid, kind="member")
        if subject is None:
            return obj
        for predicate, value in sorted(graph.predicate_objects(subject)):
            text = str(value)
            if predicate == RDF.type and text.startswith(str(K2N)):
                obj.kind = text[len(str(K2N)):].lower()
            elif predicate == REL.isMemberOfCollection:
                obj.collection = related(text)
            elif predicate == REL.isMemberOf:
                obj.provider = related(text)
            elif predicate == K2N.HarvestingURL:
                obj.harvesting_url = text
            elif str(predicate).startswith(str(LINEAGE)):
                obj.lineage[str(predicate)[len(str(LINEAGE)):]] = text
            elif text != pid and str(predicate).startswith(str(DC)):
                obj.dc.setdefault(str(predicate)[len(str(DC)):], []).append(text)
            elif str(predicate).startswith(str(K2N)):
                obj.k2n.setdefault(str(predicate)[len(str(K2N)):], []).append(text)
        return obj
