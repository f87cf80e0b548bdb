"""A small HTTP server for the published documents and the resources of each set (``ingest-assets
serve-resourcesync``): serves ``/<path>`` from the storage key ``_resourcesync/<path>`` (see :mod:`.publish`) and
``/<set>/resources/<relative path>`` from the set's files (its root, or its storage area: :mod:`.files`),
and, for a set publishing its provider's outputs, ``/<set>/resources/outputs/<path>`` from the storage key
``<set>/<path>`` of a complete output or its prov file (:mod:`.outputs`); ``/status.html`` is the hub status
page (``layout.status_page_key()``, written after runs by the ``hub_status`` asset).
Nothing is listed and nothing outside the published tree or a set's files can be reached (keys are
validated; symlinks do not leave a local root).
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ingest_assets.resourcesync.files import ResourceFiles
from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.resourcesync.outputs import OUTPUTS, output_key, output_mime
from ingest_assets.storage.backends import Storage
from ingest_assets.storage.layout import resourcesync_key, status_page_key

CHUNK = 64 * 1024
XML = "application/xml; charset=utf-8"
HTML = "text/html; charset=utf-8"
STATUS_PAGE = "status.html"


class ResourceSyncApp:
    """WSGI application: GET/HEAD of the current sets' documents and resources, 404 for anything else (a set
    removed from the registry included)."""

    def __init__(self, storage: Storage, sets: Iterable[ResourceSet] | Callable[[], Iterable[ResourceSet]]):
        """``storage``: the platform storage (published documents, files of sets without a root); ``sets``: the
        resource sets, or a function giving the current ones (re-read as the registry changes)."""
        self.storage = storage
        self._current = sets if callable(sets) else (lambda fixed=list(sets): fixed)
        self._seen: list[ResourceSet] | None = None

    def _sets(self) -> tuple[dict[str, ResourceFiles], set[str]]:
        sets = list(self._current())
        if sets != self._seen:
            self._seen = sets
            self._files = {s.name: ResourceFiles.of(self.storage, s) for s in sets}
            self._outputs = {s.name for s in sets if s.publish_outputs}
        return self._files, self._outputs

    def __call__(self, environ, start_response):
        if environ["REQUEST_METHOD"] not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Allow", "GET, HEAD"), ("Content-Length", "0")])
            return [b""]
        try:
            # WSGI gives the percent-decoded path as latin-1 characters of its bytes
            parts = environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8").lstrip("/").split("/")
            handle, mime = self._open(parts)
        except (ValueError, LookupError, OSError):  # UnicodeError is a ValueError
            start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "9")])
            return [b"not found"]
        headers = [("Content-Type", mime)]
        size = _size(handle)
        if size is not None:
            headers.append(("Content-Length", str(size)))
        start_response("200 OK", headers)
        if environ["REQUEST_METHOD"] == "HEAD":
            handle.close()
            return [b""]
        return _chunks(handle)

    def _open(self, parts: list[str]):
        if parts == [STATUS_PAGE]:  # the hub status page (ingest_assets.operations.page), beside the documents
            return self.storage.open_read(status_page_key()), HTML
        files, outputs = self._sets()
        if parts[0] not in files and parts != [".well-known", "resourcesync"]:
            raise LookupError(f"no resource set {parts[0]!r}")
        if len(parts) > 3 and parts[1] == "resources" and parts[2] == OUTPUTS and parts[0] in outputs:
            key = output_key(self.storage, parts[0], "/".join(parts[3:]))
            return ResourceFiles(self.storage).open_read(key), output_mime(key)  # no symlink out of the storage
        if len(parts) > 2 and parts[1] == "resources":
            path = "/".join(parts[2:])
            return files[parts[0]].open_read(path), mimetypes.guess_type(path)[0] or "application/octet-stream"
        if parts[-1] == "changelists.json":
            raise LookupError("publisher state is not published")
        key = resourcesync_key(*parts)
        if not (parts[-1].endswith(".xml") or parts == [".well-known", "resourcesync"]):
            raise LookupError(key)
        return self.storage.open_read(key), XML


def _size(handle) -> int | None:
    try:
        return os.fstat(handle.fileno()).st_size
    except (AttributeError, OSError, ValueError):
        return None


def _chunks(handle):
    with handle:
        while data := handle.read(CHUNK):
            yield data


class RegistrySets:
    """The registry's resource sets, read again whenever the registry file changes."""

    def __init__(self, path: Path, base: str, capabilities: tuple[str, ...] = ()):
        self.path, self.base, self.capabilities = path, base, capabilities
        self._stamp: tuple[float, int] | None = None
        self._sets: list[ResourceSet] = []

    def __call__(self) -> list[ResourceSet]:
        from ingest_assets.core.registry import load_registry
        from ingest_assets.resourcesync.config import resource_sets

        stat = self.path.stat()
        if (stat.st_mtime, stat.st_size) != self._stamp:
            self._sets = resource_sets(load_registry(self.path), self.base, self.capabilities)
            self._stamp = (stat.st_mtime, stat.st_size)
        return self._sets
