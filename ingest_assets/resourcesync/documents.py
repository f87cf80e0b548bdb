"""Streaming writers of the ResourceSync v1.1 documents (sitemaps with ``rs:`` metadata and links).

Entries are rendered to text one at a time and written in chunks, so memory stays flat whatever the
number of resources; a Resource List over ``limit`` URLs (the sitemap limit, 50,000) becomes a Resource
List Index with component lists. Locations of index documents become URLs through
:class:`.model.ResourceSet`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, islice
from typing import BinaryIO
from xml.sax.saxutils import escape

from ingest_assets.resourcesync.model import PLAIN_PATH, ResourceSet, w3c_time

SITEMAP_LIMIT = 50_000
_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<{root} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">\n'
)
_CHUNK = 2000
_QUOTES = {'"': "&quot;"}


def _esc(value: object) -> str:
    text = str(value)
    if "&" in text or "<" in text or ">" in text or '"' in text:
        return escape(text, _QUOTES)
    return text


def _attrs(pairs: Iterable[tuple[str, object]]) -> str:
    return "".join(f' {name}="{_esc(value)}"' for name, value in pairs if value is not None)


def ln(rel: str, href: str, mime: str | None = None) -> str:
    return f"<rs:ln{_attrs((('rel', rel), ('href', href), ('type', mime)))}/>"


def md(**attrs: object) -> str:
    return f"<rs:md{_attrs(attrs.items())}/>"


def _file_attrs(doc: dict) -> str:
    """``hash``, ``length`` and ``type`` attributes of a resource or change document."""
    md5, sha256, length, mime = doc.get("md5"), doc.get("sha256"), doc.get("length"), doc.get("mime")
    if md5 and sha256:
        text = f' hash="md5:{_esc(md5)} sha-256:{_esc(sha256)}"'
    elif md5 or sha256:
        text = f' hash="md5:{_esc(md5)}"' if md5 else f' hash="sha-256:{_esc(sha256)}"'
    else:
        text = ""
    if length is not None:
        text += f' length="{int(length)}"'
    return text + f' type="{_esc(mime)}"' if mime else text


def _lastmod(doc: dict) -> str:
    return f"<lastmod>{w3c_time(doc['lastmod'])}</lastmod>" if doc.get("lastmod") else ""


def resource_entry(resource_set: ResourceSet, doc: dict) -> str:
    """One ``<url>`` of a Resource List from a resource document."""
    attrs = _file_attrs(doc)
    links = (
        "".join(ln(link["rel"], resource_set.stored_url(link["href"]), link.get("mime")) for link in doc["ln"])
        if doc.get("ln")
        else ""
    )
    return (
        f"<url><loc>{_esc(resource_set.stored_url(doc['location']))}</loc>{_lastmod(doc)}"
        f"{f'<rs:md{attrs}/>' if attrs else ''}{links}</url>\n"
    )


def resource_entries(resource_set: ResourceSet, docs: Iterable[dict]) -> Iterator[str]:
    """:func:`resource_entry` of each document; the common shape (plain relative path, md5, length, mime,
    lastmod, no links) is rendered inline: this loop is list generation's hot path. It relies on what
    :func:`ingest_assets.resourcesync.events.record_event` guarantees for stored documents: relative paths without
    empty, '.' or '..' segments, hex digests and plain media types (nothing to escape)."""
    prefix, plain = resource_set.url_prefix, PLAIN_PATH.fullmatch
    for doc in docs:
        location, md5, sha256, length, mime, lastmod = (
            doc["location"],
            doc["md5"],
            doc["sha256"],
            doc["length"],
            doc["mime"],
            doc["lastmod"],
        )
        value = location["value"]
        if (
            location["type"] != "rel_path"
            or doc["ln"]
            or not (md5 and mime and lastmod)
            or length is None
            or not plain(value)
        ):
            yield resource_entry(resource_set, doc)
            continue
        sha = f" sha-256:{sha256}" if sha256 else ""
        lastmod = f"{lastmod[:19]}Z" if lastmod.endswith(".000Z") else lastmod
        yield (
            f"<url><loc>{prefix}{value}</loc><lastmod>{lastmod}</lastmod>"
            f'<rs:md hash="md5:{md5}{sha}" length="{length:d}" type="{mime}"/></url>\n'
        )


def change_entry(resource_set: ResourceSet, doc: dict) -> str:
    """One ``<url>`` of a Change List from a change document: ``rs:md datetime`` is its listing time
    (``listed``, what clients compare with their baseline), ``lastmod`` the resource's own."""
    return (
        f"<url><loc>{_esc(resource_set.stored_url(doc['location']))}</loc>{_lastmod(doc)}"
        f'<rs:md change="{_esc(doc["change"])}" datetime="{w3c_time(doc["listed"])}"{_file_attrs(doc)}/></url>\n'
    )


def write_document(out: BinaryIO, root: str, head: Iterable[str], entries: Iterable[str]) -> int:
    """Write a ``urlset``/``sitemapindex`` with ``head`` (rs:ln, rs:md) and ``entries``; returns the count."""
    out.write((_HEAD.format(root=root) + "".join(head) + "\n").encode())
    count = 0
    entries = iter(entries)
    while chunk := list(islice(entries, _CHUNK)):
        out.write("".join(chunk).encode())
        count += len(chunk)
    out.write(f"</{root}>\n".encode())
    return count


def write_source_description(out: BinaryIO, capability_lists: Iterable[str]) -> int:
    entries = (f"<url><loc>{_esc(url)}</loc>{md(capability='capabilitylist')}</url>\n" for url in capability_lists)
    return write_document(out, "urlset", [md(capability="description")], entries)


def write_capability_list(out: BinaryIO, up: str, capabilities: Iterable[tuple[str, str]]) -> int:
    """``capabilities``: (url, capability name) pairs, e.g. (".../resourcelist.xml", "resourcelist")."""
    entries = (f"<url><loc>{_esc(url)}</loc>{md(capability=name)}</url>\n" for url, name in capabilities)
    return write_document(out, "urlset", [ln("up", up), md(capability="capabilitylist")], entries)


@dataclass(frozen=True)
class Part:
    """A component list as an index cites it."""

    url: str
    md: dict


def _index_entry(part: Part) -> str:
    return f"<sitemap><loc>{_esc(part.url)}</loc>{md(**part.md)}</sitemap>\n"


def write_resource_list(
    open_file: Callable[[str], BinaryIO],
    entries: Iterable[str],
    *,
    up: str,
    index_url: str,
    part_url: Callable[[int], str],
    at: str,
    now: Callable[[], str],
    limit: int = SITEMAP_LIMIT,
) -> tuple[int, list[Part]]:
    """Write ``resourcelist.xml``: a Resource List, or a Resource List Index over ``resourcelist-NNNNN.xml``
    components of at most ``limit`` entries when there are more. Times are W3C strings; ``now`` gives the
    ``completed`` times. Returns (number of resources, components)."""
    entries = iter(entries)
    first = list(islice(entries, limit + 1))
    if len(first) <= limit:
        head = [ln("up", up), md(capability="resourcelist", at=at, completed=now())]  # all entries already read
        with open_file("resourcelist.xml") as out:
            return write_document(out, "urlset", head, first), []
    parts: list[Part] = []
    stream = chain(first, entries)
    total = 0
    while True:
        started = now()
        chunk = list(islice(stream, limit))  # held (at most ``limit``) so the header can say ``completed``
        if not chunk:
            break
        completed = now()
        number = len(parts) + 1
        with open_file(f"resourcelist-{number:05d}.xml") as out:
            total += write_document(
                out,
                "urlset",
                [ln("up", up), ln("index", index_url), md(capability="resourcelist", at=started, completed=completed)],
                chunk,
            )
        parts.append(Part(part_url(number), {"at": started, "completed": completed}))
    with open_file("resourcelist.xml") as out:
        write_document(
            out,
            "sitemapindex",
            [ln("up", up), md(capability="resourcelist", at=at, completed=now())],
            map(_index_entry, parts),
        )
    return total, parts


def write_change_list(
    out: BinaryIO, entries: Iterable[str], *, up: str, index_url: str, start: str, end: str | None
) -> int:
    """A Change List for ``start`` .. ``end`` (``end`` None while the interval is still open)."""
    head = [ln("up", up), ln("index", index_url), md(capability="changelist", **{"from": start, "until": end})]
    return write_document(out, "urlset", head, entries)


def write_change_list_index(out: BinaryIO, parts: Iterable[Part], *, up: str, start: str) -> int:
    head = [ln("up", up), md(capability="changelist", **{"from": start})]
    return write_document(out, "sitemapindex", head, map(_index_entry, parts))
