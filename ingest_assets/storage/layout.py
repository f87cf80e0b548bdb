"""Every path the platform writes, in the Ingestion 3 layout (one place; nobody builds paths by hand).

Record activities::

    <provider>/<activity>/<yyyymmdd>/<yyyymmdd_hhmmss>-<provider>-<schema name>.avro/   part-*.avro, _MANIFEST, _LOGS/
    <provider>/<activity>/<yyyymmdd>/<yyyymmdd_hhmmss>-<provider>-<schema name>-prov.json
    <provider>/plan/<plan ts>/<activity ts>-<schema name>.json                        write-once plan journal

``<yyyymmdd>`` is the partition's date (the day whose records the activity covers: for a scheduled run it
is the day the activity started, for a backfill the day being backfilled); ``<yyyymmdd_hhmmss>`` is always
the UTC wall-clock start of the activity. The schema name is the Avro full name without ``dpla.avro.<v>.``
with the version moved to the end: ``dpla.avro.v1.OriginalRecord`` -> ``OriginalRecord.v1``,
``dpla.avro.v1.MAP4_x.MAPRecord`` -> ``MAP4_x.MAPRecord.v1``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

from ingest_assets.core.errors import IngestError
from ingest_assets.core.registry import NAME_PATTERN, NAME_RE
from ingest_assets.storage.backends import Storage, check_key

ACTIVITIES = ("harvest", "mapping", "enrichment", "indexing")
MANIFEST = "_MANIFEST"
LOGS = "_LOGS"
PLAN = "plan"
STATE = "state"
TS_FORMAT = "%Y%m%d_%H%M%S"
_OUTPUT_RE = re.compile(
    rf"^(?P<provider>{NAME_PATTERN})/(?P<activity>[a-z]+)/(?P<day>\d{{8}})/"
    r"(?P<ts>\d{8}_\d{6})-(?P=provider)-(?P<schema>[A-Za-z0-9_.]+)\.avro$"
)


def timestamp(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return moment.astimezone(timezone.utc).strftime(TS_FORMAT)


def parse_timestamp(value: str) -> datetime:
    return datetime.strptime(value, TS_FORMAT).replace(tzinfo=timezone.utc)


MAX_SECONDS_AHEAD = 3600


def next_free_second(start: datetime, free: Callable[[datetime], bool]) -> datetime:
    """The first of ``start``, ``start`` + 1 s, ... for which ``free`` holds. Timestamped outputs are never
    overwritten: one that starts in a second another already holds takes the next free second. ``free`` may
    claim the second itself (write a write-once file, False on ``FileExistsError``). Bounded: an hour ahead."""
    moment = start
    for _ in range(MAX_SECONDS_AHEAD):
        if free(moment):
            return moment
        moment += timedelta(seconds=1)
    raise IngestError(f"no free second within {MAX_SECONDS_AHEAD} s after {timestamp(start)}", retryable=True)


def datestamp(day: date | datetime) -> str:
    if isinstance(day, datetime):
        day = day.astimezone(timezone.utc).date()
    return day.strftime("%Y%m%d")


def schema_name(full_name: str) -> str:
    """``dpla.avro.v1.MAP4_x.MAPRecord`` -> ``MAP4_x.MAPRecord.v1``."""
    parts = full_name.split(".")
    if len(parts) < 4 or parts[:2] != ["dpla", "avro"] or not re.fullmatch(r"v\d+", parts[2]):
        raise ValueError(f"not a dpla.avro.<version> schema name: {full_name!r}")
    return ".".join(parts[3:] + [parts[2]])


def _provider(provider: str) -> str:
    if not NAME_RE.fullmatch(provider):
        raise ValueError(f"invalid provider name {provider!r}")
    return provider


@dataclass(frozen=True, order=True)
class ActivityOutput:
    """One activity's output folder and the files beside it."""

    started: datetime
    provider: str
    activity: str
    day: date
    schema: str

    @property
    def stem(self) -> str:
        return f"{timestamp(self.started)}-{self.provider}-{self.schema}"

    @property
    def folder(self) -> str:
        return f"{self.provider}/{self.activity}/{datestamp(self.day)}/{self.stem}.avro"

    @property
    def relative(self) -> str:
        """The folder relative to the provider folder (as prov and plan files cite it)."""
        return self.folder.split("/", 1)[1]

    @property
    def prov(self) -> str:
        return f"{self.provider}/{self.activity}/{datestamp(self.day)}/{self.stem}-prov.json"

    @property
    def manifest(self) -> str:
        return f"{self.folder}/{MANIFEST}"

    def log(self, name: str) -> str:
        """Name of a log file inside the folder (for a FolderWriter)."""
        return log_name(name)


def log_name(name: str) -> str:
    """Name of a log file inside an output folder: ``_LOGS/<name>``."""
    return f"{LOGS}/{check_key(name)}"


def activity_output(provider: str, activity: str, day: date, started: datetime, schema: str) -> ActivityOutput:
    if activity not in ACTIVITIES:
        raise ValueError(f"unknown activity {activity!r}; expected one of {ACTIVITIES}")
    timestamp(started)
    return ActivityOutput(started.astimezone(timezone.utc).replace(microsecond=0), _provider(provider), activity, day, schema)


def parse_output(key: str) -> ActivityOutput:
    """The inverse of :attr:`ActivityOutput.folder` (also accepts a provider-relative path with ``provider``)."""
    match = _OUTPUT_RE.match(key.rstrip("/"))
    if not match or match["activity"] not in ACTIVITIES:
        raise ValueError(f"not an activity output path: {key!r}")
    return ActivityOutput(
        parse_timestamp(match["ts"]),
        match["provider"],
        match["activity"],
        datetime.strptime(match["day"], "%Y%m%d").date(),
        match["schema"],
    )


def complete_outputs(storage: Storage, provider: str, activity: str, day: date | None = None) -> list[ActivityOutput]:
    """Complete outputs (with ``_MANIFEST``) of an activity, oldest first; one day or all days."""
    base = f"{_provider(provider)}/{activity}"
    days = [datestamp(day)] if day else storage.list_children(base)
    found = []
    for stamp in days:
        for name in storage.list_children(f"{base}/{stamp}"):
            if not name.endswith(".avro"):
                continue
            key = f"{base}/{stamp}/{name}"
            try:
                output = parse_output(key)
            except ValueError:
                continue
            if storage.is_complete(key):
                found.append(output)
    return sorted(found, key=lambda o: (o.day, o.started))


def output_days(storage: Storage, provider: str, activity: str) -> list[date]:
    """The days that have an output folder of ``activity`` (complete or not), oldest first."""
    days = []
    for stamp in storage.list_children(f"{_provider(provider)}/{activity}"):
        try:
            days.append(datetime.strptime(stamp, "%Y%m%d").date())
        except ValueError:
            continue
    return sorted(days)


def latest_output(storage: Storage, provider: str, activity: str, day: date) -> ActivityOutput | None:
    outputs = complete_outputs(storage, provider, activity, day)
    return max(outputs, key=lambda o: o.started) if outputs else None


def plan_key(provider: str, plan_started: datetime, activity_started: datetime, schema: str) -> str:
    return f"{_provider(provider)}/{PLAN}/{timestamp(plan_started)}/{timestamp(activity_started)}-{schema}.json"


def plan_files(storage: Storage, provider: str, plan_started: datetime) -> list[str]:
    prefix = f"{_provider(provider)}/{PLAN}/{timestamp(plan_started)}"
    return [f"{prefix}/{name}" for name in storage.list_children(prefix) if name.endswith(".json")]


# -- generic paths for the other capabilities -------------------------------------------------------


def _parts(parts) -> str:
    return "/".join(check_key(p) if "/" not in p else _bad(p) for p in parts)


def _bad(part: str) -> str:
    raise ValueError(f"path part must not contain '/': {part!r}")


def provider_dated_key(provider: str, area: str, started: datetime, name: str) -> str:
    """``<provider>/<area>/<yyyymmdd>/<yyyymmdd_hhmmss>-<provider>-<name>``."""
    return f"{_provider(provider)}/{_parts([area])}/{datestamp(started)}/{timestamp(started)}-{provider}-{_parts([name])}"


def hub_key(area: str, *parts: str) -> str:
    """``_<area>/<part>/...``: platform-wide files (provider names never start with '_')."""
    return "/".join([f"_{_parts([area])}", *([_parts(parts)] if parts else [])])


def hub_dated_key(area: str, started: datetime, name: str) -> str:
    return hub_key(area, datestamp(started), f"{timestamp(started)}-{name}")


def status_page_key() -> str:
    """The hub status page (``_status/index.html``), rewritten after runs; served as ``/status.html``."""
    return hub_key("status", "index.html")


def registry_copy_key() -> str:
    """The last registry file that loaded (``_registry/last-good.yaml``): a file that stops parsing runs on it."""
    return hub_key("registry", "last-good.yaml")


def provider_state_key(provider: str, *names: str) -> str:
    """Mutable per-provider documents (checkpoints, spools, status): ``<provider>/state/<name>/...``."""
    if not names:
        raise ValueError("a state key needs a name")
    return f"{_provider(provider)}/{STATE}/{_parts(names)}"


def export_key(provider: str, day: date, started: datetime, schema: str, suffix: str) -> str:
    """A bulk export of a provider's records of a day (e.g. Parquet):
    ``<provider>/export/<yyyymmdd>/<yyyymmdd_hhmmss>-<provider>-<schema name>.<suffix>``."""
    return f"{_provider(provider)}/export/{datestamp(day)}/{timestamp(started)}-{provider}-{schema}.{_parts([suffix])}"


# -- the JSON-L export (ingestion3's layout, read by DPLA's sparkindexer) ------------------------------------

JSONL_SCHEMA = "MAP3_1.IndexRecord.jsonl"
_JSONL_RE = re.compile(rf"^(?P<ts>\d{{8}}_\d{{6}})-(?P<hub>{NAME_PATTERN})-{re.escape(JSONL_SCHEMA)}$")


def jsonl_exports(prefix: str) -> str:
    """The folder holding a hub's JSON-L exports in the export root: ``<s3 prefix>/jsonl``."""
    return f"{_parts([prefix])}/jsonl"


def jsonl_export(prefix: str, provider: str, stamp: datetime) -> str:
    """One export: ``<s3 prefix>/jsonl/<yyyyMMdd_HHmmss>-<provider>-MAP3_1.IndexRecord.jsonl`` (gzipped JSON-L
    parts, ``_MANIFEST``, ``_SUCCESS``)."""
    return f"{jsonl_exports(prefix)}/{timestamp(stamp)}-{_provider(provider)}-{JSONL_SCHEMA}"


def parse_jsonl_export(name: str) -> tuple[datetime, str] | None:
    """``(stamp, provider)`` of an export folder's name, None for anything else."""
    match = _JSONL_RE.match(name)
    return (parse_timestamp(match["ts"]), match["hub"]) if match else None


WIKI = "wiki"


def wiki_key(provider: str, day: date, started: datetime) -> str:
    """The Wikimedia export of a provider's published day (ingestion3's WikiMetadataEntry output, a folder of
    Parquet parts and ``_MANIFEST``): ``<provider>/wiki/<yyyymmdd>/<yyyymmdd_hhmmss>-<provider>-wiki.parquet``."""
    return f"{_provider(provider)}/{WIKI}/{datestamp(day)}/{timestamp(started)}-{provider}-{WIKI}.parquet"


def wiki_outputs(storage: Storage, provider: str, day: date) -> list[str]:
    """The complete (``_MANIFEST``) Wikimedia exports of the provider's day, oldest first."""
    base = f"{_provider(provider)}/{WIKI}/{datestamp(day)}"
    return [f"{base}/{name}" for name in storage.list_children(base)
            if name.endswith(f"-{provider}-{WIKI}.parquet") and storage.is_complete(f"{base}/{name}")]


def sitemap_key(*parts: str) -> str:
    """Tag sitemaps, as DPLA's sitemap bucket holds them, in ``_sitemaps/`` (what ``INGEST_SITEMAP_URL`` serves):
    ``sitemap/<tag>/all_item_urls.xml`` (the index) and ``sitemap/<tag>/<yyyymmdd-HHMMSS>/all_item_urls_<n>.xml.gz``."""
    return hub_key("sitemaps", "sitemap", *parts)


def spark_staging_key(job: str, name: str | None = None) -> str:
    """Part files of a running Spark job's task attempts, ``_spark-staging/<job>[/<name>]``: never read as
    outputs; the driver copies the winning attempts into the output folder and deletes the job's folder."""
    return hub_key("spark-staging", job, *([name] if name else []))


def ahead_staging_key(provider: str, day: date, *parts: str) -> str:
    """Enrichment and index documents made while a mapping streamed, ``_ahead-staging/<provider>/<yyyymmdd>/...``:
    never read as outputs; the enrichment and indexing steps commit them (``records/engines/ahead.py``)."""
    return hub_key("ahead-staging", provider, datestamp(day), *parts)


# -- resourcesync ----------------------------------------------------------------------------


def resourcesync_key(*parts: str) -> str:
    """Published ResourceSync documents, ``_resourcesync/<url path parts>``: the server maps a URL path
    ``/a/b.xml`` to ``resourcesync_key("a", "b.xml")`` (``.well-known/resourcesync`` included)."""
    return hub_key("resourcesync", *parts)


def resourcesync_resource_key(set_name: str, path: str) -> str:
    """A file of a resource set kept in the storage (a set without its own ``root``, such as a record
    provider's): ``_resourcesync/<set>/resources/<path>``, served at ``/<set>/resources/<path>``.
    ``path`` is '/'-separated and canonical (no empty, '.' or '..' segment)."""
    return resourcesync_key(set_name, "resources", *path.split("/"))


# -- datasets --------------------------------------------------------------------------------

DATASET_KINDS = ("requests", "results", "web", "items", "lineage")


def dataset_key(kind: str, name: str | None = None, started: datetime | None = None) -> str:
    """Dataset ingest files: ``_datasets-<kind>[/<name>]``, or with ``started``
    ``_datasets-<kind>/<yyyymmdd>/<yyyymmdd_hhmmss>-<name>``. Kinds: ``requests`` (JSON-lines request files
    the sensor watches), ``results`` (JSON-lines results streams), ``web`` (WARC files), ``items``
    (archive.org-shaped item folders), ``lineage`` (one document per request, :func:`dataset_lineage_key`)."""
    if kind not in DATASET_KINDS:
        raise ValueError(f"unknown dataset storage kind {kind!r}; expected one of {DATASET_KINDS}")
    area = f"datasets-{kind}"
    if started is not None:
        return hub_dated_key(area, started, name or "")
    return hub_key(area, name) if name else hub_key(area)


def dataset_lineage_key(ingest_type: str, base_url: str) -> str:
    """The lineage document of a request's latest processing (replaced by the next one):
    ``_datasets-lineage/<sha1 of "<ingest_type> <base_url>">.json``."""
    return dataset_key("lineage", hashlib.sha1(f"{ingest_type} {base_url}".encode()).hexdigest() + ".json")


# -- repository ------------------------------------------------------------------------------


def repository_report_key(provider: str, started: datetime, collection_pid: str) -> str:
    """A collection's metadata aggregation report (MediaWiki syntax):
    ``<provider>/repository-reports/<yyyymmdd>/<yyyymmdd_hhmmss>-<provider>-<pid, ':' -> '_'>.wiki``."""
    return provider_dated_key(provider, "repository-reports", started, collection_pid.replace(":", "_") + ".wiki")
