"""What an entry may hold besides its ``harvest:`` block: the record pipeline's other keys (:class:`RecordSettings`),
linked data's, ``resourcesync:``, ``datasets:``, ``repository:``, and all of them as :class:`EntrySettings`."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from ingest_assets.core.modified import parse_modified
from ingest_assets.core.registry.blocks import Block, HttpUrl, Positive, Text, problem
from ingest_assets.core.registry.harvest import HarvestBlock

DURATION_RE = re.compile(r"(\d+)\s*([mhd])")
DURATION_UNITS = {"m": "minutes", "h": "hours", "d": "days"}
EMAIL_RE = re.compile(r"[^@\s<>,;]+@[^@\s<>,;]+\.[^@\s<>,;]+")


def _moment(value: Any) -> Any:
    """``2009-01-01`` (YAML's date) or ISO text -> datetime, as ``datetime.fromisoformat`` reads it."""
    if isinstance(value, datetime) or not isinstance(value, (date, str)):
        return value
    try:
        return datetime.fromisoformat(str(value))
    except ValueError as exc:
        raise problem(f"{value!r} is not a date or datetime") from exc


def _modified(value: Any) -> Any:
    """A registry ``modified`` as an aware UTC datetime (``""``: none)."""
    if value == "":
        return None
    try:
        return parse_modified(value) if isinstance(value, (date, str)) else value
    except ValueError as exc:
        raise problem(f"{value!r} is not a date or datetime") from exc


class QualityBlock(Block):
    max_count_drop: float = Field(default=0.15, ge=0, le=1)
    max_failure_rate: float = Field(default=0.20, ge=0, le=1)
    # how far a new search index may fall short of the one it replaces; None: INGEST_INDEX_TOLERANCE (2%)
    index_count_tolerance: float | None = Field(default=None, ge=0, le=1)


def _duration(value: Any) -> Any:
    """``48h``, ``2d``, ``90m`` -> timedelta; ``never`` -> None (only an explicit approval publishes)."""
    if value == "never":
        return None
    match = DURATION_RE.fullmatch(value) if isinstance(value, str) else None
    if match is None or not int(match[1]):
        raise problem(f"must be a positive duration such as 48h, 2d or 90m, or never (given {value!r})")
    return timedelta(**{DURATION_UNITS[match[2]]: int(match[1])})


def _addresses(value: Any) -> Any:
    """``contact: a@x.org`` is read as ``[a@x.org]``; each address must look like one."""
    values = [value] if isinstance(value, str) else value
    if isinstance(values, list):
        for address in values:
            if not isinstance(address, str) or not EMAIL_RE.fullmatch(address):
                raise problem(f"{address!r} is not an e-mail address")
    return values


class ReviewBlock(Block):
    """``review: {required: true, auto_approve_after: 48h}``: each new day of the provider is held after
    enrichment until approved (``ingest-assets review``, the UI, or the window expiring)."""

    required: bool = False
    auto_approve_after: Annotated[timedelta | None, BeforeValidator(_duration)] = timedelta(hours=48)


class ScheduleBlock(Block):
    cron: str = "0 2 * * *"
    timezone: str = "UTC"


# The steps of the enrichment chain (``records/enrichment/data/chain.yaml``), in chain order: the names a
# provider's ``enrichment.skip`` may hold.
EnrichmentStep = Literal[
    "deduplicate", "strip_html", "reduce_whitespace", "cleanup_leading_punctuation", "cleanup_ending_punctuation",
    "strip_ending_period", "capitalize_first_char", "strip_dbl_quotes", "cleanup_geocoordinates", "format_blocklist",
    "rights_uri", "wikidata", "data_provider_uri", "dates", "language", "type", "tags",
]
ENRICHMENT_STEPS: tuple[str, ...] = EnrichmentStep.__args__


class EnrichmentBlock(Block):
    """How a provider's records are enriched (``enrichment:``): ingestion3's chain less the ``skip``ped steps
    (``skip: [strip_ending_period]`` keeps final periods on names and subjects); dates read by ingestion3's
    ``date_builder`` (years and year ranges) or its ``parse_date`` (EDTF and calendar dates, intervals)."""

    skip: list[EnrichmentStep] = Field(default_factory=list)
    dates: Literal["date_builder", "parse_date"] = "date_builder"


class RecordSettings(Block):
    """The record pipeline's keys (harvest, mapping, quality checks, refresh schedule, engine, enrichment, review
    before publishing, the contacts its reports are mailed to and the folder of its JSON-L exports)."""

    harvest: HarvestBlock | None = None
    mapping: Text | None = None  # a profile's name, or a profile file (relative to this registry file)
    # field -> rule, or a list of rules, or null (off); checked with the profile by the record capability's
    # check of a loaded registry (``records.mapping.check_registry``)
    mapping_overrides: dict[str, dict[str, Any] | list[dict[str, Any]] | None] = Field(default_factory=dict)
    provider_uri: HttpUrl | None = None  # the hub's URI the records carry, over the profile's
    # the key DPLA ids are minted with, over the profile's: md5('<id_prefix>--<local id>'); false: md5('<local id>')
    id_prefix: Annotated[str, Field(pattern=r"^\S+$")] | Literal[False] | None = None
    quality: QualityBlock = Field(default_factory=QualityBlock)
    enrichment: EnrichmentBlock = Field(default_factory=EnrichmentBlock)
    schedule: ScheduleBlock | Literal[False] = Field(default_factory=ScheduleBlock)  # false: no automatic refresh
    engine: Literal["in-process", "spark", "auto"] | None = None
    engine_threshold: Positive | None = None
    review: ReviewBlock = Field(default_factory=ReviewBlock)  # off by default
    contact: Annotated[list[str], BeforeValidator(_addresses)] = Field(default_factory=list)  # who gets the report
    # the folder of the hub's JSON-L exports under INGEST_JSONL_ROOT (DPLA's S3 prefix: hathi -> hathitrust); None:
    # the provider's name
    s3_prefix: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")] | None = None


# ---- linked data -------------------------------------------------------------------------------------------

class LinkedDataSettings(Block):
    """Linked data's keys: the VoID to follow, the registry's ``modified`` baseline and the dump limits."""

    void: Text | None = None
    modified: Annotated[datetime | None, BeforeValidator(_modified)] = None  # aware UTC
    allow_private: bool = False
    max_dump_bytes: Positive = 16 << 30


# ---- ResourceSync (``resourcesync:``) -----------------------------------------------------------------------

class ResourceSyncBlock(Block):
    """``resourcesync: {url_prefix: https://..., root: /srv/files/x, publish_outputs: true}`` (all optional)."""

    url_prefix: Text | None = None
    root: Text | None = None
    publish_outputs: bool = False


# ---- dataset ingest (``datasets:``) -------------------------------------------------------------------------

class DatasetsBlock(Block):
    """``datasets: {platform: zenodo, hosts: [data.example.org], allow_private: false}``: a dataset platform the hub
    reaches on hosts of its own (an InvenioRDM, Figshare or archive.org instance, a Dataverse). Its ``hosts``
    (``name`` or ``name:port``) are recognised as the platform's; with ``allow_private`` those hosts, and only
    they, may resolve to private addresses."""

    platform: Literal["zenodo", "figshare", "archiveorg", "dataverse"]
    hosts: Annotated[list[Text], Field(min_length=1)]
    allow_private: bool = False


# ---- repository (``repository:``) --------------------------------------------------------------------------

class RepositoryBlock(Block):
    """The source is ``template_index``, or ``wiki_api`` / ``wiki_export`` with ``base_url``."""

    template_index: Text | None = None
    wiki_api: Text | None = None
    wiki_export: Text | None = None
    base_url: Text | None = None
    default_language: Text = "en"
    wiki_languages: dict[str, str] = Field(default_factory=dict)
    max_ingest_hours: float = Field(default=24, gt=0)
    vocabularies: Text | None = None
    start: Annotated[datetime | None, BeforeValidator(_moment)] = None
    wiki_user_env: Text | None = None
    wiki_password_env: Text | None = None

    @model_validator(mode="after")
    def _has_a_source(self) -> RepositoryBlock:
        if not self.source:
            raise problem("needs template_index, or wiki_api or wiki_export with base_url")
        return self

    @property
    def source(self) -> str | None:
        wiki = self.wiki_api or self.wiki_export
        return self.template_index or (wiki if self.base_url else None)


class EntrySettings(RecordSettings, LinkedDataSettings):
    """Every key a registry entry may hold, with its type (YAML's own: ``true``, ``2015-06-01``, ``0.2``)."""

    label: str | None = None
    repository: RepositoryBlock | None = None
    resourcesync: ResourceSyncBlock | None = None
    datasets: DatasetsBlock | None = None
