"""Figshare: ``{api}/articles/<id>[/versions/<v>]`` (no version -> latest) -> files with md5."""

from __future__ import annotations

from ingest_assets.datasets.detect import PlatformMatch
from ingest_assets.datasets.hashing import normalize_hex
from ingest_assets.datasets.model import ManifestFile, PlatformManifest
from ingest_assets.datasets.platforms import PlatformConfig, api_json
from ingest_assets.datasets.status import DatasetIngestFailure
from ingest_assets.core.http import HttpClient


def build_manifest(client: HttpClient, match: PlatformMatch, config: PlatformConfig) -> PlatformManifest:
    article = match.platform_id
    url = f"{config.figshare_api.rstrip('/')}/articles/{article}"
    if match.version:
        url += f"/versions/{match.version}"
    doc = api_json(client, url, platform="figshare", record=article, max_bytes=config.api_max_bytes)
    if doc.get("is_embargoed") or doc.get("is_confidential"):
        raise DatasetIngestFailure("platform-restricted", f"figshare article {article} is embargoed or confidential")
    version = str(doc.get("version") or match.version or "")
    files = []
    for entry in doc.get("files") or []:
        if entry.get("is_link_only"):
            raise DatasetIngestFailure(
                "platform-scope", f"figshare article {article}: file {entry.get('name')!r} is only a link elsewhere"
            )
        md5 = normalize_hex("md5", entry.get("computed_md5")) or normalize_hex("md5", entry.get("supplied_md5"))
        files.append(
            ManifestFile(
                path=entry["name"],
                platform_url=entry["download_url"],
                size=entry.get("size"),
                md5=md5,
                mimetype=entry.get("mimetype"),
                extra={"figshare_file_id": entry.get("id")},
            )
        )
    return PlatformManifest(
        platform="figshare",
        platform_domain=match.domain,
        platform_id=f"{doc.get('id', article)}.v{version}" if version else str(doc.get("id", article)),
        files=files,
        bundle_url=f"{config.figshare_bundle_base.rstrip('/')}/articles/{doc.get('id', article)}/versions/{version}"
        if version
        else None,
        archiveorg_metadata={
            "title": doc.get("title"),
            "creator": [a.get("full_name") for a in doc.get("authors") or [] if a.get("full_name")],
            "date": (doc.get("published_date") or "")[:10] or None,
            "description": doc.get("description"),
            "licenseurl": (doc.get("license") or {}).get("url"),
            "source": doc.get("url_public_html") or doc.get("figshare_url") or match.url,
            "external-identifier": f"doi:{doc['doi']}" if doc.get("doi") else None,
        },
    )
