"""A provider's record activity outputs as files of its resource set (``resourcesync: {publish_outputs: true}``).

Every file of a complete output folder (part files, ``_MANIFEST``, ``_LOGS/*``) and its ``-prov.json`` is the
``rel_path`` location ``outputs/<storage key relative to the provider folder>``, published as
``<url_prefix>outputs/...`` and served by :mod:`.server` straight from the storage (:func:`output_key`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from ingest_assets.resourcesync.feed import ChangeFeed, FeedReport, file_digests
from ingest_assets.resourcesync.index import ResourceIndex
from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.storage import layout
from ingest_assets.storage.backends import Storage, check_key

OUTPUTS = "outputs"
PROV_SUFFIX = "-prov.json"


def output_mime(key: str) -> str:
    """``avro/binary`` (part files), ``application/json`` (prov), ``text/csv`` (CSV logs), else ``text/plain``."""
    if key.endswith(".avro"):
        return "avro/binary"
    if key.endswith(".json"):
        return "application/json"
    return "text/csv" if key.endswith(".csv") else "text/plain"


def output_files(storage: Storage, output: layout.ActivityOutput) -> Iterator[str]:
    """The storage keys of a complete output: the files of its folder, then its prov file."""
    yield from storage.list_keys(output.folder)
    yield output.prov


def output_key(storage: Storage, provider: str, path: str) -> str:
    """The storage key that ``outputs/<path>`` of ``provider``'s set names; LookupError unless it is a file
    of a complete output of that provider (inside the folder) or the prov file of one."""
    key = f"{provider}/{check_key(path)}"  # ValueError for '..', empty segments, ...
    if key.endswith(PROV_SUFFIX) and path.count("/") == 2:
        folder, inside = key[: -len(PROV_SUFFIX)] + ".avro", True
    else:
        folder, inside = "/".join(key.split("/")[:4]), key.count("/") > 3
    if not inside or layout.parse_output(folder).provider != provider or not storage.is_complete(folder):
        raise LookupError(key)
    return key


def feed_outputs(index: ResourceIndex, storage: Storage, resource_set: ResourceSet, day: date) -> FeedReport:
    """Record a ``created`` event (at the activity's start) for each file of the set's provider's newest
    complete output of every activity on ``day``; files already recorded with the same md5 are unchanged."""
    feed = ChangeFeed(index, storage, resource_set)
    for activity in layout.ACTIVITIES:
        output = layout.latest_output(storage, resource_set.name, activity, day)
        for key in output_files(storage, output) if output else ():
            with storage.open_read(key) as handle:
                length, md5, sha256 = file_digests(handle)
            feed.record(f"{OUTPUTS}/{key.split('/', 1)[1]}", output.started, length, md5, sha256, output_mime(key))
    return feed.report
