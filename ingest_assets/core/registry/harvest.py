"""The ``harvest:`` blocks of OAI-PMH, JSON/XML APIs and ResourceSync, and :data:`HarvestBlock`, the one of each
type an entry gives (a new harvest type: its block here or in a module of its own, one more member there)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from lxml import etree
from pydantic import Field, ValidationInfo, field_validator, model_validator

from ingest_assets.core.registry.blocks import BaseHarvest, Block, HttpUrl, MiB, Positive, Text, one_as_list, problem
from ingest_assets.core.registry.file_harvest import FileHarvest
from ingest_assets.core.registry.secret_refs import ParamValue, SecretHeader, SecretParam


class PageBounds(Block):
    """Where a paged harvest stops even if the source never ends its list (``harvest.bounds``)."""

    max_pages: Positive = 100_000
    max_minutes: Positive = 24 * 60
    max_stale_pages: Positive = 20  # consecutive pages that bring no record not yet seen in this run


class OaiHarvest(BaseHarvest):
    """``harvest: {type: oai, endpoint: https://host/oai, metadata_prefix: mods, sets: [botanicals, maps]}``

    Which sets (ingestion3's ``setlist`` / ``harvestAllSets`` / ``blacklist``): ``sets`` (``set: x`` is read as
    ``sets: [x]``), or ``all_sets: true`` (every set ``ListSets`` names) less ``exclude_sets``; neither: the
    whole repository in one list."""

    type: Literal["oai"]
    endpoint: HttpUrl
    metadata_prefix: Text = "oai_dc"
    sets: list[Text] = Field(default_factory=list)
    all_sets: bool = False
    exclude_sets: list[Text] = Field(default_factory=list)
    max_page_bytes: Positive = 64 * MiB
    bounds: PageBounds = Field(default_factory=PageBounds)

    @model_validator(mode="before")
    @classmethod
    def _one_set(cls, data: Any) -> Any:
        return one_as_list(data, "set", "sets")

    @field_validator("sets")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise problem("lists a set twice")
        return value

    @field_validator("all_sets")
    @classmethod
    def _sets_or_all(cls, value: bool, info: ValidationInfo) -> bool:
        if value and info.data.get("sets"):
            raise problem("give sets or all_sets, not both")
        return value

    @field_validator("exclude_sets")
    @classmethod
    def _with_all_sets(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if value and not info.data.get("all_sets"):
            raise problem("only applies to all_sets: true")
        return value


class Paging(Block):
    """How an API pages: ``cursor`` (a token from the answer), ``offset`` (records skipped), ``page`` (a page
    number) or ``next`` (a link). ``first``: the first offset (default 0) or page number (default 1)."""

    style: Literal["cursor", "offset", "page", "next"]
    cursor_param: Text = "cursor"
    cursor_path: Text | None = Field(default=None, validate_default=True)
    initial_cursor: Text | None = None
    offset_param: Text = "offset"
    page_param: Text = "page"
    limit_param: Text = "limit"
    page_size: Positive = 100
    first: Annotated[int, Field(ge=0)] | None = None
    total_path: Text | None = None  # the number of records of the list (offset, page)
    ends_on_short_page: bool = False  # offset, page: a page of fewer than page_size records is the last
    next_path: Text | None = None  # None: the HTTP ``Link: <...>; rel="next"`` header

    @field_validator("cursor_path")
    @classmethod
    def _cursor_needs_a_path(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("style") == "cursor":
            raise problem("is required with style: cursor")
        return value

    @property
    def start(self) -> int:
        """The first offset or page number."""
        return self.first if self.first is not None else int(self.style == "page")


class ApiBounds(PageBounds):
    """:class:`PageBounds` and the records one run may bring (``harvest.bounds.max_records``)."""

    max_records: Positive = 50_000_000


class ItemLinks(Block):
    """``items: {format: json, params: {fo: json, at: item}, url_pattern: 'www\\.loc\\.gov/item/'}``: each value
    ``records_path`` selects is the link to one record, fetched on its own (LOC's sitemap of item pages);
    ``params`` replace the link's query; links ``url_pattern`` does not find are skipped."""

    format: Literal["json", "xml"] = "json"
    params: dict[str, ParamValue] = Field(default_factory=dict)
    url_pattern: Text | None = None
    max_bytes: Positive = 16 * MiB

    @field_validator("url_pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        try:
            re.compile(value or "")
        except re.error as exc:
            raise problem(f"invalid pattern {value!r}: {exc}") from exc
        return value


SET_PLACEHOLDER = "{set}"


class ApiHarvest(BaseHarvest):
    """``harvest: {type: api, endpoint: https://host/api/items, records_path: data, id_path: id,
    params: {q: "*", apikey: {env: HUB_API_KEY}}, paging: {style: cursor, cursor_param: cursor, cursor_path: meta.next}}``

    ``format`` says how pages are read: ``json`` (``records_path``, ``id_path`` and the paging paths are dotted
    paths) or ``xml`` (XPaths, prefixes from ``namespaces``); ``id_path`` reads a record, in the format of the
    ``items`` when records are fetched one by one. ``sets``: one list per value, put where the endpoint or a
    parameter says ``{set}``. A parameter or header may be a :class:`SecretRef`."""

    type: Literal["api"]
    endpoint: HttpUrl
    format: Literal["json", "xml"] = "json"
    namespaces: dict[str, Text] = Field(default_factory=dict)
    items: ItemLinks | None = None
    records_path: Text
    id_path: Text
    error_path: Text | None = None  # where a page that answers 200 says it failed (Primo's ERROR/@MESSAGE)
    paging: Paging
    params: dict[str, SecretParam] = Field(default_factory=dict)
    headers: dict[str, SecretHeader] = Field(default_factory=dict)
    sets: list[Text] = Field(default_factory=list, validate_default=True)
    max_page_bytes: Positive = 64 * MiB
    bounds: ApiBounds = Field(default_factory=ApiBounds)

    @field_validator("records_path", "error_path")
    @classmethod
    def _page_xpath(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("format") == "xml":
            _check_xpath(value, info.data.get("namespaces", {}))
        return value

    @field_validator("id_path")
    @classmethod
    def _record_xpath(cls, value: str, info: ValidationInfo) -> str:
        items = info.data.get("items")
        if (items.format if items else info.data.get("format")) == "xml":
            _check_xpath(value, info.data.get("namespaces", {}))
        return value

    @field_validator("paging")
    @classmethod
    def _paging_xpaths(cls, value: Paging, info: ValidationInfo) -> Paging:
        if info.data.get("format") == "xml":
            for key in ("cursor_path", "next_path", "total_path"):
                if getattr(value, key):
                    _check_xpath(getattr(value, key), info.data.get("namespaces", {}), key)
        return value

    @field_validator("sets")
    @classmethod
    def _sets_placed(cls, value: list[str], info: ValidationInfo) -> list[str]:
        placed = SET_PLACEHOLDER in info.data.get("endpoint", "") or any(
            SET_PLACEHOLDER in param for param in info.data.get("params", {}).values() if isinstance(param, str))
        if value and not placed:
            raise problem("put {set} in the endpoint or a parameter, where each set goes")
        if placed and not value:
            raise problem("the endpoint or a parameter says {set}: list the sets")
        if len(set(value)) != len(value):
            raise problem("lists a set twice")
        return value


def _check_xpath(path: str, namespaces: Mapping[str, str], key: str | None = None) -> None:
    """A ConfigError unless ``path`` compiles and its prefixes are declared (run once on an empty element: lxml
    finds an undeclared prefix only when evaluating)."""
    try:
        etree.XPath(path, namespaces=dict(namespaces))(etree.Element("empty"))
    except etree.XPathError as exc:
        raise problem(f"{key + ': ' if key else ''}invalid XPath {path!r}: {exc}") from exc


class ResourceSyncHarvest(BaseHarvest):
    """``harvest: {type: resourcesync, url: https://host/.well-known/resourcesync}``: a Source Description
    naming one Capability List, or a Capability List (its Resource List, then its Change Lists)."""

    type: Literal["resourcesync"]
    url: HttpUrl
    max_list_bytes: Positive = 64 * MiB  # one sitemap (list or index)
    max_resource_bytes: Positive = 64 * MiB
    max_resources: Positive = 1_000_000  # per run
    max_attempts: Positive = 5  # runs that try a resource whose fetch or check failed before it is given up
    bounds: PageBounds = Field(default_factory=PageBounds)  # max_pages: sitemaps fetched per run


HarvestBlock = Annotated[
    OaiHarvest | ApiHarvest | FileHarvest | ResourceSyncHarvest, Field(discriminator="type")
]
