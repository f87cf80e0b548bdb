"""Strategy choice ``{web|archiveorg}-{file|fileset|fileset-bundled}`` from file count, sizes and platform."""

from __future__ import annotations

from dataclasses import dataclass

from ingest_assets.datasets.model import PlatformManifest
from ingest_assets.datasets.status import DatasetIngestFailure

MiB = 1024 * 1024
GiB = 1024 * MiB


@dataclass(frozen=True)
class Thresholds:
    """Defaults: the spec's and sandcrawler's figures. All configurable (Dagster resource config)."""

    web_max_file_size: int = 64 * MiB  # a file (or bundle) at least this big goes to an archive.org item
    max_total_size: int = 64 * GiB  # above: too-large-size
    max_files: int = 200  # above (and no bundle): too-many-files
    bundle_min_files: int = 20  # the spec: "more than 20" files are better kept together
    max_bundle_files: int = 10_000  # a bundle listing with more entries is refused


def choose_strategy(manifest: PlatformManifest, thresholds: Thresholds) -> str:
    """Pick the strategy, or raise ``too-large-size``/``too-many-files``/``empty-manifest``."""
    count, total = len(manifest.files), manifest.total_size
    if count == 0:
        raise DatasetIngestFailure("empty-manifest", f"{manifest.platform} {manifest.platform_id} lists no files")
    if total > thresholds.max_total_size:
        raise DatasetIngestFailure(
            "too-large-size", f"{manifest.platform_id}: {total} bytes > {thresholds.max_total_size}"
        )
    if count == 1:
        return "web-file" if manifest.largest_size < thresholds.web_max_file_size else "archiveorg-file"
    if manifest.bundle_url and count >= max(2, thresholds.bundle_min_files) and count <= thresholds.max_bundle_files:
        return "web-fileset-bundled" if total < thresholds.web_max_file_size else "archiveorg-fileset-bundled"
    if count > thresholds.max_files:
        raise DatasetIngestFailure("too-many-files", f"{manifest.platform_id}: {count} files > {thresholds.max_files}")
    return "web-fileset" if manifest.largest_size < thresholds.web_max_file_size else "archiveorg-fileset"
