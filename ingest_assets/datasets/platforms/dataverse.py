"""Dataverse (any installation): ``/api/datasets/:persistentId`` -> latest version's files."""

from __future__ import annotations

from urllib.parse import quote

from ingest_assets.datasets.detect import PlatformMatch
from ingest_assets.datasets.hashing import normalize_hex
from ingest_assets.datasets.model import ManifestFile, PlatformManifest
from ingest_assets.datasets.platforms import PlatformConfig, api_json
from ingest_assets.datasets.status import DatasetIngestFailure
from ingest_assets.core.http import HttpClient

CHECKSUM_TYPES = {"MD5": "md5", "SHA-1": "sha1", "SHA1": "sha1", "SHA-256": "sha256", "SHA256": "sha256"}


def build_manifest(client: HttpClient, match: PlatformMatch, config: PlatformConfig) -> PlatformManifest:
    pid = match.platform_id
    if match.scope == "file":
        raise DatasetIngestFailure("platform-scope", f"dataverse {pid} is a file-level persistentId, not a dataset")
    pid_q = quote(pid, safe=":/")
    url = f"{match.origin}/api/datasets/:persistentId/?persistentId={pid_q}"
    doc = api_json(client, url, platform="dataverse", record=pid, max_bytes=config.api_max_bytes)
    version = (doc.get("data") or {}).get("latestVersion") if isinstance(doc, dict) else None
    if not isinstance(version, dict):
        raise DatasetIngestFailure("platform-error", f"dataverse {url}: no data.latestVersion for {pid}")
    if version.get("versionState") == "DEACCESSIONED":
        raise DatasetIngestFailure("platform-404", f"dataverse {pid} is deaccessioned")

    files, restricted = [], []
    for entry in version.get("files") or []:
        data_file = entry.get("dataFile") or {}
        name = data_file.get("filename") or entry.get("label")
        path = f"{entry['directoryLabel'].strip('/')}/{name}" if entry.get("directoryLabel") else name
        if entry.get("restricted"):
            restricted.append(path)
        hashes = {"md5": normalize_hex("md5", data_file.get("md5"))}
        checksum = data_file.get("checksum") or {}
        if algorithm := CHECKSUM_TYPES.get(str(checksum.get("type", "")).upper()):
            hashes[algorithm] = normalize_hex(algorithm, checksum.get("value"))
        extra = {"dataverse_file_id": data_file.get("id")}
        if data_file.get("persistentId"):  # file-level PIDs are optional per installation
            extra["persistent_id"] = data_file["persistentId"]
        files.append(
            ManifestFile(
                path=path,
                platform_url=f"{match.origin}/api/access/datafile/{data_file.get('id')}",
                size=data_file.get("filesize"),
                mimetype=data_file.get("contentType"),
                extra=extra,
                **{k: v for k, v in hashes.items() if v},
            )
        )
    if restricted:
        raise DatasetIngestFailure(
            "platform-restricted",
            f"dataverse {pid}: {len(restricted)} of {len(files)} files are restricted ({', '.join(restricted[:5])})",
        )
    number = f"{version.get('versionNumber')}.{version.get('versionMinorNumber')}"
    return PlatformManifest(
        platform="dataverse",
        platform_domain=match.domain,
        platform_id=pid,
        files=files,
        bundle_url=f"{match.origin}/api/access/dataset/:persistentId/?persistentId={pid_q}",
        archiveorg_metadata={
            "title": _citation_value(version, "title"),
            "creator": _authors(version),
            "date": version.get("publicationDate") or version.get("releaseTime"),
            "licenseurl": license_.get("uri") if isinstance(license_ := version.get("license"), dict) else license_,
            "source": match.url,
            "dataverse_version": number,
        },
    )


def _citation_fields(version: dict) -> list[dict]:
    return ((version.get("metadataBlocks") or {}).get("citation") or {}).get("fields") or []


def _citation_value(version: dict, type_name: str) -> str | None:
    for item in _citation_fields(version):
        if item.get("typeName") == type_name and isinstance(item.get("value"), str):
            return item["value"]
    return None


def _authors(version: dict) -> list[str]:
    for item in _citation_fields(version):
        if item.get("typeName") == "author":
            return [a["authorName"]["value"] for a in item.get("value") or [] if "authorName" in a]
    return []
