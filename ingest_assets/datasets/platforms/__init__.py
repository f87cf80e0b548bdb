"""Platform helpers: each turns a :class:`~ingest_assets.datasets.detect.PlatformMatch` into a manifest."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ingest_assets.datasets.detect import PlatformMatch
from ingest_assets.datasets.model import PlatformManifest
from ingest_assets.datasets.status import DatasetIngestFailure, blocked_by_config
from ingest_assets.core.errors import FetchError, RefusedAddress
from ingest_assets.core.http import HttpClient


@dataclass(frozen=True)
class PlatformConfig:
    """Endpoints that are not derived from the landing page's origin (overridable for other instances)."""

    figshare_api: str = "https://api.figshare.com/v2"
    figshare_bundle_base: str = "https://ndownloader.figshare.com"
    api_max_bytes: int = 32 * 1024 * 1024
    archiveorg_collection: str = "datasets"


def api_json(client: HttpClient, url: str, *, platform: str, record: str, max_bytes: int) -> Any:
    """GET a platform API document; 404 -> platform-404, 401/403 -> platform-restricted, else platform-error."""
    try:
        response = client.get(url, headers={"Accept": "application/json"}, max_bytes=max_bytes)
        return response.json()
    except RefusedAddress as exc:
        raise blocked_by_config(f"{platform} API {url} for {record}", exc) from exc
    except FetchError as exc:
        status = {404: "platform-404", 410: "platform-404", 401: "platform-restricted", 403: "platform-restricted"}
        raise DatasetIngestFailure(
            status.get(exc.status, "platform-error"), f"{platform} API {url} for {record}: {exc}"
        ) from exc
    except ValueError as exc:
        raise DatasetIngestFailure("platform-error", f"{platform} API {url} for {record}: not JSON ({exc})") from exc


def parse_checksum(value: str | None) -> dict[str, str]:
    """``"md5:abc..."`` / ``"sha256:..."`` (Zenodo, InvenioRDM) -> ``{"md5": "abc..."}``."""
    if not value or ":" not in value:
        return {}
    algorithm, _, digest = value.partition(":")
    algorithm = algorithm.strip().lower().replace("-", "")
    return {algorithm: digest.strip().lower()} if algorithm in ("md5", "sha1", "sha256") else {}


Builder = Callable[[HttpClient, PlatformMatch, PlatformConfig], PlatformManifest]


def builder_for(platform: str) -> Builder:
    from ingest_assets.datasets.platforms import archiveorg, dataverse, figshare, zenodo

    builders: dict[str, Builder] = {
        "dataverse": dataverse.build_manifest,
        "figshare": figshare.build_manifest,
        "zenodo": zenodo.build_manifest,
        "archiveorg": archiveorg.build_manifest,
    }
    return builders[platform]
