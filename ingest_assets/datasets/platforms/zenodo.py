"""Zenodo (InvenioRDM and the pre-2023 API): ``/api/records/<id>`` -> files with ``algo:hex`` checksums."""

from __future__ import annotations

from ingest_assets.datasets.detect import PlatformMatch
from ingest_assets.datasets.hashing import normalize_hex
from ingest_assets.datasets.model import ManifestFile, PlatformManifest
from ingest_assets.datasets.platforms import PlatformConfig, api_json, parse_checksum
from ingest_assets.datasets.status import DatasetIngestFailure
from ingest_assets.core.http import HttpClient

OUT_OF_SCOPE_TYPES = {"publication"}  # papers go to the file ingest, not here


def build_manifest(client: HttpClient, match: PlatformMatch, config: PlatformConfig) -> PlatformManifest:
    url = f"{match.origin}/api/records/{match.platform_id}"
    doc = api_json(client, url, platform="zenodo", record=match.platform_id, max_bytes=config.api_max_bytes)
    metadata = doc.get("metadata") or {}
    record_id = str(doc.get("id") or match.platform_id)
    access_right = metadata.get("access_right", "open")
    files_access = (doc.get("access") or {}).get("files", "public")
    if access_right != "open" or files_access != "public":
        raise DatasetIngestFailure(
            "platform-restricted", f"zenodo record {record_id}: access_right={access_right!r}, files={files_access!r}"
        )
    resource_type = (metadata.get("resource_type") or {}).get("type")
    if resource_type in OUT_OF_SCOPE_TYPES:
        raise DatasetIngestFailure("platform-scope", f"zenodo record {record_id} is a {resource_type}")

    entries = doc.get("files")
    if isinstance(entries, dict):  # InvenioRDM may nest them: {"entries": {...}} or {"entries": [...]}
        entries = entries.get("entries") or []
        entries = list(entries.values()) if isinstance(entries, dict) else entries
    files = []
    for entry in entries or []:
        hashes = {k: normalize_hex(k, v) for k, v in parse_checksum(entry.get("checksum")).items()}
        links = entry.get("links") or {}
        files.append(
            ManifestFile(
                path=entry["key"],
                platform_url=links.get("content") or links.get("self") or f"{url}/files/{entry['key']}/content",
                size=entry.get("size"),
                mimetype=entry.get("mimetype"),
                extra={"zenodo_file_id": entry.get("id") or entry.get("file_id")},
                **{k: v for k, v in hashes.items() if v},
            )
        )
    creators = [c.get("name") for c in metadata.get("creators") or [] if c.get("name")]
    return PlatformManifest(
        platform="zenodo",
        platform_domain=match.domain,
        platform_id=record_id,
        files=files,
        bundle_url=(doc.get("links") or {}).get("archive"),
        archiveorg_metadata={
            "title": metadata.get("title"),
            "creator": creators,
            "date": metadata.get("publication_date"),
            "description": metadata.get("description"),
            "licenseurl": (metadata.get("license") or {}).get("id"),
            "source": (doc.get("links") or {}).get("self_html") or match.url,
            "external-identifier": f"doi:{doc['doi']}" if doc.get("doi") else None,
        },
    )
