"""Platform detection: URL patterns first, then Signposting links and ``citation_*`` meta tags (DOI -> resolve).

Patterns cover Dataverse (``persistentId`` doi/hdl on any host), Figshare (``/articles/[type/]slug/id[/version]``),
Zenodo (``/record/<id>`` and ``/records/<id>``), archive.org (``/details/<id>``, ``/download/<id>``). A non-HTML
terminal response is a direct file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, quote, urljoin, urlsplit

import requests
from lxml import etree, html

DOI_RE = re.compile(r"(10\.\d{4,9}/[^\s\"<>]+)", re.IGNORECASE)
ZENODO_PATH = re.compile(r"^/(?:api/)?records?/(\d+)(?:/.*)?$")
ARCHIVEORG_PATH = re.compile(r"^/(?:details|download)/([A-Za-z0-9][A-Za-z0-9._-]*)(?:/.*)?$")
DATAVERSE_PATHS = {"/dataset.xhtml": "dataset", "/file.xhtml": "file", "/citation": "dataset"}

DEFAULT_HOSTS = {
    "zenodo": ("zenodo.org", "sandbox.zenodo.org"),
    "figshare": ("figshare.com",),
    "archiveorg": ("archive.org",),
}


@dataclass(frozen=True)
class PlatformHosts:
    """The hosts a hub adds to the platforms' own (``platform -> hosts``, ``name`` or ``name:port``) and those it
    may reach on private addresses (host names, without port)."""

    hosts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    private: frozenset[str] = frozenset()

    @classmethod
    def of(cls, entries: Iterable, extra: dict[str, tuple[str, ...]] | None = None) -> "PlatformHosts":
        """From the registry entries' ``datasets:`` blocks, plus ``extra`` (the command line's)."""
        hosts = {name: tuple(found) for name, found in (extra or {}).items()}
        private: set[str] = set()
        for entry in entries:
            block = entry.settings.datasets
            if block is None:
                continue
            hosts[block.platform] = hosts.get(block.platform, ()) + tuple(h.lower() for h in block.hosts)
            if block.allow_private:
                private.update(urlsplit(f"//{host}").hostname or host for host in block.hosts)
        return cls(hosts, frozenset(private))


@dataclass(frozen=True)
class PlatformMatch:
    """A detected platform: ``url`` is the page it was recognised from (its origin serves the API)."""

    platform: str
    domain: str
    platform_id: str
    url: str
    version: str | None = None
    scope: str | None = None

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"


@dataclass(frozen=True)
class LandingHints:
    """What a landing page says about itself: DOIs (cite-as, citation_doi, DC.identifier) and item links."""

    dois: list[str] = field(default_factory=list)
    items: list[tuple[str, str | None]] = field(default_factory=list)


def _host_matches(host: str, hosts: tuple[str, ...]) -> bool:
    return any(host == h or host.endswith("." + h) for h in hosts)


def match_url(url: str, hosts: dict[str, tuple[str, ...]] | None = None) -> PlatformMatch | None:
    """Recognise a platform from a URL alone (``hosts`` adds host names to :data:`DEFAULT_HOSTS`)."""
    hosts = {name: default + tuple((hosts or {}).get(name, ())) for name, default in DEFAULT_HOSTS.items()}
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    netloc = parts.netloc.lower()
    path = parts.path or "/"

    persistent_id = (parse_qs(parts.query).get("persistentId") or [""])[0]
    if persistent_id.lower().startswith(("doi:", "hdl:")) and (
        path in DATAVERSE_PATHS or path.rstrip("/").startswith("/api/datasets/:persistentId")
    ):
        scope = DATAVERSE_PATHS.get(path, "dataset")
        return PlatformMatch("dataverse", host, persistent_id, url, scope=scope)

    def on(platform: str) -> bool:
        return _host_matches(host, hosts[platform]) or netloc in hosts[platform]

    if on("zenodo") and (m := ZENODO_PATH.match(path)):
        return PlatformMatch("zenodo", host, m.group(1), url)
    if on("figshare") and (found := _figshare_id(path)):
        article_id, version = found
        return PlatformMatch("figshare", host, article_id, url, version=version)
    if on("archiveorg") and (m := ARCHIVEORG_PATH.match(path)):
        return PlatformMatch("archiveorg", host, m.group(1), url)
    return None


def _figshare_id(path: str) -> tuple[str, str | None] | None:
    """``/articles/[type/]slug/id[/version]``: the id is the last number, or the one before a smaller version."""
    segments = [s for s in path.split("/") if s]
    if len(segments) < 3 or segments[0] != "articles" or not segments[-1].isdigit():
        return None
    last, before = segments[-1], segments[-2]
    if len(segments) >= 4 and before.isdigit() and int(last) < int(before):
        return before, last
    return last, None


def parse_landing(body: bytes, base_url: str, link_headers: str | None) -> LandingHints:
    """Signposting (HTTP ``Link`` header and ``<link>`` elements) and ``citation_*``/DC meta tags."""
    dois: list[str] = []
    items: list[tuple[str, str | None]] = []
    links = requests.utils.parse_header_links(link_headers) if link_headers else []
    if body:
        parser = html.HTMLParser(no_network=True, huge_tree=False, remove_comments=True)
        try:
            root = html.document_fromstring(body, parser=parser)
        except (etree.ParserError, ValueError):
            root = None
        if root is not None:
            links += [
                {"url": el.get("href", ""), "rel": el.get("rel", ""), "type": el.get("type")}
                for el in root.iterfind(".//link")
                if el.get("href")
            ]
            for meta in root.iterfind(".//meta"):
                name = (meta.get("name") or "").lower()
                if name in ("citation_doi", "dc.identifier", "prism.doi", "bepress_citation_doi"):
                    if m := DOI_RE.search(meta.get("content") or ""):
                        dois.append(m.group(1))
    for link in links:
        rels = (link.get("rel") or "").lower().split()
        target = urljoin(base_url, link.get("url", "").strip())
        if "cite-as" in rels and (m := DOI_RE.search(target)):
            dois.insert(0, m.group(1))
        if "item" in rels:
            items.append((target, link.get("type")))
    return LandingHints(dois=list(dict.fromkeys(d.rstrip(".") for d in dois)), items=items)


def normalize_doi(value: str) -> str | None:
    """``doi:10.x/y``, ``https://doi.org/10.x/y`` or bare ``10.x/y`` -> ``10.x/y`` (lower-cased)."""
    m = DOI_RE.search(value.strip())
    if not m or not (value.strip().lower().startswith(("doi:", "10.")) or "doi.org/" in value.lower()):
        return None
    return m.group(1).lower()


def doi_url(doi: str, resolver: str) -> str:
    return resolver.rstrip("/") + "/" + quote(doi, safe="/:;()._-")
