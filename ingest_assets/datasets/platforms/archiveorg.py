"""archive.org items: ``/metadata/<identifier>`` -> the item's original files (md5, sha1, size)."""

from __future__ import annotations

from urllib.parse import quote

from ingest_assets.datasets.detect import PlatformMatch
from ingest_assets.datasets.hashing import normalize_hex
from ingest_assets.datasets.model import ManifestFile, PlatformManifest
from ingest_assets.datasets.platforms import PlatformConfig, api_json
from ingest_assets.datasets.status import DatasetIngestFailure
from ingest_assets.core.http import HttpClient


def build_manifest(client: HttpClient, match: PlatformMatch, config: PlatformConfig) -> PlatformManifest:
    identifier = match.platform_id
    url = f"{match.origin}/metadata/{identifier}"
    doc = api_json(client, url, platform="archiveorg", record=identifier, max_bytes=config.api_max_bytes)
    if not doc:  # the metadata API answers {} for unknown identifiers
        raise DatasetIngestFailure("platform-404", f"archive.org item {identifier} does not exist")
    if doc.get("is_dark"):
        raise DatasetIngestFailure("platform-restricted", f"archive.org item {identifier} is dark")
    metadata = doc.get("metadata") or {}
    if metadata.get("mediatype") == "collection":
        raise DatasetIngestFailure("platform-scope", f"archive.org {identifier} is a collection, not an item")
    files = []
    for entry in doc.get("files") or []:
        if entry.get("source") != "original" or entry["name"].startswith(f"{identifier}_"):
            continue  # derivatives and the item's own _meta.xml/_files.xml
        if str(entry.get("private", "")).lower() == "true":
            raise DatasetIngestFailure("platform-restricted", f"archive.org {identifier}/{entry['name']} is private")
        files.append(
            ManifestFile(
                path=entry["name"],
                platform_url=f"{match.origin}/download/{identifier}/{quote(entry['name'])}",
                size=int(entry["size"]) if entry.get("size") else None,
                md5=normalize_hex("md5", entry.get("md5")),
                sha1=normalize_hex("sha1", entry.get("sha1")),
                extra={"format": entry.get("format")},
            )
        )
    return PlatformManifest(
        platform="archiveorg",
        platform_domain=match.domain,
        platform_id=identifier,
        files=files,
        archiveorg_metadata={
            "title": metadata.get("title"),
            "creator": metadata.get("creator"),
            "date": metadata.get("date"),
            "source": match.url,
        },
    )
