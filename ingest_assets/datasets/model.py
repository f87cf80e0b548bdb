"""Plain data: an ingest request, the platform manifest and its files, the fileset result row."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from ingest_assets.core.errors import ValidationError

INGEST_TYPE = "dataset"


@dataclass(frozen=True)
class IngestRequest:
    """One ``{ingest_type: "dataset", base_url, ...}`` request; unknown keys are kept in ``extra``."""

    base_url: str
    ingest_type: str = INGEST_TYPE
    force_recrawl: bool = False
    link_source: str | None = None
    link_source_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Any, *, file: str | None = None, record: str | None = None) -> "IngestRequest":
        if not isinstance(data, dict):
            raise ValidationError("request must be a JSON object", file=file, record=record)
        base_url = data.get("base_url")
        if not isinstance(base_url, str) or not base_url.strip():
            raise ValidationError("request has no base_url", file=file, record=record)
        if data.get("ingest_type", INGEST_TYPE) != INGEST_TYPE:
            raise ValidationError(
                f"ingest_type {data.get('ingest_type')!r} is not {INGEST_TYPE!r}", file=file, record=base_url
            )
        known = {"base_url", "ingest_type", "force_recrawl", "link_source", "link_source_id"}
        return cls(
            base_url=base_url.strip(),
            force_recrawl=data.get("force_recrawl") is True,
            link_source=data.get("link_source"),
            link_source_id=data.get("link_source_id"),
            extra={k: v for k, v in data.items() if k not in known},
        )

    def to_dict(self) -> dict[str, Any]:
        out = {"ingest_type": self.ingest_type, "base_url": self.base_url, **self.extra}
        for key in ("link_source", "link_source_id"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.force_recrawl:
            out["force_recrawl"] = True
        return out


@dataclass
class ManifestFile:
    """One file as the platform declares it; hashes and status are filled in when it is fetched."""

    path: str
    platform_url: str
    size: int | None = None
    md5: str | None = None
    sha1: str | None = None
    sha256: str | None = None
    mimetype: str | None = None
    status: str | None = None
    terminal_url: str | None = None
    terminal_dt: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, {})}


@dataclass
class PlatformManifest:
    """What a platform helper learned: identity, the file list and an optional download-all bundle."""

    platform: str
    platform_domain: str
    platform_id: str
    files: list[ManifestFile]
    bundle_url: str | None = None
    archiveorg_metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def total_size(self) -> int:
        return sum(f.size or 0 for f in self.files)

    @property
    def largest_size(self) -> int:
        return max((f.size or 0 for f in self.files), default=0)


@dataclass
class FilesetResult:
    """A row of ``ingest_fileset_result`` plus the request and retryability for the results stream."""

    ingest_type: str
    base_url: str
    status: str
    hit: bool = False
    terminal_url: str | None = None
    terminal_dt: str | None = None
    terminal_status_code: int | None = None
    terminal_sha1hex: str | None = None
    platform: str | None = None
    platform_domain: str | None = None
    platform_id: str | None = None
    ingest_strategy: str | None = None
    total_size: int | None = None
    file_count: int | None = None
    item_name: str | None = None
    item_bundle_path: str | None = None
    manifest: list[dict[str, Any]] | None = None
    error_message: str | None = None
    hops: list[str] = field(default_factory=list)
    api_responses: list[dict[str, Any]] = field(default_factory=list)  # the platform API answers the manifest came from

    ROW_FIELDS = (
        "ingest_type", "base_url", "hit", "status", "terminal_url", "terminal_dt", "terminal_status_code",
        "terminal_sha1hex", "platform", "platform_domain", "platform_id", "ingest_strategy", "total_size",
        "file_count", "item_name", "item_bundle_path", "manifest",
    )  # fmt: skip

    def row(self) -> dict[str, Any]:
        """The SQL row (``updated`` is set by the results store)."""
        return {name: getattr(self, name) for name in self.ROW_FIELDS}

    def to_json(self, request: IngestRequest | None, retryable: bool) -> str:
        doc = {**asdict(self), "retryable": retryable}
        if request is not None:
            doc["request"] = request.to_dict()
        return json.dumps({k: v for k, v in doc.items() if v is not None}, sort_keys=True)
