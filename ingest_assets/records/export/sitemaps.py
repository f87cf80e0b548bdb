"""Tag sitemaps, as ingestion3's ``scripts/generate_tag_sitemap.py`` writes them: per tag, the DPLA item URLs
(``<item url>/<id>``) of the published records carrying it, by id, in gzipped sitemaps of at most 50,000 URLs and a
sitemap index naming them, laid out as DPLA's sitemap bucket holds them::

    sitemap/<tag>/<yyyymmdd-HHMMSS>/all_item_urls_<n>.xml.gz     the shards of one generation
    sitemap/<tag>/all_item_urls.xml                               the index (replaced when a generation is whole)

One scan of the index serves every tag (the index is read in pages, never loaded); a shard is written as soon as it
holds 50,000 URLs, so memory stays bounded by one shard per tag. The index of a tag is replaced atomically after all
its shards are written; the generation it replaces is kept (a crawler may be reading it), older ones are removed.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from xml.sax.saxutils import escape

from ingest_assets.storage import layout
from ingest_assets.storage.backends import Storage

SHARD_SIZE = 50_000  # URLs per sitemap (the sitemap protocol's limit)
INDEX = "all_item_urls.xml"
GENERATION = re.compile(r"\d{8}-\d{6}")
NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"


@dataclass
class TagSitemap:
    """One tag's sitemaps: its URLs, the shard keys written (relative to the sitemap area) and its index's key."""

    tag: str
    urls: int = 0
    shards: list[str] = field(default_factory=list)
    index: str | None = None
    removed: list[str] = field(default_factory=list)  # generations removed (older than the one replaced)


def shard_xml(urls: Sequence[str], lastmod: str) -> str:
    """A sitemap (``<urlset>``) of ``urls``, each with ``lastmod``, formatted as generate_tag_sitemap.py does."""
    entries = "\n".join(f"  <url>\n    <loc>{escape(url)}</loc>\n    <lastmod>{lastmod}</lastmod>\n  </url>"
                        for url in urls)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NAMESPACE}">\n{entries}\n</urlset>'


def index_xml(locations: Sequence[str], lastmod: str) -> str:
    """A sitemap index (``<sitemapindex>``) of the shards' URLs."""
    entries = "\n".join(f"  <sitemap>\n    <loc>{escape(loc)}</loc>\n    <lastmod>{lastmod}</lastmod>\n  </sitemap>"
                        for loc in locations)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NAMESPACE}">\n{entries}\n</sitemapindex>'


def generation(moment: datetime) -> str:
    return layout.timestamp(moment).replace("_", "-")


class SitemapWriter:
    """The sitemaps of ``tags`` from one scan: :meth:`add` each tagged id in id order, then :meth:`finish`."""

    def __init__(self, storage: Storage, tags: Iterable[str], started: datetime, item_url: str, sitemap_url: str,
                 shard_size: int = SHARD_SIZE):
        self.storage, self.item_url, self.sitemap_url = storage, item_url.rstrip("/"), sitemap_url.rstrip("/")
        self.shard_size = min(shard_size, SHARD_SIZE)
        self.tags = {tag: TagSitemap(tag) for tag in tags}
        self.started = layout.next_free_second(started, lambda moment: not any(
            storage.exists(layout.sitemap_key(tag, generation(moment))) for tag in self.tags))
        self.lastmod = self.started.strftime("%Y-%m-%dT%H:%M:%SZ")
        self._pending: dict[str, list[str]] = {tag: [] for tag in self.tags}

    def add(self, record_id: str, tags: Iterable[str]) -> None:
        for tag in tags:
            pending = self._pending.get(tag)
            if pending is None:
                continue
            pending.append(f"{self.item_url}/{record_id}")
            if len(pending) == self.shard_size:
                self._shard(tag)

    def _shard(self, tag: str) -> None:
        sitemap, urls = self.tags[tag], self._pending[tag]
        parts = (tag, generation(self.started), f"all_item_urls_{len(sitemap.shards) + 1}.xml.gz")
        self.storage.write_bytes(layout.sitemap_key(*parts),
                                 gzip.compress(shard_xml(urls, self.lastmod).encode("utf-8"), mtime=0))
        sitemap.shards.append("/".join(("sitemap", *parts)))
        sitemap.urls += len(urls)
        self._pending[tag] = []

    def finish(self) -> dict[str, TagSitemap]:
        """The last shards, then each tag's index (a tag no record carries gets none: an earlier one is kept)."""
        for tag, sitemap in self.tags.items():
            if self._pending[tag]:
                self._shard(tag)
            if sitemap.shards:
                self._replace_index(sitemap)
        return self.tags

    def _replace_index(self, sitemap: TagSitemap) -> None:
        key = layout.sitemap_key(sitemap.tag, INDEX)
        previous = self.storage.read_bytes(key).decode("utf-8") if self.storage.exists(key) else ""
        self.storage.write_bytes(key, index_xml([f"{self.sitemap_url}/{shard}" for shard in sitemap.shards],
                                                self.lastmod).encode("utf-8"), overwrite=True)
        sitemap.index = key
        keep = {generation(self.started), *re.findall(rf"/sitemap/{re.escape(sitemap.tag)}/(\d{{8}}-\d{{6}})/", previous)}
        for name in self.storage.list_children(layout.sitemap_key(sitemap.tag)):
            if GENERATION.fullmatch(name) and name not in keep:
                self.storage.delete(layout.sitemap_key(sitemap.tag, name))
                sitemap.removed.append(name)


def write_tag_sitemaps(storage: Storage, tagged: Iterable[tuple[str, list[str]]], tags: Iterable[str],
                       started: datetime, item_url: str, sitemap_url: str,
                       shard_size: int = SHARD_SIZE) -> dict[str, TagSitemap]:
    """The sitemaps of ``tags`` from ``tagged`` (``(id, its tags)`` in id order: ``SearchIndex.tagged``), with at most
    ``shard_size`` URLs a shard (50,000, the protocol's limit, at most)."""
    writer = SitemapWriter(storage, tags, started, item_url, sitemap_url, shard_size)
    for record_id, carried in tagged:
        writer.add(record_id, carried)
    return writer.finish()
