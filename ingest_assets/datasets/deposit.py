"""Storage backends: ``web`` (one WARC file, a response record per capture) and ``archiveorg``
(an item-shaped folder, and a real upload with ``internetarchive`` when credentials are configured)."""

from __future__ import annotations

import base64
import hashlib
import json
import posixpath
import re
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from http import HTTPStatus
from typing import Any

from lxml import etree
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from ingest_assets.datasets.download import Capture
from ingest_assets.datasets.status import DatasetIngestFailure
from ingest_assets.core.xml_input import ILLEGAL_BYTES
from ingest_assets.storage import Storage
from ingest_assets.core.version import software_version

ITEM_NAME_RE = re.compile(r"[^A-Za-z0-9._-]+")


def warc_date(dt14: str) -> str:
    return datetime.strptime(dt14, "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_warc(storage: Storage, key: str, captures: list[Capture]) -> list[dict[str, Any]]:
    """Write every capture as a WARC ``response`` record into one gzipped WARC at ``key`` (atomically).

    Returns, per capture, where its record sits: ``{"warc": key, "offset": ..., "length": ...}``.
    """
    locations = []
    with tempfile.NamedTemporaryFile(suffix=".warc.gz") as tmp:
        writer = WARCWriter(tmp, gzip=True)
        info = {"software": f"ingest-assets/{software_version()}", "format": "WARC File Format 1.1"}
        writer.write_record(writer.create_warcinfo_record(key.rsplit("/", 1)[-1], info))
        for capture in captures:
            try:
                reason = HTTPStatus(capture.status).phrase
            except ValueError:
                reason = ""
            http_headers = StatusAndHeaders(
                f"{capture.status} {reason}".strip(),
                [*capture.headers, ("Content-Length", str(capture.digests.size))],
                protocol="HTTP/1.1",
            )
            payload_digest = base64.b32encode(bytes.fromhex(capture.digests.sha1)).decode()
            with open(capture.path, "rb") as payload:
                record = writer.create_warc_record(
                    capture.url,
                    "response",
                    payload=payload,
                    length=capture.digests.size,
                    http_headers=http_headers,
                    warc_headers_dict={
                        "WARC-Date": warc_date(capture.dt),
                        "WARC-Payload-Digest": f"sha1:{payload_digest}",
                    },
                )
                offset = tmp.tell()
                writer.write_record(record)
            locations.append({"warc": key, "offset": offset, "length": tmp.tell() - offset})
        tmp.flush()
        storage.write_file(key, tmp.name)
    return locations


def item_name(platform: str, domain: str, platform_id: str) -> str:
    """An archive.org-style identifier: ``<platform>-<domain>-<id>`` with unsafe characters folded
    (an id that is a URL, as for direct files, is replaced by a short hash of it)."""
    if "://" in platform_id:
        platform_id = hashlib.sha1(platform_id.encode()).hexdigest()[:16]
    raw = f"{platform}-{domain}-{platform_id}"
    return ITEM_NAME_RE.sub("_", raw).strip("._-")[:100]


def xml_text(value: Any) -> str:
    """``str(value)`` without the characters XML 1.0 forbids (C0 controls but tab/LF/CR, lone surrogates,
    U+FFFE/U+FFFF): platform metadata carries them, lxml refuses them."""
    data = ILLEGAL_BYTES.sub(b"", str(value).encode("utf-8", "ignore"))  # "ignore" drops lone surrogates
    return data.decode("utf-8").replace("\ufffe", "").replace("\uffff", "")


def item_file_names(identifier: str, paths: list[str]) -> list[str]:
    """The names ``paths`` get in item ``identifier``: XML-safe, and unique. A path an earlier file or the
    item's own ``<id>_meta.xml``, ``<id>_files.xml`` or ``_MANIFEST`` already holds becomes
    ``<stem>-2<ext>`` (or ``-3``...: the first free one), so nothing overwrites anything."""
    taken = {f"{identifier}_meta.xml", f"{identifier}_files.xml", "_MANIFEST"}
    names = []
    for path in paths:
        name = xml_text(path) or "file"
        stem, ext = posixpath.splitext(name)
        number = 1
        while name in taken:
            number += 1
            name = f"{stem}-{number}{ext}"
        taken.add(name)
        names.append(name)
    return names


def _meta_xml(identifier: str, metadata: dict[str, Any]) -> bytes:
    root = etree.Element("metadata")
    etree.SubElement(root, "identifier").text = identifier
    for name, value in metadata.items():
        for single in value if isinstance(value, list) else [value]:
            if single not in (None, ""):
                etree.SubElement(root, name).text = xml_text(single)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _files_xml(files: list[tuple[str, Capture]]) -> bytes:
    root = etree.Element("files")
    for name, capture in files:
        element = etree.SubElement(root, "file", name=name, source="original")
        for tag in ("size", "md5", "sha1"):
            etree.SubElement(element, tag).text = str(getattr(capture.digests, tag))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def item_metadata(base: dict[str, Any], collection: str) -> dict[str, Any]:
    return {"mediatype": "data", "collection": collection, **{k: v for k, v in base.items() if v not in (None, "", [])}}


def write_item_folder(
    storage: Storage, key: str, identifier: str, metadata: dict[str, Any], files: list[tuple[str, Capture]]
) -> None:
    """An item-shaped folder: the files at their paths plus ``<id>_meta.xml`` and ``<id>_files.xml``
    (the paths must be :func:`item_file_names`)."""
    with storage.folder(key) as folder:
        for name, capture in files:
            with folder.open(name) as out, open(capture.path, "rb") as src:
                shutil.copyfileobj(src, out, 1024 * 1024)
        folder.write_bytes(f"{identifier}_meta.xml", _meta_xml(identifier, metadata))
        folder.write_bytes(f"{identifier}_files.xml", _files_xml(files))
        manifest = [{"name": n, "size": c.digests.size, "md5": c.digests.md5, "sha1": c.digests.sha1} for n, c in files]
        folder.write_bytes("_MANIFEST", json.dumps({"identifier": identifier, "files": manifest}).encode())


@dataclass
class ArchiveOrgUploader:
    """Uploads an item through IA-S3 with the ``internetarchive`` library (Content-MD5 checked by IA)."""

    access_key: str
    secret_key: str
    session: Any = None  # an internetarchive ArchiveSession; built from the keys when None

    def _session(self):
        if self.session is None:
            from internetarchive import get_session

            self.session = get_session(config={"s3": {"access": self.access_key, "secret": self.secret_key}})
        return self.session

    def upload(self, identifier: str, metadata: dict[str, Any], files: list[tuple[str, Capture]]) -> list[str]:
        """PUT every file; the first request also creates the item with ``metadata``. Returns the URLs."""
        import requests

        item = self._session().get_item(identifier)
        urls = []
        for index, (name, capture) in enumerate(files):
            try:
                with open(capture.path, "rb") as body:
                    response = item.upload_file(
                        body,
                        key=name,
                        metadata=metadata if index == 0 else None,
                        headers={"Content-MD5": capture.digests.md5},
                        access_key=self.access_key,
                        secret_key=self.secret_key,
                        queue_derive=False,
                        retries=2,
                        retries_sleep=1,
                    )
            except requests.RequestException as exc:
                status = getattr(exc.response, "status_code", None)
                raise DatasetIngestFailure(
                    "upload-error", f"archive.org upload of {identifier}/{name}: HTTP {status}: {exc}"
                ) from exc
            urls.append(response.url)
        return urls
